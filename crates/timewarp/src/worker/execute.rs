//! Executing one event: the state save, the handler under `catch_unwind`, lazy
//! cancellation's comparison of re-sent events, logging effects, and failures.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use warpsim_core::kernel_api::{Effect, encode_event, panic_message};
use warpsim_core::{Ctx, EventKey, LogicalProcess, SimError};

use super::log::{Rec, Status};
use super::lp::{Failure, Logged, Undo, fingerprint};
use super::{Worker, raise};
use crate::message::Msg;

impl<M: LogicalProcess> Worker<'_, M> {
    /// Runs LP `l`'s event `key`, just taken from the store.
    pub(super) fn execute(&mut self, l: usize, key: EventKey, event: M::Event) {
        self.sizes.pending -= 1;
        if self.settings.lazy && !self.lps[l].deferred().is_empty() {
            // A deferred send whose cause sorts before this event will not be regenerated:
            // its cause is gone (annihilated, withdrawn or moved), so cancel it now.
            self.flush_deferred(l, |deferred| deferred.cause < key);
        }
        let checkpoint = self.checkpoint.interval();
        let timed = self.checkpoint.time_this_event();
        let started = timed.then(Instant::now);
        let lp = &mut self.lps[l];
        // The state is saved every `checkpoint` records of the LP, and whenever the record it
        // would coast from is forgotten, or among the oldest eighth of the log, where coasting
        // from it would hold the log's front (see `log.rs`, "Forgetting").
        let records = &self.logs.records;
        let base_held =
            records.holds(lp.base) && (lp.base - records.front()) as usize >= records.len() / 8;
        let save = !base_held || lp.since >= checkpoint;
        // The model's `Clone` is user code: a panic in it fails this event as a panic in its
        // handler would (a phantom until GVT reaches the event, then the run's error).
        let copies = catch_unwind(AssertUnwindSafe(|| {
            let snapshot = save.then(|| (lp.model.clone(), lp.meta.clone()));
            (snapshot, event.clone())
        }));
        let (snapshot, kept) = match copies {
            Ok(copies) => copies,
            Err(payload) => {
                let error = SimError::ModelPanic {
                    lp: lp.id,
                    time: key.time,
                    message: format!(
                        "in Clone (Time Warp copies the LP's state and events to roll back): {}",
                        panic_message(payload.as_ref())
                    ),
                };
                self.fail(l, key, event, Undo::Nothing, error, None);
                return;
            }
        };
        self.counters.saves += u64::from(save);
        let saved = timed.then(Instant::now);
        let mut effects = std::mem::take(&mut self.scratch.effects);
        let mut outputs = std::mem::take(&mut self.scratch.outputs);
        let mut failure = self.run_handler(l, key, event, &mut effects, &mut outputs);
        if let (Some(started), Some(saved)) = (started, saved) {
            let ran = saved.elapsed().as_secs_f64();
            let copied = save.then(|| (saved - started).as_secs_f64());
            self.checkpoint.sampled(copied, ran);
        }
        let regenerating = failure.is_none()
            && self.settings.lazy
            && self.lps[l].deferred().iter().any(|d| d.cause == key);
        if regenerating && let Err(payload) = self.match_regenerated(l, key, &effects) {
            failure = Some((
                SimError::ModelPanic {
                    lp: self.lps[l].id,
                    time: key.time,
                    message: format!(
                        "in PartialEq (lazy cancellation compares a re-sent event with the one sent before): {}",
                        panic_message(payload.as_ref())
                    ),
                },
                None,
            ));
        }
        if let Some((error, commit_outputs)) = failure {
            effects.clear();
            outputs.clear();
            self.scratch.effects = effects;
            self.scratch.outputs = outputs;
            self.fail(l, key, kept, Undo::Handler(snapshot), error, commit_outputs);
            return;
        }
        let emitted = if outputs.is_empty() {
            Vec::new()
        } else {
            // `split_off` keeps the scratch buffer's capacity for the next event.
            outputs.split_off(0)
        };
        self.sizes.outputs += emitted.len();
        self.scratch.outputs = outputs;
        if self.settings.memory.is_some()
            && let Some(saved) = &snapshot
        {
            self.sizes.save_heap += saved.0.heap_bytes() as u64;
        }
        let seq = self.logs.records.end();
        let saves_at = self.logs.saves.end();
        if let Some(saved) = snapshot {
            self.logs.saves.push(Some(saved));
            self.sizes.saves += 1;
        }
        let lp = &mut self.lps[l];
        let (base, since) = if save {
            (seq, 1)
        } else {
            (lp.base, lp.since + 1)
        };
        self.logs.records.push(Rec {
            key,
            prev: lp.last,
            base,
            effects_at: self.logs.effects.end(),
            saves_at,
            since,
            // `log_and_send` logs one entry per effect.
            effects: effects.len() as u32,
            lp: l as u32,
            id: lp.id,
            status: Status::Live,
            saved: save,
            event: Some(kept),
            outputs: emitted,
        });
        lp.last = seq;
        lp.base = base;
        lp.since = since;
        lp.newest = key.time.as_f64();
        lp.last_key = fingerprint(&key);
        raise(&mut self.newest_max, lp.newest);
        self.count_load(l);
        self.log_and_send(l, key, &mut effects, regenerating);
        self.scratch.effects = effects;
    }

    /// Runs LP `l`'s handler on its event `key` with a buffered context whose effects and
    /// outputs go to `effects` and `outputs`, under `catch_unwind` and the watchdog's
    /// heartbeat, and counts the event processed. Returns how it failed, if it did: the
    /// error, and the outputs that commit with it when the handler reported the error itself
    /// (a bad delay or destination), as on the sequential kernel.
    #[inline(always)]
    pub(super) fn run_handler(
        &mut self,
        l: usize,
        key: EventKey,
        event: M::Event,
        effects: &mut Vec<Effect<M::Event>>,
        outputs: &mut Vec<M::Output>,
    ) -> Option<(SimError, Option<Vec<M::Output>>)> {
        let n_lps = self.settings.n_lps;
        let mut error = None;
        let lp = &mut self.lps[l];
        let beat = &self.shared.beats[self.index];
        beat.enter(self.counters.processed, lp.id, key.time);
        let outcome = {
            let mut ctx = Ctx::<M>::buffered(
                lp.id,
                key,
                n_lps,
                &mut lp.meta,
                effects,
                outputs,
                &mut error,
            );
            ctx.set_lookahead(self.settings.lookahead);
            let model = &mut lp.model;
            catch_unwind(AssertUnwindSafe(|| model.on_event(event, &mut ctx)))
        };
        self.counters.processed += 1;
        beat.leave(self.counters.processed);
        match (outcome, error) {
            (Ok(()), None) => None,
            (Err(payload), _) => Some((
                SimError::ModelPanic {
                    lp: lp.id,
                    time: key.time,
                    message: panic_message(payload.as_ref()),
                },
                None,
            )),
            (Ok(()), Some(error)) => Some((error, Some(outputs.split_off(0)))),
        }
    }

    /// Lazy cancellation, first half: marks in `self.scratch.kept` which of a re-executed event's
    /// sends are identical to a deferred send of its earlier run, and lists those deferred
    /// sends in `self.scratch.matched`. It only reads: the comparison is the model's `PartialEq`, user
    /// code that may panic, and a panic must leave every record as it was.
    ///
    /// Two sends are identical when their keys, destinations and *encodings* are: the
    /// model's serde encoding of the event, byte for byte, so no hand-written notion of
    /// equality can let a different message stand. (The key already names the send's
    /// cause and place among its sends, so only the deferred send with the same key is
    /// compared.) A send whose encoding fails is not identical to anything.
    pub(super) fn match_regenerated(
        &mut self,
        l: usize,
        cause: EventKey,
        effects: &[Effect<M::Event>],
    ) -> std::thread::Result<()> {
        let mut kept = std::mem::take(&mut self.scratch.kept);
        let mut matched = std::mem::take(&mut self.scratch.matched);
        kept.clear();
        kept.resize(effects.len(), false);
        matched.clear();
        let (mut new_bytes, mut old_bytes) = std::mem::take(&mut self.scratch.encoded);
        let deferred = self.lps[l].deferred();
        let compared = catch_unwind(AssertUnwindSafe(|| {
            for (slot, effect) in kept.iter_mut().zip(effects) {
                let Effect::Send { key, dest, event } = effect else {
                    continue;
                };
                let Some(position) = deferred
                    .iter()
                    .position(|d| d.cause == cause && d.key == *key && d.dest == *dest)
                else {
                    continue;
                };
                let same = encode_event(event, &mut new_bytes)
                    && encode_event(&deferred[position].event, &mut old_bytes)
                    && new_bytes == old_bytes;
                if same {
                    *slot = true;
                    matched.push(position);
                }
            }
        }));
        self.scratch.kept = kept;
        self.scratch.matched = matched;
        self.scratch.encoded = (new_bytes, old_bytes);
        compared
    }

    /// Logs a handler's effects and sends the messages they call for. When `regenerating`
    /// (lazy mode, see [`Worker::match_regenerated`]), sends identical to a deferred send of
    /// the same event are kept instead of sent again.
    pub(super) fn log_and_send(
        &mut self,
        l: usize,
        cause: EventKey,
        effects: &mut Vec<Effect<M::Event>>,
        regenerating: bool,
    ) {
        let lazy = self.settings.lazy;
        if regenerating {
            // Highest position first, so `swap_remove` never moves a send still to remove.
            self.scratch.matched.sort_unstable_by(|a, b| b.cmp(a));
            let lp = &mut self.lps[l];
            for &position in &self.scratch.matched {
                lp.rare_mut().deferred.swap_remove(position);
            }
            self.sizes.deferred -= self.scratch.matched.len();
            self.counters.lazy_hits += self.scratch.matched.len() as u64;
            // The rest of this event's earlier sends were not regenerated: cancel them before
            // anything new goes out (a new send may reuse one of their keys).
            self.flush_deferred(l, |d| d.cause == cause);
        }
        for (index, effect) in effects.drain(..).enumerate() {
            let logged = match effect {
                Effect::Send { key, dest, event } => {
                    let copy = lazy.then(|| event.clone());
                    let is_kept = regenerating && self.scratch.kept[index];
                    if !is_kept {
                        if lazy && !self.lps[l].deferred().is_empty() {
                            // Another undone event's deferred send with this key must be
                            // cancelled first: a receiver never holds two events with one key.
                            self.flush_deferred(l, |d| d.key == key);
                        }
                        if dest == self.lps[l].id && self.mail.local.is_empty() {
                            // A send to itself (most sends, in many models) is applied at
                            // once, as `transmit` would, without reading the route table:
                            // at many LPs a cache miss per event.
                            self.apply_at(l, Msg::Event { key, dest, event });
                        } else {
                            self.transmit(Msg::Event { key, dest, event });
                        }
                    }
                    Logged::Send {
                        key,
                        dest,
                        event: copy,
                    }
                }
                Effect::Withdraw { dest, key } => {
                    self.counters.retractions += 1;
                    self.transmit(Msg::Withdraw { key, dest, cause });
                    Logged::Withdraw { key, dest }
                }
                Effect::Move { dest, from, to } => {
                    self.counters.retractions += 1;
                    self.transmit(Msg::Move { dest, from, to });
                    Logged::Move { dest, from, to }
                }
            };
            self.logs.effects.push(logged);
        }
    }

    /// A handler (or the model's `Clone` or `PartialEq` around it) failed: undo its changes
    /// to the LP as `undo` says, keep the event pending, and park the LP until a rollback
    /// clears the failure or GVT makes it real.
    pub(super) fn fail(
        &mut self,
        l: usize,
        key: EventKey,
        event: M::Event,
        undo: Undo<M>,
        error: SimError,
        outputs: Option<Vec<M::Output>>,
    ) {
        match undo {
            Undo::Nothing => {}
            Undo::Handler(Some(saved)) => {
                let lp = &mut self.lps[l];
                (lp.model, lp.meta) = saved;
            }
            Undo::Handler(None) => {
                // No save was taken, so the LP has a base: rebuild from it.
                self.rebuild_state(l, self.lps[l].last);
            }
        }
        // The event stays pending, parked until a rollback clears the failure or GVT
        // makes it real.
        self.sizes.pending += 1;
        let rare = self.lps[l].rare_mut();
        let taken = rare.parked.insert(key, event).is_some();
        rare.failed = Some(Failure {
            key,
            error,
            commits: outputs.is_some(),
            outputs,
        });
        self.lists.failed.push(l as u32);
        // Its parked event is pending below the store (see `safe.rs`, rule 2).
        self.void_safe();
        if taken {
            self.collided(l, key);
        }
    }

    /// Clears LP `l`'s failure if `key` is at or before it (the failure may have been a
    /// phantom of the state that is now changing).
    #[inline]
    pub(super) fn clear_failure(&mut self, l: usize, key: EventKey) {
        // Called for every message: the common case (no rare parts) stays inline.
        if self.lps[l].rare.is_some() {
            self.clear_failure_slow(l, key);
        }
    }

    #[inline(never)]
    fn clear_failure_slow(&mut self, l: usize, key: EventKey) {
        let lp = &mut self.lps[l];
        if lp.failed().is_some_and(|failure| key <= failure.key) {
            lp.rare_mut().failed = None;
            self.lists.failed.retain(|&failed| failed as usize != l);
            self.unpark(l);
        }
    }
}
