//! GVT and what follows it: this worker's report to a round, committing below a new GVT
//! and collecting fossils, the adaptive controllers, and the memory account.

use std::sync::atomic::Ordering;

use warpsim_core::kernel_api::encode_event;
use warpsim_core::{EventKey, LogicalProcess, LpId, Time};

use super::lp::{Deferred, EffectRecord, Processed, saved_heap};
use super::{SPARE_SAVES, Worker};
use crate::control::Progress;
use crate::message::key_max;
use crate::shared::{StopInfo, ToCoordinator, pending_bytes};
use crate::watch::Warning;

/// A state at least this big (its own size and its heap) is kept with the records after it
/// when they all commit (see [`keeps_coast_base`]).
const COAST_BASE_BYTES: usize = 1024;

/// Whether a fully committed LP keeps its last state save and the records after it, to
/// coast from, instead of saving its state again at its next event (which it must do when
/// it has no records: every LP's first event after a GVT saves, whatever the interval). Worth
/// it for a large state: Sharks World's sectors copy kilobytes per save, and those first
/// saves were an eighth of its events and a seventh of its cache misses. A small state is
/// cheaper to save again than to keep: at millions of LPs the kept records would be most of
/// the memory. Sizes, not timings: a save's timed cost includes the first touch of a cold
/// state, which the event would pay anyway.
fn keeps_coast_base<M: LogicalProcess>(model: &M) -> bool {
    size_of::<M>() + model.heap_bytes() >= COAST_BASE_BYTES
}

/// How many dirty LPs ahead commit asks for LP records (and half as far for their processed
/// records) (see [`Worker::commit_below`]).
const COMMIT_AHEAD: usize = 8;

impl<M: LogicalProcess> Worker<'_, M> {
    /// Reports this worker's local minimum for `round` (ground rule 6).
    pub(super) fn report(&mut self, round: u64) {
        // Deferred sends whose cause is gone are cancelled first, so their antimessages are
        // flushed below and covered by this report.
        let mut position = 0;
        while position < self.lists.deferred.len() {
            let l = self.lists.deferred[position] as usize;
            if self.settings.lazy {
                let lp = &self.lps[l];
                let gone: Vec<EventKey> = lp
                    .deferred()
                    .iter()
                    .map(|d| d.cause)
                    .filter(|cause| !lp.pending.contains_key(cause))
                    .collect();
                if !gone.is_empty() {
                    self.flush_deferred(l, |d| gone.contains(&d.cause));
                }
            }
            if self.lps[l].deferred().is_empty() {
                self.lps[l].in_deferred = false;
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
        // The scheduler orders by (time, age) only, so the smallest pending key is at least
        // that prefix with the smallest source and identity.
        let mut local = match self.next_lp() {
            Some((_, l)) => {
                let (time, age) = self.lps[l].queued.expect("the first LP is queued");
                EventKey::new(
                    Time::new(f64::from_bits(time)).unwrap_or(Time::ZERO),
                    age,
                    LpId::new(0),
                    Time::ZERO,
                    0,
                )
            }
            None => key_max(),
        };
        for &l in &self.lists.failed {
            if let Some(failure) = self.lps[l as usize].failed() {
                local = local.min(failure.key);
            }
        }
        for &l in &self.lists.held {
            if let Some(key) = self.lps[l as usize].pending.first_key() {
                local = local.min(key);
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
        }
    }

    /// Acts on a new GVT: commits below it, and decides whether the run is over. Returns
    /// `true` when this worker should finish.
    pub(super) fn new_gvt(&mut self, gvt: EventKey) -> bool {
        self.refresh_end();
        self.adapt(gvt);
        self.gvt = gvt;
        // Nothing at or after a pause asked for mid-run commits (see `end.rs`).
        self.commit_below(gvt.min(self.end_bound()));
        let held = std::mem::take(&mut self.lists.held);
        for &l in &held {
            let lp = &mut self.lps[l as usize];
            lp.in_held = false;
            if let Some(rare) = lp.rare.as_mut()
                && rare.hold.is_some_and(|hold| gvt.time > hold)
            {
                rare.hold = None;
                lp.tidy();
            }
        }
        for &l in &held {
            self.resched(l as usize);
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
        if self.settings.balance && self.index == 0 {
            self.consider_balancing();
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

    /// Commits every processed event with a key below `bound` and drops what no rollback
    /// can need any more (ground rules 2 and 5).
    pub(super) fn commit_below(&mut self, bound: EventKey) {
        let mut batch = Vec::new();
        let mut observed = Vec::new();
        self.spare.saves_cap = SPARE_SAVES.max(self.sizes.saves);
        // Visiting the LPs in index order walks `lps` forwards, which the hardware prefetches;
        // in the order they became dirty every LP is a cache miss.
        self.lists.order_dirty();
        let mut kept = 0;
        for position in 0..self.lists.dirty.len() {
            // Commit reads each dirty LP's record and then its processed records, cold since
            // they ran: ask for both ahead of use, the records once the LP's record (asked
            // for earlier) can say where they are.
            if let Some(&ahead) = self.lists.dirty.get(position + COMMIT_AHEAD) {
                let lp = &self.lps[ahead as usize];
                prefetch_index::prefetch_index(std::slice::from_ref(&lp.processed), 0);
            }
            if let Some(&near) = self.lists.dirty.get(position + COMMIT_AHEAD / 2) {
                let processed = &self.lps[near as usize].processed;
                if let Some(record) = processed.get(processed.len().wrapping_sub(1)) {
                    prefetch_index::prefetch_index(std::slice::from_ref(record), 0);
                }
            }
            let l = self.lists.dirty[position] as usize;
            let lp = &mut self.lps[l];
            let start = lp.committed_prefix as usize;
            // Committed records are below the previous bound, hence below this one (GVT never
            // goes back). Usually
            // every record is below the bound, which the last one shows without a search.
            let end = if lp.processed.last().is_some_and(|record| record.key < bound) {
                lp.processed.len()
            } else {
                lp.processed
                    .partition_point(|record| record.key < bound)
                    .max(start)
            };
            // Usually every record commits, and then every state save goes too: in this loop,
            // which reads the records anyway — unless the LP keeps its last save to coast
            // from (see `keeps_coast_base`).
            let all = end == lp.processed.len() && (end == 0 || !keeps_coast_base(&lp.model));
            if all && self.settings.memory.is_some() {
                self.sizes.save_heap -= saved_heap(lp.processed.iter());
            }
            let mut effects = 0;
            for record in lp.processed[start..end].iter_mut() {
                if all {
                    self.sizes.saves -= self.spare.put_save(record.snapshot.take());
                }
                effects += record.effects as usize;
                self.trace.add(&record.key, lp.id);
                if self.settings.content_hash {
                    let bytes = &mut self.scratch.encoded.0;
                    if !encode_event(&record.event, bytes) {
                        bytes.clear();
                    }
                    self.content.add_content(&record.key, lp.id, bytes);
                }
                if self.settings.observe {
                    observed.push((record.key, lp.id, record.event.clone()));
                }
                // Most events emit nothing, and an empty `drain` still costs a few dozen
                // instructions.
                if !record.outputs.is_empty() {
                    self.sizes.outputs -= record.outputs.len();
                    for output in record.outputs.drain(..) {
                        batch.push((record.key, lp.id, output));
                    }
                }
            }
            if end > start {
                // An LP's records are in key order: the last one committed is its latest.
                let newly = (end - start) as u64;
                self.counters.committed += newly;
                lp.load += newly;
                self.last_commit = self
                    .last_commit
                    .max(lp.processed[end - 1].key.time.as_f64());
            }
            if all {
                self.sizes.records -= lp.processed.len();
                // The records committed earlier, kept to coast forward from.
                for record in &mut lp.processed[..start] {
                    self.sizes.saves -= self.spare.put_save(record.snapshot.take());
                }
                lp.processed.clear();
                lp.committed_prefix = 0;
                lp.newest = -1.0;
                lp.since_snapshot = 0;
                // Every logged effect was caused by a record now committed (the log holds
                // effects of processed records only: rollbacks remove those of undone ones),
                // so the whole log goes without reading it.
                self.sizes.effects -= lp.effects.len();
                lp.effects.clear();
                self.spare.put_back(&mut lp.processed, &mut lp.effects);
            } else {
                // The latest state save at or before the first record not committed (or
                // the last record, when all are): the records from it on stay.
                let mut keep = end.min(lp.processed.len() - 1);
                while keep > 0 && lp.processed[keep].snapshot.is_none() {
                    keep -= 1;
                }
                if self.settings.memory.is_some() {
                    self.sizes.save_heap -= saved_heap(lp.processed[..keep].iter());
                }
                for record in &mut lp.processed[..keep] {
                    self.sizes.saves -= self.spare.put_save(record.snapshot.take());
                }
                lp.processed.drain(..keep);
                self.sizes.records -= keep;
                lp.committed_prefix = (end - keep) as u32;
                if lp.processed.len() == lp.committed_prefix as usize {
                    lp.newest = -1.0;
                }
            }
            // The effects of the records just committed are the log's first (those of the
            // records committed before left then), and no rollback can undo them now.
            if !lp.effects.is_empty() {
                lp.effects.drain(..effects);
                self.sizes.effects -= effects;
            }
            if lp.processed.len() > lp.committed_prefix as usize {
                self.lists.dirty[kept] = l as u32;
                kept += 1;
            } else {
                lp.in_dirty = false;
                self.lists.dirty_bits[l / 64] &= !(1 << (l % 64));
            }
        }
        self.lists.dirty.truncate(kept);
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
                lp.in_withdrawn = false;
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
        let _ = self.to_coordinator.send(ToCoordinator::Committed {
            worker: self.index,
            bound,
            outputs: batch,
        });
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
            + (self.sizes.records * size_of::<Processed<M>>()) as u64
            + ((self.sizes.saves + self.spare.saves.len()) * size_of::<super::lp::Saved<M>>())
                as u64
            + (self.sizes.effects * size_of::<EffectRecord<M::Event>>()) as u64
            + (self.sizes.deferred * size_of::<Deferred<M::Event>>()) as u64
            + (self.sizes.withdrawn * (size_of::<EventKey>() * 2 + size_of::<M::Event>() + 16))
                as u64
            + (self.sizes.outputs * size_of::<M::Output>()) as u64
            + (self.heap.len() * 16) as u64
            + self.sizes.save_heap
    }
}
