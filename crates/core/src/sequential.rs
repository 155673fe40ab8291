//! The sequential kernel: one pending-event set, events executed in key order.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Instant;

use crate::checkpoint::{Checkpoint, Ending, PendingEvent, Start};
use crate::error::{RunError, SimError};
use crate::finish::{Finished, finish_time, run_finish};
use crate::kernel::{Kernel, RunConfig};
use crate::model::{
    Backend, Committed, Ctx, LogicalProcess, LpMeta, OutputSink, deliver_guarded, encode_event,
};
use crate::pending::{Live, Pending, PendingQueue, QueueKind};
use crate::relocations::Relocations;
use crate::report::{CostModel, CriticalPath, Report, StopReason, TraceHash};
use crate::time::{EventKey, LpId, Time};

/// The sequential kernel: the reference every other kernel must match, and the baseline every
/// speedup is measured against.
///
/// # Implementation
///
/// One pending-event set (a ladder queue by default, see [`QueueKind`]) ordered by
/// [`EventKey`]; each step pops the smallest key and calls the destination LP's handler, whose
/// sends go straight into the set. The loop is generic over the model, so handlers are
/// statically dispatched and can be inlined. Outputs are delivered right after each handler:
/// in a sequential run every executed event is committed.
///
/// An event runs when its time is before `end_time` (the end time is exclusive, as in ROSS).
///
/// ```
/// use warpsim_core::{Ctx, Discard, Kernel, LogicalProcess, QueueKind, RunConfig, Sequential};
///
/// #[derive(Clone)]
/// struct Clock;
/// impl LogicalProcess for Clock {
///     type Event = ();
///     type Output = ();
///     fn init(&mut self, ctx: &mut Ctx<Self>) { ctx.schedule(1.0, ()); }
///     fn on_event(&mut self, _: (), ctx: &mut Ctx<Self>) { ctx.schedule(1.0, ()); }
/// }
/// let kernel = Sequential::new(RunConfig::new(1).end_time(10.0)).queue(QueueKind::Heap);
/// let report = kernel.run(vec![Clock; 3], &mut Discard).unwrap();
/// assert_eq!(report.events_committed, 27); // ticks at 1..=9 on 3 LPs
/// ```
#[derive(Clone)]
pub struct Sequential {
    config: RunConfig,
    queue: QueueKind,
    progress: Option<ProgressHook>,
}

/// Called now and then during a run with the current simulation time and the number of
/// events committed so far (for progress bars). It must be cheap; it runs on the kernel's
/// thread.
pub type ProgressHook = Arc<dyn Fn(Time, u64) + Send + Sync>;

/// How many events pass between two calls of the progress hook: rare enough to cost nothing
/// measurable, often enough (about every 10 ms at typical speeds) for a smooth bar.
const PROGRESS_EVERY: u64 = 1 << 16;

impl std::fmt::Debug for Sequential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequential")
            .field("config", &self.config)
            .field("queue", &self.queue)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// The limits the event loop checks when `committed` reaches its next check.
struct Limits<'a> {
    max_events: u64,
    pause_after: u64,
    stop: Option<&'a crate::StopHandle>,
}

impl Limits<'_> {
    /// The next count of committed events at which a limit may apply.
    fn next_check(&self, committed: u64) -> u64 {
        let poll = match self.stop {
            Some(_) => committed.saturating_add(STOP_POLL),
            None => u64::MAX,
        };
        self.max_events.min(self.pause_after).min(poll)
    }

    /// Why the loop stops at `committed` events, or the next count to check at. Out of line:
    /// inlined, the compiler computed its comparisons and the next count on every event
    /// (14 instructions per event in the feeding pets, issue 16), not once per check.
    #[cold]
    #[inline(never)]
    fn check(&self, committed: u64) -> Result<u64, StopReason> {
        if committed >= self.max_events {
            return Err(StopReason::EventLimit);
        }
        if committed >= self.pause_after {
            return Err(StopReason::Paused);
        }
        if let Some(stop) = self.stop {
            if stop.stop_requested() {
                return Err(StopReason::Interrupted);
            }
            if stop.take_pause() {
                return Err(StopReason::Paused);
            }
        }
        Ok(self.next_check(committed))
    }
}

/// Whether `key` at `dest` is the event run last. Out of line and only called when the ids
/// match (almost never): inlined, the whole comparison was computed for every event.
#[cold]
#[inline(never)]
fn same_run(key: &EventKey, dest: LpId, last: &(EventKey, LpId)) -> bool {
    *key == last.0 && dest == last.1
}

impl Sequential {
    /// A sequential kernel with the default queue.
    pub fn new(config: RunConfig) -> Sequential {
        Sequential {
            config,
            queue: QueueKind::default(),
            progress: None,
        }
    }

    /// Calls `hook` every 65 536 committed events with the simulation time and event count.
    pub fn on_progress(mut self, hook: ProgressHook) -> Sequential {
        self.progress = Some(hook);
        self
    }

    /// Chooses the pending-event set.
    pub fn queue(mut self, queue: QueueKind) -> Sequential {
        self.queue = queue;
        self
    }
}

impl Sequential {
    /// Runs the model like [`Kernel::run_final`], showing `observer` every event as it is
    /// committed — its key, its destination and the event — just before its handler runs
    /// (so the event that fails a run is seen too). For debugging and traces: the
    /// sequential kernel commits exactly what every kernel commits, in key order.
    ///
    /// The observer is a type parameter, so a run without one ([`Kernel::run`]) compiles
    /// to the loop without the call: it costs nothing when unused.
    ///
    /// ```
    /// use warpsim_core::{Ctx, Discard, LogicalProcess, RunConfig, Sequential};
    /// #[derive(Clone)]
    /// struct Countdown(u32);
    /// impl LogicalProcess for Countdown {
    ///     type Event = u32;
    ///     type Output = ();
    ///     fn init(&mut self, ctx: &mut Ctx<Self>) { ctx.schedule(1.0, self.0); }
    ///     fn on_event(&mut self, left: u32, ctx: &mut Ctx<Self>) {
    ///         if left > 0 { ctx.schedule(1.0, left - 1); }
    ///     }
    /// }
    /// let mut trace = Vec::new();
    /// Sequential::new(RunConfig::new(1))
    ///     .run_observed(vec![Countdown(2)], &mut Discard, |key, _lp, left: &u32| {
    ///         trace.push((key.time.as_f64(), *left));
    ///     })
    ///     .unwrap();
    /// assert_eq!(trace, [(1.0, 2), (2.0, 1), (3.0, 0)]);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Kernel::run`].
    pub fn run_observed<M, S, F>(
        &self,
        lps: Vec<M>,
        sink: &mut S,
        observer: F,
    ) -> Result<Finished<M>, RunError>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
        F: FnMut(&EventKey, LpId, &M::Event),
    {
        // One pass: with `CostModel::Nanos` the events are timed once, without the replays
        // of `run` (which would show the observer every event again).
        let mut observer = FnObserver(observer);
        let ending = self.run_pass(Start::Init(lps), sink, &mut Vec::new(), true, &mut observer)?;
        finish_ending(ending, sink)
    }

    /// Runs the model from `start` — every LP's `init`, or a [`Checkpoint`] of an earlier
    /// run — until it ends, or pauses ([`RunConfig::pause_at`], [`RunConfig::pause_after`],
    /// [`StopHandle::pause`](crate::StopHandle::pause)) or is stopped
    /// ([`StopHandle::stop`](crate::StopHandle::stop)), which hand back a checkpoint to
    /// continue from (on this kernel or any other). A run continued from a checkpoint
    /// commits the same events and delivers the same outputs as the run that was never
    /// paused, and its report counts the events before the pause too.
    ///
    /// See [`Checkpoint`] for an example.
    ///
    /// # Errors
    ///
    /// As [`Kernel::run`]; resuming also fails with [`SimError::Config`] when the
    /// checkpoint does not fit the configuration (see [`Checkpoint::check_config`]).
    pub fn run_from<M, S>(&self, start: Start<M>, sink: &mut S) -> Result<Ending<M>, RunError>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        let start = match start {
            Start::Init(lps) if self.config.critical_path == Some(CostModel::Nanos) => {
                return self.run_timed(lps, sink).map(Ending::Finished);
            }
            start => start,
        };
        self.run_pass(start, sink, &mut Vec::new(), true, &mut NoObserver)
    }
}

/// Ends a run that paused at its boundary (see [`Checkpoint::finish`]): what
/// [`Kernel::run_final`] does when a stop handle interrupts it.
fn finish_ending<M, S>(ending: Ending<M>, sink: &mut S) -> Result<Finished<M>, RunError>
where
    M: LogicalProcess,
    S: OutputSink<M::Output>,
{
    match ending {
        Ending::Finished(finished) => Ok(finished),
        Ending::Paused(checkpoint, report) => checkpoint.finish(report, sink),
    }
}

/// Puts the events taken out at the end back (so the pending count stays true; their
/// handles are never used again because no handler runs after this) and returns how many
/// were due at exactly the end time.
///
/// Out of line on purpose, like [`finish_all`]: the compiler must inline the event loop's
/// own queue calls, and more code in the loop's function made it stop doing so (measured:
/// +6 % instructions per event on PHOLD).
#[inline(never)]
fn put_back<E>(
    queue: &mut PendingQueue<Pending<E>>,
    at_end: Vec<(EventKey, Pending<E>)>,
    end_time: f64,
) -> usize {
    let exactly = at_end
        .iter()
        .filter(|(key, _)| key.time.as_f64() == end_time)
        .count();
    for (key, pending) in at_end {
        let _ = queue.push(key, pending);
    }
    exactly
}

/// Puts a checkpoint's pending events in the queue, noting where each went.
///
/// Out of line on purpose, like [`put_back`]: code in the event loop's function that only a
/// resumed run needs must not change how the compiler treats the loop.
#[inline(never)]
fn put_pending<E>(
    queue: &mut PendingQueue<Pending<E>>,
    relocations: &mut Relocations,
    pending: Vec<PendingEvent<E>>,
) -> Result<(), SimError> {
    for PendingEvent { key, dest, event } in pending {
        let pending = Pending {
            dest,
            live: Live::Yes,
            crit: 0.0,
            event,
        };
        match queue.push(key, pending) {
            Ok(handle) => relocations.insert(&key, dest, handle),
            Err(_) => return Err(SimError::QueueFull),
        }
    }
    Ok(())
}

/// Runs `finish` on every LP, in LP order, and delivers its outputs.
#[inline(never)]
fn finish_all<M, S>(
    slots: &mut [LpSlot<M>],
    n_lps: u32,
    finish_at: Time,
    outputs: &mut Vec<M::Output>,
    sink: &mut S,
) -> Result<(), SimError>
where
    M: LogicalProcess,
    S: OutputSink<M::Output>,
{
    for (index, slot) in slots.iter_mut().enumerate() {
        let lp = LpId::new(index as u32);
        let key = EventKey::finish(lp, finish_at);
        run_finish(
            &mut slot.model,
            &mut slot.meta,
            lp,
            n_lps,
            finish_at,
            outputs,
        )?;
        for output in outputs.drain(..) {
            deliver_guarded(sink, Committed { key, lp, output })?;
        }
    }
    Ok(())
}

/// What sees each committed event (see [`Sequential::run_observed`]).
trait Observer<E> {
    fn see(&mut self, key: &EventKey, dest: LpId, event: &E);
}

/// No observer: the call compiles to nothing.
struct NoObserver;

impl<E> Observer<E> for NoObserver {
    #[inline(always)]
    fn see(&mut self, _: &EventKey, _: LpId, _: &E) {}
}

struct FnObserver<F>(F);

impl<E, F: FnMut(&EventKey, LpId, &E)> Observer<E> for FnObserver<F> {
    #[inline]
    fn see(&mut self, key: &EventKey, dest: LpId, event: &E) {
        (self.0)(key, dest, event)
    }
}

/// How many events pass between two looks at a [`StopHandle`](crate::StopHandle): a stop
/// comes within microseconds, and the look costs nothing measurable.
const STOP_POLL: u64 = 1 << 10;

/// The checkpoint of a run that paused or was stopped: the LPs, the events left in the
/// queue in key order, and the report's running totals.
#[inline(never)]
fn take_checkpoint<M: LogicalProcess>(
    kernel: &str,
    slots: Vec<LpSlot<M>>,
    queue: &mut PendingQueue<Pending<M::Event>>,
    report: &Report,
) -> Checkpoint<M> {
    let mut pending = Vec::with_capacity(queue.len());
    while let Some((key, Pending { dest, event, .. })) = queue.pop() {
        pending.push(PendingEvent { key, dest, event });
    }
    let (states, metas) = slots
        .into_iter()
        .map(|slot| (slot.model, slot.meta))
        .unzip();
    // The queue hands the events back in key order, so `from_parts`' sort is one pass.
    Checkpoint::from_parts(kernel, states, metas, pending, report)
}

/// From this many LPs on, the kernel prefetches the next event's LP record (see `run`).
const PREFETCH_LPS_FROM: usize = 1 << 14;

/// The message of a caught panic (kernels report it with the LP id).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_string()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

struct LpSlot<M> {
    model: M,
    meta: LpMeta,
}

impl Kernel for Sequential {
    fn name(&self) -> &'static str {
        "sequential"
    }

    fn run_final<M, S>(&self, lps: Vec<M>, sink: &mut S) -> Result<Finished<M>, RunError>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        let ending = self.run_from(Start::Init(lps), sink)?;
        finish_ending(ending, sink)
    }
}

/// How many times a run with [`CostModel::Nanos`] executes the model: each event's cost is the
/// smallest of its timings over the passes (see [`Sequential::run_timed`]).
pub(crate) const NANOS_PASSES: usize = 3;

impl Sequential {
    /// A run whose critical path prices events by their handlers' run times.
    ///
    /// One timing of a handler is not a cost: on a shared machine a few events in every run
    /// are stretched by milliseconds (the thread was preempted, an interrupt came, a page was
    /// faulted in), and the longest chain of dependent events runs through exactly those, so
    /// the available parallelism varied tenfold from run to run. The model is therefore run
    /// [`NANOS_PASSES`] times: the first pass is the real run (its outputs go to `sink`), the
    /// others replay it on copies of the initial LPs into a discarding sink. The kernel is
    /// deterministic, so event `i` of every pass is the same event, and its cost is the
    /// minimum of its timings: a disturbance would have to hit the same event in every pass
    /// to survive. The last pass computes the critical path with those costs. A replay that
    /// does not commit the same events (a model that reads the wall clock) ends the replays,
    /// and the path of the passes before it stands.
    fn run_timed<M, S>(&self, lps: Vec<M>, sink: &mut S) -> Result<Finished<M>, RunError>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        let started = Instant::now();
        // The model's `Clone` is the model's code: if it panics there is no replay.
        let initial = catch_unwind(AssertUnwindSafe(|| lps.clone())).ok();
        let mut costs: Vec<f32> = Vec::new();
        let ending = self.run_pass(Start::Init(lps), sink, &mut costs, true, &mut NoObserver)?;
        let mut finished = finish_ending(ending, sink)?;
        let report = &mut finished.report;
        if let Some(initial) = initial {
            for pass in 1..NANOS_PASSES {
                let copy = if pass + 1 == NANOS_PASSES {
                    initial.clone()
                } else {
                    // Not the last replay: `initial` is still needed.
                    match catch_unwind(AssertUnwindSafe(|| initial.clone())) {
                        Ok(copy) => copy,
                        Err(_) => break,
                    }
                };
                match self.run_pass(
                    Start::Init(copy),
                    &mut crate::model::Discard,
                    &mut costs,
                    false,
                    &mut NoObserver,
                ) {
                    Ok(Ending::Finished(Finished { report: replay, .. }))
                        if replay.trace_hash == report.trace_hash
                            && replay.events_committed == report.events_committed =>
                    {
                        report.critical_path = replay.critical_path;
                    }
                    _ => break,
                }
            }
        }
        // The kernel ran that long, replays included.
        report.wall_seconds = started.elapsed().as_secs_f64();
        report.events_per_second = if report.wall_seconds > 0.0 {
            report.events_committed as f64 / report.wall_seconds
        } else {
            0.0
        };
        Ok(finished)
    }

    /// One pass over the model. With [`CostModel::Nanos`], `costs[i]` is the smallest timing
    /// of the `i`-th event over the passes so far (this pass's included).
    fn run_pass<M, S, H>(
        &self,
        start: Start<M>,
        sink: &mut S,
        costs: &mut Vec<f32>,
        report_progress: bool,
        observer: &mut H,
    ) -> Result<Ending<M>, RunError>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
        H: Observer<M::Event>,
    {
        let started = Instant::now();
        let config = &self.config;
        let n_lps_given = match &start {
            Start::Init(lps) => lps.len(),
            Start::Resume(checkpoint) => checkpoint.states.len(),
        };
        let n_lps = u32::try_from(n_lps_given).unwrap_or(u32::MAX);
        let mut report = Report::new(self.name(), config.seed, n_lps);
        let fail = |error: SimError, mut report: Report| {
            report.stop_reason = StopReason::Error;
            report.wall_seconds = started.elapsed().as_secs_f64();
            Err(RunError {
                error,
                partial: Box::new(report),
            })
        };
        if let Err(error) = config.validate() {
            return fail(error, report);
        }
        if n_lps_given == 0 {
            return fail(SimError::NoLps, report);
        }
        if n_lps_given > u32::MAX as usize {
            return fail(SimError::TooManyLps(n_lps_given), report);
        }
        if let Start::Resume(checkpoint) = &start
            && let Err(error) = checkpoint.check_config(config)
        {
            return fail(error, report);
        }

        let (mut slots, resumed): (Vec<LpSlot<M>>, _) = match start {
            Start::Init(lps) => (
                lps.into_iter()
                    .enumerate()
                    .map(|(index, model)| LpSlot {
                        model,
                        meta: LpMeta::new(config.seed, LpId::new(index as u32)),
                    })
                    .collect(),
                None,
            ),
            Start::Resume(checkpoint) => {
                let Checkpoint {
                    states,
                    metas,
                    pending,
                    counters,
                    ..
                } = *checkpoint;
                (
                    states
                        .into_iter()
                        .zip(metas)
                        .map(|(model, meta)| LpSlot { model, meta })
                        .collect(),
                    Some((pending, counters)),
                )
            }
        };
        // Most models keep at least one pending event per LP.
        let mut queue: PendingQueue<Pending<M::Event>> = PendingQueue::with_capacity(
            self.queue,
            slots
                .len()
                .max(resumed.as_ref().map_or(0, |(pending, _)| pending.len())),
        );
        // Where the events pending at a checkpoint went in this queue (see `Relocations`).
        let mut relocations = Relocations::default();
        let mut outputs: Vec<M::Output> = Vec::new();
        let mut error: Option<SimError> = None;
        let mut sent: Vec<warpsim_queue::Handle> = Vec::new();
        let mut trace = TraceHash::default();
        let content_on = config.content_hash;
        let mut content = TraceHash::default();
        let mut encoded: Vec<u8> = Vec::new();
        let mut encoded_ok = false;
        let critical = config.critical_path;
        // Critical time of each LP's last event: only when the analysis is on (it never
        // continues from a checkpoint), so that an LP record does not carry it (issue 16).
        let mut lp_crits: Vec<f64> = match critical {
            Some(_) => vec![0.0; slots.len()],
            None => Vec::new(),
        };
        let mut total_cost = 0.0f64;
        let mut longest = 0.0f64;
        let max_events = config.max_events.unwrap_or(u64::MAX);
        let end_time = config.end_time;
        let lookahead = config.lookahead;

        let mut committed: u64 = 0;
        let mut last_time = 0.0f64;
        let resuming = resumed.is_some();
        if let Some((pending, counters)) = resumed {
            committed = counters.committed;
            last_time = counters.last_time;
            trace = TraceHash::from_parts(counters.trace.0, counters.trace.1);
            if let Some((sum, count)) = counters.content {
                content = TraceHash::from_parts(sum, count);
            }
            report.peak_pending = counters.peak_pending as usize;
            if let Err(error) = put_pending(&mut queue, &mut relocations, pending) {
                return fail(error, report);
            }
        }
        let first_committed = committed;
        // Initialisation, in LP order, unless the run continues a checkpoint. Its
        // pseudo-events are not committed events.
        if !resuming {
            for (index, slot) in slots.iter_mut().enumerate() {
                let lp = LpId::new(index as u32);
                let key = EventKey::init(lp);
                let mut ctx = Ctx::<M> {
                    key,
                    sends: 0,
                    first_id: 0,
                    me: lp,
                    n_lps,
                    horizon: lookahead,
                    meta: &mut slot.meta,
                    backend: Backend::Direct {
                        queue: &mut queue,
                        track_sends: false,
                        sent: &mut sent,
                        relocations: &relocations,
                    },
                    outputs: &mut outputs,
                    error: &mut error,
                };
                let model = &mut slot.model;
                if let Err(payload) = catch_unwind(AssertUnwindSafe(|| model.init(&mut ctx))) {
                    let message = panic_message(payload.as_ref());
                    report.pending_at_end = queue.len();
                    return fail(
                        SimError::ModelPanic {
                            lp,
                            time: key.time,
                            message,
                        },
                        report,
                    );
                }
                for output in outputs.drain(..) {
                    if let Err(sink_error) = deliver_guarded(sink, Committed { key, lp, output }) {
                        error = Some(sink_error);
                        break;
                    }
                }
                if let Some(error) = error.take() {
                    report.pending_at_end = queue.len();
                    return fail(error, report);
                }
            }
        }
        report.peak_pending = report.peak_pending.max(queue.len());
        // The last event run: one with the same key and destination would be a collision of
        // causal identities (see `EventKey`), which equal keys come out of the queue next to.
        // (Ids differ between almost any two events, so comparing them first is one test.)
        let mut last_run = (EventKey::init(LpId::new(u32::MAX)), LpId::new(u32::MAX));
        // With many LPs the next event's LP record is a cache miss; fetch it while the current
        // event runs. (With few LPs the records are in cache and the peek would be wasted.)
        let prefetch_lps = slots.len() >= PREFETCH_LPS_FROM;
        // Events at or after the end time, taken out to stop (see below).
        let mut at_end: Vec<(EventKey, Pending<M::Event>)> = Vec::new();
        // Pauses and stops are checked where the event limit is, at no cost per event: when
        // `committed` reaches `check_at`, the next count at which one of them may apply.
        let limits = Limits {
            max_events,
            pause_after: config.pause_after.unwrap_or(u64::MAX),
            stop: config.stop.as_ref(),
        };
        let mut check_at = if limits.stop.is_some() {
            committed
        } else {
            limits.next_check(committed)
        };
        // A pause at a time before the end: the loop stops at it instead of the end time.
        let pause_time = config.pause_at.filter(|time| *time < end_time);
        let stop_time = pause_time.unwrap_or(end_time);
        let stop_reason = loop {
            if committed >= check_at {
                match limits.check(committed) {
                    Ok(next) => check_at = next,
                    Err(reason) => break reason,
                }
            }
            let Some((key, pending)) = queue.pop() else {
                break if at_end.is_empty() {
                    StopReason::Drained
                } else {
                    StopReason::EndTime
                };
            };
            if key.time.as_f64() >= stop_time {
                if pause_time.is_some() {
                    // Put back below, with the events set aside at the end.
                    at_end.push((key, pending));
                    break StopReason::Paused;
                }
                // The events due at exactly the end time come out first: set them aside to
                // count them, and stop at the first later one (or when none is left). This
                // loop's `pop` stays the only call of it, which keeps it inlined.
                let exactly = key.time.as_f64() == end_time;
                at_end.push((key, pending));
                if exactly {
                    continue;
                }
                break StopReason::EndTime;
            }
            let Pending {
                dest, crit, event, ..
            } = pending;
            if key.id == last_run.0.id && same_run(&key, dest, &last_run) {
                report.events_committed = committed;
                report.events_processed = committed;
                report.trace_hash = trace;
                report.content_hash = content_on.then_some(content);
                report.end_time = last_time;
                report.pending_at_end = queue.len() + 1;
                return fail(SimError::DuplicateKey { dest, key }, report);
            }
            last_run = (key, dest);
            if prefetch_lps && let Some((_, next)) = queue.peek() {
                // An LP record spans up to two cache lines: the one it starts in and the one
                // the next record starts in. A prefetch never faults, even past the end.
                let index = next.dest.index();
                prefetch_index::prefetch_index(&slots, index);
                prefetch_index::prefetch_index(&slots, index + 1);
            }
            let slot = &mut slots[dest.index()];
            let mut ctx = Ctx::<M> {
                key,
                sends: 0,
                first_id: 0,
                me: dest,
                n_lps,
                horizon: key.time.as_f64() + lookahead,
                meta: &mut slot.meta,
                backend: Backend::Direct {
                    queue: &mut queue,
                    track_sends: critical.is_some(),
                    sent: &mut sent,
                    relocations: &relocations,
                },
                outputs: &mut outputs,
                error: &mut error,
            };
            if content_on {
                // Before the handler takes the event; added once it has run without panicking.
                encoded_ok = encode_event(&event, &mut encoded);
            }
            observer.see(&key, dest, &event);
            let model = &mut slot.model;
            let handler_started = match critical {
                Some(CostModel::Nanos) => Some(Instant::now()),
                _ => None,
            };
            let outcome = catch_unwind(AssertUnwindSafe(|| model.on_event(event, &mut ctx)));
            if let Some(cost_model) = critical {
                let cost = match (cost_model, handler_started) {
                    (CostModel::Nanos, Some(started)) => {
                        let nanos = started.elapsed().as_nanos() as f32;
                        match costs.get_mut(committed as usize) {
                            Some(best) => {
                                *best = best.min(nanos);
                                f64::from(*best)
                            }
                            None => {
                                costs.push(nanos);
                                f64::from(nanos)
                            }
                        }
                    }
                    _ => 1.0,
                };
                // A message leaves when its event finishes, so everything this handler sent
                // (or rescheduled) depends on `finish`; patch them now that the cost is known.
                let lp_crit = &mut lp_crits[dest.index()];
                let finish = lp_crit.max(crit) + cost;
                *lp_crit = finish;
                for handle in sent.drain(..) {
                    if let Some((_, pending)) = queue.get_mut(handle) {
                        pending.crit = pending.crit.max(finish);
                    }
                }
                total_cost += cost;
                longest = longest.max(finish);
            }
            if let Err(payload) = outcome {
                report.events_committed = committed;
                report.events_processed = committed;
                report.trace_hash = trace;
                report.content_hash = content_on.then_some(content);
                report.end_time = last_time;
                report.pending_at_end = queue.len();
                return fail(
                    SimError::ModelPanic {
                        lp: dest,
                        time: key.time,
                        message: panic_message(payload.as_ref()),
                    },
                    report,
                );
            }
            committed += 1;
            last_time = key.time.as_f64();
            trace.add(&key, dest);
            if content_on {
                if !encoded_ok {
                    encoded.clear();
                }
                content.add_content(&key, dest, &encoded);
            }
            // Most events emit nothing; an empty `drain` still costs a few dozen instructions.
            if !outputs.is_empty() {
                for output in outputs.drain(..) {
                    let committed = Committed {
                        key,
                        lp: dest,
                        output,
                    };
                    if let Err(sink_error) = deliver_guarded(sink, committed) {
                        // The event is committed; its remaining outputs cannot be delivered.
                        error = Some(sink_error);
                        break;
                    }
                }
            }
            if let Some(error) = error.take() {
                report.events_committed = committed;
                report.events_processed = committed;
                report.trace_hash = trace;
                report.content_hash = content_on.then_some(content);
                report.end_time = last_time;
                report.pending_at_end = queue.len();
                return fail(error, report);
            }
            report.peak_pending = report.peak_pending.max(queue.len());
            if report_progress
                && committed.is_multiple_of(PROGRESS_EVERY)
                && let Some(hook) = &self.progress
            {
                hook(key.time, committed);
            }
        };

        report.pending_at_end_time = put_back(&mut queue, at_end, end_time);
        report.events_committed = committed;
        report.events_processed = committed;
        report.trace_hash = trace;
        report.content_hash = content_on.then_some(content);
        report.stop_reason = stop_reason;
        report.end_time = match stop_reason {
            StopReason::EndTime => end_time,
            _ => last_time,
        };
        report.pending_at_end = queue.len();
        report.critical_path = critical.map(|cost_model| CriticalPath {
            cost_model,
            total_cost,
            length: longest,
            parallelism: if longest > 0.0 {
                total_cost / longest
            } else {
                0.0
            },
        });
        if matches!(stop_reason, StopReason::Paused | StopReason::Interrupted) {
            report.pending_at_end_time = 0;
            report.wall_seconds = started.elapsed().as_secs_f64();
            report.events_per_second = if report.wall_seconds > 0.0 {
                (committed - first_committed) as f64 / report.wall_seconds
            } else {
                0.0
            };
            let checkpoint = take_checkpoint(self.name(), slots, &mut queue, &report);
            return Ok(Ending::Paused(Box::new(checkpoint), report));
        }
        // The end of the run: `finish` on every LP, in LP order, its outputs after all others.
        let finish_at = finish_time(end_time, stop_reason == StopReason::EventLimit, last_time);
        if let Err(error) = finish_all(&mut slots, n_lps, finish_at, &mut outputs, sink) {
            return fail(error, report);
        }
        report.wall_seconds = started.elapsed().as_secs_f64();
        report.events_per_second = if report.wall_seconds > 0.0 {
            (committed - first_committed) as f64 / report.wall_seconds
        } else {
            0.0
        };
        let states = slots.into_iter().map(|slot| slot.model).collect();
        Ok(Ending::Finished(Finished::new(report, states)))
    }
}
