//! Running a model: initialisation, the worker threads, and the coordinator that delivers
//! committed outputs in key order.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crossbeam_channel::RecvTimeoutError;
use warpsim_core::kernel_api::deliver_guarded;
use warpsim_core::{
    Checkpoint, Committed, Ending, EventKey, Finished, Kernel, LogicalProcess, LpId, OutputSink,
    Report, RunError, SimError, Start, StopReason, TraceHash,
};

use crate::config::TimeWarp;
use crate::message::key_max;
use crate::observe::{Observe, Observing, Plain};
use crate::progress::Progress;
use crate::setup::{Crew, InitOutputs, Initialised, Placement, Prepared, initialise};
use crate::shared::{Shared, StopInfo, Summary, ToCoordinator};
use crate::snapshot::{hand_over, pause_key, snapshot, typed_part};
use crate::stats::{ThreadStats, TimeWarpStats};
use crate::watch::{WATCH_EVERY, Watchdog};
use crate::worker::FinalLp;
use crate::worker::SnapshotPart;

impl Kernel for TimeWarp {
    fn name(&self) -> &'static str {
        "timewarp"
    }

    fn run_final<M, S>(&self, lps: Vec<M>, sink: &mut S) -> Result<Finished<M>, RunError>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        self.run_final_with_stats(lps, sink).0
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
        let (result, stats) = self.run_final_with_stats(lps, sink);
        (result.map(|finished| finished.report), stats)
    }

    /// [`TimeWarp::run_with_stats`] that also hands back the final states, like
    /// [`Kernel::run_final`].
    pub fn run_final_with_stats<M, S>(
        &self,
        lps: Vec<M>,
        sink: &mut S,
    ) -> (Result<Finished<M>, RunError>, TimeWarpStats)
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        let (ending, stats) =
            self.run_delivering(Start::Init(lps), &mut Plain(&mut *sink), false, None);
        let finished = ending.and_then(|ending| match ending {
            Ending::Finished(finished) => Ok(finished),
            Ending::Paused(checkpoint, report) => checkpoint.finish(report, sink),
        });
        (finished, stats)
    }

    /// Runs the model from `start` — every LP's `init`, or a [`Checkpoint`] written by any
    /// kernel — until it ends, or until the pause time
    /// ([`RunConfig::pause_at`](warpsim_core::RunConfig::pause_at)), where it hands back a
    /// checkpoint of the committed state (every event before the pause time committed,
    /// none after), to continue on any kernel. The result is the uninterrupted run's, as on
    /// the sequential kernel ([`Sequential::run_from`](warpsim_core::Sequential::run_from)).
    ///
    /// A pause is taken the way the run ends at an end time: the workers stop at the pause
    /// time, every message lands, and each LP's committed state and pending events are
    /// collected (no `finish` runs). A [`StopHandle`](warpsim_core::StopHandle) stops or
    /// pauses the run at the next GVT `g` it reads the handle at: the run pauses at
    /// `g.time.next_up()` (events a worker ran beyond it speculatively are rolled back),
    /// with [`StopReason::Interrupted`] after [`StopHandle::stop`] and
    /// [`StopReason::Paused`] after [`StopHandle::pause`] — the checkpoint continues it
    /// exactly. Pausing by event count is refused.
    ///
    /// [`StopHandle::stop`]: warpsim_core::StopHandle::stop
    /// [`StopHandle::pause`]: warpsim_core::StopHandle::pause
    ///
    /// ```
    /// use warpsim_core::{Discard, Ending, Kernel, RunConfig, Sequential, Start};
    /// use warpsim_models::phold::PholdParams;
    /// use warpsim_timewarp::TimeWarp;
    ///
    /// let params = PholdParams { lps: 32, end: 20.0, ..PholdParams::default() };
    /// let config = RunConfig::new(1).end_time(params.end);
    /// let whole = Sequential::new(config.clone()).run(params.build().unwrap(), &mut Discard).unwrap();
    /// // Paused at 8 on Time Warp, continued on the sequential kernel.
    /// let paused = TimeWarp::new(config.clone().pause_at(8.0)).threads(2);
    /// let (ending, _) = paused.run_from(Start::Init(params.build().unwrap()), &mut Discard);
    /// let Ok(Ending::Paused(checkpoint, _)) = ending else { panic!("no pause") };
    /// let Ending::Finished(done) = Sequential::new(config)
    ///     .run_from(Start::Resume(checkpoint), &mut Discard)
    ///     .unwrap() else { panic!("paused again") };
    /// assert_eq!(done.report.trace_hash, whole.trace_hash);
    /// ```
    pub fn run_from<M, S>(
        &self,
        start: Start<M>,
        sink: &mut S,
    ) -> (Result<Ending<M>, RunError>, TimeWarpStats)
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        self.run_delivering(start, &mut Plain(sink), false, None)
    }

    /// Runs the model like [`Kernel::run_final`], showing `observer` every committed event —
    /// its key, its destination and the event — in key order, each just before its outputs
    /// reach `sink`, and the event that failed the run, if one did: exactly what
    /// [`Sequential::run_observed`](warpsim_core::Sequential::run_observed) shows, on any
    /// number of threads. Events are shown as they commit (at GVTs), not as they run
    /// speculatively. For debugging and traces: each committed event is cloned for it, so an
    /// observed run is slower. A panic in the observer stops the run as a panic in the sink
    /// does ([`SimError::SinkPanic`]).
    ///
    /// ```
    /// use warpsim_core::{Discard, Kernel, RunConfig, Sequential};
    /// use warpsim_models::phold::PholdParams;
    /// use warpsim_timewarp::TimeWarp;
    ///
    /// let params = PholdParams { lps: 16, end: 5.0, ..PholdParams::default() };
    /// let config = RunConfig::new(3).end_time(params.end);
    /// let mut sequential = Vec::new();
    /// Sequential::new(config.clone())
    ///     .run_observed(params.build().unwrap(), &mut Discard, |key, lp, _: &()| {
    ///         sequential.push((*key, lp));
    ///     })
    ///     .unwrap();
    /// let mut optimistic = Vec::new();
    /// TimeWarp::new(config)
    ///     .threads(2)
    ///     .run_observed(params.build().unwrap(), &mut Discard, |key, lp, _: &()| {
    ///         optimistic.push((*key, lp));
    ///     })
    ///     .unwrap();
    /// assert_eq!(sequential, optimistic);
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
        let mut observing = Observing::new(sink, observer);
        let (ending, _) = self.run_delivering(Start::Init(lps), &mut observing, true, None);
        ending.and_then(|ending| match ending {
            Ending::Finished(finished) => Ok(finished),
            Ending::Paused(checkpoint, report) => checkpoint.finish(report, &mut observing),
        })
    }

    /// Runs the model from `start` like [`TimeWarp::run_from`], except that a pause asked
    /// for while it runs ([`StopHandle::pause`](warpsim_core::StopHandle::pause)) does not
    /// end the run: the workers stop at the next GVT as for a pause, each copies its LPs'
    /// committed states and pending events, `on_checkpoint` receives the checkpoint (with
    /// the report of the run so far and the sink, which has received every output before
    /// it and none after), and the run goes on in the same threads — no restart, so a
    /// periodic checkpoint costs the pause and the copy. A stop
    /// ([`StopHandle::stop`](warpsim_core::StopHandle::stop)) ends the run with its
    /// checkpoint as [`TimeWarp::run_from`] does. A pause time set before the run
    /// ([`RunConfig::pause_at`](warpsim_core::RunConfig::pause_at)) is a checkpoint taken in
    /// place too: every event before it committed, none at or after it, and the run goes on.
    ///
    /// ```
    /// use warpsim_core::{Discard, Ending, Kernel, RunConfig, Sequential, Start, StopHandle};
    /// use warpsim_models::phold::PholdParams;
    /// use warpsim_timewarp::TimeWarp;
    ///
    /// let params = PholdParams { lps: 32, end: 20.0, ..PholdParams::default() };
    /// let config = RunConfig::new(1).end_time(params.end);
    /// let whole = Sequential::new(config.clone()).run(params.build().unwrap(), &mut Discard).unwrap();
    /// // A checkpoint asked for at once, taken while the run goes on to its end.
    /// let handle = StopHandle::new();
    /// handle.pause();
    /// let kernel = TimeWarp::new(config.clone().stop_handle(handle)).threads(2);
    /// let mut taken = Vec::new();
    /// let (ending, _) = kernel.run_from_checkpointing(
    ///     Start::Init(params.build().unwrap()),
    ///     &mut Discard,
    ///     |checkpoint, _report, _sink| taken.push(checkpoint),
    /// );
    /// let Ok(Ending::Finished(done)) = ending else { panic!("the run did not finish") };
    /// assert_eq!(done.report.trace_hash, whole.trace_hash);
    /// // The checkpoint continues to the same end on the sequential kernel.
    /// let checkpoint = taken.pop().expect("one checkpoint");
    /// let Ending::Finished(resumed) = Sequential::new(config)
    ///     .run_from(Start::Resume(checkpoint), &mut Discard)
    ///     .unwrap() else { panic!("paused again") };
    /// assert_eq!(resumed.report.trace_hash, whole.trace_hash);
    /// ```
    pub fn run_from_checkpointing<M, S, F>(
        &self,
        start: Start<M>,
        sink: &mut S,
        mut on_checkpoint: F,
    ) -> (Result<Ending<M>, RunError>, TimeWarpStats)
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
        F: FnMut(Box<Checkpoint<M>>, Report, &mut S),
    {
        let mut hook =
            |checkpoint: Box<Checkpoint<M>>, report: Report, plain: &mut Plain<'_, S>| {
                on_checkpoint(checkpoint, report, &mut *plain.0);
            };
        self.run_delivering(start, &mut Plain(sink), false, Some(&mut hook))
    }

    /// The run behind [`TimeWarp::run_final_with_stats`], [`TimeWarp::run_observed`] and
    /// [`TimeWarp::run_from_checkpointing`]: `sink` takes the outputs and, when `observe`,
    /// the committed events; `on_checkpoint`, when given, the checkpoints taken in place.
    #[allow(clippy::type_complexity)]
    fn run_delivering<M, S>(
        &self,
        start: Start<M>,
        sink: &mut S,
        observe: bool,
        mut on_checkpoint: Option<&mut dyn FnMut(Box<Checkpoint<M>>, Report, &mut S)>,
    ) -> (Result<Ending<M>, RunError>, TimeWarpStats)
    where
        M: LogicalProcess,
        S: OutputSink<M::Output> + Observe,
    {
        let started = Instant::now();
        let config = &self.config;
        let n_lps_given = match &start {
            Start::Init(lps) => lps.len(),
            Start::Resume(checkpoint) => checkpoint.states().len(),
        };
        let n_lps = u32::try_from(n_lps_given).unwrap_or(u32::MAX);
        let threads = self.effective_threads(n_lps_given);
        let (mut run_end, mut pausing) = self.run_end();
        // With checkpoints taken in place, a pause time is one of them: the run goes on
        // past it to its end.
        let checkpoint_at = if on_checkpoint.is_some() && pausing {
            let at = run_end;
            (run_end, pausing) = (config.end_time, false);
            Some(at)
        } else {
            None
        };
        let stats = TimeWarpStats {
            threads,
            ranks: 1,
            cancellation: self.cancellation,
            checkpoint_interval: self.checkpoint_interval,
            checkpoint_auto: self.adaptive_checkpoint,
            ..TimeWarpStats::default()
        };
        let mut report = Report::new(self.name(), config.seed, n_lps);
        report.content_hash = config.content_hash.then(TraceHash::default);
        let fail = |error: SimError, mut report: Report| {
            report.stop_reason = StopReason::Error;
            report.wall_seconds = started.elapsed().as_secs_f64();
            Err(RunError {
                error,
                partial: Box::new(report),
            })
        };
        if let Err(error) = self.validate(n_lps_given) {
            return (fail(error, report), stats);
        }
        if n_lps_given == 0 {
            return (fail(SimError::NoLps, report), stats);
        }
        if n_lps_given > u32::MAX as usize {
            return (fail(SimError::TooManyLps(n_lps_given), report), stats);
        }
        if config.pause_after.is_some() {
            return (
                fail(
                    SimError::Config(
                        "the timewarp kernel pauses at a time (`pause_at`) or by a stop \
                         handle, not by event count"
                            .into(),
                    ),
                    report,
                ),
                stats,
            );
        }
        // What the run continues: the report's totals at the checkpoint.
        let mut before: Option<Report> = None;
        if let Start::Resume(checkpoint) = &start {
            if let Err(error) = checkpoint.check_config(config) {
                return (fail(error, report), stats);
            }
            before = Some(checkpoint.resumed_report(self.name()));
        }

        let placement = Placement {
            rank: 0,
            ranks: 1,
            threads,
            gateway: false,
        };
        let mut init = match start {
            Start::Init(lps) => {
                let own = lps
                    .into_iter()
                    .enumerate()
                    .map(|(index, model)| (LpId::new(index as u32), model))
                    .collect();
                let mut outputs_to = InitOutputs::Deliver(&mut *sink);
                initialise(config, n_lps, own, &mut outputs_to)
            }
            Start::Resume(checkpoint) => {
                let (states, metas, pending) = checkpoint.into_parts();
                Initialised::resumed(states, metas, pending)
            }
        };
        if let Some((_, error)) = init.failure.take() {
            let mut report = report;
            report.pending_at_end = init.pending_here();
            return (fail(error, report), stats);
        }
        if let Err(error) = self.check_memory::<M>(init.pending_here()) {
            let mut report = report;
            report.pending_at_end = init.pending_here();
            return (fail(error, report), stats);
        }
        let Prepared {
            route,
            owned,
            mut settings,
            shared,
            senders,
            receivers,
            transfer,
            finals,
        } = self.prepare(init, n_lps, placement);
        settings.observe = observe;
        settings.snapshots = on_checkpoint.is_some();
        settings.end_time = run_end;
        settings.pause = pausing;
        if let Some(at) = checkpoint_at {
            // Before any worker starts: each reads it at its first GVT, as a request.
            shared.ask_pause_at(at);
        }
        if let Some(before) = &before {
            // `finish`'s clock when this stretch commits nothing: the checkpoint's last commit.
            shared.last_commit.fetch_max(
                before.end_time.to_bits(),
                std::sync::atomic::Ordering::SeqCst,
            );
        }
        let (to_coordinator, from_workers) = crossbeam_channel::unbounded();

        let mut summaries: Vec<Option<Box<Summary>>> = (0..threads).map(|_| None).collect();
        let mut delivered: Vec<(EventKey, LpId, M::Output)> = Vec::new();
        // What the stop handle asked for while the run ran: nothing, a pause, a stop.
        let mut asked = Asked::Nothing;
        // The workers' copies at a checkpoint taken in place, as they come in; and the
        // checkpoint the run ended with when a stop came there.
        let mut parts: Vec<(Summary, SnapshotPart<M>)> = Vec::new();
        let mut stopped_at: Option<Box<Checkpoint<M>>> = None;
        std::thread::scope(|scope| {
            let crew = Crew {
                route: &route,
                settings: &settings,
                shared: &shared,
                transfer: &transfer,
                finals: &finals,
                first_cpu: 0,
            };
            // A request made before the run starts is seen before any worker runs: looked
            // at only once they ran, it could come after a short run had already passed its
            // end, and a checkpoint asked for would silently not be taken.
            if let Some(stop) = &config.stop {
                asked = asked.max(stop_request(stop, &shared, run_end));
            }
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
            let mut shown = Instant::now();
            while finished < running {
                if let Some(hook) = &self.progress.0
                    && shown.elapsed() >= WATCH_EVERY
                {
                    shown = Instant::now();
                    hook(&progress_now(&shared, run_end, before.as_ref()));
                }
                if let Some(stop) = &config.stop {
                    asked = asked.max(stop_request(stop, &shared, run_end));
                }
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
                        sink.show_below(safe);
                        observer_failed(sink, &shared);
                        // The bounds of workers that did not report lately are old: while
                        // outputs wait, every worker reports every commit.
                        let wants = !delivered.is_empty();
                        if shared.wants_bounds.load(Ordering::Relaxed) != wants {
                            shared.wants_bounds.store(wants, Ordering::Relaxed);
                        }
                    }
                    Ok(ToCoordinator::Observed(batch)) => sink.observed(batch),
                    Ok(ToCoordinator::Snapshot { summary, part }) => {
                        parts.push((*summary, typed_part(part)));
                        if parts.len() < running {
                            continue;
                        }
                        // Every worker waits at `resume`, every output below the pause is
                        // here (each worker sent its outputs before its copy).
                        let bound = pause_key(shared.end_time());
                        let go_on = asked != Asked::Stop && !shared.is_aborted();
                        if go_on {
                            shared.go_on_after_snapshot(bound);
                            if let Some(at) = checkpoint_at.filter(|at| *at > bound.time.as_f64()) {
                                // A checkpoint asked for earlier came first: the one at the
                                // time set before the run is still to come.
                                shared.ask_pause_at(at);
                            }
                        } else {
                            // (It may say `true` from an earlier checkpoint.)
                            shared
                                .resuming
                                .store(false, std::sync::atomic::Ordering::SeqCst);
                        }
                        let met = shared.resume.wait();
                        deliver_below(&mut delivered, key_max(), sink, &shared);
                        let (checkpoint, at) = snapshot(
                            self.name(),
                            &report,
                            std::mem::take(&mut parts),
                            before.as_ref(),
                            started,
                        );
                        if go_on && met {
                            asked = Asked::Nothing;
                            if let Some(hook) = on_checkpoint.as_mut() {
                                hand_over(&mut **hook, checkpoint, at, sink, &shared);
                            }
                        } else {
                            stopped_at = Some(checkpoint);
                        }
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
        // Everything is committed now, up to the stop if there is one (a `finish` that
        // failed: the outputs of later LPs' `finish` are not delivered, as sequentially).
        while let Ok(message) = from_workers.try_recv() {
            if let ToCoordinator::Observed(batch) = message {
                sink.observed(batch);
            }
        }
        deliver_below(&mut delivered, key_max(), sink, &shared);
        sink.show_below(key_max());
        observer_failed(sink, &shared);
        deliver_finish(&mut delivered, shared.stop_key(), sink, &shared);

        let last_commit =
            f64::from_bits(shared.last_commit.load(std::sync::atomic::Ordering::SeqCst));
        let shared_paused = shared.paused.load(std::sync::atomic::Ordering::SeqCst);
        let stop = shared
            .stop_info
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let summaries: Vec<Summary> = summaries.into_iter().flatten().map(|s| *s).collect();
        let rounds = shared.gvt.rounds();
        let mut stats = stats;
        stats.migrations = shared.gvt.migrations();
        let (result, stats) = assemble(
            report, stats, &summaries, rounds, stop, sink, run_end, started,
        );
        let result = match before {
            Some(before) => result
                .map(|report| continued(&before, report))
                .map_err(|mut error| {
                    *error.partial = continued(&before, (*error.partial).clone());
                    error
                }),
            None => result,
        };
        let finals = finals
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(hook) = &self.progress.0 {
            let report = match &result {
                Ok(report) => report,
                Err(error) => &*error.partial,
            };
            hook(&Progress::new(
                report.end_time,
                report.events_committed,
                report.events_processed,
            ));
        }
        let pausing = pausing || shared_paused;
        let reason = match asked {
            Asked::Stop => StopReason::Interrupted,
            Asked::Nothing | Asked::Pause => StopReason::Paused,
        };
        let result = result.map(|mut report| {
            if let Some(checkpoint) = stopped_at {
                // Stopped at a checkpoint taken in place: the workers handed back no states.
                report.stop_reason = reason;
                report.pending_at_end_time = 0;
                report.end_time = last_commit;
                Ending::Paused(checkpoint, report)
            } else if pausing {
                paused(self.name(), report, finals, last_commit, reason)
            } else {
                Ending::Finished(final_states(report, finals))
            }
        });
        (result, stats)
    }
}

/// The report of a run continued from a checkpoint whose totals were `before`: this
/// stretch's counts added to them.
pub(crate) fn continued(before: &Report, mut report: Report) -> Report {
    report.events_committed += before.events_committed;
    report.events_processed += before.events_committed;
    let mut trace = before.trace_hash;
    trace.merge(&report.trace_hash);
    report.trace_hash = trace;
    if let (Some(mut content), Some(now)) = (before.content_hash, report.content_hash) {
        content.merge(&now);
        report.content_hash = Some(content);
    }
    report.peak_pending = report.peak_pending.max(before.peak_pending);
    if report.end_time < before.end_time {
        // Nothing committed in this stretch (or nothing later): the clock stands where the
        // checkpoint left it.
        report.end_time = before.end_time;
    }
    report
}

/// A run that reached its pause time: the report says so and the checkpoint holds every
/// LP's state, meta and pending events.
pub(crate) fn paused<M: LogicalProcess>(
    kernel: &str,
    mut report: Report,
    finals: Vec<FinalLp<M>>,
    last_commit: f64,
    reason: StopReason,
) -> Ending<M> {
    report.stop_reason = reason;
    report.pending_at_end_time = 0;
    // The clock of a pause is the last commit, as after a sequential pause.
    report.end_time = last_commit;
    let mut finals = finals;
    finals.sort_by_key(|lp| lp.id);
    let mut states = Vec::with_capacity(finals.len());
    let mut metas = Vec::with_capacity(finals.len());
    let mut pending = Vec::new();
    for lp in finals {
        states.push(lp.model);
        metas.push(lp.meta);
        pending.extend(lp.pending);
    }
    let checkpoint = Checkpoint::from_parts(kernel, states, metas, pending, &report);
    Ending::Paused(Box::new(checkpoint), report)
}

/// The run's progress as the workers last published it (each at its latest GVT), with a
/// continued run's earlier events.
fn progress_now<O>(shared: &Shared<O>, run_end: f64, before: Option<&Report>) -> Progress {
    use std::sync::atomic::Ordering::Relaxed;
    let earlier = before.map_or(0, |report| report.events_committed);
    let (committed, processed) = shared.gauges.iter().fold((earlier, earlier), |sum, gauge| {
        (
            sum.0 + gauge.committed.load(Relaxed),
            sum.1 + gauge.processed.load(Relaxed),
        )
    });
    let gvt = shared.gvt.current().time.as_f64().min(run_end);
    Progress::new(gvt, committed, processed)
}

/// What a run's stop handle asked for while it ran, in increasing precedence: a stop turns
/// a pause already under way into a stop (same pause point, reported as interrupted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Asked {
    Nothing,
    Pause,
    Stop,
}

/// Looks at the stop handle (the coordinator, between deliveries): a stop or a pause request
/// lowers the run's end to just past the current GVT ([`Shared::lower_end`]), where the
/// run pauses with a checkpoint. A request that comes when the run is already past that
/// point (its end is no later) asks for nothing: the run ends as it would have.
fn stop_request<O>(stop: &warpsim_core::StopHandle, shared: &Shared<O>, run_end: f64) -> Asked {
    let asked = if stop.stop_requested() {
        Asked::Stop
    } else if stop.take_pause() {
        Asked::Pause
    } else {
        return Asked::Nothing;
    };
    if shared.lower_end(run_end).is_some() || shared.end_time() < run_end {
        asked
    } else {
        Asked::Nothing
    }
}

/// Stops the run when the observer panicked (as when the sink does).
fn observer_failed<O, S: Observe>(sink: &mut S, shared: &Shared<O>) {
    if let Some(error) = sink.take_failure() {
        let lp = match &error {
            SimError::SinkPanic { lp, .. } => *lp,
            _ => LpId::new(0),
        };
        shared.fail_sink(StopInfo {
            key: shared.gvt.current(),
            lp,
            error,
            outputs: None,
        });
    }
}

/// The report with the final states in LP order (all of them: every worker hands its LPs
/// in when the run finished).
pub(crate) fn final_states<M: LogicalProcess>(
    report: Report,
    mut finals: Vec<FinalLp<M>>,
) -> Finished<M> {
    finals.sort_by_key(|lp| lp.id);
    Finished::new(report, finals.into_iter().map(|lp| lp.model).collect())
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
    // `finish` outputs (after every event's, so at the end once sorted) wait for
    // `deliver_finish`: a worker's bound passes them before every worker has sent its own.
    let ready = delivered.partition_point(|(key, _, _)| *key < safe && !key.is_finish());
    deliver_first(delivered, ready, sink, shared);
}

/// Once every worker (and rank) has handed in its outputs: delivers the rest, `finish`'s
/// included, in key order — those below `stop` only when a `finish` failed there (as on the
/// sequential kernel, the LPs after it did not finish).
pub(crate) fn deliver_finish<O, S: OutputSink<O>>(
    delivered: &mut Vec<(EventKey, LpId, O)>,
    stop: Option<EventKey>,
    sink: &mut S,
    shared: &Shared<O>,
) {
    if let Some(stop) = stop {
        delivered.retain(|(key, _, _)| *key < stop);
    }
    if delivered.is_empty() {
        return;
    }
    if shared.sink_failed() {
        delivered.clear();
        return;
    }
    delivered.sort_by_key(|(key, _, _)| *key);
    deliver_first(delivered, delivered.len(), sink, shared);
}

/// Delivers the first `ready` outputs of the sorted `delivered`.
fn deliver_first<O, S: OutputSink<O>>(
    delivered: &mut Vec<(EventKey, LpId, O)>,
    ready: usize,
    sink: &mut S,
    shared: &Shared<O>,
) {
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
        if let Some(content) = &mut report.content_hash {
            content.merge(&summary.content);
        }
        last_commit = last_commit.max(summary.last_commit);
        report.events_committed += counters.committed;
        report.events_processed += counters.processed;
        report.pending_at_end += summary.pending_at_end;
        report.pending_at_end_time += counters.at_end_time as usize;
        report.peak_pending += counters.peak_pending;
        stats.rolled_back += counters.rolled_back;
        stats.primary_rollbacks += counters.primary;
        stats.secondary_rollbacks += counters.secondary;
        stats.retraction_rollbacks += counters.retraction_rollbacks;
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
        stats.safe_events += counters.safe;
        stats.per_thread.push(ThreadStats {
            lps: summary.lps,
            committed: counters.committed,
            processed: counters.processed,
            rolled_back: counters.rolled_back,
            waited_seconds: counters.waited_ns as f64 * 1e-9,
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
