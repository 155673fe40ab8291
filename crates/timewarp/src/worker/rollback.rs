//! Undoing processed events: restoring a state save and coasting forward, putting events
//! back, and undoing what they sent (antimessages at once, or deferred in lazy mode).

use std::panic::{AssertUnwindSafe, catch_unwind};

use warpsim_core::{Ctx, EventKey, LogicalProcess, LpId};

use super::Worker;
use super::log::{NONE, Seq, Status};
use super::lp::{Deferred, Logged, fingerprint};
use crate::message::Msg;

impl<M: LogicalProcess> Worker<'_, M> {
    /// Sets LP `l`'s state to the state after its record `after`: the save of that record's
    /// base, run forward through the LP's records from the base to `after` (coasting).
    pub(super) fn rebuild_state(&mut self, l: usize, after: Seq) {
        let logs = &self.logs;
        if !logs.records.holds(after) {
            return;
        }
        let base = logs.records.get(after).base;
        if !logs.records.holds(base) {
            return;
        }
        // The chain from the base to `after`, oldest first.
        let mut chain = std::mem::take(&mut self.scratch.chain);
        chain.clear();
        let mut seq = after;
        loop {
            chain.push(seq);
            if seq == base || !logs.records.holds(seq) {
                break;
            }
            seq = logs.records.get(seq).prev;
        }
        chain.reverse();
        let base_record = logs.records.get(base);
        let Some((model, meta)) = logs.saves.get(base_record.saves_at) else {
            self.scratch.chain = chain;
            return;
        };
        self.busy = Some((self.lps[l].id, base_record.key));
        let (mut model, mut meta) = (model.clone(), meta.clone());
        let n_lps = self.settings.n_lps;
        let mut effects = std::mem::take(&mut self.scratch.effects);
        let mut outputs = std::mem::take(&mut self.scratch.outputs);
        let mut error = None;
        for &seq in &chain {
            let record = self.logs.records.get(seq);
            let Some(event) = record.event.clone() else {
                continue;
            };
            let mut ctx = Ctx::<M>::buffered(
                record.id,
                record.key,
                n_lps,
                &mut meta,
                &mut effects,
                &mut outputs,
                &mut error,
            );
            ctx.set_lookahead(self.settings.lookahead);
            // The first run of this event succeeded and handlers are deterministic, so this
            // re-run does too; its effects and outputs stand from the first run.
            let _ = catch_unwind(AssertUnwindSafe(|| model.on_event(event, &mut ctx)));
            effects.clear();
            outputs.clear();
            error = None;
            self.counters.coasted += 1;
        }
        let lp = &mut self.lps[l];
        lp.model = model;
        lp.meta = meta;
        self.scratch.effects = effects;
        self.scratch.outputs = outputs;
        self.scratch.chain = chain;
        self.busy = None;
    }

    /// Undoes every processed event of LP `l` with key `>= target`.
    pub(super) fn rollback(&mut self, l: usize, target: EventKey, primary: bool) {
        // The LP's live records from the newest back to the first at or after `target`
        // (committed records are below GVT, hence below any target).
        let mut undone = std::mem::take(&mut self.scratch.undone);
        undone.clear();
        let mut seq = self.lps[l].last;
        while self.logs.is_live(seq) && self.logs.records.get(seq).key >= target {
            undone.push(seq);
            seq = self.logs.records.get(seq).prev;
        }
        let Some(&first) = undone.last() else {
            self.scratch.undone = undone;
            return;
        };
        if primary {
            self.counters.primary += 1;
        } else {
            self.counters.secondary += 1;
            // An antimessage (or retraction) chases the wrong events its target caused. With
            // zero delays those events sit at the same time, and a deterministic model
            // re-running from the restored state regenerates them exactly as fast as the
            // antimessages cancel them: the chase never ends. So until GVT passes this time,
            // the LP runs events at this time only when they are at GVT, which lets the
            // antimessages catch up. Events at later times are not held back.
            self.lps[l].rare_mut().hold = Some(target.time);
        }
        // The state before the first undone record: its own save (which it no longer needs),
        // or the state after the record before it.
        let record = self.logs.records.get(first);
        if record.saved {
            let saved = self.logs.saves.get_mut(record.saves_at).take();
            if let Some((model, meta)) = saved {
                self.sizes.saves -= 1;
                if self.settings.memory.is_some() {
                    self.sizes.save_heap -= model.heap_bytes() as u64;
                }
                let lp = &mut self.lps[l];
                lp.model = model;
                lp.meta = meta;
            }
        } else {
            let before = record.prev;
            self.rebuild_state(l, before);
        }
        // Undo the effects of the undone events, newest first (each record's effects are in
        // the order its handler made them).
        for &seq in &undone {
            let record = self.logs.records.get(seq);
            let (cause, from, count) = (record.key, record.effects_at, Seq::from(record.effects));
            for at in (from..from + count).rev() {
                let effect = std::mem::replace(self.logs.effects.get_mut(at), Logged::Taken);
                self.undo_effect(l, cause, effect);
            }
        }
        // The undone events are pending again.
        for &seq in &undone {
            let record = self.logs.records.get_mut(seq);
            record.status = Status::Dead;
            let key = record.key;
            let event = record.event.take();
            self.sizes.outputs -= record.outputs.len();
            record.outputs = Vec::new();
            if record.saved
                && let Some((model, _)) = self.logs.saves.get_mut(record.saves_at).take()
            {
                self.sizes.saves -= 1;
                if self.settings.memory.is_some() {
                    self.sizes.save_heap -= model.heap_bytes() as u64;
                }
            }
            if let Some(event) = event {
                self.add_pending(l, key, event);
            }
        }
        self.counters.rolled_back += undone.len() as u64;
        // The LP's newest record is now the one before the first undone.
        let lp = &mut self.lps[l];
        lp.last = seq;
        (lp.newest, lp.base, lp.since) = if self.logs.records.holds(seq) {
            let record = self.logs.records.get(seq);
            lp.last_key = fingerprint(&record.key);
            let newest = if record.status == Status::Live {
                record.key.time.as_f64()
            } else {
                -1.0
            };
            if self.logs.records.holds(record.base) {
                (newest, record.base, record.since)
            } else {
                (newest, NONE, 0)
            }
        } else {
            (-1.0, NONE, 0)
        };
        self.scratch.undone = undone;
        self.clear_failure(l, target);
    }

    /// Undoes one logged effect of LP `l`'s event `cause`: an antimessage for a send (or, in
    /// lazy mode, the send deferred until the event runs again), a restore for a cancel, the
    /// reverse move for a move.
    fn undo_effect(&mut self, l: usize, cause: EventKey, effect: Logged<M::Event>) {
        match effect {
            Logged::Send {
                key,
                dest,
                event: Some(event),
            } if self.settings.lazy => {
                let rare = self.lps[l].rare_mut();
                rare.deferred.push(Deferred {
                    cause,
                    key,
                    dest,
                    event,
                });
                self.sizes.deferred += 1;
                if !rare.in_deferred {
                    rare.in_deferred = true;
                    self.lists.deferred.push(l as u32);
                    // A deferred send may still be cancelled (see `safe.rs`, rule 2).
                    self.void_safe();
                }
            }
            Logged::Send { key, dest, .. } => self.send_anti(key, dest),
            Logged::Withdraw { key, dest } => {
                self.counters.retractions += 1;
                self.transmit(Msg::Restore { key, dest, cause });
            }
            Logged::Move { dest, from, to } => {
                self.counters.retractions += 1;
                self.transmit(Msg::Move {
                    dest,
                    from: to,
                    to: from,
                });
            }
            Logged::Taken => {}
        }
    }

    pub(super) fn send_anti(&mut self, key: EventKey, dest: LpId) {
        self.counters.antimessages += 1;
        self.transmit(Msg::Anti { key, dest });
    }

    /// Sends the antimessages of LP `l`'s deferred sends that match `which`.
    pub(super) fn flush_deferred(&mut self, l: usize, which: impl Fn(&Deferred<M::Event>) -> bool) {
        let mut index = 0;
        loop {
            let lp = &mut self.lps[l];
            let Some(rare) = lp.rare.as_mut() else {
                break;
            };
            if index >= rare.deferred.len() {
                break;
            }
            if which(&rare.deferred[index]) {
                let deferred = rare.deferred.swap_remove(index);
                self.sizes.deferred -= 1;
                self.send_anti(deferred.key, deferred.dest);
            } else {
                index += 1;
            }
        }
    }
}
