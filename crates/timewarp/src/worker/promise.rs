//! Promises: with a lookahead, each worker publishes a time before which it will send the
//! others nothing more, so that they find their safe events (`safe.rs`) as they go instead
//! of once per GVT round.
//!
//! A worker's *promise* is `min(next, heard) + L`, and at most the earliest message still
//! waiting in its outboxes, where `L` is the run's lookahead, `next` the time of the
//! earliest event it has still to run (the event it just took from its store, or the
//! store's first; the parked events of failed and held LPs and the causes of deferred sends
//! too) and `heard` the smallest promise of the other workers as it last read them. A
//! worker's safe bound is then `heard` itself: no message below it can reach the worker any
//! more. This is the conservative half of the kernel (Chandy–Misra's channel clocks, read
//! from shared memory instead of sent as null messages); the GVT rounds still commit the
//! optimistic events and deliver outputs.
//!
//! # Ground rules
//!
//! 1. **A promise covers every later message.** A message to another worker goes to another
//!    LP, so it is at least `L` after the event that sends it (`Ctx` enforces the lookahead
//!    on every kernel, for sends, cancels and moves alike), or it is an antimessage, restore
//!    or move about such a message. Every event the worker runs later is at or after `next`,
//!    or is reached by a message from another worker, at or after `heard` (rule 2) — a
//!    straggler, whose rollback re-runs and cancels only events after it. Deferred sends are
//!    cancelled at or after their cause's time plus `L`. Messages already in an outbox are
//!    folded in until they leave. A worker checks each message it sends to another against
//!    its last promise, and a broken promise stops the run with an internal error rather
//!    than let a safe event be wrong.
//! 2. **Hearing.** A worker reads the others' promises (acquire) and only then absorbs its
//!    inbox before it uses what it read: a promise is stored (release) after the messages
//!    sent before it were enqueued, so every message below a promise read is in the inbox by
//!    then, and every message sent after it is at or above it. A value read earlier stays a
//!    lower bound (promises only grow), so stale values are kept, and only those below the
//!    time of the event the worker wants to run are read again.
//! 3. **GVT.** After a new GVT `g`, and after absorbing its inbox again (`main_loop`), a
//!    worker takes `g + L` as every other worker's promise where it heard less: every event
//!    anyone runs from then on is at or after `g`, and what the others sent before they
//!    reported in the round is in the inbox (they flush first).
//! 4. **Promises only grow** between the start of a run and the end, except where no worker
//!    reads them: every worker lowers its own to `g + L`, and forgets what it heard, while
//!    all of them wait at a barrier after a migration (everything is then pending at or after
//!    the migration's GVT `g`) and before a checkpoint taken in place resumes (at the pause).
//! 5. **Arrivals are checked too**: a message from another worker earlier than the last
//!    safe event this worker ran (while promises are in use) would have had to roll it
//!    back; that also stops the run with an internal error.
//!
//! Promises are used only with a lookahead, with safe events on, on threads (over MPI the
//! gateway would have to promise for the other ranks), with more than one worker. A lone
//! worker hears nothing from anyone, so its bound is the end of the run from the start.
//!
//! # Waiting
//!
//! A worker whose next event lies past what the others promised does not run it
//! optimistically at once: it waits for them, spinning (then napping between looks), for as long
//! as their promises keep growing, and runs it safely once they cover it. Meanwhile it
//! keeps absorbing what they send and publishing its own promise, which is what they may be
//! waiting for in turn; a new GVT (which may bring a migration, a pause or the end) or a
//! stop ends the wait. When their promises stand still for a scheduler time slice
//! ([`STALL`]: the others wait themselves, are descheduled, or have nothing to run), the
//! worker runs on optimistically, and waits again only once they have moved. A worker held
//! back by the window or the memory budget waits the same way before it sleeps.
//!
//! Why wait rather than run ahead: an optimistic event costs half again a safe one (its
//! state save, record, effect log and commit), and with a lookahead that covers a few
//! dozen of a worker's events, workers that keep step run nearly every event safely, while
//! workers that run ahead of each other run most of them optimistically and roll some back
//! (PHOLD with 1,024 LPs on 2 threads: 99.9 % safe events against 12–30 %; BENCHMARKS.md,
//! "Promises").

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use warpsim_core::{EventKey, LogicalProcess, LpId, SimError, Time};

use super::Worker;
use crate::message::key_max;
use crate::shared::StopInfo;

/// A promise is published when it grew by this share of the lookahead since the last, or
/// after [`PUBLISH_EVERY`] events when it grew at all: every publication makes the readers'
/// next look a cache miss, while a worker waiting for it waits for the next publication.
const STEP: f64 = 0.25;
const PUBLISH_EVERY: u32 = 16;

/// A waiting worker looks at the clock once every this many looks at the promises (a look
/// at the clock costs as much as a dozen at a promise that did not change).
const SPINS_PER_CLOCK: u32 = 32;

/// A waiting worker that heard more, but not enough, absorbs and publishes again after this
/// long: the others may be waiting for its promise in turn (they wait for each other only
/// when both hold stale promises, which one exchange resolves).
const REPUBLISH_AFTER: Duration = Duration::from_micros(2);

/// A worker waiting on promises that do not move stops spinning after this long and looks
/// again every [`NAP`] (sleeping between looks): the worker it waits for publishes every
/// few microseconds while it runs, so it is descheduled or blocked, maybe waiting for this
/// very core (more threads than cores, or another process on the machine), and a spinning
/// wait would take a core from whoever can use it. Spinning to the end of the wait took
/// 2.46 s of CPU for 2.28 s of wall beside a busy loop (BENCHMARKS.md, "Promises").
const NAP_AFTER: Duration = Duration::from_micros(100);
const NAP: Duration = Duration::from_micros(20);

/// A worker gives up waiting when the promises did not move for this long, and runs on
/// optimistically. About a scheduler time slice: shorter, and a worker descheduled for one
/// slice (the coordinator woke on its core, or another process did) threw the others out
/// of step for the rest of the run (BENCHMARKS.md, "Promises").
const STALL: Duration = Duration::from_millis(4);

/// A worker's side of the promises.
pub(super) struct Promises {
    /// Promises are published and read (see the module docs for when).
    pub(super) on: bool,
    lookahead: f64,
    /// A promise is published when it grew by this much since the last ([`STEP`]).
    step: f64,
    /// The last promise this worker published.
    made: f64,
    /// Each worker's promise when this one last read it (its own entry is infinite).
    heard: Vec<f64>,
    /// The smallest of `heard`.
    pub(super) heard_min: f64,
    /// The earliest message waiting in an outbox.
    unsent_min: f64,
    /// The time of the last safe event this worker ran (rule 5).
    pub(super) last_safe: f64,
    /// The others' smallest promise when this worker last gave up waiting for more.
    gave_up_at: f64,
    /// Events taken since the last publication.
    looks: u32,
}

impl Promises {
    /// `index` of `workers`; `external` when the worker is a rank's (the gateway brings
    /// messages that no promise covers).
    pub(super) fn new(
        index: usize,
        workers: usize,
        safe: bool,
        lookahead: f64,
        external: bool,
    ) -> Promises {
        let alone = workers == 1 && !external;
        let mut heard = vec![0.0; workers];
        heard[index] = f64::INFINITY;
        Promises {
            on: safe && lookahead > 0.0 && workers > 1 && !external,
            lookahead,
            step: lookahead * STEP,
            made: 0.0,
            heard,
            heard_min: if alone { f64::INFINITY } else { 0.0 },
            unsent_min: f64::INFINITY,
            last_safe: f64::NEG_INFINITY,
            gave_up_at: f64::NEG_INFINITY,
            looks: 0,
        }
    }

    /// A message to another worker at `time` waits in an outbox.
    #[inline]
    pub(super) fn unsent(&mut self, time: f64) {
        self.unsent_min = self.unsent_min.min(time);
    }

    /// Every outbox is empty.
    #[inline]
    pub(super) fn all_sent(&mut self) {
        self.unsent_min = f64::INFINITY;
    }

    /// Whether a message at `time` to another worker breaks the last promise (before the
    /// run's `end`: what a worker sends at or after it, at the end of a run, matters to no
    /// safe event).
    #[inline]
    pub(super) fn broken_by(&self, time: f64, end: f64) -> bool {
        time < self.made && time < end
    }

    /// The promise for `next` (rule 1, without the rare parts).
    #[inline]
    fn promise_for(&self, next: f64) -> f64 {
        (next.min(self.heard_min) + self.lookahead).min(self.unsent_min)
    }

    /// Whether the messages waiting in the outboxes hold this worker's promise for `next`
    /// back by more than a step: then they should leave now (see [`Worker::flush_due`]).
    #[inline]
    fn held_back(&self, next: f64) -> bool {
        self.unsent_min < next.min(self.heard_min) + self.lookahead - self.step
    }

    /// Takes `floor` as every other worker's promise where less was heard (rule 3).
    fn raise_heard(&mut self, floor: f64) {
        // (The worker's own entry is infinite: never lowered.)
        for heard in &mut self.heard {
            *heard = heard.max(floor);
        }
        self.heard_min = self.heard.iter().copied().fold(f64::INFINITY, f64::min);
    }
}

/// The smallest key at `time` (every key when `time` is not a time).
fn key_at(time: f64) -> EventKey {
    Time::new(time).map_or_else(
        |_| key_max(),
        |time| EventKey::new(time, 0, LpId::new(0), Time::ZERO, 0),
    )
}

impl<M: LogicalProcess> Worker<'_, M> {
    /// Publishes this worker's promise when it grew by a step, `next` being a lower bound of
    /// every event it has still to run in its store (rule 1); with `force`, whenever it grew.
    #[inline]
    pub(super) fn promise(&mut self, next: f64, force: bool) {
        let promises = &mut self.safe.promises;
        // A worker without LPs receives nothing, so it sends nothing (until a migration,
        // which starts the promises again).
        let mut promise = if self.lps.is_empty() {
            f64::INFINITY
        } else {
            promises.promise_for(next)
        };
        promises.looks += 1;
        let step = if force || promises.looks >= PUBLISH_EVERY {
            0.0
        } else {
            promises.step
        };
        if promise <= promises.made + step {
            return;
        }
        if !self.quiet() {
            promise = promise.min(self.rare_min() + self.settings.lookahead);
            if promise <= self.safe.promises.made {
                return;
            }
        }
        self.safe.promises.made = promise;
        self.safe.promises.looks = 0;
        self.shared.promises[self.index]
            .0
            .store(promise.to_bits(), Ordering::Release);
    }

    /// After a slice: sends what waits in the outboxes, unless every event of the slice ran
    /// safely and the promises are on, and what waits holds the promise back by less than a
    /// step. Then it waits for more: a batch costs a channel send and receive, about 200 ns
    /// each, and their cache misses, whether it holds 4 messages or 64 (BENCHMARKS.md,
    /// "Batches that wait"). The receiver loses nothing by it: it runs only what the
    /// promises cover, and this worker's promise is capped by what it has not sent
    /// (`Promises::promise_for`). Optimistic events want their messages out at once, so that
    /// a receiver that ran ahead rolls back early.
    pub(super) fn flush_due(&mut self, all_safe: bool) {
        if !self.safe.promises.on || !all_safe || self.lps.is_empty() {
            self.flush_all();
            return;
        }
        let next = self
            .store
            .peek()
            .map_or(f64::INFINITY, |(key, _)| key.time.as_f64());
        if self.safe.promises.held_back(next) {
            self.flush_all();
        }
    }

    /// Whether no LP here is failed, held or deferring sends (`safe.rs`, rule 2).
    #[inline]
    pub(super) fn quiet(&self) -> bool {
        self.lists.failed.is_empty() && self.lists.held.is_empty() && self.lists.deferred.is_empty()
    }

    /// The earliest time of the events parked by failed and held LPs and of the causes of
    /// deferred sends: pending work outside the store (as in the GVT report).
    #[cold]
    fn rare_min(&self) -> f64 {
        let mut min = f64::INFINITY;
        for &l in self.lists.failed.iter().chain(&self.lists.held) {
            if let Some(rare) = &self.lps[l as usize].rare
                && let Some((key, _)) = rare.parked.first_key_value()
            {
                min = min.min(key.time.as_f64());
            }
        }
        for &l in &self.lists.deferred {
            for deferred in self.lps[l as usize].deferred() {
                min = min.min(deferred.cause.time.as_f64());
            }
        }
        min
    }

    /// Waits for the other workers to promise `need`, the time of the event this worker
    /// holds (`held`, just taken from its store; `None` when it is already back there), for
    /// as long as their promises keep growing (see the module docs, "Waiting"). Everything
    /// it heard is absorbed (rule 2) when it returns. Returns the event when it still holds
    /// it (the caller runs it, safely if the promises now cover it). Otherwise the event is
    /// back in the store and the caller takes its next event again — unless a new GVT or a
    /// stop came meanwhile, which its loop must see first ([`Worker::news`]).
    pub(super) fn wait_for_promises(
        &mut self,
        need: f64,
        mut held: Option<(u32, EventKey, M::Event)>,
    ) -> Option<(u32, EventKey, M::Event)> {
        if self.safe.promises.heard_min <= self.safe.promises.gave_up_at {
            // They have not moved since this worker last gave up on them: one look only.
            if self.hear_slow(need) {
                self.absorb_held(&mut held);
            }
            return held;
        }
        // What this worker can promise now, with its outboxes empty: the others may be
        // waiting for exactly that (a promise published a step ago would hold them back).
        // The held event is the earliest it has still to run.
        if held.is_none() {
            self.drain_local();
        }
        self.flush_all();
        let next = self.next_time(&held);
        self.promise(next, true);
        let started = Instant::now();
        let mut heard_unabsorbed = false;
        let mut last = self.safe.promises.heard_min;
        let mut moved_at = started;
        let mut spins = 0u32;
        loop {
            heard_unabsorbed |= self.hear_slow(need);
            let now = self.safe.promises.heard_min;
            if now >= need {
                break;
            }
            if self.news() {
                // The worker's loop first (a new GVT may bring a migration, a pause or
                // the end).
                self.absorb_all(&mut held);
                self.counters.waited_ns += started.elapsed().as_nanos() as u64;
                return None;
            }
            spins += 1;
            if !spins.is_multiple_of(SPINS_PER_CLOCK) {
                std::hint::spin_loop();
                continue;
            }
            let waited = started.elapsed();
            if heard_unabsorbed && waited > REPUBLISH_AFTER {
                // More, not enough: the others may be waiting for this worker's promise in
                // turn, which may now grow (once what they sent is absorbed).
                self.absorb_held(&mut held);
                heard_unabsorbed = false;
                let next = self.next_time(&held);
                self.promise(next, true);
            }
            if self.shared.gvt.must_report(&self.port).is_some() {
                // Reported from the loop, which absorbs first (the held event goes back).
                self.absorb_all(&mut held);
                heard_unabsorbed = false;
                if let Some(round) = self.shared.gvt.must_report(&self.port) {
                    self.report(round);
                }
            }
            if now > last {
                last = now;
                moved_at = Instant::now();
            } else {
                let still = moved_at.elapsed();
                if still > NAP_AFTER {
                    // The one they wait for is not running (see `NAP_AFTER`).
                    std::thread::sleep(NAP);
                    self.home.return_home();
                }
                if still > STALL {
                    // They stopped moving (waiting themselves, descheduled, or done): run
                    // on optimistically, and wait again only once they have moved.
                    self.safe.promises.gave_up_at = now;
                    break;
                }
            }
            std::hint::spin_loop();
        }
        if heard_unabsorbed {
            self.absorb_held(&mut held);
        }
        self.counters.waited_ns += started.elapsed().as_nanos() as u64;
        held
    }

    /// Absorbs the inbox (rule 2) and takes the new bound. The held event goes back to the
    /// store first, unless the inbox is empty: then nothing was sent before the promises
    /// just read that is not absorbed already (an empty look after the read is an absorb
    /// that found nothing), and the worker runs the event it holds without taking it again.
    fn absorb_held(&mut self, held: &mut Option<(u32, EventKey, M::Event)>) {
        if !self.mail.inbox.is_empty() || held.is_none() {
            self.absorb_all(held);
        } else {
            self.take_heard();
        }
    }

    /// A quick look at the promises for an event at `need` that this worker holds: when they
    /// grew, the inbox is absorbed (rule 2), the held event going back to the store unless
    /// the inbox was empty. Returns the event when the worker still holds it.
    #[inline]
    pub(super) fn glance(
        &mut self,
        need: f64,
        held: (u32, EventKey, M::Event),
    ) -> Option<(u32, EventKey, M::Event)> {
        let mut held = Some(held);
        if self.hear_slow(need) {
            self.absorb_held(&mut held);
        }
        held
    }

    /// Whether a new GVT or a stop waits for this worker's loop.
    #[inline]
    pub(super) fn news(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed) || self.shared.gvt.has_news(&self.port)
    }

    /// Puts the held event back in the store, absorbs the inbox (rule 2) and takes the new
    /// bound: before the worker reports in a GVT round (which absorbs too), or returns to
    /// its loop.
    fn absorb_all(&mut self, held: &mut Option<(u32, EventKey, M::Event)>) {
        if let Some((l, key, event)) = held.take()
            && self.store.push(l, key, event).is_err()
        {
            self.collided(l as usize, key);
        }
        self.absorb_inbox();
        self.drain_local();
        self.take_heard();
    }

    /// The time of the earliest event this worker has still to run: the held one (taken
    /// first from the store), or the store's first (infinity when it is empty).
    fn next_time(&mut self, held: &Option<(u32, EventKey, M::Event)>) -> f64 {
        match held {
            Some((_, key, _)) => key.time.as_f64(),
            None => self
                .store
                .peek()
                .map_or(f64::INFINITY, |(key, _)| key.time.as_f64()),
        }
    }

    /// Reads again the promises of the workers last heard below `need` (rule 2). Returns
    /// whether the smallest grew: the caller must then absorb its inbox before it runs
    /// anything, and then take the new bound ([`Worker::take_heard`]).
    #[inline(never)]
    fn hear_slow(&mut self, need: f64) -> bool {
        let promises = &mut self.safe.promises;
        let before = promises.heard_min;
        let mut min = f64::INFINITY;
        for (heard, slot) in promises.heard.iter_mut().zip(&self.shared.promises) {
            if *heard < need {
                *heard = heard.max(f64::from_bits(slot.0.load(Ordering::Acquire)));
            }
            min = min.min(*heard);
        }
        promises.heard_min = min;
        min > before
    }

    /// Rule 3, after a new GVT `gvt` and the inbox absorbed after it.
    pub(super) fn heard_gvt(&mut self, gvt: EventKey) {
        if !self.safe.promises.on {
            return;
        }
        let floor = gvt.time.as_f64() + self.settings.lookahead;
        self.safe.promises.raise_heard(floor);
        self.take_heard();
    }

    /// Sets the safe bound from what was heard (after the inbox was absorbed, rule 2).
    pub(super) fn take_heard(&mut self) {
        self.safe.heard = if self.settings.safe && self.quiet() {
            key_at(self.safe.promises.heard_min).min(self.end_bound())
        } else {
            super::safe::Safe::<M>::void()
        };
        self.safe.bound = self.safe.from_gvt.max(self.safe.heard);
    }

    /// Rule 4: lowers this worker's promise to `time + L` and forgets what it heard, while
    /// no worker reads promises (all wait at a barrier after this).
    pub(super) fn reset_promises(&mut self, time: f64) {
        let promises = &mut self.safe.promises;
        promises.last_safe = f64::NEG_INFINITY;
        if !promises.on {
            return;
        }
        promises.made = time + promises.lookahead;
        for (worker, heard) in promises.heard.iter_mut().enumerate() {
            if worker != self.index {
                *heard = 0.0;
            }
        }
        promises.heard_min = 0.0;
        self.shared.promises[self.index]
            .0
            .store(promises.made.to_bits(), Ordering::Release);
    }

    /// A message to another worker at `time` broke this worker's promise, or one from
    /// another worker came before a safe event it ran: a kernel bug, which stops the run
    /// rather than let a wrong result stand.
    #[cold]
    #[inline(never)]
    pub(super) fn promise_broken(&mut self, time: f64, what: &str) {
        let promises = &self.safe.promises;
        let message = format!(
            "{what} at time {time} (promised {}, last safe event at {}): Time Warp's safe events are not safe in this run; please report it, and run with --no-safe-events meanwhile",
            promises.made, promises.last_safe
        );
        self.shared.abort(StopInfo {
            key: self.gvt,
            lp: LpId::new(0),
            error: SimError::Internal(message),
            outputs: None,
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_promise_is_the_earlier_of_next_and_heard_plus_the_lookahead_and_the_unsent() {
        let mut promises = Promises::new(0, 3, true, 0.5, false);
        assert!(promises.on);
        // Nothing heard yet: the others may send at any time from 0.
        assert_eq!(promises.promise_for(10.0), 0.5);
        promises.heard = vec![f64::INFINITY, 4.0, 7.0];
        promises.heard_min = 4.0;
        assert_eq!(promises.promise_for(10.0), 4.5);
        assert_eq!(promises.promise_for(2.0), 2.5);
        // A message waiting in an outbox holds it back until it leaves.
        promises.unsent(3.0);
        assert_eq!(promises.promise_for(10.0), 3.0);
        promises.all_sent();
        assert_eq!(promises.promise_for(10.0), 4.5);
    }

    #[test]
    fn gvt_raises_what_was_heard_but_never_lowers_it() {
        let mut promises = Promises::new(1, 3, true, 0.5, false);
        promises.heard = vec![2.0, f64::INFINITY, 9.0];
        promises.raise_heard(5.5);
        assert_eq!(promises.heard, vec![5.5, f64::INFINITY, 9.0]);
        assert_eq!(promises.heard_min, 5.5);
    }

    #[test]
    fn a_message_below_the_last_promise_breaks_it_before_the_end_only() {
        let mut promises = Promises::new(0, 2, true, 0.5, false);
        promises.made = 4.0;
        assert!(promises.broken_by(3.9, 100.0));
        assert!(!promises.broken_by(4.0, 100.0));
        // At the end of a run (the antimessages of a pause), nothing safe depends on it.
        assert!(!promises.broken_by(3.9, 3.5));
    }

    #[test]
    fn promises_are_off_alone_without_a_lookahead_and_over_mpi() {
        // A lone worker hears nothing from anyone: its bound is the end from the start.
        let alone = Promises::new(0, 1, true, 0.5, false);
        assert!(!alone.on);
        assert_eq!(alone.heard_min, f64::INFINITY);
        assert!(!Promises::new(0, 2, true, 0.0, false).on);
        assert!(!Promises::new(0, 2, false, 0.5, false).on);
        // A rank's worker: its gateway brings messages no promise covers.
        let rank = Promises::new(0, 1, true, 0.5, true);
        assert!(!rank.on);
        assert_eq!(rank.heard_min, 0.0);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! Rule 2 under every interleaving: a worker that reads another's promise and only then
    //! drains its inbox never later receives a message below the promise it read. The
    //! sender enqueues a message at 3, promises 5 (release), then sends at 6 and promises
    //! 8; the receiver reads the promise (acquire), drains, and checks what comes after.

    use loom::sync::Arc;
    use loom::sync::Mutex;
    use loom::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn no_message_arrives_below_a_promise_read_before_the_inbox_was_drained() {
        loom::model(|| {
            let promise = Arc::new(AtomicU64::new(0f64.to_bits()));
            let inbox = Arc::new(Mutex::new(Vec::<f64>::new()));
            let (sender_promise, sender_inbox) = (promise.clone(), inbox.clone());
            let sender = loom::thread::spawn(move || {
                sender_inbox.lock().unwrap().push(3.0);
                sender_promise.store(5f64.to_bits(), Ordering::Release);
                sender_inbox.lock().unwrap().push(6.0);
                sender_promise.store(8f64.to_bits(), Ordering::Release);
            });
            let heard = f64::from_bits(promise.load(Ordering::Acquire));
            let drained: Vec<f64> = inbox.lock().unwrap().drain(..).collect();
            sender.join().unwrap();
            let later: Vec<f64> = inbox.lock().unwrap().drain(..).collect();
            for time in later {
                assert!(
                    time >= heard,
                    "a message at {time} came after a promise of {heard}"
                );
            }
            // (What was drained may be below it: it is pending, not on its way.)
            let _ = drained;
        });
    }
}
