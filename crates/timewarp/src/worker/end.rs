//! The end of a run that finished: `finish` on every LP's committed state, the events left
//! at exactly the end time, and the final states handed back.

use std::sync::atomic::Ordering;

use warpsim_core::kernel_api::{LpMeta, finish_time, run_finish};
use warpsim_core::{EventKey, LogicalProcess, LpId, PendingEvent, Time};

use super::Worker;
use super::log::Logs;
use super::log::Status;
use super::store::Store;
use crate::message::key_max;
use crate::shared::{StopInfo, ToCoordinator};

/// What a worker hands back of one LP at the end of a run: its final state; after a pause
/// (`Settings::pause`) also its meta and its pending events, for a checkpoint.
pub(crate) struct FinalLp<M: LogicalProcess> {
    pub(crate) id: LpId,
    pub(crate) model: M,
    pub(crate) meta: LpMeta,
    pub(crate) pending: Vec<PendingEvent<M::Event>>,
}

/// What a worker hands the coordinator of its LPs at a checkpoint taken in place: a copy of
/// each LP's committed state and meta (in the worker's order, `ids`), and of its pending
/// events, in key order. Separate vectors, so that the coordinator joins the workers' parts
/// by appending whole slices.
pub(crate) struct SnapshotPart<M: LogicalProcess> {
    pub(crate) ids: Vec<LpId>,
    pub(crate) states: Vec<M>,
    pub(crate) metas: Vec<LpMeta>,
    pub(crate) pending: Vec<PendingEvent<M::Event>>,
}

impl<M: LogicalProcess> Worker<'_, M> {
    /// Whether the run stopped at a pause asked for while it ran and takes its checkpoint in
    /// place (`Settings::snapshots`). Read after the end-of-run barriers, so every worker
    /// decides alike: each lowered its end only at a GVT published after the request, a
    /// run's errors are recorded before their worker reaches the barrier, and an abort
    /// breaks the wait that follows. A run that drained at the pause takes its checkpoint
    /// too (what ran past the pause rolled back, as at any pause) and then goes on.
    pub(super) fn snapshot_due(&self) -> bool {
        self.settings.snapshots
            && !self.shared.no_snapshot.load(Ordering::SeqCst)
            && self.end_time < self.settings.end_time
            && self.shared.stop_key().is_none()
            && !self.shared.is_aborted()
    }

    /// A checkpoint taken in place: after `settle_pause` and the end-of-run barriers every
    /// event below the pause has committed and none after it has run, so each LP's live
    /// state is its committed state there and its pending events are final. Hands the
    /// coordinator a copy of them, waits until every worker has, and returns whether the run
    /// goes on (the coordinator undid the pause: this worker's end is the run's own again
    /// and GVT restarts at the pause) or ends here (a stop; the copies are its checkpoint).
    pub(super) fn snapshot(&mut self) -> bool {
        let mut pending = Vec::with_capacity(self.sizes.pending);
        for (key, l, event) in self.store.iter() {
            pending.push(PendingEvent {
                key,
                dest: self.lps[l as usize].id,
                event: event.clone(),
            });
        }
        let n = self.lps.len();
        let (mut ids, mut states, mut metas) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for lp in &self.lps {
            // Events of failed and held LPs wait in their records.
            if let Some(rare) = &lp.rare {
                for (key, event) in &rare.parked {
                    pending.push(PendingEvent {
                        key: *key,
                        dest: lp.id,
                        event: event.clone(),
                    });
                }
            }
            ids.push(lp.id);
            states.push(lp.model.clone());
            metas.push(lp.meta.clone());
        }
        // Each worker sorts its own, in parallel; the coordinator merges.
        pending.sort_unstable_by_key(|event| event.key);
        let part: SnapshotPart<M> = SnapshotPart {
            ids,
            states,
            metas,
            pending,
        };
        let _ = self.to_coordinator.send(ToCoordinator::Snapshot {
            summary: Box::new(self.summary()),
            part: Box::new(part),
        });
        // Every event is pending at or after the pause, and GVT restarts there: promises
        // start again from it (`promise.rs`, rule 4).
        self.reset_promises(self.end_time);
        if !self.shared.resume.wait() || !self.shared.resuming.load(Ordering::SeqCst) {
            return false;
        }
        self.end_time = self.settings.end_time;
        self.gvt = self.shared.gvt.current();
        self.window.skip_pause(
            self.counters.processed,
            self.counters.rolled_back,
            self.gvt.time.as_f64(),
        );
        true
    }

    /// Reads the pause asked for while the run runs ([`Shared::lower_end`]), at each new
    /// GVT and before anything commits below it: from then on this worker runs no event at
    /// or after it and commits none (a GVT published after the request is read only after
    /// the request's store, so no worker can commit past the pause).
    ///
    /// [`Shared::lower_end`]: crate::shared::Shared::lower_end
    pub(super) fn refresh_end(&mut self) {
        let end = self.shared.end_time();
        if end < self.end_time {
            self.end_time = end;
        }
    }

    /// The smallest key at the end time (everything if there is none): nothing at or after
    /// it commits.
    pub(super) fn end_bound(&self) -> EventKey {
        Time::new(self.end_time).map_or_else(
            |_| key_max(),
            |time| EventKey::new(time, 0, LpId::new(0), Time::ZERO, 0),
        )
    }

    /// Whether the run ends at a pause (for a checkpoint) rather than at its end: a pause
    /// time set before the run, or one asked for while it ran — even when the run drained
    /// meanwhile. Workers may not agree on that: one may leave its loop at a GVT past the
    /// pause while the round it had reported in completes with "no event anywhere" for the
    /// others, so a rule that looked at GVT would pause some workers (rolling back what
    /// they ran past the pause) and finish others. The end each worker knows is the same
    /// (see `refresh_end`), so this rule is.
    fn pausing(&self) -> bool {
        self.settings.pause || self.end_time < self.settings.end_time
    }

    /// Before the last commit of a run paused while it ran: rolls back every event this
    /// worker ran at or after the pause (it may have run some speculatively before it knew
    /// of the pause), and, in lazy mode, sends the antimessages of every deferred send
    /// (nothing runs again to regenerate them). Every worker does this before the
    /// end-of-run barrier, so after it every processed event anywhere is below the pause,
    /// and the antimessages, restores and moves still in flight touch only pending events:
    /// absorbing them after the barrier rolls nothing back and sends nothing.
    pub(super) fn settle_pause(&mut self) {
        if !self.pausing() || self.shared.stop_key().is_some() || self.shared.is_aborted() {
            return;
        }
        let bound = self.end_bound();
        let mut beyond: Vec<usize> = self
            .logs
            .records
            .iter_from(self.logs.records.front())
            .filter(|(_, record)| record.status == Status::Live && record.key >= bound)
            .map(|(_, record)| record.lp as usize)
            .collect();
        beyond.sort_unstable();
        beyond.dedup();
        for l in beyond {
            self.rollback(l, bound, true);
        }
        let deferred = std::mem::take(&mut self.lists.deferred);
        for &l in &deferred {
            self.flush_deferred(l as usize, |_| true);
            self.lps[l as usize].unlist(false, true, false);
            self.lps[l as usize].tidy();
        }
    }

    /// Publishes this worker's latest commit for the run's end-of-run clock; called after
    /// the last commit and before the end-of-run barrier, so every worker has published
    /// once the barrier passes.
    pub(super) fn publish_last_commit(&self) {
        self.shared
            .last_commit
            .fetch_max(self.last_commit.to_bits(), Ordering::SeqCst);
    }

    /// After every message has landed (so each LP's state is its committed state — no
    /// event at or after the end time ever runs — and its pending set is final): unless the
    /// run stopped, counts the events due at exactly the end time, runs `finish` on every
    /// LP and sends its outputs to the coordinator with the bound "everything" (their keys,
    /// [`EventKey::finish`], come after every event's). Returns whether `finish` ran on
    /// every LP without error; a panic stops the run at that LP's finish key, like a
    /// handler's (the smallest such key wins, as LP order does sequentially).
    pub(super) fn finish_lps(&mut self) -> bool {
        // Another worker's failing `finish` is no reason to skip this one's (the smallest
        // failing key must be found); any other stop is.
        if self.shared.stop_key().is_some_and(|key| !key.is_finish()) || self.shared.is_aborted() {
            return false;
        }
        if self.pausing() {
            self.shared.paused.store(true, Ordering::SeqCst);
            // The run goes on from a checkpoint: no `finish`, and the events at the pause
            // time stay pending (`take_states` hands them back).
            let _ = self.to_coordinator.send(ToCoordinator::Committed {
                worker: self.index,
                bound: key_max(),
                outputs: Vec::new(),
            });
            return true;
        }
        let end_time = self.settings.end_time;
        let last_commit = f64::from_bits(self.shared.last_commit.load(Ordering::SeqCst));
        let time = finish_time(end_time, false, last_commit);
        let n_lps = self.settings.n_lps;
        let mut outputs: Vec<(EventKey, LpId, M::Output)> = Vec::new();
        let mut emitted = Vec::new();
        let mut failure = None;
        // Nothing before the end time is pending any more; the events are dropped after this
        // (`take_states`). Counted in no order: draining them in key order sorted every
        // one of them through the ladder (`sort_into_bottom` took 6 % of the samples of a
        // PHOLD run of 262,144 LPs in which no event ran).
        for l in 0..self.lps.len() {
            self.unpark(l);
        }
        self.counters.at_end_time += self
            .store
            .iter()
            .filter(|(key, _, _)| key.time.as_f64() == end_time)
            .count() as u64;
        for lp in &mut self.lps {
            let key = EventKey::finish(lp.id, time);
            match run_finish(
                &mut lp.model,
                &mut lp.meta,
                lp.id,
                n_lps,
                time,
                &mut emitted,
            ) {
                Ok(()) => outputs.extend(emitted.drain(..).map(|output| (key, lp.id, output))),
                // Every LP still finishes, so the smallest failing key is found whatever the
                // order of this worker's LPs; outputs after it are not delivered.
                Err(error) => {
                    if failure.as_ref().is_none_or(|(first, _, _)| key < *first) {
                        failure = Some((key, lp.id, error));
                    }
                }
            }
        }
        let finished = failure.is_none();
        if let Some((key, lp, error)) = failure {
            self.shared.stop_with(StopInfo {
                key,
                lp,
                error,
                outputs: None,
            });
        }
        let _ = self.to_coordinator.send(ToCoordinator::Committed {
            worker: self.index,
            bound: key_max(),
            outputs,
        });
        finished
    }

    /// The final states of this worker's LPs (after a run that finished), with their
    /// pending events after a pause.
    ///
    /// Built in place of the LP records, with the store and logs freed first: at ten
    /// million LPs each byte per LP is ten megabytes, and holding the records, the store and
    /// the final states at once made the end of a run its peak of memory (3.46 GB against
    /// 2.31 GB while running, PHOLD 10 M LPs end 1). A final state is no larger than an LP
    /// record and as aligned, so `collect` reuses the records' buffer (the standard
    /// library's in-place iteration): no new memory is touched. (Copying them out one by
    /// one into a new vector, shrinking the old one an eighth at a time, faulted in fresh
    /// pages for every LP: 1.5 ms a worker at 8,192 LPs, more than running their events.)
    pub(super) fn take_states(&mut self) -> Vec<FinalLp<M>> {
        let mut pending: Vec<Vec<PendingEvent<M::Event>>> = Vec::new();
        if self.pausing() {
            pending = (0..self.lps.len()).map(|_| Vec::new()).collect();
            for l in 0..self.lps.len() {
                self.unpark(l);
            }
            // In key order, so each LP's list is too.
            for (key, l, event) in self.store.drain() {
                pending[l as usize].push(PendingEvent {
                    key,
                    dest: self.lps[l as usize].id,
                    event,
                });
            }
        }
        self.store = Store::with_capacity(0, 0);
        self.logs = Logs::default();
        // What lets `collect` below work in place (equal alignment follows: both hold `M`
        // and `LpMeta` beside fields of 8 bytes).
        const {
            assert!(size_of::<FinalLp<M>>() <= size_of::<super::LpState<M>>());
        }
        let mut pending = pending.into_iter();
        std::mem::take(&mut self.lps)
            .into_iter()
            .map(|lp| FinalLp {
                id: lp.id,
                model: lp.model,
                meta: lp.meta,
                pending: pending.next().unwrap_or_default(),
            })
            .collect()
    }
}
