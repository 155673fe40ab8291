//! A worker thread: its LPs with their pending events, processed lists, state saves and effect
//! logs, and the loop that executes, rolls back and commits.
//!
//! # Ground rules
//!
//! These invariants hold between any two steps of a worker's loop; the code below keeps them.
//!
//! 1. **An LP's live state is the state after its last processed event.** `model` and `meta`
//!    (random stream, send counter, retraction log) always change together: they are saved
//!    together, restored together, and a failed handler's partial changes are undone at once.
//! 2. **`processed[0]` carries a state save**, so every rollback target has a save at or
//!    before it. An LP with an empty processed list saves before its next event; fossil
//!    collection only drops records before a save it keeps. Records in
//!    `processed[..committed_prefix]` are committed and kept only to coast forward from.
//! 3. **Every event an LP sent, cancelled or moved is in its effect log** (or, lazily, its
//!    deferred list) until GVT passes the cause, in causal order; undoing an event undoes its
//!    log records newest first, so the receiver sees every change to one key in the order the
//!    sender made it (channels are FIFO per worker pair, the local queue is FIFO).
//! 4. **A message touching key `k` at or below the LP's last processed key first rolls the LP
//!    back to `k`.** So an LP has processed exactly the events below its pending minimum
//!    that it would have processed sequentially, once all messages are in.
//! 5. **Nothing that can still change reaches the coordinator.** Events are committed only
//!    below the published GVT ([`crate::gvt`]); their outputs are sent to the coordinator,
//!    which delivers them in key order once every worker has committed past them.
//! 6. **The worker's GVT report covers everything it owns**: its scheduler minimum, failed
//!    events, deferred lazy sends, the messages it absorbed (inbox and local queue are drained
//!    first) and the messages it sent since the round began (`send_min`).
//! 7. **Errors are final only at GVT.** A handler error marks the LP failed at that key (it
//!    runs nothing further); anything that rolls it back to or before that key clears it.
//!    When GVT reaches the key, no earlier event can change it, so it is the sequential
//!    kernel's error too, and the run stops.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::gvt::{GvtPort, GvtShared};
use crate::lpheap::LpHeap;
use crate::pending::Pending;
use crate::sync::Rendezvous;
use crate::watch::{Beat, Warning, WarningHook, quiet_panics_on_this_thread};
use crossbeam_channel::{Receiver, Sender};
use warpsim_core::kernel_api::{Effect, LpMeta, panic_message};
use warpsim_core::{Ctx, EventKey, LogicalProcess, LpId, SimError, Time, TraceHash};

/// Messages sent to another worker are batched up to this many before they are flushed
/// (they are also flushed after every slice of events and whenever the worker waits).
const BATCH: usize = 64;

/// Events executed between two looks at the inbox, the GVT flag and the memory gauge.
const SLICE: u32 = 32;

/// The fewest events of its own an adaptive window should hold, and how much the memory of
/// the window it thrashed at fades per calm GVT (see [`Worker::adapt`]).
const WINDOW_EVENTS: f64 = 512.0;
const CLIFF_FADE: f64 = 1.02;

/// The widest adaptive state-save interval (see [`Worker::adapt_checkpoint`]): wider ones
/// save little more copying, and keep more committed records for a rollback to coast from.
const MAX_CHECKPOINT: u32 = 32;

/// One event in this many is timed, and its state save if it makes one, for the adaptive
/// state-save interval.
const TIMED_EVERY: u32 = 64;

/// How many dirty LPs ahead commit asks for LP records (and half as far for their processed
/// records) (see [`Worker::commit_below`]).
const COMMIT_AHEAD: usize = 8;

/// How long an idle worker waits for a message before it looks around again.
const IDLE_WAIT: Duration = Duration::from_micros(50);

/// The key above every real event: "no event".
pub(crate) fn key_max() -> EventKey {
    EventKey::new(
        Time::new(f64::MAX).unwrap_or(Time::ZERO),
        u32::MAX,
        LpId::new(u32::MAX),
        u64::MAX,
    )
}

/// A message between LPs. Each carries the exact key of the event it concerns.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum Msg<E> {
    /// A new event.
    Event { key: EventKey, dest: LpId, event: E },
    /// Cancels an `Event` (the sender undid the event that sent it).
    Anti { key: EventKey, dest: LpId },
    /// Model `cancel`: the event leaves `pending` for `withdrawn`, until GVT passes `cause`.
    Withdraw {
        key: EventKey,
        dest: LpId,
        cause: EventKey,
    },
    /// Undoes a `Withdraw`.
    Restore { key: EventKey, dest: LpId },
    /// Model `reschedule` (and its undoing, with `from` and `to` swapped).
    Move {
        dest: LpId,
        from: EventKey,
        to: EventKey,
    },
}

impl<E> Msg<E> {
    pub(crate) fn dest(&self) -> LpId {
        match self {
            Msg::Event { dest, .. }
            | Msg::Anti { dest, .. }
            | Msg::Withdraw { dest, .. }
            | Msg::Restore { dest, .. }
            | Msg::Move { dest, .. } => *dest,
        }
    }

    /// The smallest key the message touches: its timestamp for GVT.
    pub(crate) fn stamp(&self) -> EventKey {
        match self {
            Msg::Event { key, .. }
            | Msg::Anti { key, .. }
            | Msg::Withdraw { key, .. }
            | Msg::Restore { key, .. } => *key,
            Msg::Move { from, to, .. } => (*from).min(*to),
        }
    }
}

/// An executed, not yet fossil-collected event.
struct Processed<M: LogicalProcess> {
    key: EventKey,
    /// Kept to put back in `pending` on rollback and to coast forward.
    event: M::Event,
    /// The LP's state before this event (every `checkpoint_interval`-th record).
    snapshot: Option<(M, LpMeta)>,
    /// What the handler emitted; leaves at commit.
    outputs: Vec<M::Output>,
}

/// What a processed event did to the event set.
enum Logged<E> {
    /// Sent an event. The payload is kept in lazy mode, to compare with a re-execution's.
    Send {
        key: EventKey,
        dest: LpId,
        event: Option<E>,
    },
    Withdraw {
        key: EventKey,
        dest: LpId,
    },
    Move {
        dest: LpId,
        from: EventKey,
        to: EventKey,
    },
}

struct EffectRecord<E> {
    cause: EventKey,
    effect: Logged<E>,
}

/// A send of an undone event whose antimessage lazy cancellation holds back.
struct Deferred<E> {
    cause: EventKey,
    key: EventKey,
    dest: LpId,
    event: E,
}

/// How much of a failed event's work [`Worker::fail`] must undo.
enum Undo<M> {
    /// Nothing ran: the LP's state is as it was.
    Nothing,
    /// The handler ran: restore the state save taken before it, or (without one) rebuild
    /// the state from the last save.
    Handler(Option<(M, LpMeta)>),
}

/// A handler error that is not yet known to be real.
struct Failure<O> {
    key: EventKey,
    error: SimError,
    /// Outputs of the failed handler when the error still commits the event (a bad delay or
    /// destination: the sequential kernel commits the event, then stops); `None` for a panic.
    outputs: Option<Vec<O>>,
}

/// One LP as a worker holds it.
pub(crate) struct LpState<M: LogicalProcess> {
    pub(crate) id: LpId,
    pub(crate) model: M,
    pub(crate) meta: LpMeta,
    pub(crate) pending: Pending<M::Event>,
    processed: VecDeque<Processed<M>>,
    committed_prefix: usize,
    /// Records since (and including) the last one with a state save.
    since_snapshot: u32,
    effects: VecDeque<EffectRecord<M::Event>>,
    /// Cancelled events, kept until GVT passes the cancel (a rollback may restore them).
    withdrawn: BTreeMap<EventKey, (M::Event, EventKey)>,
    deferred: Vec<Deferred<M::Event>>,
    failed: Option<Box<Failure<M::Output>>>,
    /// The (time bits, age) this LP's scheduler entry is valid for (see [`LpHeap`]).
    queued: Option<(u64, u32)>,
    /// After a secondary rollback at this time, events at this time run only at GVT (see
    /// [`Worker::rollback`]).
    hold: Option<Time>,
    in_dirty: bool,
    in_held: bool,
    in_deferred: bool,
    in_withdrawn: bool,
    /// Events committed since the last migration (what load balancing moves).
    load: u64,
}

impl<M: LogicalProcess> LpState<M> {
    /// An LP after its `init`, with the events it holds at the start.
    pub(crate) fn new(
        id: LpId,
        model: M,
        meta: LpMeta,
        pending: BTreeMap<EventKey, M::Event>,
    ) -> LpState<M> {
        LpState {
            id,
            model,
            meta,
            pending: Pending::from(pending),
            processed: VecDeque::new(),
            committed_prefix: 0,
            since_snapshot: 0,
            effects: VecDeque::new(),
            withdrawn: BTreeMap::new(),
            deferred: Vec::new(),
            failed: None,
            queued: None,
            hold: None,
            in_dirty: false,
            in_held: false,
            in_deferred: false,
            in_withdrawn: false,
            load: 0,
        }
    }

    /// Whether a message touching `key` must first roll this LP back.
    #[inline]
    fn processed_at_or_after(&self, key: EventKey) -> bool {
        self.processed.len() > self.committed_prefix
            && self.processed.back().is_some_and(|last| key <= last.key)
    }
}

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
    /// Dynamic load balancing (threads only).
    pub(crate) balance: bool,
    pub(crate) end_time: f64,
    pub(crate) n_lps: u32,
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
    /// Events committed so far (load balancing reads it).
    pub(crate) committed: AtomicU64,
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
}

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
        }
    }

    /// Stops the run at once after a failure outside the model's handlers (a panic in the
    /// model's `Clone` or `PartialEq` while the kernel copies or compares, in the output
    /// sink, or in the kernel): records `info`, and breaks every barrier so that no thread
    /// waits for one that will not come. Outputs below `info.key` (GVT) still commit.
    pub(crate) fn abort(&self, info: StopInfo<O>) {
        self.stop_with(info);
        self.aborted.store(true, Ordering::SeqCst);
        self.barrier.break_all();
        self.landed.break_all();
        self.migration_barrier.break_all();
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
}

/// A finished worker's figures.
#[derive(Debug, Clone)]
pub(crate) struct Summary {
    pub(crate) lps: usize,
    pub(crate) trace: TraceHash,
    pub(crate) counters: Counters,
    pub(crate) pending_at_end: usize,
    pub(crate) last_commit: f64,
}

/// Where each LP lives: (worker, index in that worker's LPs).
/// Where each LP lives: (worker, index in that worker's LPs), packed in one atomic because
/// load balancing moves LPs (only while every worker is stopped in a migration, between
/// barriers, which order the stores before anyone reads again).
pub(crate) type Route = [AtomicU64];

/// A route entry.
pub(crate) fn route_entry(worker: u32, index: u32) -> AtomicU64 {
    AtomicU64::new((u64::from(worker) << 32) | u64::from(index))
}

/// Reads LP `lp`'s route entry.
#[inline]
pub(crate) fn route_of(route: &Route, lp: usize) -> (u32, u32) {
    let packed = route[lp].load(Ordering::Relaxed);
    ((packed >> 32) as u32, packed as u32)
}

/// One worker thread.
pub(crate) struct Worker<'a, M: LogicalProcess> {
    index: usize,
    lps: Vec<LpState<M>>,
    route: &'a Route,
    settings: &'a Settings,
    shared: &'a Shared<M::Output>,
    /// The LPs with an executable event, by (time, age) of their smallest one.
    heap: LpHeap,
    inbox: Receiver<Vec<Msg<M::Event>>>,
    peers: Vec<Sender<Vec<Msg<M::Event>>>>,
    outboxes: Vec<Vec<Msg<M::Event>>>,
    spare: Vec<Vec<Msg<M::Event>>>,
    local: VecDeque<Msg<M::Event>>,
    to_coordinator: Sender<ToCoordinator<M::Output>>,
    port: GvtPort<EventKey>,
    gvt: EventKey,
    /// The window in force: the fixed one, or the adaptive one (see [`Worker::adapt`]).
    window: Option<f64>,
    /// The latest time executed since the last GVT, and the events processed and rolled
    /// back then.
    horizon: f64,
    at_last_gvt: (u64, u64),
    /// What the adaptive window follows: the decayed events rolled back and run, the rate
    /// (own events committed per unit of simulated time), and the window it last thrashed at.
    waste: (f64, f64),
    rate: f64,
    cliff: f64,
    since_gvt_start: u64,
    over_budget: bool,
    /// The memory budget's own window (see [`Worker::adapt_to_memory`]), the heap bytes of
    /// the state saves this worker holds (as the model reports them), and whether the
    /// budget could not be kept even at the narrowest window (warned once).
    memory_window: Option<f64>,
    save_heap: u64,
    over_at_floor: u32,
    warned_memory: bool,
    /// The state-save interval in force, and what the adaptive one follows (see
    /// [`Worker::adapt_checkpoint`]): the smoothed cost of a save and of an event (seconds,
    /// sampled), the decayed rollbacks and events run, and those counters at the last look.
    checkpoint: u32,
    save_cost: f64,
    event_cost: f64,
    ticks: u32,
    rollback_rate: (f64, f64),
    at_last_checkpoint: (u64, u64),
    // Scratch buffers, reused so the hot path does not allocate.
    effects: Vec<Effect<M::Event>>,
    outputs: Vec<M::Output>,
    kept: Vec<bool>,
    matched: Vec<usize>,
    /// The LP (and event) whose state a rollback is rebuilding, to name it if the model's
    /// `Clone` panics there (see [`Worker::abandon`]).
    busy: Option<(LpId, EventKey)>,
    summary_sent: bool,
    // LPs with uncommitted records, with deferred sends, with withdrawn events, failed.
    dirty: Vec<u32>,
    deferred_lps: Vec<u32>,
    withdrawn_lps: Vec<u32>,
    failed_lps: Vec<u32>,
    held_lps: Vec<u32>,
    /// Antimessages that arrived before their event: (LP index, key).
    early_antis: BTreeSet<(u32, EventKey)>,
    // Sizes for the memory estimate.
    n_pending: usize,
    n_records: usize,
    n_effects: usize,
    n_deferred: usize,
    n_withdrawn: usize,
    n_outputs: usize,
    trace: TraceHash,
    last_commit: f64,
    counters: Counters,
    /// Load balancing: migrations done, the GVTs seen since the last decision (worker 0),
    /// each worker's committed count at the last decision (worker 0), and LPs in transit.
    migrations_done: u64,
    /// Early antimessages kept by the source of a migration for its remaining LPs.
    pending_antis: Vec<(LpId, EventKey)>,
    gvts_since_balance: u32,
    load_marks: Vec<u64>,
    transfer: &'a Mutex<Vec<Transfer<M>>>,
}

/// An LP on its way from one worker to another, with the antimessages that wait for it.
pub(crate) type Transfer<M> = (LpState<M>, Vec<EventKey>);

/// GVTs between two load-balancing decisions, and the smallest imbalance acted on (the
/// busiest worker's load over the mean).
const BALANCE_EVERY: u32 = 16;
const IMBALANCE: f64 = 1.15;

/// What a worker starts with.
pub(crate) struct WorkerParts<'a, M: LogicalProcess> {
    pub(crate) index: usize,
    pub(crate) lps: Vec<LpState<M>>,
    pub(crate) route: &'a Route,
    pub(crate) settings: &'a Settings,
    pub(crate) shared: &'a Shared<M::Output>,
    pub(crate) inbox: Receiver<Vec<Msg<M::Event>>>,
    pub(crate) peers: Vec<Sender<Vec<Msg<M::Event>>>>,
    pub(crate) to_coordinator: Sender<ToCoordinator<M::Output>>,
    pub(crate) transfer: &'a Mutex<Vec<Transfer<M>>>,
}

impl<'a, M: LogicalProcess> Worker<'a, M> {
    pub(crate) fn new(parts: WorkerParts<'a, M>) -> Worker<'a, M> {
        let n_workers = parts.peers.len();
        let n_pending = parts.lps.iter().map(|lp| lp.pending.len()).sum();
        let mut worker = Worker {
            index: parts.index,
            heap: LpHeap::new(parts.lps.len()),
            lps: parts.lps,
            route: parts.route,
            settings: parts.settings,
            shared: parts.shared,
            inbox: parts.inbox,
            peers: parts.peers,
            outboxes: (0..n_workers).map(|_| Vec::new()).collect(),
            spare: Vec::new(),
            local: VecDeque::new(),
            to_coordinator: parts.to_coordinator,
            port: parts.shared.gvt.port(),
            gvt: EventKey::init(LpId::new(0)),
            window: parts.settings.window,
            horizon: 0.0,
            at_last_gvt: (0, 0),
            waste: (0.0, 0.0),
            rate: 0.0,
            cliff: f64::INFINITY,
            since_gvt_start: 0,
            over_budget: false,
            memory_window: None,
            save_heap: 0,
            over_at_floor: 0,
            warned_memory: false,
            checkpoint: parts.settings.checkpoint,
            save_cost: 0.0,
            event_cost: 0.0,
            ticks: 0,
            rollback_rate: (0.0, 0.0),
            at_last_checkpoint: (0, 0),
            effects: Vec::new(),
            outputs: Vec::new(),
            kept: Vec::new(),
            matched: Vec::new(),
            busy: None,
            summary_sent: false,
            dirty: Vec::new(),
            deferred_lps: Vec::new(),
            withdrawn_lps: Vec::new(),
            failed_lps: Vec::new(),
            held_lps: Vec::new(),
            early_antis: BTreeSet::new(),
            n_pending,
            n_records: 0,
            n_effects: 0,
            n_deferred: 0,
            n_withdrawn: 0,
            n_outputs: 0,
            trace: TraceHash::default(),
            last_commit: 0.0,
            counters: Counters::default(),
            migrations_done: 0,
            pending_antis: Vec::new(),
            gvts_since_balance: 0,
            load_marks: Vec::new(),
            transfer: parts.transfer,
        };
        for l in 0..worker.lps.len() {
            worker.resched(l);
        }
        worker.counters.peak_pending = n_pending;
        worker
    }

    /// The worker's life: the loop, then the end-of-run steps. A panic anywhere outside a
    /// handler (handlers have their own guard) aborts the run with a typed error instead of
    /// killing the thread and leaving its peers waiting (see [`Worker::abandon`]).
    pub(crate) fn run(mut self) {
        quiet_panics_on_this_thread();
        let ran = catch_unwind(AssertUnwindSafe(|| self.main_loop()));
        let ended = ran.and_then(|()| catch_unwind(AssertUnwindSafe(|| self.finish())));
        if let Err(payload) = ended {
            self.abandon(payload.as_ref());
        }
    }

    /// The worker's loop; returns when the run is over (end time, drained, or stopped).
    fn main_loop(&mut self) {
        loop {
            if self.shared.stop.load(Ordering::SeqCst) {
                break;
            }
            self.absorb_inbox();
            self.drain_local();
            if let Some(round) = self.shared.gvt.must_report(&self.port) {
                self.report(round);
            }
            if let Some((gvt, migrations)) = self.shared.gvt.poll(&mut self.port) {
                if self.new_gvt(gvt) {
                    // `finish` still takes part in a migration published with this GVT.
                    break;
                }
                if migrations != self.migrations_done {
                    self.migrate();
                }
            }
            let executed = self.execute_slice();
            self.flush_all();
            if self.since_gvt_start >= self.settings.gvt_interval {
                self.since_gvt_start = 0;
                self.shared.gvt.try_start();
            }
            if executed == 0 {
                // Idle or throttled: a GVT round is what can unblock us.
                self.shared.gvt.try_start();
                if let Ok(batch) = self.inbox.recv_timeout(IDLE_WAIT) {
                    self.absorb(batch);
                }
            }
        }
    }

    /// After a panic outside a handler: stops every thread at the last GVT (everything
    /// below it is committed already or commits on the other workers), names the LP when a
    /// rollback of one was under way, and hands the coordinator this worker's figures.
    fn abandon(&mut self, payload: &(dyn std::any::Any + Send)) {
        let message = panic_message(payload);
        let error = match self.busy {
            Some((lp, key)) => SimError::ModelPanic {
                lp,
                time: key.time,
                message: format!(
                    "outside its handler, while the kernel rebuilt its state after a rollback (in the model's Clone?): {message}"
                ),
            },
            None => SimError::Internal(format!(
                "a Time Warp worker panicked outside any handler (in the model's Clone, PartialEq or Drop, or in the kernel): {message}"
            )),
        };
        self.shared.abort(StopInfo {
            key: self.gvt,
            lp: self.busy.map_or(LpId::new(0), |(lp, _)| lp),
            error,
            outputs: None,
        });
        self.send_summary();
    }

    /// Executes up to [`SLICE`] events, in key order, within the window and memory budget.
    fn execute_slice(&mut self) -> u32 {
        self.update_gauge();
        let mut executed = 0;
        while executed < SLICE {
            if !self.local.is_empty() {
                self.drain_local();
            }
            let Some((time, l)) = self.next_lp() else {
                break;
            };
            if time >= self.settings.end_time {
                break;
            }
            if let Some(window) = self.window
                && time > self.gvt.time.as_f64() + window
            {
                self.counters.window_stalls += 1;
                break;
            }
            if let Some(window) = self.memory_window
                && time > self.gvt.time.as_f64() + window
            {
                self.counters.memory_stalls += 1;
                break;
            }
            self.horizon = self.horizon.max(time);
            self.heap.pop();
            self.lps[l].queued = None;
            // The next LP to run is most likely the heap's new first: start loading its
            // record while this one runs.
            if let Some((_, _, next)) = self.heap.peek() {
                self.warm(next as usize);
            }
            self.execute(l);
            executed += 1;
        }
        self.since_gvt_start += u64::from(executed);
        executed
    }

    /// The first LP with an executable event and that event's time, after dropping the
    /// scheduler's stale entries (see [`LpHeap`]); the LP's entry stays first.
    fn next_lp(&mut self) -> Option<(f64, usize)> {
        loop {
            let (time, age, l) = self.heap.peek()?;
            let l = l as usize;
            let lp = &self.lps[l];
            if lp.queued != Some((time, age)) {
                self.heap.pop();
                continue;
            }
            let runnable = lp.failed.is_none()
                && lp.pending.first_key().is_some_and(|key| {
                    (key.time.as_f64().to_bits(), key.age) == (time, age)
                        && !(lp.hold == Some(key.time) && key > self.gvt)
                });
            if runnable {
                return Some((f64::from_bits(time), l));
            }
            // The LP's first event moved later (or it cannot run): queue it where it is now.
            self.heap.pop();
            self.lps[l].queued = None;
            self.resched(l);
        }
    }

    /// Asks the hardware to load the parts of LP `l`'s record that running it or handing it
    /// a message reads. With thousands of LPs per worker a record is rarely in the cache,
    /// and its misses, taken one after another, are much of an event's cost.
    #[inline]
    fn warm(&self, l: usize) {
        let lp = &self.lps[l];
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.queued), 0);
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.pending), 0);
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.processed), 0);
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.meta), 0);
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.model), 0);
    }

    // ----- execution ---------------------------------------------------------------------

    fn execute(&mut self, l: usize) {
        let Some((key, event)) = self.lps[l].pending.pop_first() else {
            return;
        };

        self.n_pending -= 1;
        if self.settings.lazy && !self.lps[l].deferred.is_empty() {
            // A deferred send whose cause sorts before this event will not be regenerated:
            // its cause is gone (annihilated, withdrawn or moved), so cancel it now.
            self.flush_deferred(l, |deferred| deferred.cause < key);
        }
        let n_lps = self.settings.n_lps;
        let checkpoint = self.checkpoint;
        let timed = self.settings.adaptive_checkpoint && {
            self.ticks = self.ticks.wrapping_add(1);
            self.ticks.is_multiple_of(TIMED_EVERY)
        };
        let started = timed.then(Instant::now);
        let lp = &mut self.lps[l];
        let save = lp.processed.is_empty() || lp.since_snapshot >= checkpoint;
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
        let mut effects = std::mem::take(&mut self.effects);
        let mut outputs = std::mem::take(&mut self.outputs);
        let mut error = None;
        let beat = &self.shared.beats[self.index];
        beat.enter(self.counters.processed, lp.id, key.time);
        let outcome = {
            let mut ctx = Ctx::<M>::buffered(
                lp.id,
                key,
                n_lps,
                &mut lp.meta,
                &mut effects,
                &mut outputs,
                &mut error,
            );
            let model = &mut lp.model;
            catch_unwind(AssertUnwindSafe(|| model.on_event(event, &mut ctx)))
        };
        self.counters.processed += 1;
        beat.leave(self.counters.processed);
        if let (Some(started), Some(saved)) = (started, saved) {
            let ran = saved.elapsed().as_secs_f64();
            self.event_cost = smooth(self.event_cost, ran);
            if save {
                let copied = (saved - started).as_secs_f64();
                self.save_cost = smooth(self.save_cost, copied);
            }
        }
        let mut failure = match (outcome, error) {
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
        };
        let regenerating = failure.is_none()
            && self.settings.lazy
            && self.lps[l].deferred.iter().any(|d| d.cause == key);
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
            self.effects = effects;
            self.outputs = outputs;
            self.fail(l, key, kept, Undo::Handler(snapshot), error, commit_outputs);
            return;
        }
        let emitted = if outputs.is_empty() {
            Vec::new()
        } else {
            // `split_off` keeps the scratch buffer's capacity for the next event.
            outputs.split_off(0)
        };
        self.n_outputs += emitted.len();
        self.outputs = outputs;
        if self.settings.memory.is_some()
            && let Some((model, _)) = &snapshot
        {
            self.save_heap += model.heap_bytes() as u64;
        }
        let lp = &mut self.lps[l];
        lp.since_snapshot = if save { 1 } else { lp.since_snapshot + 1 };
        lp.processed.push_back(Processed {
            key,
            event: kept,
            snapshot,
            outputs: emitted,
        });
        self.n_records += 1;
        if !lp.in_dirty {
            lp.in_dirty = true;
            self.dirty.push(l as u32);
        }
        self.log_and_send(l, key, &mut effects, regenerating);
        self.effects = effects;
        self.resched(l);
    }

    /// Lazy cancellation, first half: marks in `self.kept` which of a re-executed event's
    /// sends are identical to a deferred send of its earlier run, and lists those deferred
    /// sends in `self.matched`. It only reads: the comparison is the model's `PartialEq`, user
    /// code that may panic, and a panic must leave every record as it was.
    fn match_regenerated(
        &mut self,
        l: usize,
        cause: EventKey,
        effects: &[Effect<M::Event>],
    ) -> std::thread::Result<()> {
        let mut kept = std::mem::take(&mut self.kept);
        let mut matched = std::mem::take(&mut self.matched);
        kept.clear();
        kept.resize(effects.len(), false);
        matched.clear();
        let deferred = &self.lps[l].deferred;
        let compared = catch_unwind(AssertUnwindSafe(|| {
            for (slot, effect) in kept.iter_mut().zip(effects) {
                if let Effect::Send { key, dest, event } = effect
                    && let Some(position) = deferred.iter().position(|d| {
                        d.cause == cause && d.key == *key && d.dest == *dest && d.event == *event
                    })
                {
                    *slot = true;
                    matched.push(position);
                }
            }
        }));
        self.kept = kept;
        self.matched = matched;
        compared
    }

    /// Logs a handler's effects and sends the messages they call for. When `regenerating`
    /// (lazy mode, see [`Worker::match_regenerated`]), sends identical to a deferred send of
    /// the same event are kept instead of sent again.
    fn log_and_send(
        &mut self,
        l: usize,
        cause: EventKey,
        effects: &mut Vec<Effect<M::Event>>,
        regenerating: bool,
    ) {
        let lazy = self.settings.lazy;
        if regenerating {
            // Highest position first, so `swap_remove` never moves a send still to remove.
            self.matched.sort_unstable_by(|a, b| b.cmp(a));
            let lp = &mut self.lps[l];
            for &position in &self.matched {
                lp.deferred.swap_remove(position);
            }
            self.n_deferred -= self.matched.len();
            self.counters.lazy_hits += self.matched.len() as u64;
            // The rest of this event's earlier sends were not regenerated: cancel them before
            // anything new goes out (a new send may reuse one of their keys).
            self.flush_deferred(l, |d| d.cause == cause);
        }
        for (index, effect) in effects.drain(..).enumerate() {
            let logged = match effect {
                Effect::Send { key, dest, event } => {
                    let copy = lazy.then(|| event.clone());
                    let is_kept = regenerating && self.kept[index];
                    if !is_kept {
                        if lazy && !self.lps[l].deferred.is_empty() {
                            // Another undone event's deferred send with this key must be
                            // cancelled first: a receiver never holds two events with one key.
                            self.flush_deferred(l, |d| d.key == key);
                        }
                        self.transmit(Msg::Event { key, dest, event });
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
            self.lps[l].effects.push_back(EffectRecord {
                cause,
                effect: logged,
            });
            self.n_effects += 1;
        }
    }

    /// A handler (or the model's `Clone` or `PartialEq` around it) failed: undo its changes
    /// to the LP as `undo` says, keep the event pending, and park the LP until a rollback
    /// clears the failure or GVT makes it real.
    fn fail(
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
            Undo::Handler(Some((model, meta))) => {
                let lp = &mut self.lps[l];
                lp.model = model;
                lp.meta = meta;
            }
            Undo::Handler(None) => {
                let len = self.lps[l].processed.len();
                self.restore(l, len);
            }
        }
        let lp = &mut self.lps[l];
        lp.pending.insert(key, event);
        self.n_pending += 1;
        lp.failed = Some(Box::new(Failure {
            key,
            error,
            outputs,
        }));
        self.failed_lps.push(l as u32);
        self.resched(l);
    }

    /// Clears LP `l`'s failure if `key` is at or before it (the failure may have been a
    /// phantom of the state that is now changing).
    fn clear_failure(&mut self, l: usize, key: EventKey) {
        let lp = &mut self.lps[l];
        if lp.failed.as_ref().is_some_and(|failure| key <= failure.key) {
            lp.failed = None;
            self.failed_lps.retain(|&failed| failed as usize != l);
        }
    }

    /// Sets LP `l`'s state to the state before `processed[i]` (or after the last record when
    /// `i == len`): the nearest save at or before it, then coasting forward.
    fn restore(&mut self, l: usize, i: usize) {
        let n_lps = self.settings.n_lps;
        let mut effects = std::mem::take(&mut self.effects);
        let mut outputs = std::mem::take(&mut self.outputs);
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
                        self.save_heap -= state.0.heap_bytes() as u64;
                    }
                    state
                }
                None => return,
            }
        } else {
            match &lp.processed[j].snapshot {
                Some((model, meta)) => (model.clone(), meta.clone()),
                None => return,
            }
        };
        let mut error = None;
        for record in lp.processed.range(j..i) {
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
        self.effects = effects;
        self.outputs = outputs;
        self.busy = None;
    }

    /// Undoes every processed event of LP `l` with key `>= target`.
    fn rollback(&mut self, l: usize, target: EventKey, primary: bool) {
        let lp = &self.lps[l];
        let start = lp.committed_prefix;
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
            self.lps[l].hold = Some(target.time);
        }
        self.restore(l, i);
        let lp = &mut self.lps[l];
        let undone = lp.processed.len() - i;
        if self.settings.memory.is_some() {
            self.save_heap -= saved_heap(lp.processed.range(i..));
        }
        for record in lp.processed.drain(i..) {
            self.n_outputs -= record.outputs.len();
            lp.pending.insert(record.key, record.event);
        }
        self.n_pending += undone;
        self.n_records -= undone;
        self.counters.rolled_back += undone as u64;
        lp.since_snapshot = 0;
        for record in lp.processed.iter().rev() {
            lp.since_snapshot += 1;
            if record.snapshot.is_some() {
                break;
            }
        }
        // Undo the effects of the undone events, newest first.
        loop {
            let lp = &mut self.lps[l];
            if lp.effects.back().is_none_or(|record| record.cause < target) {
                break;
            }
            let Some(record) = lp.effects.pop_back() else {
                break;
            };
            self.n_effects -= 1;
            match record.effect {
                Logged::Send {
                    key,
                    dest,
                    event: Some(event),
                } if self.settings.lazy => {
                    lp.deferred.push(Deferred {
                        cause: record.cause,
                        key,
                        dest,
                        event,
                    });
                    self.n_deferred += 1;
                    if !lp.in_deferred {
                        lp.in_deferred = true;
                        self.deferred_lps.push(l as u32);
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
        self.clear_failure(l, target);
    }

    fn send_anti(&mut self, key: EventKey, dest: LpId) {
        self.counters.antimessages += 1;
        self.transmit(Msg::Anti { key, dest });
    }

    /// Sends the antimessages of LP `l`'s deferred sends that match `which`.
    fn flush_deferred(&mut self, l: usize, which: impl Fn(&Deferred<M::Event>) -> bool) {
        let mut index = 0;
        loop {
            let lp = &mut self.lps[l];
            if index >= lp.deferred.len() {
                break;
            }
            if which(&lp.deferred[index]) {
                let deferred = lp.deferred.swap_remove(index);
                self.n_deferred -= 1;
                self.send_anti(deferred.key, deferred.dest);
            } else {
                index += 1;
            }
        }
    }

    /// Puts LP `l` in the scheduler under its smallest pending key (or takes it out).
    #[inline]
    fn resched(&mut self, l: usize) {
        let lp = &mut self.lps[l];
        let mut top = if lp.failed.is_some() {
            None
        } else {
            lp.pending.first_key()
        };
        if let (Some(hold), Some(key)) = (lp.hold, top)
            && key.time == hold
            && key > self.gvt
        {
            top = None;
            if !lp.in_held {
                lp.in_held = true;
                self.held_lps.push(l as u32);
            }
        }
        match top {
            Some(key) => {
                let want = (key.time.as_f64().to_bits(), key.age);
                // A later key keeps the entry there is: it surfaces early and is fixed then.
                if lp.queued.is_none_or(|queued| want < queued) {
                    lp.queued = Some(want);
                    self.heap.push(l as u32, want.0, want.1);
                }
            }
            None => lp.queued = None,
        }
    }

    // ----- messages ----------------------------------------------------------------------

    fn transmit(&mut self, msg: Msg<M::Event>) {
        let (worker, _) = route_of(self.route, msg.dest().index());
        let worker = worker as usize;
        if worker == self.index {
            if self.local.is_empty() && matches!(msg, Msg::Event { .. }) {
                // A new event for an LP of this worker is applied at once (the common case:
                // self-sends). Applying it can roll its LP back, but a rollback sends no new
                // events, so this never recurses; and with the local queue empty, nothing
                // sent earlier about the same key can be overtaken.
                self.apply(msg);
            } else {
                self.local.push_back(msg);
            }
        } else {
            self.outboxes[worker].push(msg);
            if self.outboxes[worker].len() >= BATCH {
                self.flush(worker);
            }
        }
    }

    fn flush(&mut self, worker: usize) {
        if self.outboxes[worker].is_empty() {
            return;
        }
        let fresh = self
            .spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(BATCH));
        let batch = std::mem::replace(&mut self.outboxes[worker], fresh);
        let stamp = batch.iter().map(Msg::stamp).min().unwrap_or_else(key_max);
        // A closed inbox means its worker has finished, which happens only once nothing can
        // reach it that matters (after the final barrier).
        if self.settings.balance {
            self.shared
                .in_flight
                .fetch_add(batch.len() as i64, Ordering::SeqCst);
        }
        let _ = self.peers[worker].send(batch);
        self.shared.gvt.note_send(&mut self.port, stamp);
    }

    fn flush_all(&mut self) {
        for worker in 0..self.outboxes.len() {
            self.flush(worker);
        }
    }

    fn absorb_inbox(&mut self) {
        while let Ok(batch) = self.inbox.try_recv() {
            self.absorb(batch);
        }
    }

    fn absorb(&mut self, mut batch: Vec<Msg<M::Event>>) {
        if self.settings.balance {
            self.shared
                .in_flight
                .fetch_sub(batch.len() as i64, Ordering::SeqCst);
        }
        // Load every receiver's record at once, so their cache misses overlap.
        for msg in &batch {
            let (worker, l) = route_of(self.route, msg.dest().index());
            if worker as usize == self.index {
                self.warm(l as usize);
            }
        }
        for msg in batch.drain(..) {
            self.apply(msg);
        }
        if self.spare.len() < 64 {
            self.spare.push(batch);
        }
    }

    fn drain_local(&mut self) {
        while let Some(msg) = self.local.pop_front() {
            self.apply(msg);
        }
    }

    /// Applies one message to its LP (ground rule 4).
    fn apply(&mut self, msg: Msg<M::Event>) {
        let (_, l) = route_of(self.route, msg.dest().index());
        let l = l as usize;
        match msg {
            Msg::Event { key, event, .. } => {
                if !self.early_antis.is_empty() && self.early_antis.remove(&(l as u32, key)) {
                    return;
                }
                if self.lps[l].processed_at_or_after(key) {
                    self.rollback(l, key, true);
                }
                self.clear_failure(l, key);
                self.lps[l].pending.insert(key, event);
                self.n_pending += 1;
                self.counters.peak_pending = self.counters.peak_pending.max(self.n_pending);
            }
            Msg::Anti { key, .. } => {
                if self.lps[l].processed_at_or_after(key) {
                    self.rollback(l, key, false);
                }
                self.clear_failure(l, key);
                let lp = &mut self.lps[l];
                if lp.pending.remove(&key).is_some() {
                    self.n_pending -= 1;
                } else if lp.withdrawn.remove(&key).is_some() {
                    self.n_withdrawn -= 1;
                } else {
                    // The event is still on its way (possible only across a future
                    // transport without per-pair FIFO): annihilate it when it comes.
                    self.counters.early_antimessages += 1;
                    self.early_antis.insert((l as u32, key));
                }
            }
            Msg::Withdraw { key, cause, .. } => {
                if self.lps[l].processed_at_or_after(key) {
                    self.rollback(l, key, false);
                }
                self.clear_failure(l, key);
                let lp = &mut self.lps[l];
                if let Some(event) = lp.pending.remove(&key) {
                    self.n_pending -= 1;
                    lp.withdrawn.insert(key, (event, cause));
                    self.n_withdrawn += 1;
                    if !lp.in_withdrawn {
                        lp.in_withdrawn = true;
                        self.withdrawn_lps.push(l as u32);
                    }
                }
            }
            Msg::Restore { key, .. } => {
                if let Some((event, _)) = self.lps[l].withdrawn.remove(&key) {
                    self.n_withdrawn -= 1;
                    if self.lps[l].processed_at_or_after(key) {
                        self.rollback(l, key, false);
                    }
                    self.clear_failure(l, key);
                    self.lps[l].pending.insert(key, event);
                    self.n_pending += 1;
                }
            }
            Msg::Move { from, to, .. } => {
                let first = from.min(to);
                if self.lps[l].processed_at_or_after(first) {
                    self.rollback(l, first, false);
                }
                self.clear_failure(l, first);
                let lp = &mut self.lps[l];
                if let Some(event) = lp.pending.remove(&from) {
                    lp.pending.insert(to, event);
                }
            }
        }
        self.resched(l);
    }

    // ----- GVT, fossils, memory --------------------------------------------------------

    /// Reports this worker's local minimum for `round` (ground rule 6).
    fn report(&mut self, round: u64) {
        // Deferred sends whose cause is gone are cancelled first, so their antimessages are
        // flushed below and covered by this report.
        let mut position = 0;
        while position < self.deferred_lps.len() {
            let l = self.deferred_lps[position] as usize;
            if self.settings.lazy {
                let lp = &self.lps[l];
                let gone: Vec<EventKey> = lp
                    .deferred
                    .iter()
                    .map(|d| d.cause)
                    .filter(|cause| !lp.pending.contains_key(cause))
                    .collect();
                if !gone.is_empty() {
                    self.flush_deferred(l, |d| gone.contains(&d.cause));
                }
            }
            if self.lps[l].deferred.is_empty() {
                self.lps[l].in_deferred = false;
                self.deferred_lps.swap_remove(position);
            } else {
                position += 1;
            }
        }
        self.flush_all();
        self.absorb_inbox();
        self.drain_local();
        self.flush_all();
        // The heap orders by (time, age) only, so the smallest pending key is at least that
        // prefix with the smallest source and `seq`.
        let mut local = match self.next_lp() {
            Some((_, l)) => {
                let (time, age) = self.lps[l].queued.expect("the first LP is queued");
                EventKey::new(
                    Time::new(f64::from_bits(time)).unwrap_or(Time::ZERO),
                    age,
                    LpId::new(0),
                    0,
                )
            }
            None => key_max(),
        };
        for &l in &self.failed_lps {
            if let Some(failure) = &self.lps[l as usize].failed {
                local = local.min(failure.key);
            }
        }
        for &l in &self.held_lps {
            if let Some(key) = self.lps[l as usize].pending.first_key() {
                local = local.min(key);
            }
        }
        for &l in &self.deferred_lps {
            for deferred in &self.lps[l as usize].deferred {
                local = local.min(deferred.cause);
            }
        }
        self.shared.gvt.report(&mut self.port, round, local);
    }

    /// Acts on a new GVT: commits below it, and decides whether the run is over. Returns
    /// `true` when this worker should finish.
    fn new_gvt(&mut self, gvt: EventKey) -> bool {
        // Before `adapt`, which restarts the horizon both read.
        if self.settings.memory.is_some() {
            self.adapt_to_memory(gvt);
        }
        if self.settings.adaptive_window {
            self.adapt(gvt);
        }
        if self.settings.adaptive_checkpoint {
            self.adapt_checkpoint();
        }
        self.gvt = gvt;
        self.commit_below(gvt);
        let held = std::mem::take(&mut self.held_lps);
        for &l in &held {
            let lp = &mut self.lps[l as usize];
            lp.in_held = false;
            if lp.hold.is_some_and(|hold| gvt.time > hold) {
                lp.hold = None;
            }
        }
        for &l in &held {
            self.resched(l as usize);
        }
        if gvt == key_max() || gvt.time.as_f64() >= self.settings.end_time {
            return true;
        }
        if self.settings.balance {
            self.shared.gauges[self.index]
                .committed
                .store(self.counters.committed, Ordering::Relaxed);
            if self.index == 0 {
                self.consider_balancing();
            }
        }
        for &l in &self.failed_lps {
            let lp = &mut self.lps[l as usize];
            if let Some(failure) = lp.failed.as_mut()
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

    /// Sets the memory budget's window at a new GVT (see
    /// [`TimeWarp::memory`](crate::TimeWarp::memory)): halved while the run is over budget,
    /// grown by a quarter once it is under three quarters of it, never below a span of about
    /// [`WINDOW_EVENTS`] of this worker's events (narrower, GVT rounds would set the pace),
    /// and dropped once it is wide again. A budget that even the narrowest window cannot keep
    /// is said once; the run goes on.
    fn adapt_to_memory(&mut self, gvt: EventKey) {
        let Some(budget) = self.settings.memory else {
            return;
        };
        let now = gvt.time.as_f64();
        let floor = if now > 0.0 && now.is_finite() && self.counters.committed > 0 {
            WINDOW_EVENTS * now / self.counters.committed as f64
        } else {
            0.0
        };
        let used = self.total_memory();
        if self.over_budget {
            let span = (self.horizon - now).max(0.0);
            let current = self.memory_window.map_or(span, |window| window.min(span));
            let narrowed = (current * 0.5).max(floor);
            if current <= floor {
                self.over_at_floor += 1;
            }
            self.memory_window = Some(narrowed);
        } else {
            self.over_at_floor = 0;
            if let Some(window) = self.memory_window
                && (used as f64) < 0.75 * budget as f64
            {
                let widened = window * 1.25;
                // Far wider than anything that ran: the budget no longer binds.
                self.memory_window = (widened <= 4.0 * (self.horizon - now).max(floor))
                    .then_some(widened.max(floor));
            }
        }
        // A few GVTs in a row at the narrowest window and still over: say so, once.
        if self.over_at_floor >= 8 && !self.warned_memory && self.index == 0 {
            self.warned_memory = true;
            let used: u64 = self
                .shared
                .gauges
                .iter()
                .map(|gauge| gauge.total.load(Ordering::Relaxed))
                .sum();
            (self.shared.warnings)(&Warning::MemoryBudgetExceeded { budget, used });
        }
    }

    /// Worker 0, every [`BALANCE_EVERY`] GVTs: if the busiest worker committed more than
    /// [`IMBALANCE`] times the mean since the last decision, plans to move load from it to
    /// the least busy one and asks for a migration with the next GVT.
    fn consider_balancing(&mut self) {
        self.gvts_since_balance += 1;
        if self.gvts_since_balance < BALANCE_EVERY {
            return;
        }
        self.gvts_since_balance = 0;
        let now: Vec<u64> = self
            .shared
            .gauges
            .iter()
            .map(|gauge| gauge.committed.load(Ordering::Relaxed))
            .collect();
        if self.load_marks.len() != now.len() {
            self.load_marks = vec![0; now.len()];
        }
        let loads: Vec<u64> = now
            .iter()
            .zip(&self.load_marks)
            .map(|(now, mark)| now.saturating_sub(*mark))
            .collect();
        self.load_marks = now;
        let total: u64 = loads.iter().sum();
        if loads.len() < 2 || total < 256 {
            return;
        }
        let mean = total as f64 / loads.len() as f64;
        let (from, &busiest) = loads
            .iter()
            .enumerate()
            .max_by_key(|(_, load)| **load)
            .expect("at least two workers");
        let (to, &idlest) = loads
            .iter()
            .enumerate()
            .min_by_key(|(_, load)| **load)
            .expect("at least two workers");
        if (busiest as f64) < IMBALANCE * mean || from == to {
            return;
        }
        let amount = (busiest as f64 - mean).min(mean - idlest as f64) as u64;
        *self
            .shared
            .plan
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((from, to, amount));
        self.shared.gvt.request_migration();
    }

    /// Moves LPs between workers (every worker calls it, with the same published plan).
    ///
    /// # Ground rules
    ///
    /// 1. Quiescence first: flush, barrier, absorb, flush, barrier, read the count of
    ///    messages between workers not yet absorbed, barrier; repeat until it is zero
    ///    (absorbing can roll back and send antimessages). Then every event and message is
    ///    inside an LP record, and nobody sends until the end.
    /// 2. The GVT round in progress, if any, is abandoned: its reports may not cover an LP
    ///    that moves. The next round starts afresh, after the move.
    /// 3. The source worker hands over whole LP records (processed lists, saves, logs,
    ///    deferred and withdrawn events, failures, holds) and the early antimessages that
    ///    wait for them; both workers then rebuild their indices (heap, lists, counts, route).
    /// 4. A last barrier orders the route updates before any worker reads a route again.
    fn migrate(&mut self) {
        let barrier = &self.shared.migration_barrier;
        loop {
            self.flush_all();
            let met = barrier.wait();
            self.absorb_inbox();
            self.drain_local();
            self.flush_all();
            let met = met && barrier.wait();
            let unabsorbed = self.shared.in_flight.load(Ordering::SeqCst);
            if !(met && barrier.wait()) {
                // Broken: another thread failed and the run is over; nothing moves.
                return;
            }
            if unabsorbed == 0 {
                break;
            }
        }
        if self.index == 0 {
            self.shared.gvt.abort_round();
        }
        let plan = *self
            .shared
            .plan
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((from, _, amount)) = plan
            && from == self.index
        {
            let moving = self.extract(amount);
            self.transfer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend(moving);
        }
        if !barrier.wait() {
            // The LPs this worker handed over are lost to it; the run is over anyway.
            return;
        }
        if let Some((from, to, _)) = plan {
            if to == self.index {
                let arriving = std::mem::take(
                    &mut *self
                        .transfer
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner),
                );
                self.counters.lps_received += arriving.len() as u64;
                let mut antis = Vec::new();
                for (lp, waiting) in arriving {
                    antis.extend(waiting.into_iter().map(|key| (lp.id, key)));
                    self.lps.push(lp);
                }
                self.rebuild(antis);
            } else if from == self.index {
                self.rebuild(Vec::new());
            }
        }
        for lp in &mut self.lps {
            lp.load = 0;
        }
        self.migrations_done += 1;
        barrier.wait();
    }

    /// Source side of a migration: takes LPs, most loaded first, until about `amount` of
    /// load has left (keeping at least one LP). Returns them with their early antimessages.
    fn extract(&mut self, amount: u64) -> Vec<Transfer<M>> {
        let mut order: Vec<usize> = (0..self.lps.len()).collect();
        order.sort_by_key(|&l| std::cmp::Reverse(self.lps[l].load));
        let mut chosen = Vec::new();
        let mut moved = 0;
        for l in order {
            if moved >= amount || chosen.len() + 1 >= self.lps.len() {
                break;
            }
            moved += self.lps[l].load;
            chosen.push(l);
        }
        // Early antimessages by LP id, since indices change below.
        let waiting: Vec<(LpId, EventKey)> = std::mem::take(&mut self.early_antis)
            .into_iter()
            .map(|(l, key)| (self.lps[l as usize].id, key))
            .collect();
        chosen.sort_unstable_by(|a, b| b.cmp(a));
        let mut moving = Vec::with_capacity(chosen.len());
        for l in chosen {
            let lp = self.lps.swap_remove(l);
            moving.push(lp);
        }
        let mut transfers: Vec<Transfer<M>> = moving
            .into_iter()
            .map(|lp| {
                let keys = waiting
                    .iter()
                    .filter(|(id, _)| *id == lp.id)
                    .map(|(_, key)| *key)
                    .collect();
                (lp, keys)
            })
            .collect();
        let staying: Vec<(LpId, EventKey)> = waiting
            .into_iter()
            .filter(|(id, _)| !transfers.iter().any(|(lp, _)| lp.id == *id))
            .collect();
        self.pending_antis = staying;
        transfers.shrink_to_fit();
        transfers
    }

    /// Rebuilds every index over this worker's LPs after a migration changed them: the
    /// route entries, the LP heap, the lists of LPs in each state, the size counts, and
    /// the early antimessages (`extra`, by LP id, plus any kept by [`Worker::extract`]).
    fn rebuild(&mut self, extra: Vec<(LpId, EventKey)>) {
        self.heap = LpHeap::new(self.lps.len());
        self.dirty.clear();
        self.deferred_lps.clear();
        self.withdrawn_lps.clear();
        self.failed_lps.clear();
        self.held_lps.clear();
        (
            self.n_pending,
            self.n_records,
            self.n_effects,
            self.n_deferred,
            self.n_withdrawn,
            self.n_outputs,
        ) = (0, 0, 0, 0, 0, 0);
        self.save_heap = if self.settings.memory.is_some() {
            self.lps
                .iter()
                .map(|lp| saved_heap(lp.processed.iter()))
                .sum()
        } else {
            0
        };
        let mut index_of = std::collections::HashMap::with_capacity(self.lps.len());
        for (l, lp) in self.lps.iter_mut().enumerate() {
            self.route[lp.id.index()]
                .store((self.index as u64) << 32 | l as u64, Ordering::Relaxed);
            index_of.insert(lp.id, l as u32);
            lp.queued = None;
            lp.in_held = false;
            if lp.in_dirty {
                self.dirty.push(l as u32);
            }
            if lp.in_deferred {
                self.deferred_lps.push(l as u32);
            }
            if lp.in_withdrawn {
                self.withdrawn_lps.push(l as u32);
            }
            if lp.failed.is_some() {
                self.failed_lps.push(l as u32);
            }
            self.n_pending += lp.pending.len();
            self.n_records += lp.processed.len();
            self.n_effects += lp.effects.len();
            self.n_deferred += lp.deferred.len();
            self.n_withdrawn += lp.withdrawn.len();
            self.n_outputs += lp.processed.iter().map(|r| r.outputs.len()).sum::<usize>();
        }
        let kept = std::mem::take(&mut self.pending_antis);
        if !kept.is_empty() || !extra.is_empty() || !self.early_antis.is_empty() {
            let current: Vec<(LpId, EventKey)> = std::mem::take(&mut self.early_antis)
                .into_iter()
                .map(|(l, key)| (self.lps[l as usize].id, key))
                .collect();
            for (id, key) in current.into_iter().chain(kept).chain(extra) {
                if let Some(&l) = index_of.get(&id) {
                    self.early_antis.insert((l, key));
                }
            }
        }
        for l in 0..self.lps.len() {
            self.resched(l);
        }
    }

    /// Adapts the optimism window to the waste since the last GVT (see
    /// [`TimeWarp::adaptive_window`](crate::TimeWarp::adaptive_window)). Runaway optimism —
    /// an LP far ahead whose work keeps being undone by stragglers — is Time Warp's classic
    /// instability; bounding it turns wasted work into waiting, which a GVT round ends.
    fn adapt(&mut self, gvt: EventKey) {
        let counters = &self.counters;
        let (processed, rolled_back, committed) =
            (counters.processed, counters.rolled_back, counters.committed);
        let ran = processed - self.at_last_gvt.0;
        if ran < 64 {
            // Too little evidence; keep counting.
            return;
        }
        let now = gvt.time.as_f64();
        let span = (self.horizon - now).max(0.0);
        // Waste is rolled back over run, both counts decayed by half at every GVT: one
        // interval may hold only a few dozen events, and the rollback of a transient (the
        // other thread descheduled for a moment) would otherwise read as thrashing.
        self.waste.0 = 0.5 * self.waste.0 + (rolled_back - self.at_last_gvt.1) as f64;
        self.waste.1 = 0.5 * self.waste.1 + ran as f64;
        let waste = self.waste.0 / self.waste.1;
        if now > 0.0 && now.is_finite() {
            self.rate = committed as f64 / now;
        }
        // Never so narrow that a window holds fewer than a few hundred of this worker's
        // events: below that, GVT rounds, not rollbacks, would set the pace.
        let floor = if self.rate > 0.0 {
            WINDOW_EVENTS / self.rate
        } else {
            0.0
        };
        // Optimism has a cliff (Sharks World on 2 threads runs at 99% efficiency with 40
        // time units ahead of GVT and at 55% with 80), and waste stays low right up to it,
        // so a window that grew while the waste was low would jump over it again and again.
        // The window where it last thrashed is remembered, and growth stops short of it;
        // that memory fades slowly, so a transient does not throttle a run for good.
        if waste > 0.25 {
            let at = self.window.map_or(span, |window| window.min(span));
            self.cliff = at;
            self.window = Some((at * 0.5).max(floor));
        } else if waste < 0.05
            && let Some(window) = self.window
        {
            self.cliff *= CLIFF_FADE;
            self.window = Some((window * 1.25).min(0.75 * self.cliff).max(floor));
        }
        self.at_last_gvt = (processed, rolled_back);
        self.horizon = now;
    }

    /// Sets the adaptive state-save interval (see
    /// [`TimeWarp::checkpoint_interval`](crate::TimeWarp::checkpoint_interval)). Saving
    /// before every `k`-th event costs `save / k` per event, and a rollback then re-runs
    /// `(k - 1) / 2` events on average to rebuild the state, so with `r` rollbacks per event
    /// the cost per event, `save / k + r × event × (k - 1) / 2`, is least at
    /// `k = √(2 save / (r × event))`. Sharks World's sectors copy kilobytes of creature lists
    /// per save and roll back seldom: `k` grows; a thrashing run's `k` stays near 1.
    fn adapt_checkpoint(&mut self) {
        let counters = &self.counters;
        let rollbacks = counters.primary + counters.secondary;
        let ran = counters.processed - self.at_last_checkpoint.0;
        if ran < 256 || self.save_cost == 0.0 || self.event_cost == 0.0 {
            // Too little evidence; keep counting.
            return;
        }
        // Decayed by half per look, like the window's waste (see `adapt`).
        self.rollback_rate.0 =
            0.5 * self.rollback_rate.0 + (rollbacks - self.at_last_checkpoint.1) as f64;
        self.rollback_rate.1 = 0.5 * self.rollback_rate.1 + ran as f64;
        self.at_last_checkpoint = (counters.processed, rollbacks);
        let rate = self.rollback_rate.0 / self.rollback_rate.1;
        self.checkpoint = best_interval(self.save_cost, self.event_cost, rate, self.checkpoint);
    }

    /// Commits every processed event with a key below `bound` and drops what no rollback
    /// can need any more (ground rules 2 and 5).
    fn commit_below(&mut self, bound: EventKey) {
        let mut batch = Vec::new();
        // Visiting the LPs in index order walks `lps` forwards, which the hardware prefetches;
        // in the order they became dirty every LP is a cache miss.
        self.dirty.sort_unstable();
        let mut kept = 0;
        for position in 0..self.dirty.len() {
            // Commit reads each dirty LP's record and then its processed records, cold since
            // they ran: ask for both ahead of use, the records once the LP's record (asked
            // for earlier) can say where they are.
            if let Some(&ahead) = self.dirty.get(position + COMMIT_AHEAD) {
                let lp = &self.lps[ahead as usize];
                prefetch_index::prefetch_index(std::slice::from_ref(&lp.processed), 0);
            }
            if let Some(&near) = self.dirty.get(position + COMMIT_AHEAD / 2) {
                let processed = &self.lps[near as usize].processed;
                if let Some(record) = processed.get(processed.len().wrapping_sub(1)) {
                    prefetch_index::prefetch_index(std::slice::from_ref(record), 0);
                }
            }
            let l = self.dirty[position] as usize;
            let lp = &mut self.lps[l];
            let start = lp.committed_prefix;
            // Committed records are below the previous bound, hence below this one (GVT never
            // goes back). Usually
            // every record is below the bound, which the last one shows without a search.
            let end = if lp.processed.back().is_some_and(|record| record.key < bound) {
                lp.processed.len()
            } else {
                lp.processed
                    .partition_point(|record| record.key < bound)
                    .max(start)
            };
            for record in lp.processed.range_mut(start..end) {
                self.trace.add(&record.key, lp.id);
                self.counters.committed += 1;
                lp.load += 1;
                self.last_commit = self.last_commit.max(record.key.time.as_f64());
                self.n_outputs -= record.outputs.len();
                for output in record.outputs.drain(..) {
                    batch.push((record.key, lp.id, output));
                }
            }
            if end == lp.processed.len() {
                self.n_records -= lp.processed.len();
                if self.settings.memory.is_some() {
                    self.save_heap -= saved_heap(lp.processed.iter());
                }
                lp.processed.clear();
                lp.committed_prefix = 0;
                lp.since_snapshot = 0;
                // Every logged effect was caused by a record now committed (the log holds
                // effects of processed records only: rollbacks remove those of undone ones),
                // so the whole log goes without reading it.
                self.n_effects -= lp.effects.len();
                lp.effects.clear();
            } else {
                let mut keep = end;
                while keep > 0 && lp.processed[keep].snapshot.is_none() {
                    keep -= 1;
                }
                if self.settings.memory.is_some() {
                    self.save_heap -= saved_heap(lp.processed.range(..keep));
                }
                lp.processed.drain(..keep);
                self.n_records -= keep;
                lp.committed_prefix = end - keep;
            }
            while lp
                .effects
                .front()
                .is_some_and(|record| record.cause < bound)
            {
                lp.effects.pop_front();
                self.n_effects -= 1;
            }
            if lp.processed.len() > lp.committed_prefix {
                self.dirty[kept] = l as u32;
                kept += 1;
            } else {
                lp.in_dirty = false;
            }
        }
        self.dirty.truncate(kept);
        let mut position = 0;
        while position < self.withdrawn_lps.len() {
            let l = self.withdrawn_lps[position] as usize;
            let lp = &mut self.lps[l];
            let before = lp.withdrawn.len();
            // Once GVT passes the cancel, no rollback can restore the event.
            lp.withdrawn.retain(|_, (_, cause)| *cause >= bound);
            self.n_withdrawn -= before - lp.withdrawn.len();
            if lp.withdrawn.is_empty() {
                lp.in_withdrawn = false;
                self.withdrawn_lps.swap_remove(position);
            } else {
                position += 1;
            }
        }
        let _ = self.to_coordinator.send(ToCoordinator::Committed {
            worker: self.index,
            bound,
            outputs: batch,
        });
    }

    /// Updates this worker's memory estimate (for the statistics) and, under a budget,
    /// publishes it and reads whether the run as a whole is over budget.
    fn update_gauge(&mut self) {
        let total = self.total_memory();
        self.counters.peak_bytes = self.counters.peak_bytes.max(total);
        let Some(budget) = self.settings.memory else {
            return;
        };
        let gauge = &self.shared.gauges[self.index];
        gauge.total.store(total, Ordering::Relaxed);
        let sum: u64 = self
            .shared
            .gauges
            .iter()
            .map(|gauge| gauge.total.load(Ordering::Relaxed))
            .sum();
        let over = sum > budget;
        if over && !self.over_budget {
            // Collect fossils as soon as possible: that is what frees memory. Until the GVT
            // comes, run no further ahead than now.
            self.shared.gvt.try_start();
            let span = (self.horizon - self.gvt.time.as_f64()).max(0.0);
            self.memory_window = Some(self.memory_window.map_or(span, |w| w.min(span)));
        }
        self.over_budget = over;
    }

    /// This worker's memory estimate: its storage counted by `size_of` (see the crate docs,
    /// "Memory"), plus the heap of its state saves as the model reports it.
    fn total_memory(&self) -> u64 {
        pending_bytes::<M::Event>(self.n_pending)
            + (self.n_records * size_of::<Processed<M>>()) as u64
            + (self.n_effects * size_of::<EffectRecord<M::Event>>()) as u64
            + (self.n_deferred * size_of::<Deferred<M::Event>>()) as u64
            + (self.n_withdrawn * (size_of::<EventKey>() * 2 + size_of::<M::Event>() + 16)) as u64
            + (self.n_outputs * size_of::<M::Output>()) as u64
            + (self.heap.len() * 16) as u64
            + self.save_heap
    }

    /// The last steps: commit what is final, let every message land, count what is left.
    /// After an abort the barriers are broken and pass at once: the count of what is left
    /// may then miss messages in flight, but no thread waits for one that failed.
    fn finish(&mut self) {
        if self.settings.balance {
            // A migration may be published with the GVT this worker stopped at, or with a
            // round it reported in before it stopped: every worker must take part, so wait
            // here, migrating when asked, until every worker is finishing. Once all are, no
            // round can complete, so no migration can be published any more.
            self.shared.finishing.fetch_add(1, Ordering::SeqCst);
            loop {
                if self.shared.is_aborted() {
                    break;
                }
                if self.shared.gvt.migrations() != self.migrations_done {
                    self.migrate();
                    continue;
                }
                if self.shared.finishing.load(Ordering::SeqCst) == self.shared.gauges.len() {
                    break;
                }
                std::thread::sleep(IDLE_WAIT);
            }
        }
        let bound = self.shared.stop_key().unwrap_or_else(key_max);
        self.commit_below(bound);
        self.flush_all();
        self.shared.barrier.wait();
        // Every worker has flushed; what is in transit now is all that is left to land.
        self.shared.landed.wait();
        self.absorb_inbox();
        self.drain_local();
        self.send_summary();
    }

    /// Hands the coordinator this worker's figures (once, whatever happened).
    fn send_summary(&mut self) {
        if self.summary_sent {
            return;
        }
        self.summary_sent = true;
        let summary = Summary {
            lps: self.lps.len(),
            trace: self.trace,
            counters: self.counters.clone(),
            pending_at_end: self.n_pending,
            last_commit: self.last_commit,
        };
        let _ = self.to_coordinator.send(ToCoordinator::Finished {
            worker: self.index,
            summary: Box::new(summary),
        });
    }
}

/// The estimated bytes of `n` pending events (key, event and the per-LP set's overhead).
pub(crate) fn pending_bytes<E>(n: usize) -> u64 {
    (n * (size_of::<EventKey>() + size_of::<E>() + 16)) as u64
}

/// The heap bytes the model reports for the state saves in `records`.
fn saved_heap<'r, M: LogicalProcess>(records: impl Iterator<Item = &'r Processed<M>>) -> u64 {
    records
        .filter_map(|record| record.snapshot.as_ref())
        .map(|(model, _)| model.heap_bytes() as u64)
        .sum()
}

/// The state-save interval that costs least per event (see [`Worker::adapt_checkpoint`]),
/// given the cost of a save and of an event and the rollbacks per event; at most double
/// `current`, so that one calm interval cannot swing it to the maximum.
fn best_interval(save: f64, event: f64, rollbacks: f64, current: u32) -> u32 {
    // Infinite without rollbacks, and NaN (which `max` turns into 1) if nothing was timed.
    let best = (2.0 * save / (rollbacks * event)).sqrt();
    let best = best.max(1.0).min(f64::from(MAX_CHECKPOINT)) as u32;
    best.min(current.saturating_mul(2))
}

/// An exponentially weighted mean of timing samples, `sample` weighing one eighth (the first
/// sample is taken whole).
fn smooth(mean: f64, sample: f64) -> f64 {
    if mean == 0.0 {
        sample
    } else {
        mean + (sample - mean) / 8.0
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_CHECKPOINT, best_interval};

    #[test]
    fn the_save_interval_balances_copying_against_coasting() {
        // Saves cost 50 events' work, 1 rollback per 100 events: √(2 · 50 / 0.01) = 100,
        // capped at the maximum.
        assert_eq!(best_interval(50.0, 1.0, 0.01, 64), MAX_CHECKPOINT);
        // Saves cost 2 events, 1 rollback per 100 events: √400 = 20.
        assert_eq!(best_interval(2.0, 1.0, 0.01, 64), 20);
        // Cheap saves and frequent rollbacks: save before every event.
        assert_eq!(best_interval(0.1, 1.0, 0.5, 8), 1);
        // No rollbacks: grow, but at most double per step.
        assert_eq!(best_interval(1.0, 1.0, 0.0, 3), 6);
        assert_eq!(best_interval(1.0, 1.0, 0.0, 31), MAX_CHECKPOINT);
        // Nothing timed yet (0 / 0): stay at one save per event.
        assert_eq!(best_interval(0.0, 0.0, 0.0, 4), 1);
    }
}
