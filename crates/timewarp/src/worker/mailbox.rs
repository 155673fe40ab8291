//! Messages between LPs: to this worker's own LPs through a local FIFO, to other workers
//! in batches over channels, and applying an arriving message (ground rule 4).

use std::sync::atomic::Ordering;

use warpsim_core::{EventKey, LogicalProcess};

use super::{BATCH, Worker};
use crate::message::{Msg, key_max, route_of};

impl<M: LogicalProcess> Worker<'_, M> {
    pub(super) fn transmit(&mut self, msg: Msg<M::Event>) {
        let (worker, _) = route_of(self.route, msg.dest().index());
        let worker = worker as usize;
        if worker == self.index {
            if self.mail.local.is_empty() && matches!(msg, Msg::Event { .. }) {
                // A new event for an LP of this worker is applied at once (the common case:
                // self-sends). Applying it can roll its LP back, but a rollback sends no new
                // events, so this never recurses; and with the local queue empty, nothing
                // sent earlier about the same key can be overtaken.
                self.apply(msg);
            } else {
                self.mail.local.push_back(msg);
            }
        } else {
            // As soon as it is sent, not when its batch leaves: a reply can come back at
            // any key above it (see `safe.rs`, rule 1).
            self.sent_away(msg.touches(), msg.stamp());
            self.mail.outboxes[worker].push(msg);
            if self.mail.outboxes[worker].len() >= BATCH {
                self.flush(worker);
            }
        }
    }

    pub(super) fn flush(&mut self, worker: usize) {
        if self.mail.outboxes[worker].is_empty() {
            return;
        }
        let fresh = self
            .mail
            .spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(BATCH));
        let batch = std::mem::replace(&mut self.mail.outboxes[worker], fresh);
        let stamp = batch.iter().map(Msg::stamp).min().unwrap_or_else(key_max);
        // A closed inbox means its worker has finished, which happens only once nothing can
        // reach it that matters (after the final barrier).
        if self.settings.balance {
            self.shared
                .in_flight
                .fetch_add(batch.len() as i64, Ordering::SeqCst);
        }
        let _ = self.mail.peers[worker].send(batch);
        self.shared.gvt.note_send(&mut self.port, stamp);
    }

    pub(super) fn flush_all(&mut self) {
        for worker in 0..self.mail.outboxes.len() {
            self.flush(worker);
        }
        self.safe.promises.all_sent();
    }

    pub(super) fn absorb_inbox(&mut self) {
        while let Ok(batch) = self.mail.inbox.try_recv() {
            self.absorb(batch);
        }
    }

    pub(super) fn absorb(&mut self, mut batch: Vec<Msg<M::Event>>) {
        if self.settings.balance {
            self.shared
                .in_flight
                .fetch_sub(batch.len() as i64, Ordering::SeqCst);
        }
        // Load at once the record of every receiver that will read it, so their cache
        // misses overlap. A new event later than anything run here does not read it (see
        // `deliver`). Records that fit in the cache are not (see `Worker::warms`).
        if self.warms() {
            for msg in &batch {
                if matches!(msg, Msg::Event { key, .. } if key.time.as_f64() > self.newest_max) {
                    continue;
                }
                let (worker, l) = route_of(self.route, msg.dest().index());
                if worker as usize == self.index {
                    self.warm(l as usize);
                }
            }
        }
        for msg in batch.drain(..) {
            // (`promise.rs`, rule 5: one comparison, for every kernel bug it would catch.)
            let time = msg.touches().time.as_f64();
            if time < self.safe.promises.last_safe {
                self.promise_broken(time, "a message from another worker");
            }
            self.apply(msg);
        }
        if self.mail.spare.len() < 64 {
            self.mail.spare.push(batch);
        }
    }

    pub(super) fn drain_local(&mut self) {
        while let Some(msg) = self.mail.local.pop_front() {
            self.apply(msg);
        }
    }

    /// Applies one message to its LP (ground rule 4).
    pub(super) fn apply(&mut self, msg: Msg<M::Event>) {
        let (_, l) = route_of(self.route, msg.dest().index());
        self.apply_at(l as usize, msg);
    }

    /// Whether a message touching `key` must first roll LP `l` back: it has a live record
    /// at or after `key`. Its `newest` time answers most messages without reading the log.
    #[inline]
    pub(super) fn must_roll_back(&self, l: usize, key: EventKey) -> bool {
        let lp = &self.lps[l];
        key.time.as_f64() <= lp.newest
            && self.logs.is_live(lp.last)
            && key <= self.logs.records.get(lp.last).key
    }

    /// A new event `key` for this worker's LP `l` (a [`Msg::Event`]; a safe event's sends
    /// come straight here, without building the message).
    #[inline]
    pub(super) fn deliver(&mut self, l: usize, key: EventKey, event: M::Event) {
        if key.time.as_f64() > self.newest_max
            && self.early_antis.is_empty()
            && self.lists.failed.is_empty()
        {
            // Later than every event any LP here has run, so it rolls nothing back, and no
            // LP has a failure to clear: nothing of the LP's record is needed, and the store
            // lists the event later (see `store.rs`, "Listing later").
            self.store.send(l as u32, key, event);
            self.count_pending();
            return;
        }
        if !self.early_antis.is_empty() && self.early_antis.remove(&(l as u32, key)) {
            return;
        }
        if self.must_roll_back(l, key) {
            self.rollback(l, key, true);
        }
        self.clear_failure(l, key);
        self.add_pending(l, key, event);
    }

    /// Applies one message to this worker's LP `l`, which it is addressed to.
    pub(super) fn apply_at(&mut self, l: usize, msg: Msg<M::Event>) {
        match msg {
            Msg::Event { key, event, .. } => self.deliver(l, key, event),
            Msg::Anti { key, .. } => {
                if self.must_roll_back(l, key) {
                    self.rollback(l, key, false);
                }
                self.clear_failure(l, key);
                if self.take_pending(l, &key).is_some() {
                    // Annihilated.
                } else if let Some(rare) = self.lps[l].rare.as_mut()
                    && rare.withdrawn.remove(&key).is_some()
                {
                    self.sizes.withdrawn -= 1;
                } else {
                    // The event is still on its way (possible only across a future
                    // transport without per-pair FIFO): annihilate it when it comes.
                    self.counters.early_antimessages += 1;
                    self.early_antis.insert((l as u32, key));
                }
            }
            Msg::Withdraw { key, cause, .. } => {
                if self.must_roll_back(l, key) {
                    self.counters.retraction_rollbacks += 1;
                    self.rollback(l, key, false);
                }
                self.clear_failure(l, key);
                if let Some(event) = self.take_pending(l, &key) {
                    let rare = self.lps[l].rare_mut();
                    rare.withdrawn.insert(key, (event, cause));
                    self.sizes.withdrawn += 1;
                    if !rare.in_withdrawn {
                        rare.in_withdrawn = true;
                        self.lists.withdrawn.push(l as u32);
                    }
                }
            }
            Msg::Restore { key, .. } => {
                let restored = self.lps[l]
                    .rare
                    .as_mut()
                    .and_then(|rare| rare.withdrawn.remove(&key));
                if let Some((event, _)) = restored {
                    self.sizes.withdrawn -= 1;
                    if self.must_roll_back(l, key) {
                        self.counters.retraction_rollbacks += 1;
                        self.rollback(l, key, false);
                    }
                    self.clear_failure(l, key);
                    self.add_pending(l, key, event);
                }
            }
            Msg::Move { from, to, .. } => {
                let first = from.min(to);
                if self.must_roll_back(l, first) {
                    self.counters.retraction_rollbacks += 1;
                    self.rollback(l, first, false);
                }
                self.clear_failure(l, first);
                // In place when it is in the store; a parked event goes back through the
                // store, where it parks again if its LP still may not run it.
                if !self.store.reschedule(l as u32, &from, to)
                    && let Some(event) = self.take_pending(l, &from)
                {
                    self.add_pending(l, to, event);
                }
            }
        }
    }
}
