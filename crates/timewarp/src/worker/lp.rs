//! One LP as a worker holds it: its pending events, the events it has processed (with state
//! saves), what each sent, cancelled and moved, and its failure, if any.

use std::collections::BTreeMap;

use warpsim_core::kernel_api::LpMeta;
use warpsim_core::{EventKey, LogicalProcess, LpId, SimError, Time};

use crate::pending::Pending;

/// An executed, not yet fossil-collected event.
pub(super) struct Processed<M: LogicalProcess> {
    pub(super) key: EventKey,
    /// Kept to put back in `pending` on rollback and to coast forward.
    pub(super) event: M::Event,
    /// The LP's state before this event (every `checkpoint_interval`-th record). Boxed, so
    /// that the records without one (most) stay small: every record is written once and
    /// read at commit, and a model's state can be hundreds of bytes (a Sharks World sector
    /// is about 400), which inline made every record that big.
    pub(super) snapshot: Option<Box<Saved<M>>>,
    /// What the handler emitted; leaves at commit.
    pub(super) outputs: Vec<M::Output>,
    /// How many entries of the LP's effect log this event made (its sends, cancels and
    /// moves), the last ones for the LP's newest record.
    pub(super) effects: u32,
}

/// A state save: the model and the kernel's part of the LP.
pub(super) type Saved<M> = (M, LpMeta);

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
}

/// One entry of an LP's effect log. Its cause is not stored: the log holds the effects of
/// the LP's uncommitted records in order, and each record counts its own
/// ([`Processed::effects`]), so a rollback or a commit knows how many to take — 32 bytes
/// less per entry, written for every event sent.
pub(super) type EffectRecord<E> = Logged<E>;

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
    Handler(Option<Box<Saved<M>>>),
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

/// One LP as a worker holds it.
pub(crate) struct LpState<M: LogicalProcess> {
    pub(crate) id: LpId,
    pub(crate) model: M,
    pub(crate) meta: LpMeta,
    pub(crate) pending: Pending<M::Event>,
    pub(super) processed: Vec<Processed<M>>,
    pub(super) committed_prefix: u32,
    /// The time of the newest uncommitted record, or -1 when there is none: a message for a
    /// later time cannot roll the LP back, which this says without reading the records (at
    /// many LPs, a cache miss on every message).
    pub(super) newest: f64,
    /// Records since (and including) the last one with a state save.
    pub(super) since_snapshot: u32,
    pub(super) effects: Vec<EffectRecord<M::Event>>,
    /// What an LP holds only after a rollback, a cancel or a failure (see [`Rare`]).
    pub(super) rare: Option<Box<Rare<M>>>,
    /// The (time bits, age) this LP's scheduler entry is valid for (see [`LpQueue`](crate::lpqueue::LpQueue)).
    pub(super) queued: Option<(u64, u32)>,
    pub(super) in_dirty: bool,
    pub(super) in_held: bool,
    pub(super) in_deferred: bool,
    pub(super) in_withdrawn: bool,
    /// Events committed since the last migration (what load balancing moves).
    pub(super) load: u64,
}

impl<M: LogicalProcess> LpState<M> {
    /// An LP after its `init`, with the events it holds at the start.
    pub(crate) fn new(id: LpId, model: M, meta: LpMeta, pending: Pending<M::Event>) -> LpState<M> {
        LpState {
            id,
            model,
            meta,
            pending,
            processed: Vec::new(),
            committed_prefix: 0,
            newest: -1.0,
            since_snapshot: 0,
            effects: Vec::new(),
            rare: None,
            queued: None,
            in_dirty: false,
            in_held: false,
            in_deferred: false,
            in_withdrawn: false,
            load: 0,
        }
    }

    /// Whether a message touching `key` must first roll this LP back.
    #[inline]
    pub(super) fn processed_at_or_after(&self, key: EventKey) -> bool {
        key.time.as_f64() <= self.newest
            && self.processed.len() > self.committed_prefix as usize
            && self.processed.last().is_some_and(|last| key <= last.key)
    }

    /// The LP's rare parts, created empty when it has none.
    pub(super) fn rare_mut(&mut self) -> &mut Rare<M> {
        self.rare.get_or_insert_with(Box::default)
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
}

impl<M: LogicalProcess> Default for Rare<M> {
    fn default() -> Rare<M> {
        Rare {
            withdrawn: BTreeMap::new(),
            deferred: Vec::new(),
            failed: None,
            hold: None,
        }
    }
}

impl<M: LogicalProcess> Rare<M> {
    fn is_empty(&self) -> bool {
        self.withdrawn.is_empty()
            && self.deferred.is_empty()
            && self.failed.is_none()
            && self.hold.is_none()
    }
}

/// An LP on its way from one worker to another, with the antimessages that wait for it.
pub(crate) type Transfer<M> = (LpState<M>, Vec<EventKey>);

/// The heap bytes the model reports for the state saves in `records`.
pub(super) fn saved_heap<'r, M: LogicalProcess>(
    records: impl Iterator<Item = &'r Processed<M>>,
) -> u64 {
    records
        .filter_map(|record| record.snapshot.as_ref())
        .map(|saved| saved.0.heap_bytes() as u64)
        .sum()
}
