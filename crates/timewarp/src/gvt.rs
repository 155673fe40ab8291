//! Global virtual time: Fujimoto & Hybinette's asynchronous shared-memory algorithm (1997).
//!
//! # Ground rules
//!
//! GVT is a lower bound on the key of every event that can still be executed or rolled back,
//! anywhere. A worker may commit (and hand outputs of) every processed event whose key is
//! below the published GVT. The protocol must therefore never publish a value above the
//! smallest key of: any worker's pending events, any failed or deferred event, and any message
//! that is in transit (sent but not yet absorbed by its receiver).
//!
//! The shared state is a flag ("a round is in progress"), a round counter, and a mutex around
//! the round's running minimum and the published GVT. The rules, each enforced by this module:
//!
//! 1. A round starts under the mutex: `round += 1`, `remaining = workers`, `min = MAX`, and
//!    only then `flag = true` (SeqCst). Every worker reports exactly once per round, and a
//!    round cannot complete until all have, so no worker skips a round.
//! 2. A worker reports its local minimum once it sees the flag, after flushing its outboxes
//!    and absorbing its whole inbox. The report folds in `send_min`: the smallest timestamp of
//!    any batch it sent while the flag was up and it had not yet reported.
//! 3. A sender *first* enqueues a batch, *then* (after a SeqCst fence) reads the flag: if the
//!    flag is down, the batch was enqueued before the round started, so any receiver, which
//!    reports only after it sees the flag, absorbs it before reporting (its SeqCst fence after
//!    reading the flag orders the drain after our enqueue). If the flag is up and the sender
//!    has not reported, `send_min` covers it. If the sender has reported already, the batch's
//!    timestamp is at least the sender's reported minimum: every message is caused by an event
//!    or message whose timestamp is at most its own, and those were covered.
//! 4. The last reporter publishes `gvt = min`, bumps `version`, and lowers the flag, all under
//!    the mutex, so a reader that sees the new version reads the matching GVT.
//!
//! 5. A worker with nothing to report — no LPs, nothing in its inbox, nothing it sent
//!    unaccounted (a worker that gave all its LPs away, after the migration's quiescence) —
//!    may *leave* ([`GvtShared::leave`]): under the mutex it reports `send_min` in the round
//!    in progress if it has not yet, and rounds started after that count one worker fewer.
//!    Its report would always have been `MAX`, so every GVT is the one it would have been;
//!    and the workers that stay need not wake it for every round. It *rejoins* (under the
//!    mutex again) before it holds an event; it reports from the next round on.
//!
//! `loom` checks rules 1–4 with two workers exchanging a message around a round
//! (`RUSTFLAGS="--cfg loom" cargo test -p warpsim-timewarp --release --lib gvt`).
//!
//! **Safe bounds** (threads only; see `worker/safe.rs`). A completed round also publishes,
//! for each worker, the smallest report of the *other* workers (the round's minimum and
//! the runner-up's, with the minimum's reporter). A worker that reported in that round folds
//! in `sent`, the smallest timestamp it sent to another worker since the round's flag went
//! up (its `send_min` at its report, then every later message), and gets a bound below which
//! no message can reach it any more: every message is caused by an event or message with a
//! smaller key, and each such chain starts either in another worker's report or in one of
//! its own sends that `sent` covers.
//!
//! **External mode** (a rank of a distributed run, [`GvtShared::external`]): the rank's
//! gateway thread is one more participant and the only one that starts rounds (workers'
//! `try_start` only asks it to). A completed round publishes nothing: its minimum is the
//! rank's contribution, which the gateway combines with the other ranks' (see `cluster`) and
//! then publishes with [`GvtShared::publish`]. Rules 1–3 are unchanged; rule 4 becomes "the
//! last reporter stores the minimum and lowers the flag, under the mutex".

#[cfg(loom)]
use loom::sync::Mutex;
#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
#[cfg(not(loom))]
use std::sync::Mutex;
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};

/// What a round has collected so far, and the last published GVT.
#[derive(Debug)]
struct RoundState<K> {
    round: u64,
    remaining: usize,
    min: K,
    gvt: K,
    /// External mode: the minimum of the last completed round, until the gateway takes it.
    result: Option<K>,
    /// Load-balancing migrations decided so far; published with the GVT (see
    /// [`GvtShared::request_migration`]).
    migrations: u64,
    /// The round's reporter of `min`, and the smallest report of the others.
    min_by: usize,
    runner_up: K,
    /// The last completed round's `(round, min, min_by, runner_up)` (threads only).
    done: Option<(u64, K, usize, K)>,
    /// Workers that left the protocol (rule 5): a round waits for the others only.
    absent: usize,
}

/// The protocol's shared state. `K` is the timestamp type (an event key in the kernel).
#[derive(Debug)]
pub(crate) struct GvtShared<K> {
    workers: usize,
    max: K,
    /// Rounds are started and published by a gateway (a rank of a distributed run).
    external: bool,
    /// External mode: a worker asked for a round.
    requested: AtomicBool,
    /// A worker asked for LPs to migrate at the next published GVT.
    want_migration: AtomicBool,
    /// A round is in progress.
    flag: AtomicBool,
    /// Number of the latest round started.
    round: AtomicU64,
    /// Bumped (under the mutex) whenever a new GVT is published.
    version: AtomicU64,
    state: Mutex<RoundState<K>>,
    /// Per worker: it left the protocol (rule 5), so its peers need not wake it for a round.
    left: Vec<AtomicBool>,
}

/// One worker's side of the protocol: which round it last reported and the smallest
/// timestamp it sent since the flag went up.
#[derive(Debug)]
pub(crate) struct GvtPort<K> {
    /// The worker's index (which report is its own in a round's minima).
    index: usize,
    reported_round: u64,
    send_min: K,
    /// The smallest timestamp sent since the flag of the round last reported in went up.
    sent: K,
    seen_version: u64,
    /// The worker left the protocol (rule 5) and reports in no round.
    left: bool,
}

impl<K: Copy + Ord> GvtPort<K> {
    /// Records a message to another worker with timestamp `stamp`, when it is sent (before
    /// its batch leaves): the safe bound folds it in (see "Safe bounds").
    #[inline]
    pub(crate) fn sent_away(&mut self, stamp: K) {
        if stamp < self.sent {
            self.sent = stamp;
        }
    }
}

/// What a worker learns with a new GVT.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Published<K> {
    pub(crate) gvt: K,
    /// Load-balancing migrations decided so far.
    pub(crate) migrations: u64,
    /// Below this key no message can reach the worker any more (see "Safe bounds"), when
    /// the round that published `gvt` is the last one it reported in (threads only).
    pub(crate) safe: Option<K>,
}

#[cfg(not(loom))]
fn lock_state<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A worker that panicked while holding the lock left the state consistent (every critical
    // section is a few assignments), so poisoning is not an error here.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(loom)]
fn lock_state<T>(mutex: &Mutex<T>) -> loom::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap()
}

impl<K: Copy + Ord> GvtShared<K> {
    /// Shared state for `workers` workers; `start` is the GVT before the first round (the
    /// smallest key at the start) and `max` means "no event anywhere".
    pub(crate) fn new(workers: usize, start: K, max: K) -> GvtShared<K> {
        GvtShared {
            workers,
            max,
            external: false,
            requested: AtomicBool::new(false),
            want_migration: AtomicBool::new(false),
            flag: AtomicBool::new(false),
            round: AtomicU64::new(0),
            version: AtomicU64::new(0),
            state: Mutex::new(RoundState {
                round: 0,
                remaining: 0,
                min: max,
                gvt: start,
                result: None,
                migrations: 0,
                min_by: usize::MAX,
                runner_up: max,
                done: None,
                absent: 0,
            }),
            left: (0..workers).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    /// Shared state in external mode: `participants` counts the workers and the gateway.
    pub(crate) fn external(participants: usize, start: K, max: K) -> GvtShared<K> {
        GvtShared {
            external: true,
            ..GvtShared::new(participants, start, max)
        }
    }

    /// A fresh port for worker `index`.
    pub(crate) fn port(&self, index: usize) -> GvtPort<K> {
        GvtPort {
            index,
            reported_round: 0,
            send_min: self.max,
            sent: self.max,
            seen_version: 0,
            left: false,
        }
    }

    /// Starts a round unless one is in progress. Returns whether this call started one, or
    /// in external mode whether it is the first to ask the gateway for one since the
    /// gateway last looked: either way the caller wakes its peers (the gateway among them)
    /// so that the round goes ahead at once.
    pub(crate) fn try_start(&self) -> bool {
        if self.external {
            return !self.requested.swap(true, Ordering::Relaxed);
        }
        self.start()
    }

    /// Whether this is a rank's shared state in external mode (its gateway is a participant
    /// and publishes the GVT).
    pub(crate) fn is_external(&self) -> bool {
        self.external
    }

    /// Starts a round unless one is in progress, in either mode (the gateway's call).
    pub(crate) fn start(&self) -> bool {
        if self.flag.load(Ordering::SeqCst) {
            return false;
        }
        let mut state = lock_state(&self.state);
        if self.flag.load(Ordering::SeqCst) {
            return false;
        }
        state.round += 1;
        state.remaining = self.workers - state.absent;
        state.min = self.max;
        state.min_by = usize::MAX;
        state.runner_up = self.max;
        self.round.store(state.round, Ordering::SeqCst);
        self.flag.store(true, Ordering::SeqCst);
        true
    }

    /// The round this worker must report in now, if any. After it returns `Some`, the caller
    /// flushes its outboxes, absorbs its inbox, and calls [`GvtShared::report`].
    #[inline]
    pub(crate) fn must_report(&self, port: &GvtPort<K>) -> Option<u64> {
        if port.left || !self.flag.load(Ordering::SeqCst) {
            return None;
        }
        let round = self.round.load(Ordering::SeqCst);
        if round == port.reported_round {
            return None;
        }
        // Orders the inbox drain that follows after every enqueue whose sender saw the flag
        // down (rule 3).
        fence(Ordering::SeqCst);
        Some(round)
    }

    /// Records that a batch with smallest timestamp `stamp` was just enqueued (call *after*
    /// the enqueue: rule 3).
    #[inline]
    pub(crate) fn note_send(&self, port: &mut GvtPort<K>, stamp: K) {
        fence(Ordering::SeqCst);
        if self.flag.load(Ordering::SeqCst)
            && self.round.load(Ordering::SeqCst) != port.reported_round
            && stamp < port.send_min
        {
            port.send_min = stamp;
        }
    }

    /// Reports `local` (the worker's smallest pending, failed or deferred key) for `round`.
    /// Returns the new GVT when this report completed the round.
    pub(crate) fn report(&self, port: &mut GvtPort<K>, round: u64, local: K) -> Option<K> {
        let mut state = lock_state(&self.state);
        self.report_locked(&mut state, port, round, local)
    }

    /// [`report`](Self::report) with the lock held.
    fn report_locked(
        &self,
        state: &mut RoundState<K>,
        port: &mut GvtPort<K>,
        round: u64,
        local: K,
    ) -> Option<K> {
        debug_assert_eq!(
            state.round, round,
            "a round completes only after every report"
        );
        debug_assert!(!port.left, "a worker that left reports in no round");
        let local = local.min(port.send_min);
        if local < state.min {
            state.runner_up = state.min;
            state.min = local;
            state.min_by = port.index;
        } else if local < state.runner_up {
            state.runner_up = local;
        }
        port.sent = port.send_min;
        port.send_min = self.max;
        port.reported_round = round;
        state.remaining -= 1;
        if state.remaining == 0 && self.external {
            state.result = Some(state.min);
            self.flag.store(false, Ordering::SeqCst);
            None
        } else if state.remaining == 0 {
            // Workers bound their keys by a prefix (see `worker::order`), so a round can find
            // a smaller `seq` at the same time than the last; the last GVT is still valid.
            state.gvt = state.gvt.max(state.min);
            if self.want_migration.swap(false, Ordering::SeqCst) {
                state.migrations += 1;
            }
            state.done = Some((round, state.min, state.min_by, state.runner_up));
            self.version.fetch_add(1, Ordering::SeqCst);
            self.flag.store(false, Ordering::SeqCst);
            Some(state.gvt)
        } else {
            None
        }
    }

    /// Leaves the protocol (rule 5): the caller holds no LPs, has absorbed its inbox and
    /// sends nothing until it [`rejoin`](Self::rejoin)s. Reports in the round in progress
    /// if it has not yet (what it sent since the flag went up, or `MAX`), and returns the
    /// new GVT if that completed the round. Threads only (a rank's gateway counts every
    /// worker of the rank).
    pub(crate) fn leave(&self, port: &mut GvtPort<K>) -> Option<K> {
        debug_assert!(!self.external, "ranks' workers do not leave");
        if port.left {
            return None;
        }
        let mut state = lock_state(&self.state);
        let mut published = None;
        // The round's `remaining` counted this worker if it started while it was in.
        if self.flag.load(Ordering::SeqCst)
            && state.round != port.reported_round
            && state.remaining > 0
        {
            let round = state.round;
            published = self.report_locked(&mut state, port, round, self.max);
        }
        state.absent += 1;
        port.left = true;
        self.left[port.index].store(true, Ordering::SeqCst);
        published
    }

    /// Takes part in the protocol again, from the next round on (the round in progress,
    /// if any, did not count this worker).
    pub(crate) fn rejoin(&self, port: &mut GvtPort<K>) {
        if !port.left {
            return;
        }
        let mut state = lock_state(&self.state);
        state.absent -= 1;
        port.left = false;
        port.reported_round = state.round;
        port.send_min = self.max;
        self.left[port.index].store(false, Ordering::SeqCst);
    }

    /// Whether worker `index` left the protocol (its peers need not wake it for a round).
    #[inline]
    pub(crate) fn has_left(&self, index: usize) -> bool {
        self.left
            .get(index)
            .is_some_and(|left| left.load(Ordering::Relaxed))
    }

    /// The GVT, if a newer one was published since this port last looked, with the
    /// migrations decided with it and the port's safe bound.
    #[inline]
    pub(crate) fn poll(&self, port: &mut GvtPort<K>) -> Option<Published<K>> {
        let version = self.version.load(Ordering::SeqCst);
        if version == port.seen_version {
            return None;
        }
        let state = lock_state(&self.state);
        port.seen_version = self.version.load(Ordering::SeqCst);
        let safe = match state.done {
            Some((round, min, by, runner_up)) if round == port.reported_round => {
                let others = if by == port.index { runner_up } else { min };
                Some(others.min(port.sent))
            }
            _ => None,
        };
        Some(Published {
            gvt: state.gvt,
            migrations: state.migrations,
            safe,
        })
    }

    /// Whether a GVT newer than the last this port polled was published (a cheap look, for
    /// a worker that waits).
    #[inline]
    pub(crate) fn has_news(&self, port: &GvtPort<K>) -> bool {
        self.version.load(Ordering::Relaxed) != port.seen_version
    }

    /// Asks for a migration, decided atomically with the next published GVT: every worker
    /// sees it with the same GVT, and no later GVT can be published before every worker has
    /// seen it (the next round needs everyone's report, and a migrating worker does not
    /// report until the migration is over).
    pub(crate) fn request_migration(&self) {
        self.want_migration.store(true, Ordering::SeqCst);
    }

    /// Abandons the round in progress, if any. Only while every worker is stopped (in a
    /// migration, between barriers) and every message has been absorbed: then every event
    /// is inside an LP, so the next round, which everyone reports in afresh, covers it.
    pub(crate) fn abort_round(&self) {
        let mut state = lock_state(&self.state);
        state.done = None;
        self.flag.store(false, Ordering::SeqCst);
    }

    /// External mode: whether a worker asked for a round since the last call.
    pub(crate) fn take_request(&self) -> bool {
        self.requested.swap(false, Ordering::Relaxed)
    }

    /// External mode: the minimum of the round that just completed, once.
    pub(crate) fn take_result(&self) -> Option<K> {
        lock_state(&self.state).result.take()
    }

    /// Migrations decided so far (see [`GvtShared::request_migration`]).
    pub(crate) fn migrations(&self) -> u64 {
        lock_state(&self.state).migrations
    }

    /// The last published GVT.
    pub(crate) fn current(&self) -> K {
        lock_state(&self.state).gvt
    }

    /// Runs `decide` on the last published GVT with the protocol's lock held, so that no
    /// GVT is published while it runs: whatever it stores (SeqCst) is seen by every worker
    /// that polls a later GVT (the stop of a run, see [`crate::shared::Shared::lower_end`]).
    pub(crate) fn with_current<R>(&self, decide: impl FnOnce(K) -> R) -> R {
        let state = lock_state(&self.state);
        decide(state.gvt)
    }

    /// Abandons the round in progress, if any, and sets the GVT to `gvt` (which may be
    /// below the last published one) without publishing it. Only while no worker takes part
    /// in the protocol (all wait at a barrier): a checkpoint taken in place, whose workers
    /// rolled back what they ran past the pause, so that the minima reported before it no
    /// longer bound what is pending (see `Shared::go_on_after_snapshot`). The next round
    /// starts afresh; ports that reported in the abandoned one report again in it.
    pub(crate) fn restart_at(&self, gvt: K) {
        let mut state = lock_state(&self.state);
        state.remaining = 0;
        state.min = self.max;
        state.done = None;
        state.gvt = gvt;
        self.flag.store(false, Ordering::SeqCst);
    }

    /// External mode: publishes a GVT computed from every rank's contribution.
    pub(crate) fn publish(&self, gvt: K) {
        let mut state = lock_state(&self.state);
        state.gvt = gvt;
        self.version.fetch_add(1, Ordering::SeqCst);
    }

    /// Rounds completed so far.
    pub(crate) fn rounds(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Each worker's safe bound is the smallest report of the others, folded with what it
    /// sent since the round's flag went up; a worker that did not report in the round that
    /// published the GVT gets none.
    #[test]
    fn safe_bounds_exclude_the_workers_own_report_and_fold_its_sends() {
        let shared = GvtShared::new(3, 0u64, u64::MAX);
        let mut ports: Vec<_> = (0..3).map(|index| shared.port(index)).collect();
        assert!(shared.start());
        // Worker 1 sends at 7 while the flag is up, before it reports: in its `send_min`.
        shared.note_send(&mut ports[1], 7);
        ports[1].sent_away(7);
        let round = shared.must_report(&ports[0]).unwrap();
        assert_eq!(shared.report(&mut ports[0], round, 10), None);
        assert_eq!(shared.report(&mut ports[1], round, 20), None);
        // After its report, worker 2 sends at 25: its own bound only.
        assert_eq!(shared.report(&mut ports[2], round, 30), Some(7));
        ports[2].sent_away(25);
        let bounds: Vec<_> = ports
            .iter_mut()
            .map(|port| shared.poll(port).unwrap().safe)
            .collect();
        // Worker 0: the others reported 7 (20 with the send) and 30. Worker 1: 10 and 30,
        // and its own send at 7. Worker 2: 10 and 7, and its send at 25.
        assert_eq!(bounds, vec![Some(7), Some(7), Some(7)]);
        // A second round with nothing in flight.
        assert!(shared.start());
        for (port, local) in ports.iter_mut().zip([40, 50, 60]) {
            let round = shared.must_report(port).unwrap();
            shared.report(port, round, local);
        }
        let bounds: Vec<_> = ports
            .iter_mut()
            .map(|port| shared.poll(port).unwrap().safe)
            .collect();
        assert_eq!(bounds, vec![Some(50), Some(40), Some(40)]);
        // A worker that already reported in a newer round gets no bound from this one.
        assert!(shared.start());
        let round = shared.must_report(&ports[0]).unwrap();
        shared.report(&mut ports[0], round, 70);
        shared.version.fetch_add(1, Ordering::SeqCst);
        assert_eq!(shared.poll(&mut ports[0]).unwrap().safe, None);
        // After a restart (a checkpoint taken in place), none either.
        shared.restart_at(45);
        shared.version.fetch_add(1, Ordering::SeqCst);
        assert_eq!(shared.poll(&mut ports[1]).unwrap().safe, None);
    }

    /// A worker that leaves reports `MAX` (with what it sent) in the round in progress, if
    /// it had not reported yet, and rounds after that complete without it; one that rejoins
    /// reports from the next round on, not in the round in progress.
    #[test]
    fn a_worker_that_left_is_not_waited_for_and_rejoins_from_the_next_round() {
        let shared = GvtShared::new(3, 0u64, u64::MAX);
        let mut ports: Vec<_> = (0..3).map(|index| shared.port(index)).collect();
        assert!(shared.start());
        let round = shared.must_report(&ports[0]).unwrap();
        assert_eq!(shared.report(&mut ports[0], round, 10), None);
        assert_eq!(shared.report(&mut ports[1], round, 20), None);
        // Worker 2 sent at 15 while the flag was up; leaving completes the round with it.
        shared.note_send(&mut ports[2], 15);
        assert_eq!(shared.leave(&mut ports[2]), Some(10));
        assert!(shared.has_left(2) && !shared.has_left(0));
        // Leaving again changes nothing.
        assert_eq!(shared.leave(&mut ports[2]), None);
        // The next round completes with two reports; the worker that left has none to make.
        assert!(shared.start());
        assert_eq!(shared.must_report(&ports[2]), None);
        let round = shared.must_report(&ports[0]).unwrap();
        assert_eq!(shared.report(&mut ports[0], round, 30), None);
        assert_eq!(shared.report(&mut ports[1], round, 40), Some(30));
        // Worker 1's safe bound is worker 0's report alone.
        shared.poll(&mut ports[0]);
        assert_eq!(shared.poll(&mut ports[1]).unwrap().safe, Some(30));
        // Rejoining mid-round: that round does not wait for it, the next one does.
        assert!(shared.start());
        shared.rejoin(&mut ports[2]);
        assert!(!shared.has_left(2));
        assert_eq!(shared.must_report(&ports[2]), None);
        let round = shared.must_report(&ports[0]).unwrap();
        assert_eq!(shared.report(&mut ports[0], round, 50), None);
        assert_eq!(shared.report(&mut ports[1], round, 60), Some(50));
        assert!(shared.start());
        for (port, local) in ports.iter_mut().zip([70, 80, 65]) {
            let round = shared.must_report(port).unwrap();
            let done = shared.report(port, round, local);
            assert_eq!(done, (port.index == 2).then_some(65));
        }
        // Leaving with no round in progress reports nothing.
        assert_eq!(shared.leave(&mut ports[1]), None);
        assert!(shared.start());
        for port in [0, 2] {
            let round = shared.must_report(&ports[port]).unwrap();
            let done = shared.report(&mut ports[port], round, 90);
            assert_eq!(done, (port == 2).then_some(90));
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    //! Two workers, one message: worker 0 holds an event at time 5 and sends worker 1 a
    //! message with timestamp 3; worker 1 holds an event at time 10 and starts a round. In
    //! every interleaving the message is either absorbed by worker 1 before it reports or
    //! covered by worker 0's `send_min`, so no completed round may publish more than 3.

    use super::*;
    use loom::sync::Arc;
    use loom::sync::Mutex as LMutex;

    #[test]
    fn gvt_never_exceeds_a_message_in_transit() {
        loom::model(|| {
            let shared = Arc::new(GvtShared::new(2, 0u64, u64::MAX));
            let channel = Arc::new(LMutex::new(Vec::<u64>::new()));

            let s0 = shared.clone();
            let c0 = channel.clone();
            let sender = loom::thread::spawn(move || {
                let mut port = s0.port(0);
                let mut local = 5u64;
                let mut sent = false;
                let mut result = None;
                for _ in 0..3 {
                    if !sent {
                        c0.lock().unwrap().push(3);
                        s0.note_send(&mut port, 3);
                        sent = true;
                        local = 5;
                    }
                    if let Some(round) = s0.must_report(&port) {
                        if let Some(gvt) = s0.report(&mut port, round, local) {
                            result = Some(gvt);
                        }
                    }
                    loom::thread::yield_now();
                }
                result
            });

            let mut port = shared.port(1);
            let mut pending = vec![10u64];
            shared.try_start();
            let mut result = None;
            for _ in 0..3 {
                if let Some(round) = shared.must_report(&port) {
                    pending.extend(channel.lock().unwrap().drain(..));
                    let local = pending.iter().copied().min().unwrap();
                    if let Some(gvt) = shared.report(&mut port, round, local) {
                        result = Some(gvt);
                    }
                }
                loom::thread::yield_now();
            }
            let other = sender.join().unwrap();
            for gvt in [result, other].into_iter().flatten() {
                assert!(gvt <= 3, "GVT {gvt} passed a message with timestamp 3");
            }
        });
    }

    /// Worker 0 sends worker 1 a message with timestamp 3 and then leaves the protocol (it
    /// holds nothing else), while worker 1, which holds an event at 10, runs rounds. In every
    /// interleaving the message is either absorbed before worker 1 reports or covered by the
    /// report worker 0 makes as it leaves, so no round publishes more than 3 — and rounds
    /// after the leave complete with worker 1's report alone.
    #[test]
    fn a_worker_that_leaves_never_lets_gvt_pass_what_it_sent() {
        loom::model(|| {
            let shared = Arc::new(GvtShared::new(2, 0u64, u64::MAX));
            let channel = Arc::new(LMutex::new(Vec::<u64>::new()));

            let s0 = shared.clone();
            let c0 = channel.clone();
            let leaver = loom::thread::spawn(move || {
                let mut port = s0.port(0);
                c0.lock().unwrap().push(3);
                s0.note_send(&mut port, 3);
                loom::thread::yield_now();
                s0.leave(&mut port)
            });

            let mut port = shared.port(1);
            let mut pending = vec![10u64];
            let mut results = Vec::new();
            for _ in 0..3 {
                shared.try_start();
                if let Some(round) = shared.must_report(&port) {
                    pending.extend(channel.lock().unwrap().drain(..));
                    let local = pending.iter().copied().min().unwrap();
                    results.extend(shared.report(&mut port, round, local));
                }
                loom::thread::yield_now();
            }
            results.extend(leaver.join().unwrap());
            for gvt in results {
                assert!(gvt <= 3, "GVT {gvt} passed a message with timestamp 3");
            }
        });
    }
}
