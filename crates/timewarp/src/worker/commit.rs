//! GVT and what follows it: this worker's report to a round, committing below a new GVT
//! and collecting fossils, the adaptive controllers, and the memory account.

use std::sync::atomic::Ordering;

use warpsim_core::kernel_api::encode_event;
use warpsim_core::{EventKey, LogicalProcess};

use super::Worker;
use super::log::{NONE, Rec, Saved, Status};
use super::lp::{Deferred, Logged};
use crate::control::Progress;
use crate::message::key_max;
use crate::shared::{StopInfo, ToCoordinator, pending_bytes};
use crate::watch::Warning;

impl<M: LogicalProcess> Worker<'_, M> {
    /// Reports this worker's local minimum for `round` (ground rule 6).
    pub(super) fn report(&mut self, round: u64) {
        // Deferred sends whose cause is gone are cancelled first, so their antimessages are
        // flushed below and covered by this report.
        let mut position = 0;
        while position < self.lists.deferred.len() {
            let l = self.lists.deferred[position] as usize;
            if self.settings.lazy {
                let causes: Vec<EventKey> =
                    self.lps[l].deferred().iter().map(|d| d.cause).collect();
                let gone: Vec<EventKey> = causes
                    .into_iter()
                    .filter(|cause| !self.has_pending(l, cause))
                    .collect();
                if !gone.is_empty() {
                    self.flush_deferred(l, |d| gone.contains(&d.cause));
                }
            }
            if self.lps[l].deferred().is_empty() {
                self.lps[l].unlist(false, true, false);
                self.lps[l].tidy();
                self.lists.deferred.swap_remove(position);
            } else {
                position += 1;
            }
        }
        self.flush_all();
        self.absorb_inbox();
        self.drain_local();
        self.flush_all();
        let mut local = self.store.peek().map_or_else(key_max, |(key, _)| key);
        // Parked events (of failed and held LPs) are pending too.
        for &l in self.lists.failed.iter().chain(&self.lists.held) {
            if let Some(rare) = &self.lps[l as usize].rare
                && let Some((key, _)) = rare.parked.first_key_value()
            {
                local = local.min(*key);
            }
        }
        for &l in &self.lists.deferred {
            for deferred in self.lps[l as usize].deferred() {
                local = local.min(deferred.cause);
            }
        }
        if self
            .shared
            .gvt
            .report(&mut self.port, round, local)
            .is_some()
        {
            // A new GVT: workers asleep waiting for one (idle, or at a window) look now.
            self.wake_peers();
        } else if self.shared.gvt.is_external() {
            // The rank's gateway, asleep between looks, takes the round on to the other
            // ranks at once: it is the last of this rank's peers (`cluster` ground rule 2).
            if let Some(gateway) = self.mail.peers.last() {
                let _ = gateway.send(Vec::new());
            }
        }
    }

    /// Acts on a new GVT: commits below it, and decides whether the run is over. Returns
    /// `true` when this worker should finish.
    pub(super) fn new_gvt(&mut self, gvt: EventKey, safe: Option<EventKey>) -> bool {
        self.refresh_end();
        self.adapt(gvt);
        self.gvt = gvt;
        // Nothing at or after a pause asked for mid-run commits (see `end.rs`).
        self.commit_below(gvt.min(self.end_bound()));
        self.settle_safe_below(gvt);
        self.adopt_safe(safe);
        // Held LPs may run their events at the new GVT (or later, once GVT passes the hold):
        // their events go back to the store, and park again if they still must wait.
        let held = std::mem::take(&mut self.lists.held);
        for &l in &held {
            let lp = &mut self.lps[l as usize];
            lp.unlist(true, false, false);
            if let Some(rare) = lp.rare.as_mut()
                && rare.hold.is_some_and(|hold| gvt.time > hold)
            {
                rare.hold = None;
            }
            if lp.failed().is_none() {
                self.unpark(l as usize);
            }
        }
        // For load balancing and the progress hook.
        let gauge = &self.shared.gauges[self.index];
        gauge
            .committed
            .store(self.counters.committed, Ordering::Relaxed);
        gauge
            .processed
            .store(self.counters.processed, Ordering::Relaxed);
        if gvt == key_max() || gvt.time.as_f64() >= self.end_time {
            return true;
        }
        if self.settings.balance {
            self.note_waiting();
            if self.index == 0 {
                self.consider_balancing();
            }
        }
        for &l in &self.lists.failed {
            let lp = &mut self.lps[l as usize];
            if let Some(failure) = lp.rare.as_mut().and_then(|rare| rare.failed.as_mut())
                && failure.key <= gvt
            {
                // Nothing before the failed event can change any more: the error is real.
                let info = StopInfo {
                    key: failure.key,
                    lp: lp.id,
                    error: failure.error.clone(),
                    outputs: failure.outputs.take(),
                };
                self.shared.stop_with(info);
                return true;
            }
        }
        false
    }

    /// Lets the controllers adapt to a new GVT: the memory budget's window (first: the
    /// optimism window restarts the horizon both read), the optimism window and the
    /// state-save interval. They change only speed, never what commits.
    fn adapt(&mut self, gvt: EventKey) {
        let now = gvt.time.as_f64();
        let counters = &self.counters;
        let progress = Progress {
            processed: counters.processed,
            rolled_back: counters.rolled_back,
            committed: counters.committed,
            rollbacks: counters.primary + counters.secondary,
        };
        let used = self.total_memory();
        if let Some(memory) = &mut self.memory
            && memory.adapt(now, progress.committed, self.window.horizon(), used)
            && self.index == 0
            && let Some(budget) = self.settings.memory
        {
            let used = self
                .shared
                .gauges
                .iter()
                .map(|gauge| gauge.total.load(Ordering::Relaxed))
                .sum();
            (self.shared.warnings)(&Warning::MemoryBudgetExceeded { budget, used });
        }
        if self.settings.adaptive_window {
            self.window.adapt(now, progress);
        }
        self.checkpoint.adapt(progress);
    }

    /// Commits every processed event with a key below `bound` and forgets what no rollback
    /// can need any more (ground rules 2 and 5): one walk over the record log, in the order
    /// the events ran, which touches no LP record.
    pub(super) fn commit_below(&mut self, bound: EventKey) {
        let mut batch = Vec::new();
        let mut observed = Vec::new();
        // The smallest base of a record still live (see `log.rs`, "Forgetting").
        let mut pin = NONE;
        let mut committed = 0u64;
        let mut live = 0u64;
        let mut last_commit = self.last_commit;
        let Worker {
            logs,
            trace,
            content,
            scratch,
            sizes,
            settings,
            ..
        } = self;
        for (_, record) in logs.records.iter_mut() {
            if record.status != Status::Live {
                continue;
            }
            if record.key >= bound {
                pin = pin.min(record.base);
                live += 1;
                continue;
            }
            record.status = Status::Committed;
            committed += 1;
            trace.add(&record.key, record.id);
            if settings.content_hash {
                let bytes = &mut scratch.encoded.0;
                if !record
                    .event
                    .as_ref()
                    .is_some_and(|event| encode_event(event, bytes))
                {
                    bytes.clear();
                }
                content.add_content(&record.key, record.id, bytes);
            }
            if settings.observe
                && let Some(event) = &record.event
            {
                observed.push((record.key, record.id, event.clone()));
            }
            // Most events emit nothing.
            if !record.outputs.is_empty() {
                sizes.outputs -= record.outputs.len();
                for output in record.outputs.drain(..) {
                    batch.push((record.key, record.id, output));
                }
            }
            last_commit = last_commit.max(record.key.time.as_f64());
        }
        self.counters.committed += committed;
        self.last_commit = last_commit;
        self.take_safe(bound, &mut batch, &mut observed);
        self.logs.committed(live);
        let dropped = self.logs.forget(pin);
        self.sizes.saves -= dropped.saves;
        if self.settings.memory.is_some() {
            self.sizes.save_heap -= dropped.save_heap;
        }
        let mut position = 0;
        while position < self.lists.withdrawn.len() {
            let l = self.lists.withdrawn[position] as usize;
            let lp = &mut self.lps[l];
            let withdrawn = &mut lp.rare_mut().withdrawn;
            let before = withdrawn.len();
            // Once GVT passes the cancel, no rollback can restore the event.
            withdrawn.retain(|_, (_, cause)| *cause >= bound);
            let after = withdrawn.len();
            self.sizes.withdrawn -= before - after;
            if after == 0 {
                lp.unlist(false, false, true);
                lp.tidy();
                self.lists.withdrawn.swap_remove(position);
            } else {
                position += 1;
            }
        }
        if !observed.is_empty() {
            let _ = self
                .to_coordinator
                .send(ToCoordinator::Observed(Box::new(observed)));
        }
        // Observed runs report every commit: the observer shows events below the bounds.
        if !batch.is_empty()
            || self.settings.observe
            || self.shared.wants_bounds.load(Ordering::Relaxed)
        {
            let _ = self.to_coordinator.send(ToCoordinator::Committed {
                worker: self.index,
                bound,
                outputs: batch,
            });
        }
    }

    /// Updates this worker's memory estimate (for the statistics) and, under a budget,
    /// publishes it and reads whether the run as a whole is over budget.
    pub(super) fn update_gauge(&mut self) {
        let total = self.total_memory();
        self.counters.peak_bytes = self.counters.peak_bytes.max(total);
        if self.memory.is_none() {
            return;
        }
        let gauge = &self.shared.gauges[self.index];
        gauge.total.store(total, Ordering::Relaxed);
        let sum: u64 = self
            .shared
            .gauges
            .iter()
            .map(|gauge| gauge.total.load(Ordering::Relaxed))
            .sum();
        let span = (self.window.horizon() - self.gvt.time.as_f64()).max(0.0);
        if let Some(memory) = &mut self.memory
            && memory.gauge(sum, span)
        {
            // Collect fossils as soon as possible: that is what frees memory.
            self.shared.gvt.try_start();
        }
    }

    /// This worker's memory estimate: its storage counted by `size_of` (see the crate docs,
    /// "Memory"), plus the heap of its state saves as the model reports it.
    pub(super) fn total_memory(&self) -> u64 {
        pending_bytes::<M::Event>(self.sizes.pending)
            + (self.logs.records.len() * size_of::<Rec<M>>()) as u64
            + (self.logs.saves.len() * size_of::<Option<Saved<M>>>()) as u64
            + (self.logs.effects.len() * size_of::<Logged<M::Event>>()) as u64
            + (self.sizes.deferred * size_of::<Deferred<M::Event>>()) as u64
            + (self.sizes.withdrawn * (size_of::<EventKey>() * 2 + size_of::<M::Event>() + 16))
                as u64
            + (self.sizes.outputs * size_of::<M::Output>()) as u64
            + self.store.index_bytes()
            + self.sizes.save_heap
    }
}
