//! The end of a run that finished: `finish` on every LP's committed state, the events left
//! at exactly the end time, and the final states handed back.

use std::sync::atomic::Ordering;

use warpsim_core::kernel_api::{LpMeta, finish_time, run_finish};
use warpsim_core::{EventKey, LogicalProcess, LpId, PendingEvent};

use super::Worker;
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

impl<M: LogicalProcess> Worker<'_, M> {
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
        if self.settings.pause {
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
        for lp in &mut self.lps {
            // Nothing before the end time is pending any more; the set is dropped after this.
            while let Some(key) = lp.pending.first_key()
                && key.time.as_f64() == end_time
            {
                self.counters.at_end_time += 1;
                let _ = lp.pending.pop_first();
            }
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
    pub(super) fn take_states(&mut self) -> Vec<FinalLp<M>> {
        let pause = self.settings.pause;
        self.lps
            .drain(..)
            .map(|mut lp| {
                let mut pending = Vec::new();
                while pause && let Some((key, event)) = lp.pending.pop_first() {
                    pending.push(PendingEvent {
                        key,
                        dest: lp.id,
                        event,
                    });
                }
                FinalLp {
                    id: lp.id,
                    model: lp.model,
                    meta: lp.meta,
                    pending,
                }
            })
            .collect()
    }
}
