//! The worker's pending events: one ladder queue for all its LPs, popped in key order, and
//! the map from each event's identity to its queue handle for the messages that name an
//! event by its key (antimessages, cancels, moves).
//!
//! One queue per worker rather than a set per LP under a queue of LPs: an event costs one
//! push and one pop of the kind the sequential kernel does, instead of an insert into its
//! LP's set plus a re-queue of the LP, and an LP record no longer carries a pending set.
//! (BENCHMARKS.md, "One pending set per worker", has the measurements that chose it.)

use warpsim_core::EventKey;
use warpsim_queue::{Handle, LadderQueue, PendingSet};

use crate::idmap::IdMap;

/// A pending event in the worker's queue: the index of its LP in the worker, and the event.
#[derive(Debug)]
pub(crate) struct Ev<E> {
    pub(super) lp: u32,
    pub(super) event: E,
}

/// The queue slot a handle names.
#[inline]
fn slot_of(handle: Handle) -> u32 {
    handle.into_raw() as u32
}

/// Whether the queue's slot `slot` holds LP `l`'s event under `key`.
#[inline]
fn is<E>(queue: &LadderQueue<EventKey, Ev<E>>, slot: u32, l: u32, key: &EventKey) -> bool {
    queue
        .handle_at(slot)
        .and_then(|handle| queue.get(handle))
        .is_some_and(|(other, ev)| other == *key && ev.lp == l)
}

/// All pending events of a worker's LPs that may run (an LP that may not, a failed or held
/// one, parks its events in its record: see [`Rare::parked`](super::lp::Rare)).
#[derive(Debug)]
pub(crate) struct Store<E> {
    queue: LadderQueue<EventKey, Ev<E>>,
    ids: IdMap,
}

impl<E> Store<E> {
    /// A store for about `events` pending events.
    pub(crate) fn with_capacity(events: usize) -> Store<E> {
        Store {
            queue: LadderQueue::with_capacity(events),
            ids: IdMap::with_capacity(events),
        }
    }

    /// Pending events.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Bytes of the identity map (the queue's are counted per event by the caller).
    pub(super) fn index_bytes(&self) -> u64 {
        self.ids.bytes()
    }

    /// The handle of LP `l`'s pending event under `key`.
    #[inline]
    fn locate(&self, l: u32, key: &EventKey) -> Option<Handle> {
        let queue = &self.queue;
        let slot = self.ids.find(key.id, |slot| is(queue, slot, l, key))?;
        queue.handle_at(slot)
    }

    /// Adds an event for LP `l`. When `l` already has an event under `key` (a collision of
    /// causal identities, see [`EventKey`]), the new event is handed back and nothing changes.
    #[inline]
    pub(crate) fn push(&mut self, l: u32, key: EventKey, event: E) -> Result<(), E> {
        let queue = &self.queue;
        let Ok(vacancy) = self.ids.vacancy(key.id, |slot| is(queue, slot, l, &key)) else {
            return Err(event);
        };
        let handle = match self.queue.push(key, Ev { lp: l, event }) {
            Ok(handle) => handle,
            // Keys are finite times, so only a queue of 2³² events refuses one: memory runs
            // out long before. A panic here is caught around the worker and stops the run
            // with an internal error.
            Err(error) => panic!(
                "the worker's event queue refused an event: {:?}",
                error.kind
            ),
        };
        self.ids.fill(vacancy, key.id, slot_of(handle));
        Ok(())
    }

    /// The key and LP of the first event (in key order).
    #[inline]
    pub(super) fn peek(&mut self) -> Option<(EventKey, u32)> {
        self.queue.peek().map(|(key, ev)| (key, ev.lp))
    }

    /// The LP of the event that most likely comes next (a hint, for prefetching).
    #[inline]
    pub(super) fn next_hint(&self) -> Option<u32> {
        self.queue.next_hint().map(|ev| ev.lp)
    }

    /// Removes the first event: its key, its LP's index and the event.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(EventKey, u32, E)> {
        let (key, ev) = self.queue.pop()?;
        let queue = &self.queue;
        // Every entry of the map names a queued event but this one, just popped.
        self.ids
            .remove(key.id, |slot| queue.handle_at(slot).is_none());
        Some((key, ev.lp, ev.event))
    }

    /// Removes LP `l`'s event under `key`.
    pub(super) fn take(&mut self, l: u32, key: &EventKey) -> Option<E> {
        let handle = self.locate(l, key)?;
        let (_, ev) = self.queue.cancel(handle)?;
        let slot = slot_of(handle);
        self.ids.remove(key.id, |other| other == slot);
        Some(ev.event)
    }

    /// Whether LP `l` has an event under `key`.
    pub(super) fn contains(&self, l: u32, key: &EventKey) -> bool {
        self.locate(l, key).is_some()
    }

    /// Removes every event, in key order (one at a time: at the end of a run with millions
    /// of pending events, a list of them all would raise the run's peak memory).
    pub(super) fn drain(&mut self) -> impl Iterator<Item = (EventKey, u32, E)> + '_ {
        self.ids.clear();
        std::iter::from_fn(|| self.queue.pop().map(|(key, ev)| (key, ev.lp, ev.event)))
    }
}
