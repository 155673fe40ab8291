//! Where a resumed run's pending events went in the sequential kernel's queue, so that a
//! handle from before the checkpoint finds its event again (see [`Relocations`]).

use warpsim_queue::Handle;

use crate::time::{EventKey, LpId};

/// Where the events a run resumed with went in the sequential kernel's queue: a handle kept
/// in an LP's state holds the queue slot of the run that sent it (or none, when another
/// kernel sent it), so a handle that no longer leads to its event is looked up here by the
/// event's identity. Empty, and never consulted, in a run that did not resume.
///
/// The lookup table is built on the first miss only (most models never cancel or move an
/// event of an earlier run, and a map of a million entries would cost every resume a
/// fifth of a second): until then the events are a plain list.
#[derive(Debug, Default)]
pub(crate) struct Relocations {
    events: Vec<(Identity, Handle)>,
    sorted: std::cell::OnceCell<Vec<(Identity, Handle)>>,
}

/// A send's identity: sender, send time, id (see [`EventKey::same_send`]), destination.
type Identity = (u32, u64, u64, u32);

impl Relocations {
    pub(crate) fn insert(&mut self, key: &EventKey, dest: LpId, handle: Handle) {
        self.events.push((Self::identity(key, dest), handle));
    }

    pub(crate) fn find(&self, key: &EventKey, dest: LpId) -> Option<Handle> {
        if self.events.is_empty() {
            return None;
        }
        let sorted = self.sorted.get_or_init(|| {
            let mut sorted = self.events.clone();
            sorted.sort_unstable_by_key(|(identity, _)| *identity);
            sorted
        });
        let identity = Self::identity(key, dest);
        let at = sorted
            .binary_search_by_key(&identity, |(identity, _)| *identity)
            .ok()?;
        Some(sorted[at].1)
    }

    fn identity(key: &EventKey, dest: LpId) -> Identity {
        (
            key.src.get(),
            key.sent.as_f64().to_bits(),
            key.id,
            dest.get(),
        )
    }
}
