//! Running a model: initialisation, the worker threads, and the coordinator that delivers
//! committed outputs in key order.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use warpsim_core::kernel_api::{Effect, LpMeta, deliver_guarded, panic_message};
use warpsim_core::{
    Committed, Ctx, EventKey, Kernel, LogicalProcess, LpId, OutputSink, Report, RunConfig,
    RunError, SimError, StopReason, TraceHash,
};

use crate::config::TimeWarp;
use crate::gvt::GvtShared;
use crate::stats::{ThreadStats, TimeWarpStats};
use crate::watch::{WATCH_EVERY, Watchdog, default_hook};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use crate::worker::{
    LpState, Msg, Route, Settings, Shared, StopInfo, Summary, ToCoordinator, Transfer, Worker,
    WorkerParts, key_max, pending_bytes, route_entry,
};

impl Kernel for TimeWarp {
    fn name(&self) -> &'static str {
        "timewarp"
    }

    fn run<M, S>(&self, lps: Vec<M>, sink: &mut S) -> Result<Report, RunError>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        self.run_with_stats(lps, sink).0
    }
}

impl TimeWarp {
    /// Runs the model like [`Kernel::run`] and also returns the Time Warp statistics (filled
    /// in as far as the run got when it failed).
    ///
    /// ```
    /// use warpsim_core::{Discard, RunConfig};
    /// use warpsim_models::phold::PholdParams;
    /// use warpsim_timewarp::TimeWarp;
    ///
    /// let params = PholdParams { lps: 32, end: 10.0, ..PholdParams::default() };
    /// let kernel = TimeWarp::new(RunConfig::new(1).end_time(params.end)).threads(2);
    /// let (report, stats) = kernel.run_with_stats(params.build().unwrap(), &mut Discard);
    /// let report = report.unwrap();
    /// assert_eq!(stats.committed, report.events_committed);
    /// assert_eq!(stats.per_thread.len(), 2);
    /// ```
    pub fn run_with_stats<M, S>(
        &self,
        lps: Vec<M>,
        sink: &mut S,
    ) -> (Result<Report, RunError>, TimeWarpStats)
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        let started = Instant::now();
        let config = &self.config;
        let n_lps = u32::try_from(lps.len()).unwrap_or(u32::MAX);
        let threads = self.effective_threads(lps.len());
        let stats = TimeWarpStats {
            threads,
            ranks: 1,
            cancellation: self.cancellation,
            checkpoint_interval: self.checkpoint_interval,
            checkpoint_auto: self.adaptive_checkpoint,
            ..TimeWarpStats::default()
        };
        let report = Report::new(self.name(), config.seed, n_lps);
        let fail = |error: SimError, mut report: Report| {
            report.stop_reason = StopReason::Error;
            report.wall_seconds = started.elapsed().as_secs_f64();
            Err(RunError {
                error,
                partial: Box::new(report),
            })
        };
        if let Err(error) = self.validate(lps.len()) {
            return (fail(error, report), stats);
        }
        if lps.is_empty() {
            return (fail(SimError::NoLps, report), stats);
        }
        if lps.len() > u32::MAX as usize {
            return (fail(SimError::TooManyLps(lps.len()), report), stats);
        }

        let Initialised { states, pending } = match initialise(config, n_lps, lps, Some(sink)) {
            Ok(initialised) => initialised,
            Err((error, pending)) => {
                let mut report = report;
                report.pending_at_end = pending;
                return (fail(error, report), stats);
            }
        };
        if let Err(error) = self.check_memory::<M>(&pending) {
            let mut report = report;
            report.pending_at_end = pending.iter().map(BTreeMap::len).sum();
            return (fail(error, report), stats);
        }

        // Spread the LPs over the workers.
        let mut route: Vec<AtomicU64> = Vec::with_capacity(states.len());
        let mut owned: Vec<Vec<LpState<M>>> = (0..threads).map(|_| Vec::new()).collect();
        for (index, ((model, meta), pending)) in states.into_iter().zip(pending).enumerate() {
            let worker = self.partition.owner(index, n_lps as usize, threads);
            route.push(route_entry(worker as u32, owned[worker].len() as u32));
            owned[worker].push(LpState::new(LpId::new(index as u32), model, meta, pending));
        }
        let settings = self.settings(n_lps, threads);
        let shared: Shared<M::Output> = Shared::new(
            GvtShared::new(threads, EventKey::init(LpId::new(0)), key_max()),
            threads,
            threads,
            self.warnings.hook.clone().unwrap_or_else(default_hook),
        );
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..threads).map(|_| crossbeam_channel::unbounded()).unzip();
        let transfer = Mutex::new(Vec::new());
        let (to_coordinator, from_workers) = crossbeam_channel::unbounded();

        let mut summaries: Vec<Option<Box<Summary>>> = (0..threads).map(|_| None).collect();
        let mut delivered: Vec<(EventKey, LpId, M::Output)> = Vec::new();
        std::thread::scope(|scope| {
            let crew = Crew {
                route: &route,
                settings: &settings,
                shared: &shared,
                transfer: &transfer,
            };
            let running = crew.spawn(
                scope,
                "timewarp",
                owned,
                receivers,
                &senders,
                to_coordinator,
            );
            // The coordinator: deliver outputs in key order once every worker has committed
            // past them, and watch for handlers that stall on a speculative state.
            let mut watchdog =
                Watchdog::new(threads, self.warnings.slow_handler, shared.warnings.clone());
            let mut bounds = vec![EventKey::init(LpId::new(0)); threads];
            let mut finished = 0;
            while finished < running {
                match from_workers.recv_timeout(WATCH_EVERY) {
                    Ok(ToCoordinator::Committed {
                        worker,
                        bound,
                        outputs,
                    }) => {
                        bounds[worker] = bound;
                        delivered.extend(outputs);
                        let safe = bounds.iter().copied().min().unwrap_or_else(key_max);
                        deliver_below(&mut delivered, safe, sink, &shared);
                    }
                    Ok(ToCoordinator::Finished { worker, summary }) => {
                        summaries[worker] = Some(summary);
                        finished += 1;
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    // Every worker is gone (each sends its summary first, so this is only
                    // reached if one could not).
                    Err(RecvTimeoutError::Disconnected) => break,
                }
                watchdog.look(&shared.beats, shared.gvt.current().time);
            }
        });
        deliver_below(&mut delivered, key_max(), sink, &shared);

        let stop = shared
            .stop_info
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let summaries: Vec<Summary> = summaries.into_iter().flatten().map(|s| *s).collect();
        let rounds = shared.gvt.rounds();
        let mut stats = stats;
        stats.migrations = shared.gvt.migrations();
        assemble(
            report,
            stats,
            &summaries,
            rounds,
            stop,
            sink,
            config.end_time,
            started,
        )
    }
}

/// Delivers the outputs in `delivered` with keys below `safe`, in key order (stable: one
/// event's outputs keep their emission order). A sink that panics aborts the run (see
/// [`Shared::abort`]) and receives nothing more.
pub(crate) fn deliver_below<O, S: OutputSink<O>>(
    delivered: &mut Vec<(EventKey, LpId, O)>,
    safe: EventKey,
    sink: &mut S,
    shared: &Shared<O>,
) {
    if delivered.is_empty() {
        return;
    }
    if shared.sink_failed() {
        delivered.clear();
        return;
    }
    delivered.sort_by_key(|(key, _, _)| *key);
    let ready = delivered.partition_point(|(key, _, _)| *key < safe);
    let mut failure = None;
    for (key, lp, output) in delivered.drain(..ready) {
        if let Err(error) = deliver_guarded(sink, Committed { key, lp, output }) {
            failure = Some((lp, error));
            break;
        }
    }
    if let Some((lp, error)) = failure {
        shared.fail_sink(StopInfo {
            key: shared.gvt.current(),
            lp,
            error,
            outputs: None,
        });
        delivered.clear();
    }
}

/// What every worker of a run shares, to start them.
pub(crate) struct Crew<'env, M: LogicalProcess> {
    pub(crate) route: &'env Route,
    pub(crate) settings: &'env Settings,
    pub(crate) shared: &'env Shared<M::Output>,
    pub(crate) transfer: &'env Mutex<Vec<Transfer<M>>>,
}

impl<'env, M: LogicalProcess> Crew<'env, M> {
    /// Starts one worker thread per entry of `owned` (named `{name}-{index}`), each with its
    /// inbox, and lets go of the coordinator's sender so the coordinator sees when all end.
    /// Returns how many started: if the system refuses a thread, the run is aborted with an
    /// error and the ones already started wind down (each still reports).
    ///
    /// A worker's stack holds a few events, states and outputs by value at a time (a
    /// handler's argument, the copy kept for rollback, a message being built), so it grows
    /// with their sizes: a model whose events are a megabyte works as on the sequential
    /// kernel instead of overflowing a default 2 MiB stack. The size is only reserved;
    /// memory is used as the stack is.
    pub(crate) fn spawn<'scope>(
        &self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        name: &str,
        owned: Vec<Vec<LpState<M>>>,
        inboxes: Vec<Receiver<Vec<Msg<M::Event>>>>,
        peers: &[Sender<Vec<Msg<M::Event>>>],
        to_coordinator: Sender<ToCoordinator<M::Output>>,
    ) -> usize {
        let values = size_of::<M::Event>() + size_of::<M>() + size_of::<M::Output>();
        let stack = (8usize << 20).saturating_add(values.saturating_mul(48));
        let mut running = 0;
        for (index, (lps, inbox)) in owned.into_iter().zip(inboxes).enumerate() {
            let parts = WorkerParts {
                index,
                lps,
                route: self.route,
                settings: self.settings,
                shared: self.shared,
                inbox,
                peers: peers.to_vec(),
                to_coordinator: to_coordinator.clone(),
                transfer: self.transfer,
            };
            let spawned = std::thread::Builder::new()
                .name(format!("{name}-{index}"))
                .stack_size(stack)
                .spawn_scoped(scope, move || Worker::new(parts).run());
            match spawned {
                Ok(_) => running += 1,
                Err(error) => {
                    self.shared.abort(StopInfo {
                        key: EventKey::init(LpId::new(0)),
                        lp: LpId::new(0),
                        error: SimError::Config(format!(
                            "the system refused to start worker thread {index}: {error}"
                        )),
                        outputs: None,
                    });
                    break;
                }
            }
        }
        running
    }
}

impl TimeWarp {
    /// Refuses a memory budget smaller than the events pending at the start (see
    /// [`TimeWarp::memory`]). Later the budget only throttles, so the same run always ends
    /// the same way.
    pub(crate) fn check_memory<M: LogicalProcess>(
        &self,
        pending: &[BTreeMap<EventKey, M::Event>],
    ) -> Result<(), SimError> {
        let Some(budget) = self.memory else {
            return Ok(());
        };
        let events: usize = pending.iter().map(BTreeMap::len).sum();
        let needed = pending_bytes::<M::Event>(events);
        if needed > budget {
            return Err(SimError::MemoryBudget {
                budget,
                needed,
                events: events as u64,
            });
        }
        Ok(())
    }

    /// What every worker reads.
    pub(crate) fn settings(&self, n_lps: u32, threads: usize) -> Settings {
        Settings {
            lazy: self.cancellation == crate::Cancellation::Lazy,
            checkpoint: self.checkpoint_interval,
            adaptive_checkpoint: self.adaptive_checkpoint,
            window: self.window,
            adaptive_window: self.adaptive_window && self.window.is_none(),
            memory: self.memory,
            gvt_interval: self.gvt_interval,
            balance: self.load_balancing && threads > 1,
            end_time: self.config.end_time,
            n_lps,
        }
    }
}

/// Runs `init` on every LP, in LP order as on the sequential kernel. Its effects are final:
/// they are applied straight to the LPs' starting pending sets. Outputs go to `sink` (a
/// distributed run passes it on one rank only). On an error, also says how many events
/// were pending when it happened (the partial report's `pending_at_end`, as sequentially).
pub(crate) fn initialise<M, S>(
    config: &RunConfig,
    n_lps: u32,
    lps: Vec<M>,
    mut sink: Option<&mut S>,
) -> Result<Initialised<M>, (SimError, usize)>
where
    M: LogicalProcess,
    S: OutputSink<M::Output>,
{
    let mut states: Vec<(M, LpMeta)> = Vec::with_capacity(lps.len());
    let mut pending: Vec<BTreeMap<EventKey, M::Event>> =
        (0..lps.len()).map(|_| BTreeMap::new()).collect();
    let mut effects = Vec::new();
    let mut outputs = Vec::new();
    let mut error = None;
    for (index, mut model) in lps.into_iter().enumerate() {
        let lp = LpId::new(index as u32);
        let key = EventKey::init(lp);
        let mut meta = LpMeta::new(config.seed, lp);
        let mut ctx = Ctx::<M>::buffered(
            lp,
            key,
            n_lps,
            &mut meta,
            &mut effects,
            &mut outputs,
            &mut error,
        );
        let pending_now = |pending: &[BTreeMap<EventKey, M::Event>]| {
            pending.iter().map(BTreeMap::len).sum::<usize>()
        };
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| model.init(&mut ctx))) {
            let message = panic_message(payload.as_ref());
            let error = SimError::ModelPanic {
                lp,
                time: key.time,
                message,
            };
            apply_init_effects(&mut pending, &mut effects);
            return Err((error, pending_now(&pending)));
        }
        for output in outputs.drain(..) {
            if let Some(sink) = sink.as_mut()
                && let Err(sink_error) = deliver_guarded(&mut **sink, Committed { key, lp, output })
            {
                error = Some(sink_error);
                break;
            }
        }
        if let Some(error) = error.take() {
            // Like the sequential kernel, which applies a failing init's sends up to the
            // failure: apply them before counting.
            apply_init_effects(&mut pending, &mut effects);
            return Err((error, pending_now(&pending)));
        }
        apply_init_effects(&mut pending, &mut effects);
        states.push((model, meta));
    }
    Ok(Initialised { states, pending })
}

/// Applies what an `init` did to the starting pending sets.
fn apply_init_effects<E>(pending: &mut [BTreeMap<EventKey, E>], effects: &mut Vec<Effect<E>>) {
    for effect in effects.drain(..) {
        match effect {
            Effect::Send { key, dest, event } => {
                pending[dest.index()].insert(key, event);
            }
            Effect::Withdraw { dest, key } => {
                pending[dest.index()].remove(&key);
            }
            Effect::Move { dest, from, to } => {
                if let Some(event) = pending[dest.index()].remove(&from) {
                    pending[dest.index()].insert(to, event);
                }
            }
        }
    }
}

/// The LPs after `init`, with their starting pending events.
pub(crate) struct Initialised<M: LogicalProcess> {
    pub(crate) states: Vec<(M, LpMeta)>,
    pub(crate) pending: Vec<BTreeMap<EventKey, M::Event>>,
}

/// Builds the report and statistics from the workers' summaries and the stop, if any (the
/// failed event commits with its outputs, as on the sequential kernel).
#[allow(clippy::too_many_arguments)]
pub(crate) fn assemble<O, S>(
    mut report: Report,
    mut stats: TimeWarpStats,
    summaries: &[Summary],
    rounds: u64,
    stop: Option<StopInfo<O>>,
    sink: &mut S,
    end_time: f64,
    started: Instant,
) -> (Result<Report, RunError>, TimeWarpStats)
where
    S: OutputSink<O>,
{
    let mut trace = TraceHash::default();
    let mut last_commit = 0.0f64;
    for summary in summaries {
        let counters = &summary.counters;
        trace.merge(&summary.trace);
        last_commit = last_commit.max(summary.last_commit);
        report.events_committed += counters.committed;
        report.events_processed += counters.processed;
        report.pending_at_end += summary.pending_at_end;
        report.peak_pending += counters.peak_pending;
        stats.rolled_back += counters.rolled_back;
        stats.primary_rollbacks += counters.primary;
        stats.secondary_rollbacks += counters.secondary;
        stats.coasted += counters.coasted;
        stats.saves += counters.saves;
        stats.antimessages += counters.antimessages;
        stats.lazy_hits += counters.lazy_hits;
        stats.retractions += counters.retractions;
        stats.early_antimessages += counters.early_antimessages;
        stats.window_stalls += counters.window_stalls;
        stats.memory_stalls += counters.memory_stalls;
        stats.peak_memory_bytes += counters.peak_bytes;
        stats.lps_migrated += counters.lps_received;
        stats.per_thread.push(ThreadStats {
            lps: summary.lps,
            committed: counters.committed,
            processed: counters.processed,
            rolled_back: counters.rolled_back,
        });
    }
    stats.gvt_rounds = rounds;
    if let Some(stop) = stop {
        if let Some(outputs) = stop.outputs {
            // A bad delay or destination: like the sequential kernel, the event commits
            // (with its outputs), then the run stops.
            trace.add(&stop.key, stop.lp);
            report.events_committed += 1;
            last_commit = last_commit.max(stop.key.time.as_f64());
            for output in outputs {
                let committed = Committed {
                    key: stop.key,
                    lp: stop.lp,
                    output,
                };
                // The run has already failed; a sink that fails too changes nothing.
                if deliver_guarded(sink, committed).is_err() {
                    break;
                }
            }
        }
        report.trace_hash = trace;
        report.end_time = last_commit;
        report.stop_reason = StopReason::Error;
        report.wall_seconds = started.elapsed().as_secs_f64();
        fill_stats(&mut stats, &report);
        let error = RunError {
            error: stop.error,
            partial: Box::new(report),
        };
        return (Err(error), stats);
    }
    report.trace_hash = trace;
    report.stop_reason = if report.pending_at_end > 0 {
        StopReason::EndTime
    } else {
        StopReason::Drained
    };
    report.end_time = match report.stop_reason {
        StopReason::EndTime => end_time,
        _ => last_commit,
    };
    report.wall_seconds = started.elapsed().as_secs_f64();
    report.events_per_second = if report.wall_seconds > 0.0 {
        report.events_committed as f64 / report.wall_seconds
    } else {
        0.0
    };
    fill_stats(&mut stats, &report);
    (Ok(report), stats)
}

pub(crate) fn fill_stats(stats: &mut TimeWarpStats, report: &Report) {
    stats.committed = report.events_committed;
    stats.processed = report.events_processed;
    stats.efficiency = if report.events_processed > 0 {
        report.events_committed as f64 / report.events_processed as f64
    } else {
        0.0
    };
}
