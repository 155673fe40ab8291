//! What the workers of a run share with each other and with the thread that called the
//! kernel: settings, the GVT protocol, the stop, gauges and heartbeats, barriers, and what
//! workers hand back (committed outputs, summaries).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};

use warpsim_core::{EventKey, LpId, SimError, TraceHash};

use crate::gvt::GvtShared;
use crate::sync::Rendezvous;
use crate::watch::{Beat, WarningHook};

/// Settings every worker reads.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) lazy: bool,
    /// The state-save interval, fixed or (when `adaptive_checkpoint`) the first one.
    pub(crate) checkpoint: u32,
    pub(crate) adaptive_checkpoint: bool,
    pub(crate) window: Option<f64>,
    pub(crate) adaptive_window: bool,
    pub(crate) memory: Option<u64>,
    pub(crate) gvt_interval: u64,
    /// LPs may migrate between workers (threads only): for load balancing or when a worker
    /// waits for a core (`give_way`). Every worker then takes part in migrations to the end.
    pub(crate) balance: bool,
    /// Move LPs from the busiest worker to the idlest (`TimeWarp::load_balancing`).
    pub(crate) load_balancing: bool,
    /// Move all LPs off a worker that waited for a core more than this share of the time
    /// (`TimeWarp::give_way`).
    pub(crate) give_way: Option<f64>,
    pub(crate) end_time: f64,
    pub(crate) n_lps: u32,
    /// Fingerprint committed events' contents too (`RunConfig::content_hash`).
    pub(crate) content_hash: bool,
    /// The end time is a pause (`RunConfig::pause_at`): at the end no `finish` runs, and
    /// each LP's meta and pending events are handed back for a checkpoint.
    pub(crate) pause: bool,
    /// Hand committed events to the coordinator for an observer.
    pub(crate) observe: bool,
    /// A pause asked for while the run runs takes a checkpoint and the run goes on
    /// ([`TimeWarp::run_from_checkpointing`](crate::TimeWarp::run_from_checkpointing)):
    /// every worker hands the coordinator a copy of its LPs' committed state and pending
    /// events, then waits at [`Shared::resume`] for the coordinator to say whether it goes on.
    pub(crate) snapshots: bool,
    /// Run events no rollback can reach without optimism's costs (`worker/safe.rs`; threads
    /// only).
    pub(crate) safe: bool,
    /// The run's lookahead (`RunConfig::lookahead`): it widens the safe bound (`safe.rs`).
    pub(crate) lookahead: f64,
}

/// The error that stops every worker, and the key up to which they commit.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct StopInfo<O> {
    pub(crate) key: EventKey,
    pub(crate) lp: LpId,
    pub(crate) error: SimError,
    /// The failed event's outputs when it commits (see [`Failure`]).
    pub(crate) outputs: Option<Vec<O>>,
}

/// A worker's estimated memory, published for the others.
#[derive(Debug, Default)]
pub(crate) struct Gauge {
    pub(crate) total: AtomicU64,
    /// Events committed so far, as of the worker's last GVT (load balancing and the
    /// progress hook read it).
    pub(crate) committed: AtomicU64,
    /// Events processed so far, as of the worker's last GVT (the progress hook).
    pub(crate) processed: AtomicU64,
    /// Nanoseconds the worker's thread waited for a core so far, as of its last look
    /// (`TimeWarp::give_way`).
    pub(crate) waited: AtomicU64,
}

/// State shared by all workers and the coordinator.
pub(crate) struct Shared<O> {
    pub(crate) gvt: GvtShared<EventKey>,
    pub(crate) stop: AtomicBool,
    pub(crate) stop_info: Mutex<Option<StopInfo<O>>>,
    pub(crate) gauges: Vec<Gauge>,
    /// Each worker's heartbeat, for the watchdog (see [`crate::watch`]).
    pub(crate) beats: Vec<Beat>,
    /// Where warnings go.
    pub(crate) warnings: WarningHook,
    /// A worker or the output sink failed outside the model's handlers: every wait is
    /// broken and every thread winds down at once (see [`Shared::abort`]).
    pub(crate) aborted: AtomicBool,
    /// The output sink panicked: it receives nothing more.
    sink_failed: AtomicBool,
    /// Every worker (and a distributed run's gateway) has flushed its last messages.
    pub(crate) barrier: Rendezvous,
    /// A distributed run's gateway has delivered every message still in flight between
    /// ranks (on threads alone, the second wait costs nothing that matters).
    pub(crate) landed: Rendezvous,
    /// Load balancing: the planned move (from, to, load to shift), the workers' barrier for
    /// migrations, and messages between workers not yet absorbed (counted only when
    /// balancing, to find quiescence).
    pub(crate) plan: Mutex<Option<(usize, usize, u64)>>,
    pub(crate) migration_barrier: Rendezvous,
    pub(crate) in_flight: AtomicI64,
    /// Workers that have left their loop (load balancing's finishing handshake).
    pub(crate) finishing: AtomicUsize,
    /// The bits of the latest committed event time of the run, published by every worker
    /// before the end-of-run barrier (and across ranks by the gateway before `landed`): the
    /// clock of `finish` when the run has no end time.
    pub(crate) last_commit: AtomicU64,
    /// The bits of the time the run was asked to pause at while it ran (a stop or a
    /// periodic checkpoint; infinity until then), see [`Shared::lower_end`].
    end: AtomicU64,
    /// The workers ended the run at a pause: each handed back its LPs' pending events.
    pub(crate) paused: AtomicBool,
    /// After a checkpoint taken in place (`Settings::snapshots`): the workers and the
    /// coordinator meet here once every worker has handed in its copy; the coordinator has
    /// by then set `resuming` and, when the run goes on, undone the pause (see
    /// [`Shared::go_on_after_snapshot`]).
    pub(crate) resume: Rendezvous,
    /// Read by the workers after they pass `resume`: the run goes on (otherwise it ends
    /// here, a stop having been asked for, and the copies are its checkpoint).
    pub(crate) resuming: AtomicBool,
    /// Over MPI, set by the gateway before the end-of-run barriers when the ranks decided
    /// on a stop: the workers hand back their LPs (which rank 0 gathers into the run's last
    /// checkpoint, `cluster/pause.rs`) instead of taking a checkpoint in place.
    pub(crate) no_snapshot: AtomicBool,
    /// Each worker's reservation for safe events (the bits of a time; `worker/safe.rs`,
    /// rule 3): a pause asked for while the run runs lands past every one.
    pub(crate) reserved: Vec<Reserved>,
    /// A pause was asked for while the run runs and has not been undone: reservations may
    /// no longer grow.
    pub(crate) pause_asked: AtomicBool,
    /// Each worker's promise (the bits of a time; `worker/promise.rs`): no message it sends
    /// from now on is earlier.
    pub(crate) promises: Vec<Reserved>,
    /// The coordinator holds outputs (or a distributed run's gateway forwards bounds) that
    /// wait for the workers' commit bounds: while set, a worker reports every commit;
    /// otherwise only one that has outputs. A report with nothing to deliver woke the
    /// coordinator's thread once a GVT round for nothing, and on a VM each such wake-up
    /// costs tens of microseconds and takes a core from a worker (issue 13, part 5).
    pub(crate) wants_bounds: AtomicBool,
}

/// A worker's reservation or promise, alone in its cache lines (the worker writes it while
/// the others run).
#[derive(Debug)]
#[repr(align(128))]
pub(crate) struct Reserved(pub(crate) AtomicU64);

impl<O> std::fmt::Debug for Shared<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("stop", &self.stop)
            .field("aborted", &self.aborted)
            .finish_non_exhaustive()
    }
}

impl<O> Shared<O> {
    /// State shared by `workers` workers and `participants` threads that take part in the
    /// end-of-run barriers (the workers, plus a distributed run's gateway).
    pub(crate) fn new(
        gvt: GvtShared<EventKey>,
        workers: usize,
        participants: usize,
        warnings: WarningHook,
    ) -> Shared<O> {
        Shared {
            gvt,
            stop: AtomicBool::new(false),
            stop_info: Mutex::new(None),
            gauges: (0..workers).map(|_| Gauge::default()).collect(),
            beats: (0..workers).map(|_| Beat::default()).collect(),
            warnings,
            aborted: AtomicBool::new(false),
            sink_failed: AtomicBool::new(false),
            barrier: Rendezvous::new(participants),
            landed: Rendezvous::new(participants),
            plan: Mutex::new(None),
            migration_barrier: Rendezvous::new(workers),
            in_flight: AtomicI64::new(0),
            finishing: AtomicUsize::new(0),
            last_commit: AtomicU64::new(0),
            end: AtomicU64::new(f64::INFINITY.to_bits()),
            paused: AtomicBool::new(false),
            resume: Rendezvous::new(workers + 1),
            resuming: AtomicBool::new(false),
            no_snapshot: AtomicBool::new(false),
            reserved: (0..workers)
                .map(|_| Reserved(AtomicU64::new(f64::NEG_INFINITY.to_bits())))
                .collect(),
            pause_asked: AtomicBool::new(false),
            // Time 0 promises nothing: every event is at or after it.
            promises: (0..workers)
                .map(|_| Reserved(AtomicU64::new(0f64.to_bits())))
                .collect(),
            // A gateway forwards every bound to the other ranks (rank 0 delivers only below
            // all of theirs), so it always wants them.
            wants_bounds: AtomicBool::new(participants > workers),
        }
    }

    /// The coordinator's side of a checkpoint taken in place, once every worker has handed
    /// in its copy and waits at [`Shared::resume`] (so no thread is inside the GVT protocol
    /// or reads the end): the pause is undone — the end is the run's own again, the
    /// finishing handshake starts over, and GVT restarts at `bound`, the pause's key. That
    /// restart is needed, not tidiness: the last published GVT may be above `bound` (a
    /// worker that ran events past the pause before it knew of it reported a larger
    /// minimum, and those events went back to pending when it rolled them back), and GVTs
    /// only grow (`GvtShared::report` keeps the larger), so without it events just past the
    /// pause could commit before the messages that roll them back arrive.
    pub(crate) fn go_on_after_snapshot(&self, bound: EventKey) {
        self.end.store(f64::INFINITY.to_bits(), Ordering::SeqCst);
        self.finishing.store(0, Ordering::SeqCst);
        self.pause_asked.store(false, Ordering::SeqCst);
        self.gvt.restart_at(bound);
        self.resuming.store(true, Ordering::SeqCst);
    }

    /// Asks the run to pause at its next safe point, from the thread that delivers outputs:
    /// at the smallest time after the last published GVT `g` and every reservation for safe
    /// events `r`, `max(g.time, r).next_up()` — every event at that time or before commits,
    /// none later — unless that is not before `limit`
    /// (the run's own end or pause) or an earlier request's time. Returns the pause time
    /// when this call lowered the end.
    ///
    /// # Ground rules
    ///
    /// - The time is chosen and stored under the GVT protocol's lock, so every GVT published
    ///   after it is read by a worker that then sees the new end ([`Shared::end_time`], read
    ///   at each new GVT), and every GVT published before it is at most `g`.
    /// - A worker commits nothing at or after the end it knows, and ends at the first GVT
    ///   at or past it; events it ran beyond it speculatively before it knew are rolled back
    ///   before its last commit (`Worker::settle_pause`). Events below the pause do not
    ///   depend on events at or after it (every event's sends have larger keys), so what
    ///   commits is exactly the uninterrupted run's prefix.
    /// - Safe events cannot be rolled back, so the pause lands past every worker's
    ///   reservation for them (`worker/safe.rs`, rule 3): the flag first, then the
    ///   reservations, all SeqCst.
    pub(crate) fn lower_end(&self, limit: f64) -> Option<f64> {
        self.gvt.with_current(|gvt| {
            if gvt == crate::message::key_max() {
                return None;
            }
            let asked_before = self.pause_asked.swap(true, Ordering::SeqCst);
            let reserved = self
                .reserved
                .iter()
                .map(|reserved| f64::from_bits(reserved.0.load(Ordering::SeqCst)))
                .fold(gvt.time.as_f64(), f64::max);
            let pause = reserved.next_up();
            let current = f64::from_bits(self.end.load(Ordering::SeqCst));
            let lowered = (pause < limit.min(current)).then(|| {
                self.end.store(pause.to_bits(), Ordering::SeqCst);
                pause
            });
            if lowered.is_none() && !asked_before {
                // No pause comes of this call: reservations may grow again.
                self.pause_asked.store(false, Ordering::SeqCst);
            }
            lowered
        })
    }

    /// Asks for a pause at `time` while no worker reads the end (before they start, or
    /// while they wait after a checkpoint taken in place): a checkpoint at a time set before
    /// the run. Every worker reads it at its next GVT, as a request made while the run runs
    /// ([`Shared::lower_end`]); events it ran at or after it before then are rolled back at
    /// the pause.
    pub(crate) fn ask_pause_at(&self, time: f64) {
        self.end.store(time.to_bits(), Ordering::SeqCst);
    }

    /// The pause time asked for while the run ran (infinity when none was).
    pub(crate) fn end_time(&self) -> f64 {
        f64::from_bits(self.end.load(Ordering::SeqCst))
    }

    /// Stops the run at once after a failure outside the model's handlers (a panic in the
    /// model's `Clone` while the kernel copies, in the output
    /// sink, or in the kernel): records `info`, and breaks every barrier so that no thread
    /// waits for one that will not come. Outputs below `info.key` (GVT) still commit.
    pub(crate) fn abort(&self, info: StopInfo<O>) {
        self.stop_with(info);
        self.aborted.store(true, Ordering::SeqCst);
        self.barrier.break_all();
        self.landed.break_all();
        self.migration_barrier.break_all();
        self.resume.break_all();
    }

    /// The output sink panicked: the run stops as after any failure outside a handler, and
    /// the sink is not called again.
    pub(crate) fn fail_sink(&self, info: StopInfo<O>) {
        self.sink_failed.store(true, Ordering::SeqCst);
        self.abort(info);
    }

    pub(crate) fn sink_failed(&self) -> bool {
        self.sink_failed.load(Ordering::SeqCst)
    }

    pub(crate) fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::SeqCst)
    }

    /// Records `info` as the reason to stop, unless an earlier (smaller-key) one is there.
    pub(crate) fn stop_with(&self, info: StopInfo<O>) {
        let mut slot = self
            .stop_info
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.as_ref().is_none_or(|current| info.key < current.key) {
            *slot = Some(info);
        }
        self.stop.store(true, Ordering::SeqCst);
    }

    pub(crate) fn stop_key(&self) -> Option<EventKey> {
        self.stop_info
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .map(|info| info.key)
    }
}

/// Counters of one worker.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Counters {
    pub(crate) processed: u64,
    pub(crate) committed: u64,
    pub(crate) rolled_back: u64,
    pub(crate) primary: u64,
    pub(crate) secondary: u64,
    /// Of the secondary rollbacks, those a cancel or reschedule (or its undoing) caused.
    pub(crate) retraction_rollbacks: u64,
    pub(crate) coasted: u64,
    /// State saves made.
    pub(crate) saves: u64,
    pub(crate) antimessages: u64,
    pub(crate) lazy_hits: u64,
    pub(crate) retractions: u64,
    pub(crate) early_antimessages: u64,
    pub(crate) window_stalls: u64,
    pub(crate) memory_stalls: u64,
    pub(crate) peak_bytes: u64,
    pub(crate) peak_pending: usize,
    /// LPs this worker received in migrations.
    pub(crate) lps_received: u64,
    /// Events run as safe events (`worker/safe.rs`).
    pub(crate) safe: u64,
    /// Time spent waiting for the other workers' promises (`worker/promise.rs`), in
    /// nanoseconds.
    pub(crate) waited_ns: u64,
    /// Events left pending at exactly the end time (counted at the end of a run that
    /// finished).
    pub(crate) at_end_time: u64,
}

/// What a worker hands the coordinator.
pub(crate) enum ToCoordinator<O> {
    /// Outputs of events committed below `bound`; the worker has committed everything below.
    Committed {
        worker: usize,
        bound: EventKey,
        outputs: Vec<(EventKey, LpId, O)>,
    },
    /// The worker is done.
    Finished {
        worker: usize,
        summary: Box<Summary>,
    },
    /// The worker's copy of its LPs for a checkpoint taken in place (`Settings::snapshots`):
    /// its figures so far, and a `SnapshotPart<M>` (boxed, so that this message does not
    /// need the model's type). Sent after the outputs of every event it committed, and
    /// then the worker waits at [`Shared::resume`].
    Snapshot {
        summary: Box<Summary>,
        part: Box<dyn std::any::Any + Send>,
    },
    /// Committed events for the run's observer (see [`TimeWarp::run_observed`]), sent just
    /// before the `Committed` that covers them: a `Vec<(EventKey, LpId, M::Event)>`, boxed so
    /// that this message does not need the event type (only observed runs send it).
    ///
    /// [`TimeWarp::run_observed`]: crate::TimeWarp::run_observed
    Observed(Box<dyn std::any::Any + Send>),
}

/// A finished worker's figures.
#[derive(Debug, Clone)]
pub(crate) struct Summary {
    pub(crate) lps: usize,
    pub(crate) trace: TraceHash,
    pub(crate) content: TraceHash,
    pub(crate) counters: Counters,
    pub(crate) pending_at_end: usize,
    pub(crate) last_commit: f64,
}

/// The estimated bytes of `n` pending events (key, event and the per-LP set's overhead).
pub(crate) fn pending_bytes<E>(n: usize) -> u64 {
    (n * (size_of::<EventKey>() + size_of::<E>() + 16)) as u64
}
