//! One LP as a worker holds it: its state, where its records are in the worker's logs, what
//! only rollbacks, cancels and failures fill, and its failure, if any. Its pending events
//! are in the worker's [`Store`](super::store::Store), its records in its
//! [`Logs`](super::log::Logs).

use std::collections::BTreeMap;

use warpsim_core::kernel_api::LpMeta;
use warpsim_core::{EventKey, LogicalProcess, LpId, SimError, Time};

use super::log::{NONE, Saved, Seq};

/// What a processed event did to the event set.
pub(super) enum Logged<E> {
    /// Sent an event. The payload is kept in lazy mode, to compare with a re-execution's.
    Send {
        key: EventKey,
        dest: LpId,
        event: Option<E>,
    },
    Withdraw {
        key: EventKey,
        dest: LpId,
    },
    Move {
        dest: LpId,
        from: EventKey,
        to: EventKey,
    },
    /// Undone already (its record was rolled back or moved with its LP).
    Taken,
}

/// A send of an undone event whose antimessage lazy cancellation holds back.
pub(super) struct Deferred<E> {
    pub(super) cause: EventKey,
    pub(super) key: EventKey,
    pub(super) dest: LpId,
    pub(super) event: E,
}

/// How much of a failed event's work [`Worker::fail`] must undo.
pub(super) enum Undo<M> {
    /// Nothing ran: the LP's state is as it was.
    Nothing,
    /// The handler ran: restore the state save taken before it, or (without one) rebuild
    /// the state from the last save.
    Handler(Option<Saved<M>>),
}

/// A handler error that is not yet known to be real.
pub(super) struct Failure<O> {
    pub(super) key: EventKey,
    pub(super) error: SimError,
    /// Outputs of the failed handler when the error still commits the event (a bad delay or
    /// destination: the sequential kernel commits the event, then stops); `None` for a panic.
    pub(super) outputs: Option<Vec<O>>,
    /// Whether the event commits when the error is real (`outputs` was `Some`; they leave
    /// with the stop).
    pub(super) commits: bool,
}

/// A key's fields but its time folded into 64 bits (each step `h = (h ⊕ field)·K`, `K`
/// odd, is a bijection, so distinct keys at one time share a fingerprint with a chance of
/// about 2⁻⁶⁴, as distinct sends share an identity). The causal identity alone is not
/// enough: a rescheduled event keeps its identity, and the ids of different senders and
/// ages may meet.
#[inline]
pub(super) fn fingerprint(key: &EventKey) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let tie = (u64::from(key.age) << 32) | u64::from(key.src.get());
    ((key.id.wrapping_mul(K) ^ tie).wrapping_mul(K) ^ key.sent.as_f64().to_bits()).wrapping_mul(K)
}

/// One LP as a worker holds it.
///
/// `repr(C)`, to know where its fields lie: running an event reads nearly all of them, so
/// [`Worker::warm`](super::Worker) prefetches every line of the record, from its first
/// field to its last, with no gap of a line between two prefetched fields.
#[repr(C)]
pub(crate) struct LpState<M: LogicalProcess> {
    pub(crate) id: LpId,
    /// Its records since `base`, `base` included.
    pub(super) since: u32,
    /// The time of its newest live record, or -1 when it has none (a commit leaves it
    /// as it was: `last` then names a committed record, which the check reads). A message
    /// for a later time cannot roll the LP back, which this says without reading the log.
    pub(super) newest: f64,
    /// The [`fingerprint`] of the key of the event it ran last (valid while `newest` is
    /// not -1): an event at that time with the same fingerprint is its twin (see `store.rs`,
    /// "Listing later").
    pub(super) last_key: u64,
    /// Its newest record in the worker's logs (live or committed), or [`NONE`].
    pub(super) last: Seq,
    /// The record its next record would coast from, its latest with a state save (see
    /// [`Rec::base`](super::log::Rec)), or [`NONE`].
    pub(super) base: Seq,
    pub(crate) model: M,
    pub(crate) meta: LpMeta,
    /// What an LP holds only after a rollback, a cancel or a failure (see [`Rare`]). Last,
    /// so that [`Worker::warm`](super::Worker) finds the record's end through it.
    pub(super) rare: Option<Box<Rare<M>>>,
}

impl<M: LogicalProcess> LpState<M> {
    /// An LP after its `init` (its pending events go to the worker's store).
    pub(crate) fn new(id: LpId, model: M, meta: LpMeta) -> LpState<M> {
        LpState {
            id,
            model,
            meta,
            last: NONE,
            base: NONE,
            since: 0,
            newest: -1.0,
            last_key: 0,
            rare: None,
        }
    }

    /// The LP's rare parts, created empty when it has none.
    pub(super) fn rare_mut(&mut self) -> &mut Rare<M> {
        self.rare.get_or_insert_with(Box::default)
    }

    /// Whether the LP is in the worker's list of LPs with deferred sends.
    #[inline]
    pub(super) fn in_deferred(&self) -> bool {
        self.rare.as_ref().is_some_and(|rare| rare.in_deferred)
    }

    /// Whether the LP is in the worker's list of LPs with withdrawn events.
    #[inline]
    pub(super) fn in_withdrawn(&self) -> bool {
        self.rare.as_ref().is_some_and(|rare| rare.in_withdrawn)
    }

    /// Takes the LP off the worker's lists of held, deferring or withdrawing LPs, as
    /// `held`, `deferred` and `withdrawn` say (its rare parts go once empty: see
    /// [`tidy`](Self::tidy)).
    #[inline]
    pub(super) fn unlist(&mut self, held: bool, deferred: bool, withdrawn: bool) {
        if let Some(rare) = self.rare.as_mut() {
            rare.in_held &= !held;
            rare.in_deferred &= !deferred;
            rare.in_withdrawn &= !withdrawn;
        }
    }

    /// The LP's failure, if it has one.
    #[inline]
    pub(super) fn failed(&self) -> Option<&Failure<M::Output>> {
        self.rare.as_ref()?.failed.as_ref()
    }

    /// The time this LP holds events at (see [`Rare::hold`]).
    #[inline]
    pub(super) fn hold(&self) -> Option<Time> {
        self.rare.as_ref()?.hold
    }

    /// Whether this LP's event `key` must wait in [`Rare::parked`] instead of running: the LP
    /// failed, holds events back (see [`Rare::hold`]), or already parked an earlier event.
    #[inline]
    pub(super) fn blocked(&self, key: EventKey, gvt: EventKey) -> bool {
        match &self.rare {
            None => false,
            Some(rare) => {
                rare.failed.is_some()
                    || !rare.parked.is_empty()
                    || (rare.hold == Some(key.time) && key > gvt)
            }
        }
    }

    /// The parked event under `key` (a failed LP parks its failed event).
    pub(super) fn parked(&self, key: &EventKey) -> Option<&M::Event> {
        let rare = self.rare.as_ref()?;
        rare.parked.get(key)
    }

    /// The sends lazy cancellation holds back.
    #[inline]
    pub(super) fn deferred(&self) -> &[Deferred<M::Event>] {
        self.rare.as_ref().map_or(&[], |rare| &rare.deferred)
    }

    /// Drops the rare parts once they are all empty again.
    pub(super) fn tidy(&mut self) {
        if self.rare.as_ref().is_some_and(|rare| rare.is_empty()) {
            self.rare = None;
        }
    }
}

/// The parts of an LP that only rollbacks, cancels and failures fill, and only until GVT
/// passes them: behind one pointer, so that every LP's record stays small (at ten million
/// LPs, each byte of [`LpState`] is ten megabytes) and the common case reads one word.
pub(crate) struct Rare<M: LogicalProcess> {
    /// Cancelled events, kept until GVT passes the cancel (a rollback may restore them).
    pub(super) withdrawn: BTreeMap<EventKey, (M::Event, EventKey)>,
    pub(super) deferred: Vec<Deferred<M::Event>>,
    pub(super) failed: Option<Failure<M::Output>>,
    /// After a secondary rollback at this time, events at this time run only at GVT (see
    /// [`Worker::rollback`](super::Worker::rollback)).
    pub(super) hold: Option<Time>,
    /// Pending events that may not run yet: the LP failed (until a rollback clears the
    /// failure) or holds events back (until the next GVT). A map: a failed LP may park
    /// thousands while other LPs run ahead, and antimessages look them up.
    pub(super) parked: BTreeMap<EventKey, M::Event>,
    /// Whether the LP is in the worker's lists of held, deferring and withdrawing LPs. Here
    /// rather than in [`LpState`]: only an LP with rare parts is ever listed, and each byte
    /// of the record is a byte of every event's working set (issue 13).
    pub(super) in_held: bool,
    pub(super) in_deferred: bool,
    pub(super) in_withdrawn: bool,
}

impl<M: LogicalProcess> Default for Rare<M> {
    fn default() -> Rare<M> {
        Rare {
            withdrawn: BTreeMap::new(),
            deferred: Vec::new(),
            failed: None,
            hold: None,
            parked: BTreeMap::new(),
            in_held: false,
            in_deferred: false,
            in_withdrawn: false,
        }
    }
}

impl<M: LogicalProcess> Rare<M> {
    fn is_empty(&self) -> bool {
        self.withdrawn.is_empty()
            && self.deferred.is_empty()
            && self.failed.is_none()
            && self.hold.is_none()
            && self.parked.is_empty()
            && !(self.in_held || self.in_deferred || self.in_withdrawn)
    }
}

/// An LP on its way from one worker to another, with its pending events (those in the
/// store; parked ones travel in its record), its records still in the logs (oldest first)
/// and the antimessages that wait for it.
pub(crate) struct Transfer<M: LogicalProcess> {
    pub(super) lp: LpState<M>,
    pub(super) pending: Vec<(EventKey, M::Event)>,
    pub(super) records: Vec<super::log::Moved<M>>,
    pub(super) antis: Vec<EventKey>,
}

#[cfg(test)]
mod tests {
    use super::LpState;

    /// PHOLD's record is two cache lines: every byte of it is a byte of each event's working
    /// set, and at 16,384 LPs that set no longer fits the cache (BENCHMARKS.md, "Two cache
    /// lines an LP"). A field added to the record shows here.
    #[test]
    fn a_phold_record_fits_two_cache_lines() {
        assert!(std::mem::size_of::<LpState<warpsim_models::phold::Phold>>() <= 128);
    }
}
