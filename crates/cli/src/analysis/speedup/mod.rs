//! `warpsim speedup <model> [model flags] --threads 1,2,4 --repeat 3 --cancellation
//! lazy,aggressive`: the experiments of the Sharks World paper (Presley, Reiher & Bellenot,
//! section 3) for any model — the parallel kernel's speedup over the sequential kernel, by
//! thread count and cancellation mode.
//!
//! # Ground rules
//!
//! - **One run at a time.** Every run (the sequential baseline, the critical-path runs, each
//!   configuration's repeats) runs alone, on the calling thread, after the previous one has
//!   returned: concurrent runs would share the cores and corrupt each other's times. Each run's
//!   start and end (seconds since the command began) are in the JSON, so this can be checked.
//! - **Same seed.** Every run uses the model's seed (`--seed` or its default): the repeats are
//!   timings of one run, as in the paper ("the average of three separate runs using the
//!   identical configuration"), not replications.
//! - **Same events.** Every parallel run must commit exactly the sequential run's events (its
//!   trace hash; with `--content-hash` also their contents, at the cost of an encoding per
//!   event in every timed run); a mismatch stops the command with an error, since a speedup
//!   of a different computation means nothing.
//! - **Order.** The sequential kernel runs first (`--repeat` times), then the two
//!   critical-path runs, then the configurations in rounds — round `r` runs every
//!   configuration once — so that a change of the machine's load between rounds touches every
//!   configuration alike.
//!
//! # What is reported, and how it is computed
//!
//! - *time*: the kernel's wall-clock time of each run (`wall_seconds`: initialisation,
//!   execution and commit, not building the model); mean and minimum over the repeats.
//! - *speedup*: mean sequential time ÷ mean time of the configuration (the paper divides
//!   TWSIM's time by TWOS's, each the mean of three runs).
//! - *efficiency*: speedup ÷ processors (worker threads, × ranks over MPI), the paper's
//!   definition ("the speedup divided by the number of nodes").
//! - *commit ratio*: committed ÷ processed events, the share of optimistic work that was kept
//!   (what `TimeWarpStats::efficiency` holds); rollbacks (primary + secondary), antimessages
//!   and lazy hits are means over the repeats.
//! - *critical-path bound*: the available parallelism of the committed events — total cost ÷
//!   longest chain of dependent events — from one sequential run pricing each event at its
//!   handler's run time (`--critical-path ns`, the paper's "longest set of event run times
//!   that must be processed sequentially") and one counting events (`unit`). No kernel on any
//!   number of processors beats `min(processors, bound)` (barring the super-critical speedups
//!   the paper mentions); *of bound* is the speedup as a share of that.
//! - *committed event time*: the sum of the handler run times of the committed events — the
//!   `ns` run's total cost. The paper notes it is the same for the sequential and the parallel
//!   kernel by definition (both run the same committed events), so it is measured once, on the
//!   sequential kernel; each event is priced at the fastest of three timings (see
//!   `CostModel::Nanos`), so it is a slight underestimate of a typical run's handler time.
//! - *zero-overhead speedup*: committed event time ÷ the configuration's mean time: the
//!   speedup against a sequential kernel that costs nothing but the handlers, the paper's
//!   "much more conservative estimate of speedup". For the sequential kernel itself it is
//!   the share of its time spent in handlers.
//! - More processors than cores are allowed (the paper's point is the curve); such
//!   configurations are flagged *oversubscribed*, and their times measure time slicing as
//!   much as the kernel.

mod output;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use warpsim_core::{CriticalPath, StopReason, TraceHash};

use super::{model_flags, parse_model, take_last};
use crate::run::{Outcome, Scenario, seed_of};

/// `warpsim speedup <model> [flags]`.
///
/// The speedup's own flags may come anywhere after the model name, mixed with the model's.
#[derive(Debug, clap::Args)]
pub(crate) struct SpeedupCmd {
    /// The model, as in `warpsim run <model>`.
    pub(crate) model: String,
    /// Worker threads of each configuration, a list such as 1,2,4 (per rank with --kernel
    /// mpi) [default: 1, 2, 4, … up to the cores].
    #[arg(long, value_name = "N,N,…")]
    pub(crate) threads: Option<String>,
    /// Runs of every configuration and of the sequential kernel, all with the same seed;
    /// times are averaged over them [default: 3].
    #[arg(long, value_name = "R")]
    pub(crate) repeat: Option<String>,
    /// Cancellation modes to compare, a list [default: lazy,aggressive].
    #[arg(long, value_name = "lazy,aggressive")]
    pub(crate) cancellation: Option<String>,
    /// The parallel kernel: timewarp (threads) or mpi (under mpirun) [default: timewarp].
    #[arg(long, value_name = "timewarp|mpi")]
    pub(crate) kernel: Option<String>,
    /// Write one row per configuration (the sequential kernel first) as CSV.
    #[arg(long, value_name = "FILE.csv")]
    pub(crate) csv: Option<PathBuf>,
    /// Plot speedup against threads, with the ideal line and the critical-path bound, as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) plot: Option<PathBuf>,
    /// Print one JSON object (every run, every configuration) instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
    /// The model's flags (e.g. --creatures 2048 --sectors 8x8).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "MODEL FLAGS"
    )]
    pub(crate) args: Vec<String>,
}

/// The parallel kernel compared with the sequential one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parallel {
    Timewarp,
    Mpi,
}

impl Parallel {
    fn name(self) -> &'static str {
        match self {
            Parallel::Timewarp => "timewarp",
            Parallel::Mpi => "mpi",
        }
    }
}

/// One configuration: a thread count and a cancellation mode.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Config {
    threads: usize,
    cancellation: &'static str,
}

/// What one run was and what it measured.
#[derive(Debug, Clone)]
struct RunRecord {
    /// `sequential`, `critical_path_unit`, `critical_path_ns`, `timewarp` or `mpi`.
    kind: &'static str,
    /// The configuration's index, for parallel runs.
    config: Option<usize>,
    /// Seconds since the command began, when the run was started and when it returned.
    started: f64,
    finished: f64,
    wall_seconds: f64,
    /// The model's LP count.
    lps: u32,
    trace_hash: TraceHash,
    /// With `--content-hash`: the fingerprint of the committed events' contents.
    content_hash: Option<TraceHash>,
    events_committed: u64,
    events_processed: u64,
    stop_reason: StopReason,
    critical_path: Option<CriticalPath>,
    /// Time Warp's figures (parallel runs).
    timewarp: Option<warpsim_timewarp::TimeWarpStats>,
}

/// Means over a configuration's repeats.
#[derive(Debug, Clone)]
struct Row {
    kernel: &'static str,
    threads: usize,
    ranks: usize,
    cancellation: Option<&'static str>,
    runs: usize,
    time_mean: f64,
    time_min: f64,
    time_max: f64,
    speedup: f64,
    efficiency: f64,
    commit_ratio: f64,
    rollbacks: f64,
    antimessages: f64,
    lazy_hits: f64,
    /// `speedup / min(processors, bound)`.
    of_bound: f64,
    zero_overhead_speedup: f64,
    oversubscribed: bool,
}

impl Row {
    fn processors(&self) -> usize {
        self.threads * self.ranks
    }
}

/// Everything the outputs need.
#[derive(Debug)]
struct Study {
    model: String,
    title: String,
    params: serde_json::Value,
    seed: u64,
    kernel: Parallel,
    repeat: usize,
    cores: usize,
    load_before: Option<[f64; 3]>,
    load_after: Option<[f64; 3]>,
    trace_hash: TraceHash,
    content_hash: Option<TraceHash>,
    events_committed: u64,
    partial: bool,
    unit: CriticalPath,
    timed: CriticalPath,
    rows: Vec<Row>,
    runs: Vec<RunRecord>,
}

impl Study {
    /// Committed event time in seconds (the `ns` critical-path run's total cost).
    fn committed_event_seconds(&self) -> f64 {
        self.timed.total_cost / 1e9
    }
}

/// `warpsim speedup`.
///
/// # Errors
///
/// Bad lists (`--threads 0`, `--repeat 0`, an unknown cancellation or kernel), an unknown
/// model or flag, a run that fails, a parallel run that commits other events than the
/// sequential one, or an output file that cannot be written.
pub(crate) fn run(app: &crate::App, command: SpeedupCmd) -> Result<()> {
    let mut flags = command.args;
    let threads = take_last(&mut flags, "threads", command.threads)?;
    let repeat = take_last(&mut flags, "repeat", command.repeat)?;
    let cancellation = take_last(&mut flags, "cancellation", command.cancellation)?;
    let kernel = take_last(&mut flags, "kernel", command.kernel)?;
    let csv = take_last(&mut flags, "csv", None)?
        .map(PathBuf::from)
        .or(command.csv);
    let plot = take_last(&mut flags, "plot", None)?
        .map(PathBuf::from)
        .or(command.plot);
    let json = command.json || take_switch(&mut flags, "json");

    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let kernel = parse_kernel(kernel.as_deref())?;
    let threads = match threads {
        Some(text) => parse_threads(&text)?,
        None => default_threads(cores),
    };
    let repeat = match repeat {
        Some(text) => parse_repeat(&text)?,
        None => 3,
    };
    let cancellations = parse_cancellations(cancellation.as_deref().unwrap_or("lazy,aggressive"))?;
    let ceiling = crate::limits::thread_ceiling();
    if let Some(&too_many) = threads.iter().find(|&&n| n > ceiling) {
        bail!(
            "--threads {too_many}: at most {ceiling} on this machine's {cores} cores \
             (more threads cannot help)"
        );
    }

    model_flags(app, &command.model)?;
    if app
        .entry(&command.model)
        .is_some_and(|entry| !entry.on_kernel())
    {
        bail!(
            "{} runs on no simulation kernel (it is a game-loop demo): speedup compares kernels",
            command.model
        );
    }
    let base = parse_model(app, &command.model, &flags)?;
    let scenario: &dyn Scenario = &*base;
    scenario
        .validate()
        .map_err(|error| anyhow!("{}: {error:#}", command.model))?;
    if scenario
        .kernel_args()
        .is_some_and(|kernel| kernel.critical_path.is_some())
    {
        bail!("--critical-path: speedup runs the critical-path analysis itself; drop the flag");
    }
    if scenario.run_args().replications.is_some() {
        bail!(
            "--replications: speedup repeats runs with the same seed (--repeat), it does not \
             replicate"
        );
    }
    let model_files = scenario.files();
    if let Some((flag, _)) = model_files.outputs.first() {
        bail!(
            "{flag}: speedup writes no file per run (its outputs are --csv and --plot); drop {flag}"
        );
    }
    crate::limits::check_run(scenario)?;
    let mut files = model_files;
    files
        .outputs
        .extend(csv.iter().map(|path| ("--csv", path.clone())));
    files
        .outputs
        .extend(plot.iter().map(|path| ("--plot", path.clone())));
    crate::files::check_outputs(&files)?;

    let configs: Vec<Config> = cancellations
        .iter()
        .flat_map(|&cancellation| {
            threads.iter().map(move |&threads| Config {
                threads,
                cancellation,
            })
        })
        .collect();
    // Parse every configuration's command before anything runs.
    let command_of = |extra: &[String]| -> Result<Box<dyn Scenario>> {
        let mut all = flags.clone();
        all.extend(extra.iter().cloned());
        parse_model(app, &command.model, &all)
    };
    let sequential = command_of(&["--kernel=sequential".into()])?;
    let critical_unit = command_of(&["--kernel=sequential".into(), "--critical-path=unit".into()])?;
    let critical_ns = command_of(&["--kernel=sequential".into(), "--critical-path=ns".into()])?;
    let parallel: Vec<Box<dyn Scenario>> = configs
        .iter()
        .map(|config| {
            command_of(&[
                format!("--kernel={}", kernel.name()),
                format!("--threads={}", config.threads),
                format!("--cancellation={}", config.cancellation),
            ])
        })
        .collect::<Result<_>>()?;

    // Over MPI every rank runs this command; the sequential runs are rank 0's alone (the
    // other ranks wait in the first distributed run), so that they run on a quiet machine.
    let (rank, ranks) = match kernel {
        Parallel::Timewarp => (0, 1),
        Parallel::Mpi => crate::mpi::start()?,
    };
    let seed = seed_of(scenario);
    let clock = Instant::now();
    let load_before = load_average();
    let mut runs: Vec<RunRecord> = Vec::new();
    let run_one = |command: &dyn Scenario,
                   kind: &'static str,
                   config: Option<usize>,
                   runs: &mut Vec<RunRecord>|
     -> Result<()> {
        let label = match config {
            Some(index) => format!(
                "{} {} thread{} {}",
                kind,
                configs[index].threads,
                if configs[index].threads == 1 { "" } else { "s" },
                configs[index].cancellation
            ),
            None => kind.replace('_', " "),
        };
        let started = clock.elapsed().as_secs_f64();
        let outcome: Outcome = command
            .run_once(seed, false)
            .map_err(|error| anyhow!("{label} run: {error:#}"))?;
        let finished = clock.elapsed().as_secs_f64();
        if let Some(error) = &outcome.error {
            bail!(
                "{label} run stopped at time {} after {} committed events: {}",
                outcome.report.end_time,
                outcome.report.events_committed,
                error.error
            );
        }
        let report = &outcome.report;
        runs.push(RunRecord {
            kind,
            config,
            started,
            finished,
            wall_seconds: report.wall_seconds,
            lps: report.lps,
            trace_hash: report.trace_hash,
            content_hash: report.content_hash,
            events_committed: report.events_committed,
            events_processed: report.events_processed,
            stop_reason: report.stop_reason,
            critical_path: report.critical_path,
            timewarp: outcome.timewarp,
        });
        Ok(())
    };
    let bar = super::RunsBar::new(((repeat * (1 + configs.len()) + 2) as u64).max(2), "runs");
    if rank == 0 {
        for _ in 0..repeat {
            run_one(&*sequential, "sequential", None, &mut runs)?;
            bar.tick();
        }
        run_one(&*critical_unit, "critical_path_unit", None, &mut runs)?;
        bar.tick();
        run_one(&*critical_ns, "critical_path_ns", None, &mut runs)?;
        bar.tick();
        let lps = runs.first().map_or(1, |run| run.lps as usize);
        if let Some(&too_many) = threads.iter().find(|&&n| n * ranks > lps) {
            bar.finish();
            bail!(
                "--threads {too_many}: the model has {lps} LPs, so at most {} thread{} \
                 {}can have work",
                lps / ranks,
                if lps / ranks == 1 { "" } else { "s" },
                if ranks > 1 { "per rank " } else { "" }
            );
        }
    }
    let reference = runs.first().map(|run| (run.trace_hash, run.content_hash));
    for _ in 0..repeat {
        for (index, command) in parallel.iter().enumerate() {
            run_one(&**command, kernel.name(), Some(index), &mut runs)?;
            bar.tick();
            let run = runs.last().expect("just pushed");
            if let Some((reference, reference_content)) = reference
                && run.trace_hash == reference
                && let (Some(expected), Some(got)) = (reference_content, run.content_hash)
                && got != expected
            {
                bar.finish();
                bail!(
                    "{} {} threads {}: committed the sequential kernel's events with other \
                     contents (content hash {got} against {expected}): a kernel bug, please \
                     report it",
                    kernel.name(),
                    configs[index].threads,
                    configs[index].cancellation,
                );
            }
            if let Some((reference, _)) = reference
                && run.trace_hash != reference
            {
                bar.finish();
                bail!(
                    "{} {} threads {}: committed other events than the sequential kernel \
                     (trace hash {} against {reference}): a kernel bug, please report it",
                    kernel.name(),
                    configs[index].threads,
                    configs[index].cancellation,
                    run.trace_hash
                );
            }
        }
    }
    bar.finish();
    if rank != 0 {
        // Rank 0 reports for the whole study.
        return Ok(());
    }
    let load_after = load_average();
    let study = summarise(
        &command.model,
        scenario,
        seed,
        kernel,
        repeat,
        cores,
        ranks,
        (load_before, load_after),
        &configs,
        runs,
    )?;
    if let Some(path) = &csv {
        crate::files::write_text(path, &output::csv_text(&study))?;
    }
    if let Some(path) = &plot {
        super::plots::speedup_curves(path, &output::plot_input(&study))?;
    }
    if study.partial {
        crate::out::note(
            "the runs stopped at --max-events: the speedups are those of a partial run",
        );
    }
    let text = if json {
        format!("{}\n", output::json_value(&study))
    } else {
        output::table_text(&study)
    };
    crate::out::print(&text)?;
    Ok(())
}

/// Removes every `--name` (a switch) from `args`; whether there was one.
fn take_switch(args: &mut Vec<String>, name: &str) -> bool {
    let flag = format!("--{name}");
    let before = args.len();
    args.retain(|arg| *arg != flag);
    args.len() != before
}

fn parse_kernel(text: Option<&str>) -> Result<Parallel> {
    match text.unwrap_or("timewarp") {
        "timewarp" => Ok(Parallel::Timewarp),
        "mpi" => Ok(Parallel::Mpi),
        other => bail!(
            "--kernel: speedup compares a parallel kernel with the sequential one: timewarp \
             or mpi (got `{}`)",
            crate::text::excerpt(other)
        ),
    }
}

/// `1,2,4`: whole numbers of at least 1, each once.
fn parse_threads(text: &str) -> Result<Vec<usize>> {
    let mut threads: Vec<usize> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let count: usize = match part.parse() {
            Ok(count) if count >= 1 => count,
            _ => bail!(
                "--threads: `{}` is not a thread count (expected whole numbers of at least 1, \
                 e.g. 1,2,4)",
                crate::text::excerpt(part)
            ),
        };
        if threads.contains(&count) {
            bail!("--threads: {count} is listed twice");
        }
        threads.push(count);
    }
    Ok(threads)
}

fn parse_repeat(text: &str) -> Result<usize> {
    match text.trim().parse::<usize>() {
        Ok(count) if count >= 1 => Ok(count),
        Ok(_) => bail!("--repeat must be at least 1 (got {text})"),
        Err(_) => bail!(
            "--repeat: `{}` is not a whole number of runs",
            crate::text::excerpt(text)
        ),
    }
}

/// `lazy,aggressive`.
fn parse_cancellations(text: &str) -> Result<Vec<&'static str>> {
    let mut modes: Vec<&'static str> = Vec::new();
    for part in text.split(',') {
        let mode = match part.trim() {
            "lazy" => "lazy",
            "aggressive" => "aggressive",
            other => bail!(
                "--cancellation: unknown mode `{}` (expected lazy, aggressive or both, \
                 e.g. lazy,aggressive)",
                crate::text::excerpt(other)
            ),
        };
        if modes.contains(&mode) {
            bail!("--cancellation: {mode} is listed twice");
        }
        modes.push(mode);
    }
    Ok(modes)
}

/// 1, 2, 4, … up to the cores (at least 1 and 2).
fn default_threads(cores: usize) -> Vec<usize> {
    let mut threads = vec![1];
    let mut next = 2;
    while next <= cores.max(2) {
        threads.push(next);
        next *= 2;
    }
    threads
}

/// The 1, 5 and 15 minute load averages (Linux `/proc/loadavg`).
fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut fields = text.split_whitespace().map(|field| field.parse::<f64>());
    Some([
        fields.next()?.ok()?,
        fields.next()?.ok()?,
        fields.next()?.ok()?,
    ])
}

/// Means over each configuration's repeats, against the sequential mean.
#[allow(clippy::too_many_arguments)]
fn summarise(
    model: &str,
    scenario: &dyn crate::run::Scenario,
    seed: u64,
    kernel: Parallel,
    repeat: usize,
    cores: usize,
    ranks: usize,
    (load_before, load_after): (Option<[f64; 3]>, Option<[f64; 3]>),
    configs: &[Config],
    runs: Vec<RunRecord>,
) -> Result<Study> {
    let sequential: Vec<&RunRecord> = runs.iter().filter(|r| r.kind == "sequential").collect();
    let find_path = |kind: &str| {
        runs.iter()
            .find(|r| r.kind == kind)
            .and_then(|r| r.critical_path)
            .ok_or_else(|| anyhow!("internal: no {kind} run"))
    };
    let unit = find_path("critical_path_unit")?;
    let timed = find_path("critical_path_ns")?;
    let first = sequential
        .first()
        .ok_or_else(|| anyhow!("internal: no sequential run"))?;
    let committed_event_seconds = timed.total_cost / 1e9;
    let times = |records: &[&RunRecord]| -> (f64, f64, f64) {
        let values: Vec<f64> = records.iter().map(|r| r.wall_seconds).collect();
        let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (mean, min, max)
    };
    let (seq_mean, seq_min, seq_max) = times(&sequential);
    let bound = timed.parallelism;
    let mut rows = vec![Row {
        kernel: "sequential",
        threads: 1,
        ranks: 1,
        cancellation: None,
        runs: sequential.len(),
        time_mean: seq_mean,
        time_min: seq_min,
        time_max: seq_max,
        speedup: 1.0,
        efficiency: 1.0,
        commit_ratio: 1.0,
        rollbacks: 0.0,
        antimessages: 0.0,
        lazy_hits: 0.0,
        of_bound: 1.0 / bound.clamp(f64::MIN_POSITIVE, 1.0),
        zero_overhead_speedup: committed_event_seconds / seq_mean,
        oversubscribed: false,
    }];
    for (index, config) in configs.iter().enumerate() {
        let records: Vec<&RunRecord> = runs.iter().filter(|r| r.config == Some(index)).collect();
        let (mean, min, max) = times(&records);
        let average = |value: &dyn Fn(&warpsim_timewarp::TimeWarpStats) -> f64| {
            let values: Vec<f64> = records
                .iter()
                .filter_map(|r| r.timewarp.as_ref().map(value))
                .collect();
            values.iter().sum::<f64>() / values.len().max(1) as f64
        };
        let commit_ratio = {
            let values: Vec<f64> = records
                .iter()
                .map(|r| r.events_committed as f64 / r.events_processed.max(1) as f64)
                .collect();
            values.iter().sum::<f64>() / values.len().max(1) as f64
        };
        let actual_threads = records
            .first()
            .and_then(|r| r.timewarp.as_ref())
            .map_or(config.threads, |stats| stats.threads.max(1));
        let processors = actual_threads * ranks;
        let speedup = seq_mean / mean;
        rows.push(Row {
            kernel: kernel.name(),
            threads: actual_threads,
            ranks,
            cancellation: Some(config.cancellation),
            runs: records.len(),
            time_mean: mean,
            time_min: min,
            time_max: max,
            speedup,
            efficiency: speedup / processors as f64,
            commit_ratio,
            rollbacks: average(&|s| (s.primary_rollbacks + s.secondary_rollbacks) as f64),
            antimessages: average(&|s| s.antimessages as f64),
            lazy_hits: average(&|s| s.lazy_hits as f64),
            of_bound: speedup / (processors as f64).min(bound),
            zero_overhead_speedup: committed_event_seconds / mean,
            oversubscribed: processors > cores,
        });
    }
    Ok(Study {
        model: model.to_string(),
        title: scenario.title(),
        params: scenario.params(),
        seed,
        kernel,
        repeat,
        cores,
        load_before,
        load_after,
        trace_hash: first.trace_hash,
        content_hash: first.content_hash,
        events_committed: first.events_committed,
        partial: first.stop_reason == StopReason::EventLimit,
        unit,
        timed,
        rows,
        runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_refuse_what_they_should() {
        assert_eq!(parse_threads("1,2,4").unwrap(), [1, 2, 4]);
        assert_eq!(parse_threads(" 8 ").unwrap(), [8]);
        for bad in ["0", "1,0", "", "two", "1,,2", "-1", "1,1"] {
            assert!(parse_threads(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_repeat("3").unwrap(), 3);
        assert!(parse_repeat("0").is_err());
        assert_eq!(
            parse_cancellations("lazy,aggressive").unwrap(),
            ["lazy", "aggressive"]
        );
        assert!(parse_cancellations("eager").is_err());
        assert!(parse_kernel(Some("sequential")).is_err());
        assert_eq!(parse_kernel(None).unwrap(), Parallel::Timewarp);
        assert_eq!(default_threads(1), [1, 2]);
        assert_eq!(default_threads(2), [1, 2]);
        assert_eq!(default_threads(6), [1, 2, 4]);
        assert_eq!(crate::analysis::plots::ratio_text(1.234), "1.23");
        assert_eq!(crate::analysis::plots::ratio_text(0.5), "0.50");
        assert_eq!(crate::analysis::plots::ratio_text(0.0123), "0.012");
        assert_eq!(crate::analysis::plots::ratio_text(0.075), "0.075");
    }
}
