//! Safe events: events that no rollback can ever reach, run without paying for optimism.
//!
//! An event is *safe* at a worker when no message with a smaller key can reach that worker
//! any more. Such an event would never be rolled back, so the worker runs it as the
//! sequential kernel does: no state save, no record, no effect log, no lazy-cancellation
//! copy, and it commits (counts, trace hash) at once. Its outputs wait in [`Safe::outputs`]
//! for the next GVT, since the coordinator delivers in key order across workers. On one
//! thread every event past the first GVT is safe, and Time Warp costs about what the
//! sequential kernel does; on several, the worker that lags behind the others runs safely
//! while the one ahead runs optimistically (BENCHMARKS.md, "Safe events").
//!
//! # Ground rules
//!
//! 1. **The bound.** A completed GVT round gives each worker that reported in it the
//!    smallest report of the *other* workers, folded with everything it sent to other
//!    workers since that round's flag went up (`gvt.rs`, "Safe bounds"). No message below
//!    that bound can reach the worker later: every message is caused by an event or message
//!    with a smaller key, and every such chain starts in another worker's report or in one
//!    of this worker's own sends. Every later send to another worker lowers the bound to its
//!    key (a reply can come back at any key above it). The bound stays valid after the
//!    worker reports again (the next round only replaces it); it is void after a migration
//!    and a checkpoint taken in place. A GVT published after a safe event ran may still be
//!    below it (the worker may have reported a smaller minimum before), so its outputs leave
//!    only with a commit whose bound passes them.
//!
//!    **Lookahead.** With a lookahead `L` (`RunConfig::lookahead`, which every kernel
//!    enforces), a message from another worker comes at least `L` after the event that sent
//!    it: such a message always goes to another LP (an LP lives on one worker, and a
//!    migration voids the bound), and so do the cancels and moves it carries. The bound is
//!    then the smallest key at `L` past the minimum of the reports and sends above. A
//!    message another worker sent here before its report may then lie below the bound (the
//!    report folds its key in, and the lookahead widens past it), so the worker absorbs its
//!    inbox again after it takes a new bound, before it runs anything: every such message
//!    was enqueued before the round completed, so it is there by then. Since this bound
//!    goes stale as the other workers move on, workers with a lookahead also take one from
//!    each other's promises as they go (`promise.rs`), and the larger of the two counts.
//!    (Asking for GVT rounds early for fresher bounds, as before the promises, cost more
//!    than the safe events they brought at intervals below 128 events.)
//! 2. **What else makes an event unsafe here.** A failed, held or deferring LP anywhere on
//!    this worker (their parked events and deferred sends are pending work below the store's
//!    minimum that the other workers' reports do not cover: the bound is void from when one
//!    appears until a GVT finds none), an LP with rare parts
//!    (withdrawn events, parked ones), a pause or stop at or below the event (nothing at or
//!    after a pause may be irreversible), and external GVT (a rank of a distributed run,
//!    where the other ranks' reports are not split per worker).
//! 3. **Pauses.** A stop or periodic checkpoint asked for while the run runs pauses just
//!    past the last published GVT (`Shared::lower_end`), and what ran at or after the pause
//!    is rolled back, which a safe event cannot be. So a worker *reserves* the time up to
//!    which it runs safe events before it runs them (`Shared::reserved`, doubling its span
//!    past GVT at each step, so a pause comes at most about twice the optimism span late),
//!    and the pause lands past every reservation. A reservation is stored, then the
//!    "pause asked" flag read; the pauser raises the flag, then reads the reservations (all
//!    SeqCst): either the pauser sees the reservation or the worker sees the flag and runs
//!    the event optimistically instead.
//! 4. **The LP's chain.** A safe event leaves no record, so the LP's record chain is cut
//!    after it (`last` and `base` become "none"): its next optimistic event saves its state
//!    and starts a new chain, and no rollback can coast through the safe event. Its older
//!    live records cannot be rolled back either (their keys are smaller); they commit at GVT
//!    as usual.
//! 5. **Failure.** A safe event whose handler fails is final: it parks as any failure does,
//!    without restoring the LP's state (no message can clear it), and the run stops with its
//!    error once GVT reaches it, as on the sequential kernel.
//! 6. **Stopping past a lookahead.** With a lookahead, the bound reaches past the other
//!    workers' pending events, so an event another worker has still to run can fail below
//!    a safe event that ran here: the run then stops at the failure, and the sequential
//!    kernel never ran the safe event. So on several threads with a lookahead, safe events
//!    are committed *tentatively*: counted and hashed at once, and kept (key, LP and content
//!    hash) until GVT passes them; at the end, those after the key the run stopped at are
//!    taken back out of the counts and hashes. (Their outputs and observed events wait for
//!    GVT anyway, which never passes a failure.)

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;

use warpsim_core::kernel_api::{Effect, encode_event, panic_message};
use warpsim_core::{EventKey, LogicalProcess, LpId, SimError, Time, TraceHash};

use super::log::NONE;
use super::lp::{Undo, fingerprint};
use super::promise::Promises;
use super::{Worker, raise};
use crate::message::{Msg, route_of};

/// A worker's safe-event state.
pub(super) struct Safe<M: LogicalProcess> {
    /// Events below this key are safe (ground rule 1); [`Safe::void`] when none is known.
    /// The larger of the two below.
    pub(super) bound: EventKey,
    /// The bound the last GVT round gave, lowered by every send to another worker since.
    pub(super) from_gvt: EventKey,
    /// The bound the other workers' promises give (`promise.rs`).
    pub(super) heard: EventKey,
    pub(super) promises: Promises,
    /// The time up to which this worker's reservation covers safe events (ground rule 3).
    reserved: f64,
    /// Safe events above the last GVT, in key order, when the bound reaches past the other
    /// workers' pending events (ground rule 6): each with its content hash when the run
    /// keeps one.
    pub(super) tentative: VecDeque<(EventKey, LpId, TraceHash)>,
    /// Whether safe events are kept in `tentative`.
    pub(super) keep_tentative: bool,
    /// Outputs of safe events, in key order, until the next GVT passes them.
    pub(super) outputs: Vec<(EventKey, LpId, M::Output)>,
    /// Safe events for the run's observer, likewise.
    pub(super) observed: Vec<(EventKey, LpId, M::Event)>,
}

impl<M: LogicalProcess> Safe<M> {
    pub(super) fn new(promises: Promises, keep_tentative: bool) -> Safe<M> {
        Safe {
            bound: Safe::<M>::void(),
            from_gvt: Safe::<M>::void(),
            heard: Safe::<M>::void(),
            promises,
            tentative: VecDeque::new(),
            keep_tentative,
            reserved: f64::NEG_INFINITY,
            outputs: Vec::new(),
            observed: Vec::new(),
        }
    }

    /// The smallest key: no event is below it.
    pub(super) fn void() -> EventKey {
        EventKey::init(LpId::new(0))
    }
}

/// The smallest key `lookahead` after `key`'s time (ground rule 1's lookahead): a message
/// caused by an event at `key` on another worker comes no earlier. `key` itself when there
/// is no lookahead or the sum is not a finite time.
fn widen(key: EventKey, lookahead: f64) -> EventKey {
    if lookahead <= 0.0 {
        return key;
    }
    // Rounding is monotonic: an event at `t ≥ key.time` sends at `t + d ≥ key.time + lookahead`
    // (for `d ≥ lookahead`) in floating point too.
    Time::new(key.time.as_f64() + lookahead).map_or(key, |time| {
        EventKey::new(time, 0, LpId::new(0), Time::ZERO, 0)
    })
}

impl<M: LogicalProcess> Worker<'_, M> {
    /// Takes the safe bound a new GVT came with (ground rule 1), or voids it.
    pub(super) fn adopt_safe(&mut self, safe: Option<EventKey>) {
        // Rule 2's lists: checked here, and the bound voided whenever one gains an LP.
        let quiet = self.lists.failed.is_empty()
            && self.lists.held.is_empty()
            && self.lists.deferred.is_empty();
        self.safe.from_gvt = match safe {
            Some(bound) if self.settings.safe && quiet => {
                widen(bound, self.settings.lookahead).min(self.end_bound())
            }
            _ => Safe::<M>::void(),
        };
        // The end may have moved, and the lists emptied.
        self.take_heard();
    }

    /// Voids the safe bound (ground rules 1 and 2: at a migration, a checkpoint taken in
    /// place, and when a failed, held or deferring LP appears).
    #[inline]
    pub(super) fn void_safe(&mut self) {
        self.safe.bound = Safe::<M>::void();
        self.safe.from_gvt = Safe::<M>::void();
        self.safe.heard = Safe::<M>::void();
    }

    /// A send to another worker touching `touches` (see [`Msg::touches`]; its GVT timestamp
    /// `stamp` is at or below): a reply may come back at any key above it.
    #[inline]
    pub(super) fn sent_away(&mut self, touches: EventKey, stamp: EventKey) {
        // `widen` never lowers a key: a key at or past the bound leaves it as it is.
        if touches < self.safe.from_gvt {
            self.safe.from_gvt = self
                .safe
                .from_gvt
                .min(widen(touches, self.settings.lookahead));
            self.safe.bound = self.safe.from_gvt.max(self.safe.heard);
        }
        let time = touches.time.as_f64();
        if self.safe.promises.broken_by(time, self.end_time) {
            self.promise_broken(time, "a message sent to another worker");
        }
        self.safe.promises.unsent(time);
        self.port.sent_away(stamp);
    }

    /// Whether LP `l`'s event `key`, just taken from the store, is safe (ground rules 1–3).
    #[inline]
    pub(super) fn is_safe(&mut self, l: usize, key: EventKey) -> bool {
        key < self.safe.bound && self.lps[l].rare.is_none() && self.reserve(key.time.as_f64())
    }

    /// Makes sure this worker's reservation covers `time` (ground rule 3). Returns `false`
    /// when a pause was asked for and the reservation could not grow.
    #[inline]
    fn reserve(&mut self, time: f64) -> bool {
        if time <= self.safe.reserved {
            return true;
        }
        self.reserve_slow(time)
    }

    #[inline(never)]
    fn reserve_slow(&mut self, time: f64) -> bool {
        // Twice the event's distance past GVT, within the bound: a few reservations per GVT.
        let gvt = self.gvt.time.as_f64();
        let ahead = (time + (time - gvt).max(0.0)).min(self.safe.bound.time.as_f64());
        let wanted = ahead.max(time);
        self.shared.reserved[self.index]
            .0
            .store(wanted.to_bits(), Ordering::SeqCst);
        if self.shared.pause_asked.load(Ordering::SeqCst) {
            return false;
        }
        self.safe.reserved = wanted;
        true
    }

    /// Runs LP `l`'s safe event `key` (see the module docs): the handler, its sends, and
    /// its commit, with nothing kept to undo it.
    pub(super) fn execute_safe(&mut self, l: usize, key: EventKey, event: M::Event) {
        self.sizes.pending -= 1;
        let lp = &mut self.lps[l];
        let id = lp.id;
        // Encoded before the handler takes the event, added once it has run: a failed event
        // that commits joins the content hash at the end of the run (`add_failed_content`).
        if self.settings.content_hash && !encode_event(&event, &mut self.scratch.encoded.0) {
            self.scratch.encoded.0.clear();
        }
        // The event is kept for a failure (it parks) and for the run's observer.
        let copy = catch_unwind(AssertUnwindSafe(|| event.clone()));
        let kept = match copy {
            Ok(kept) => kept,
            Err(payload) => {
                let error = SimError::ModelPanic {
                    lp: id,
                    time: key.time,
                    message: format!(
                        "in Clone (Time Warp copies an event to keep it): {}",
                        panic_message(payload.as_ref())
                    ),
                };
                self.fail(l, key, event, Undo::Nothing, error, None);
                return;
            }
        };
        let mut effects = std::mem::take(&mut self.scratch.effects);
        let mut outputs = std::mem::take(&mut self.scratch.outputs);
        let failure = self.run_handler(l, key, event, &mut effects, &mut outputs);
        if let Some((error, commit_outputs)) = failure {
            effects.clear();
            outputs.clear();
            self.scratch.effects = effects;
            self.scratch.outputs = outputs;
            // Ground rule 5: final, so nothing is restored.
            self.fail(l, key, kept, Undo::Nothing, error, commit_outputs);
            return;
        }
        // Ground rule 4: the chain is cut after this event.
        let lp = &mut self.lps[l];
        lp.last = NONE;
        lp.base = NONE;
        lp.since = 0;
        lp.newest = key.time.as_f64();
        lp.last_key = fingerprint(&key);
        raise(&mut self.newest_max, lp.newest);
        self.count_load(l);
        self.counters.committed += 1;
        self.counters.safe += 1;
        self.trace.add(&key, id);
        if self.settings.content_hash {
            self.content.add_content(&key, id, &self.scratch.encoded.0);
        }
        if self.safe.keep_tentative {
            self.keep_tentative(key, id);
        } else {
            raise(&mut self.last_commit, key.time.as_f64());
        }
        if self.settings.observe {
            self.safe.observed.push((key, id, kept));
        }
        // Most events emit nothing, and an empty `drain` still costs a dozen instructions.
        if !outputs.is_empty() {
            for output in outputs.drain(..) {
                self.safe.outputs.push((key, id, output));
            }
        }
        self.scratch.outputs = outputs;
        let cause = key;
        for effect in effects.drain(..) {
            match effect {
                Effect::Send { key, dest, event } => {
                    // As `transmit` would, without building the message: with the local
                    // queue empty, nothing sent earlier about this key can be overtaken.
                    if !self.mail.local.is_empty() {
                        self.transmit(Msg::Event { key, dest, event });
                    } else if dest == id {
                        self.deliver(l, key, event);
                    } else {
                        let (worker, to) = route_of(self.route, dest.index());
                        if worker as usize == self.index {
                            self.deliver(to as usize, key, event);
                        } else {
                            self.transmit(Msg::Event { key, dest, event });
                        }
                    }
                }
                Effect::Withdraw { dest, key } => {
                    self.counters.retractions += 1;
                    self.transmit(Msg::Withdraw { key, dest, cause });
                }
                Effect::Move { dest, from, to } => {
                    self.counters.retractions += 1;
                    if dest == id && self.mail.local.is_empty() {
                        // A timer of its own moved (a watchdog pushed back on every event):
                        // applied at once, as a send to itself is, without the local queue
                        // or the route table. Nothing earlier about the key is queued, and
                        // a safe event leaves no live record for it to roll back.
                        self.apply_at(l, Msg::Move { dest, from, to });
                    } else {
                        self.transmit(Msg::Move { dest, from, to });
                    }
                }
            }
        }
        self.scratch.effects = effects;
    }

    /// Keeps safe event `key` of LP `id` as tentative (ground rule 6), and as the last safe
    /// event for the check of arrivals (`promise.rs`, rule 5). Out of line: a lone worker
    /// never keeps any, and its loop stays as short as it was.
    #[inline(never)]
    fn keep_tentative(&mut self, key: EventKey, id: LpId) {
        let mut content = TraceHash::default();
        if self.settings.content_hash {
            content.add_content(&key, id, &self.scratch.encoded.0);
        }
        self.safe.tentative.push_back((key, id, content));
        self.safe.promises.last_safe = key.time.as_f64();
    }

    /// Settles the tentative safe events below `gvt` (ground rule 6): nothing can stop the
    /// run before them any more.
    pub(super) fn settle_safe_below(&mut self, gvt: EventKey) {
        while let Some((key, _, _)) = self.safe.tentative.front()
            && *key < gvt
        {
            raise(&mut self.last_commit, key.time.as_f64());
            self.safe.tentative.pop_front();
        }
    }

    /// At the end (ground rule 6): the tentative safe events after `stop`, where the run
    /// stopped (with an error), did not commit after all; the others did.
    pub(super) fn settle_safe(&mut self, stop: Option<EventKey>) {
        if let Some(stop) = stop {
            while let Some(&(key, id, content)) = self.safe.tentative.back()
                && key > stop
            {
                let mut trace = TraceHash::default();
                trace.add(&key, id);
                self.trace.remove(&trace);
                self.content.remove(&content);
                self.counters.committed -= 1;
                self.counters.safe -= 1;
                self.safe.tentative.pop_back();
            }
        }
        self.settle_safe_below(crate::message::key_max());
        self.safe.tentative.clear();
    }

    /// Hands the outputs and observed events of safe events below `bound` to `batch` and
    /// `observed` (at a commit).
    pub(super) fn take_safe(
        &mut self,
        bound: EventKey,
        batch: &mut Vec<(EventKey, LpId, M::Output)>,
        observed: &mut Vec<(EventKey, LpId, M::Event)>,
    ) {
        let ready = self
            .safe
            .outputs
            .partition_point(|(key, _, _)| *key < bound);
        batch.extend(self.safe.outputs.drain(..ready));
        let ready = self
            .safe
            .observed
            .partition_point(|(key, _, _)| *key < bound);
        observed.extend(self.safe.observed.drain(..ready));
    }
}
