//! Undoing processed events: restoring a state save and coasting forward, putting events
//! back, and undoing what they sent (antimessages at once, or deferred in lazy mode).

use std::panic::{AssertUnwindSafe, catch_unwind};

use warpsim_core::{Ctx, EventKey, LogicalProcess, LpId};

use super::Worker;
use super::lp::{Deferred, Logged, saved_heap};
use crate::message::Msg;

impl<M: LogicalProcess> Worker<'_, M> {
    /// Sets LP `l`'s state to the state before `processed[i]` (or after the last record when
    /// `i == len`): the nearest save at or before it, then coasting forward.
    pub(super) fn restore(&mut self, l: usize, i: usize) {
        let n_lps = self.settings.n_lps;
        let mut effects = std::mem::take(&mut self.scratch.effects);
        let mut outputs = std::mem::take(&mut self.scratch.outputs);
        let lp = &mut self.lps[l];
        let mut j = i.min(lp.processed.len().saturating_sub(1));
        while j > 0 && lp.processed[j].snapshot.is_none() {
            j -= 1;
        }
        self.busy = lp.processed.get(j).map(|record| (lp.id, record.key));
        let (mut model, mut meta) = if j == i {
            // Record `i` is being undone, so its save can be moved out.
            match lp.processed[j].snapshot.take() {
                Some(state) => {
                    if self.settings.memory.is_some() {
                        self.sizes.save_heap -= state.0.heap_bytes() as u64;
                    }
                    self.sizes.saves -= 1;
                    *state
                }
                None => return,
            }
        } else {
            match &lp.processed[j].snapshot {
                Some(saved) => (saved.0.clone(), saved.1.clone()),
                None => return,
            }
        };
        let mut error = None;
        for record in &lp.processed[j..i] {
            let mut ctx = Ctx::<M>::buffered(
                lp.id,
                record.key,
                n_lps,
                &mut meta,
                &mut effects,
                &mut outputs,
                &mut error,
            );
            let event = record.event.clone();
            // The first run of this event succeeded and handlers are deterministic, so this
            // re-run does too; its effects and outputs stand from the first run.
            let _ = catch_unwind(AssertUnwindSafe(|| model.on_event(event, &mut ctx)));
            effects.clear();
            outputs.clear();
            error = None;
            self.counters.coasted += 1;
        }
        lp.model = model;
        lp.meta = meta;
        self.scratch.effects = effects;
        self.scratch.outputs = outputs;
        self.busy = None;
    }

    /// Undoes every processed event of LP `l` with key `>= target`.
    pub(super) fn rollback(&mut self, l: usize, target: EventKey, primary: bool) {
        let lp = &self.lps[l];
        let start = lp.committed_prefix as usize;
        // Committed records are below GVT, hence below any target.
        let i = lp
            .processed
            .partition_point(|record| record.key < target)
            .max(start);
        if i == lp.processed.len() {
            return;
        }
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
        self.restore(l, i);
        // Undo the effects of the undone events, newest first (the log holds each record's
        // effects in order, the newest record's last).
        for index in (i..self.lps[l].processed.len()).rev() {
            let record = &self.lps[l].processed[index];
            let (cause, count) = (record.key, record.effects);
            for _ in 0..count {
                let lp = &mut self.lps[l];
                let Some(effect) = lp.effects.pop() else {
                    break;
                };
                self.sizes.effects -= 1;
                self.undo_effect(l, cause, effect);
            }
        }
        let lp = &mut self.lps[l];
        let undone = lp.processed.len() - i;
        if self.settings.memory.is_some() {
            self.sizes.save_heap -= saved_heap(lp.processed[i..].iter());
        }
        let mut collided = None;
        for record in lp.processed.drain(i..) {
            self.sizes.saves -= self.spare.put_save(record.snapshot);
            self.sizes.outputs -= record.outputs.len();
            if lp.pending.insert(record.key, record.event) {
                collided = Some(record.key);
            }
        }
        self.sizes.pending += undone;
        self.sizes.records -= undone;
        self.counters.rolled_back += undone as u64;
        lp.newest = match lp.processed.last() {
            Some(record) if lp.processed.len() > lp.committed_prefix as usize => {
                record.key.time.as_f64()
            }
            _ => -1.0,
        };
        lp.since_snapshot = 0;
        for record in lp.processed.iter().rev() {
            lp.since_snapshot += 1;
            if record.snapshot.is_some() {
                break;
            }
        }
        if let Some(key) = collided {
            self.collided(l, key);
        }
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
                let lp = &mut self.lps[l];
                lp.rare_mut().deferred.push(Deferred {
                    cause,
                    key,
                    dest,
                    event,
                });
                self.sizes.deferred += 1;
                if !lp.in_deferred {
                    lp.in_deferred = true;
                    self.lists.deferred.push(l as u32);
                }
            }
            Logged::Send { key, dest, .. } => self.send_anti(key, dest),
            Logged::Withdraw { key, dest } => {
                self.counters.retractions += 1;
                self.transmit(Msg::Restore { key, dest });
            }
            Logged::Move { dest, from, to } => {
                self.counters.retractions += 1;
                self.transmit(Msg::Move {
                    dest,
                    from: to,
                    to: from,
                });
            }
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
