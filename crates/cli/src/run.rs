//! `warpsim run <model>`: the [`Scenario`] trait every model's runner implements, and the
//! code that runs a scenario on the chosen kernel and prints its report.

use anyhow::{Result, anyhow};
use serde_json::{Map, Value};
use std::fmt::Write as _;

use warpsim_core::{
    Ending, LogicalProcess, OutputSink, Report, RunConfig, RunError, Sequential, SimError, Start,
    StopReason,
};

use crate::cli::{KernelArgs, KernelKind, RunArgs};
use crate::progress::Progress;

/// What the CLI needs of a model: how to run it once with a given seed. Printing, JSON,
/// errors (and replications and sweeps, which run a scenario many times) are generic.
pub(crate) trait Scenario: Send + Sync {
    /// The model's name, as on the command line.
    fn name(&self) -> &str;
    /// The flags every model takes.
    fn run_args(&self) -> &RunArgs;
    /// The kernel's flags, for a model that runs on a simulation kernel.
    fn kernel_args(&self) -> Option<&KernelArgs> {
        None
    }
    /// The seed when neither `--seed` nor the config file gives one.
    fn default_seed(&self) -> u64;
    /// One line describing the parameters, printed above the readable report.
    fn title(&self) -> String;
    /// The parameters, for the JSON output.
    fn params(&self) -> Value;
    /// Checks the parameters before any run.
    fn validate(&self) -> Result<()>;
    /// Runs the model once with `seed`. `primary` is false for extra runs (replications,
    /// sweep points), which must not write side files such as plots or CSVs.
    fn run_once(&self, seed: u64, primary: bool) -> Result<Outcome>;
    /// The files the scenario reads and writes, checked before any run (none by default).
    fn files(&self) -> crate::files::FileSet {
        crate::files::FileSet::default()
    }
    /// What the run will allocate for the sizes the user gave, checked against the memory
    /// available before any run (nothing by default).
    fn demands(&self) -> Vec<crate::limits::Demand> {
        Vec::new()
    }
}

/// The result of one run: the kernel's report, the model's own figures, and the error that
/// stopped the run, if any (the report is then partial).
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) report: Report,
    /// Model-specific results (e.g. pets' `p50`), added to the JSON object and printed after
    /// the report.
    pub(crate) metrics: Map<String, Value>,
    /// Model-specific readable lines printed after the report (may be empty).
    pub(crate) text: String,
    pub(crate) error: Option<RunError>,
    /// What the Time Warp kernel did, when it ran.
    pub(crate) timewarp: Option<warpsim_timewarp::TimeWarpStats>,
}

/// What [`run_on_kernel`] returns: the kernel's result and, for Time Warp, its statistics.
/// Converts from a plain kernel result, so [`Outcome::from_result`] takes either.
#[derive(Debug)]
pub(crate) struct KernelRun {
    pub(crate) result: std::result::Result<Report, RunError>,
    pub(crate) timewarp: Option<warpsim_timewarp::TimeWarpStats>,
}

impl From<std::result::Result<Report, RunError>> for KernelRun {
    fn from(result: std::result::Result<Report, RunError>) -> KernelRun {
        KernelRun {
            result,
            timewarp: None,
        }
    }
}

impl Outcome {
    /// An outcome from a kernel result, with no model figures yet.
    pub(crate) fn from_result(run: impl Into<KernelRun>) -> Outcome {
        let KernelRun { result, timewarp } = run.into();
        match result {
            Ok(report) => Outcome {
                report,
                metrics: Map::new(),
                text: String::new(),
                error: None,
                timewarp,
            },
            Err(error) => Outcome {
                report: (*error.partial).clone(),
                metrics: Map::new(),
                text: String::new(),
                error: Some(error),
                timewarp,
            },
        }
    }
}

/// The seed of the main run.
pub(crate) fn seed_of(scenario: &dyn Scenario) -> u64 {
    scenario.run_args().seed.unwrap_or(scenario.default_seed())
}

/// The run settings every model shares.
pub(crate) fn run_config(common: &KernelArgs, seed: u64, end: f64) -> RunConfig {
    let mut config = RunConfig::new(seed).end_time(end);
    if let Some(max_events) = common.max_events {
        config = config.max_events(max_events);
    }
    if common.content_hash {
        config = config.content_hash(true);
    }
    if let Some(cost) = common.critical_path {
        config = config.critical_path(cost);
    }
    config
}

/// Runs `lps` on the kernel the user chose, with a progress bar when `show_progress`. The
/// main run (`show_progress`) can be stopped by a signal and checkpointed (see
/// `checkpointing.rs`); extra runs (replications, sweep points) stop but never checkpoint.
///
/// # Errors
///
/// A checkpoint that cannot be read or written (the run's own errors are in the result).
pub(crate) fn run_on_kernel<M, S>(
    common: &KernelArgs,
    config: RunConfig,
    lps: Vec<M>,
    sink: &mut S,
    show_progress: bool,
) -> Result<KernelRun>
where
    M: LogicalProcess + serde::Serialize + serde::de::DeserializeOwned,
    M::Event: serde::Serialize + serde::de::DeserializeOwned,
    M::Output: serde::Serialize + serde::de::DeserializeOwned,
    S: OutputSink<M::Output>,
{
    let plan = &common.checkpoint;
    let checkpointing =
        show_progress && (plan.checkpoint_file.is_some() || plan.resume_from.is_some());
    match common.kernel {
        KernelKind::Mpi => {
            if show_progress {
                return crate::mpi::run_main(common, config, lps, sink);
            }
            let kernel = timewarp_kernel(common, config, lps.len(), show_progress);
            let (result, stats) = crate::mpi::run(kernel, lps, sink, common);
            Ok(KernelRun {
                result,
                timewarp: Some(stats),
            })
        }
        KernelKind::Timewarp => {
            // Signals stop a Time Warp run at its next GVT, as they stop the sequential
            // kernel between events.
            crate::checkpointing::install_signals()?;
            let config = config.stop_handle(crate::checkpointing::stop_handle());
            let n_lps = lps.len();
            let progress = Progress::new(if show_progress {
                config.end_time
            } else {
                f64::NAN
            });
            let showing = |kernel: warpsim_timewarp::TimeWarp| {
                if show_progress {
                    kernel.on_progress(progress.timewarp_hook())
                } else {
                    kernel
                }
            };
            if !checkpointing {
                let kernel = showing(timewarp_kernel(common, config, n_lps, show_progress));
                let (result, stats) = kernel.run_with_stats(lps, sink);
                progress.finish();
                return Ok(KernelRun {
                    result,
                    timewarp: Some(stats),
                });
            }
            // Checkpoints (`--checkpoint-every`, `--checkpoint-at`) are taken within the
            // run: only a stop ends it early.
            let mut stats = None;
            let mut first = true;
            let result = run_in_stretches(
                common,
                config,
                lps,
                sink,
                &progress,
                |config, start, sink, periodic| {
                    let kernel = showing(timewarp_kernel(common, config, n_lps, first));
                    first = false;
                    // Checkpoints are taken while the workers go on (no restart).
                    let (ending, run_stats) = kernel.run_from_checkpointing(start, sink, periodic);
                    stats = Some(run_stats);
                    ending
                },
            );
            progress.finish();
            Ok(KernelRun {
                result: result?,
                timewarp: stats,
            })
        }
        KernelKind::Sequential => {
            // Signals stop the sequential kernel between events (over MPI they keep their
            // default action, which ends the process at once).
            crate::checkpointing::install_signals()?;
            let config = config.stop_handle(crate::checkpointing::stop_handle());
            let progress = Progress::new(if show_progress {
                config.end_time
            } else {
                f64::NAN
            });
            let hook = progress.hook();
            let kernel = |config: RunConfig| {
                Sequential::new(config)
                    .queue(common.queue)
                    .on_progress(hook.clone())
            };
            let result = if show_progress {
                run_in_stretches(
                    common,
                    config,
                    lps,
                    sink,
                    &progress,
                    // A pause ends a stretch of the sequential kernel, which resumes from
                    // its checkpoint at once (its pause costs no more than the copy).
                    |config, start, sink, _| kernel(config).run_from(start, sink),
                )
            } else {
                let ending = kernel(config).run_from(Start::Init(lps), sink);
                Ok(ending.and_then(|ending| match ending {
                    Ending::Finished(finished) => Ok(finished.report),
                    Ending::Paused(checkpoint, report) => {
                        checkpoint.finish(report, sink).map(|done| done.report)
                    }
                }))
            };
            progress.finish();
            Ok(result?.into())
        }
    }
}

/// The main run: from `init` or the checkpoint `--resume-from`, in stretches between
/// checkpoints (each written to `--checkpoint-file`), until it ends or a signal stops it
/// (then its checkpoint is written and `finish` runs on the committed state, for the partial
/// report). `run_stretch` runs one stretch on the chosen kernel; a kernel that can take a
/// periodic checkpoint without ending the stretch hands it to the callback it is given
/// (which writes it), one that cannot ends the stretch with it. `progress` shows when the
/// last checkpoint was written.
fn run_in_stretches<M, S, F>(
    common: &KernelArgs,
    config: RunConfig,
    lps: Vec<M>,
    sink: &mut S,
    progress: &Progress,
    mut run_stretch: F,
) -> Result<std::result::Result<Report, RunError>>
where
    M: LogicalProcess + serde::Serialize + serde::de::DeserializeOwned,
    M::Output: serde::Serialize + serde::de::DeserializeOwned,
    S: OutputSink<M::Output>,
    F: for<'r, 'k> FnMut(
        RunConfig,
        Start<M>,
        &'r mut crate::checkpointing::Recorder<'k, S>,
        &'r mut dyn FnMut(
            Box<warpsim_core::Checkpoint<M>>,
            Report,
            &mut crate::checkpointing::Recorder<'k, S>,
        ),
    ) -> std::result::Result<Ending<M>, RunError>,
{
    use crate::checkpointing;
    let plan = &common.checkpoint;
    let file = plan.checkpoint_file.as_deref();
    let mut sink = checkpointing::Recorder::new(sink, file.is_some());
    let mut start = match &plan.resume_from {
        Some(path) => {
            let checkpoint = checkpointing::read::<M>(path)?;
            sink.replay(checkpoint.attachment())?;
            Start::Resume(Box::new(checkpoint))
        }
        None => Start::Init(lps),
    };
    // A checkpoint time the resumed run is already at or past is not asked for again.
    let past = |at: f64, checkpoint: &warpsim_core::Checkpoint<M>| {
        checkpoint
            .pending()
            .first()
            .is_none_or(|event| event.key.time.as_f64() >= at)
    };
    let mut pause_at = plan.checkpoint_at.filter(|at| match &start {
        Start::Resume(checkpoint) => !past(*at, checkpoint),
        Start::Init(_) => true,
    });
    let ticker = checkpointing::Ticker::start(plan.checkpoint_every, checkpointing::stop_handle());
    // The report covers this process's whole run: every stretch's wall time, and the events
    // committed since it started (a resumed run's earlier events ran in another process).
    let started = std::time::Instant::now();
    let first_event = match &start {
        Start::Resume(checkpoint) => checkpoint.events_committed(),
        Start::Init(_) => 0,
    };
    let whole = |report: Report| whole_run(report, started, first_event);
    let mut writer = checkpointing::Writer::default();
    loop {
        let mut stretch = config.clone();
        if let Some(at) = pause_at {
            stretch = stretch.pause_at(at);
        }
        // A checkpoint taken while the run went on: written like the others.
        let mut taken = checkpointing::TakenInPlace::new(file, &mut writer, progress, &ticker);
        let mut periodic = |checkpoint: Box<warpsim_core::Checkpoint<M>>,
                            report: Report,
                            sink: &mut checkpointing::Recorder<'_, S>| {
            taken.take(checkpoint, &report, sink);
        };
        let ran = run_stretch(stretch, start, &mut sink, &mut periodic);
        if let Some(error) = taken.failed {
            return Err(error);
        }
        let (checkpoint, report) = match ran {
            Err(mut error) => {
                *error.partial = whole((*error.partial).clone());
                // The run's error is the one to report; a failed write is said in a note.
                if let Err(failed) = writer.wait() {
                    crate::out::note(&format!("{failed:#}"));
                }
                return Ok(Err(error));
            }
            Ok(Ending::Finished(finished)) => {
                // A checkpoint asked for and not written is an error, as when it was written
                // in the run's thread.
                writer.wait()?;
                return Ok(Ok(whole(finished.report)));
            }
            Ok(Ending::Paused(checkpoint, report)) => (checkpoint, report),
        };
        if let Some(path) = file {
            // Written on its own thread from a copy while the run goes on from this one.
            writer.write(
                path,
                (*checkpoint).clone(),
                sink.log(),
                report.events_committed,
                report.end_time,
            )?;
            progress.checkpointed(report.end_time);
            ticker.restart(&checkpointing::stop_handle());
        }
        if report.stop_reason == StopReason::Interrupted {
            let done = checkpoint.finish(whole(report), &mut sink);
            writer.wait()?;
            return Ok(done.map(|done| done.report));
        }
        if pause_at.is_some_and(|at| past(at, &checkpoint)) {
            pause_at = None;
        }
        start = Start::Resume(checkpoint);
    }
}

/// Worker threads when `--threads` is not given.
const DEFAULT_THREADS: usize = 2;

/// The worker threads a Time Warp run with these flags asks for (before the cap to the LPs).
pub(crate) fn requested_threads(common: &KernelArgs) -> usize {
    common
        .timewarp
        .threads
        .unwrap_or(DEFAULT_THREADS)
        .min(crate::limits::thread_ceiling())
}

/// The Time Warp kernel the flags describe, for `n_lps` LPs; `--threads` is capped to what
/// can help (a note on stderr says so when `tell`).
pub(crate) fn timewarp_kernel(
    common: &KernelArgs,
    config: RunConfig,
    n_lps: usize,
    tell: bool,
) -> warpsim_timewarp::TimeWarp {
    use crate::cli::{CheckpointArg, WindowArg};
    use warpsim_timewarp::TimeWarp;
    let args = &common.timewarp;
    let kernel = match args.checkpoint_interval {
        CheckpointArg::Every(k) => TimeWarp::new(config).checkpoint_interval(k),
        CheckpointArg::Auto => TimeWarp::new(config),
    };
    kernel
        .threads(crate::limits::worker_threads(
            args.threads.unwrap_or(DEFAULT_THREADS),
            n_lps,
            // The default is capped silently (a model with one LP runs on one thread).
            tell && args.threads.is_some(),
        ))
        .cancellation(args.cancellation)
        .partition(args.partition.clone())
        .window(match args.window {
            WindowArg::Fixed(window) => Some(window),
            WindowArg::Auto | WindowArg::Off => None,
        })
        .adaptive_window(args.window == WindowArg::Auto)
        .load_balancing(args.balance)
        .safe_events(!args.no_safe_events)
        .give_way(args.give_way.0)
        // The kernel's own default would `eprintln!`, which panics on a closed stderr.
        .on_warning(std::sync::Arc::new(
            |warning: &warpsim_timewarp::Warning| {
                crate::out::warning(&warning.to_string());
            },
        ))
        .memory(args.memory)
        .gvt_interval(args.gvt_interval)
}

/// The process's peak resident memory in bytes (Linux `VmHWM`), if the platform tells.
pub(crate) fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The JSON object of one run: `model`, the report's fields, the model's metrics, `params`,
/// and `error` when the run failed.
pub(crate) fn outcome_json(scenario: &dyn Scenario, outcome: &Outcome) -> Result<Value> {
    let mut object = Map::new();
    object.insert("model".into(), Value::from(scenario.name()));
    if let Value::Object(fields) = serde_json::to_value(&outcome.report)? {
        object.extend(fields);
    }
    object.extend(outcome.metrics.clone());
    if let Some(stats) = &outcome.timewarp {
        object.insert("timewarp".into(), timewarp_json(stats)?);
    }
    object.insert("peak_rss_bytes".into(), Value::from(peak_rss_bytes()));
    object.insert("params".into(), scenario.params());
    if let Some(error) = &outcome.error {
        object.insert("error".into(), Value::from(error.to_string()));
    }
    Ok(Value::Object(object))
}

/// The Time Warp statistics as JSON. `TimeWarpStats::efficiency` is committed ÷ processed,
/// which the Sharks World paper, and our `speedup` command, call the *commit ratio*: its
/// efficiency is speedup ÷ processors. The key is renamed here so that the CLI never uses the
/// word for both.
pub(crate) fn timewarp_json(stats: &warpsim_timewarp::TimeWarpStats) -> Result<Value> {
    let mut value = serde_json::to_value(stats)?;
    if let Value::Object(fields) = &mut value
        && let Some(ratio) = fields.remove("efficiency")
    {
        fields.insert("commit_ratio".into(), ratio);
    }
    Ok(value)
}

/// The Time Warp statistics as readable lines, with committed ÷ processed called the commit
/// ratio (see [`timewarp_json`]).
pub(crate) fn timewarp_text(stats: &warpsim_timewarp::TimeWarpStats) -> String {
    stats.to_string().replace("efficiency", "commit ratio")
}

/// Runs a scenario once and prints its report (readable, or one JSON object). A failed run
/// prints nothing on stdout: its error line says how far it got.
pub(crate) fn execute(scenario: &dyn Scenario) -> Result<()> {
    scenario
        .validate()
        .map_err(|error| anyhow!("{}: {error:#}", scenario.name()))?;
    crate::limits::check_run(scenario)?;
    let checkpoints = scenario.kernel_args().map(|kernel| &kernel.checkpoint);
    let checkpoint_file = checkpoints.and_then(|plan| plan.checkpoint_file.as_ref());
    crate::files::check_outputs(
        &scenario
            .files()
            .output("--checkpoint-file", checkpoint_file),
    )?;
    if let Some(replications) = scenario.run_args().replications {
        if checkpoints
            .is_some_and(|plan| plan.checkpoint_file.is_some() || plan.resume_from.is_some())
        {
            return Err(anyhow!(
                "{}: --checkpoint-file takes one run, not --replications (each replication is short; \
                 a stopped batch reports the replications that finished)",
                scenario.name()
            ));
        }
        return crate::analysis::replications::execute(scenario, replications);
    }
    crate::checkpointing::set_model(scenario.name(), &scenario.params());
    let outcome = scenario.run_once(seed_of(scenario), true)?;
    if let Some(error) = &outcome.error {
        let rank = match crate::mpi::rank() {
            Some(rank) if rank != 0 => format!(" (rank {rank})"),
            _ => String::new(),
        };
        // Library errors name no flag; the ones a flag chose get its name here.
        let flag = match error.error {
            SimError::MemoryBudget { .. } => "--memory: ",
            _ => "",
        };
        return Err(anyhow!(
            "{}{rank}: run stopped at time {} after {} committed events: {flag}{}{}",
            scenario.name(),
            outcome.report.end_time,
            outcome.report.events_committed,
            error.error,
            if scenario.files().outputs.is_empty() {
                ""
            } else {
                " (no output file written)"
            }
        ));
    }
    if crate::mpi::rank().is_some_and(|rank| rank != 0) {
        // Rank 0 reports for the whole run; the others only share its verdict.
        return Ok(());
    }
    let mut text = String::new();
    if scenario.run_args().json {
        writeln!(text, "{}", outcome_json(scenario, &outcome)?)?;
    } else {
        writeln!(text, "{}", scenario.title())?;
        writeln!(text, "{}", outcome.report)?;
        if let Some(bytes) = peak_rss_bytes() {
            writeln!(
                text,
                "peak memory       {:.1} MiB (process RSS)",
                bytes as f64 / 1048576.0
            )?;
        }
        if let Some(stats) = &outcome.timewarp {
            writeln!(text, "{}", timewarp_text(stats))?;
        }
        text.push_str(&outcome.text);
    }
    if outcome.report.stop_reason == StopReason::EventLimit {
        crate::out::note(&format!(
            "{}: the run stopped at --max-events {} (time {}): its results are partial{}",
            scenario.name(),
            outcome.report.events_committed,
            outcome.report.end_time,
            if scenario.files().outputs.is_empty() {
                ""
            } else {
                ", and so marked in its output files"
            }
        ));
    }
    if outcome.report.stop_reason == StopReason::Interrupted {
        let by = crate::checkpointing::signal()
            .map_or("a stop request", crate::checkpointing::signal_name);
        crate::out::note(&format!(
            "{}: {by} stopped the run at time {} after {} committed events: its results are \
             partial{}",
            scenario.name(),
            outcome.report.end_time,
            outcome.report.events_committed,
            match checkpoint_file {
                Some(path) => format!("; continue it with `resume {}`", path.display()),
                None => String::new(),
            }
        ));
    }
    crate::out::print(&text)?;
    Ok(())
}

/// A report of a run made in stretches (between checkpoints, or after a resume): its wall
/// time since `started`, and its rate over the events committed since then (`first_event`
/// were committed before the run resumed).
pub(crate) fn whole_run(
    mut report: Report,
    started: std::time::Instant,
    first_event: u64,
) -> Report {
    report.wall_seconds = started.elapsed().as_secs_f64();
    report.events_per_second = if report.wall_seconds > 0.0 {
        (report.events_committed - first_event) as f64 / report.wall_seconds
    } else {
        0.0
    };
    report
}
