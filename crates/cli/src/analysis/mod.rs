//! The analyst's toolkit, for every model: replications with confidence intervals
//! (`--replications`), parameter sweeps (`warpsim sweep`), the feeder-planning search
//! (`warpsim plan`) and SVG plots.
//!
//! Everything here is generic over [`Scenario`](crate::run::Scenario): it runs a scenario
//! many times with derived seeds and reads the numbers off each run's [`Outcome`] (the kernel
//! report's numeric fields and the model's metrics). Sweeps and plans never set model
//! parameters themselves: they re-parse `warpsim run <model> <flags> --key=value` with clap,
//! so a new model gets all of it by implementing the trait and nothing else.
//!
//! # Ground rules
//!
//! - Replication `i` of a base seed `s` uses seed `derive_seed(s, i)`; the runs are
//!   independent and collected in index order, so results (everything but wall-clock figures)
//!   are the same whatever the number of threads (`RAYON_NUM_THREADS`).
//! - Sweep points and plan probes use the same replication seeds at every point (common random
//!   numbers), so differences between points are not masked by seed noise.
//! - Only the primary run (a plain run, or replication 0) writes side files such as plots.

pub(crate) mod plan;
pub(crate) mod plots;
pub(crate) mod replications;
pub(crate) mod speedup;
pub(crate) mod statistics;
pub(crate) mod sweep;

use std::ffi::OsString;
use std::io::IsTerminal;

use anyhow::{Result, anyhow, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;

use crate::cli::{KernelKind, Parsed};
use crate::run::{Outcome, Scenario};

/// Parses `run <model> <flags>` of `app` (with `--config` files expanded) into a scenario.
///
/// # Errors
///
/// clap's first error line (an unknown flag, a bad value), as the command line reports it.
pub(crate) fn parse_model(
    app: &crate::App,
    model: &str,
    flags: &[String],
) -> Result<Box<dyn Scenario>> {
    let mut args: Vec<OsString> = vec![app.program().into(), "run".into(), model.into()];
    args.extend(flags.iter().map(OsString::from));
    let args = crate::config::expand(app, args)?;
    match crate::cli::parse(app, args) {
        Ok(Parsed::Run(scenario)) => Ok(scenario),
        Ok(Parsed::Other(_)) => bail!("internal: `run` did not parse as a run"),
        Err(error) => bail!("{}", crate::text::clap_message(&error)),
    }
}

/// The long flags of `run <model>`, or an error naming the known models.
pub(crate) fn model_flags(app: &crate::App, model: &str) -> Result<Vec<String>> {
    match app.entry(model) {
        Some(entry) => Ok(entry
            .command()
            .get_arguments()
            .filter_map(|arg| arg.get_long().map(str::to_string))
            .collect()),
        None => {
            let models: Vec<&str> = app.entries().map(|entry| entry.name()).collect();
            bail!("unknown model `{model}` (models: {})", models.join(", "))
        }
    }
}

/// Removes every `--name VALUE` / `--name=VALUE` from `args` and returns the values, in order.
///
/// Sweeps and plans take their own flags mixed with the model's; clap hands everything after
/// the model name to a trailing list, and this picks the sweep's flags out of it.
pub(crate) fn take_option(args: &mut Vec<String>, name: &str) -> Result<Vec<String>> {
    let flag = format!("--{name}");
    let prefix = format!("--{name}=");
    let mut values = Vec::new();
    let mut index = 0;
    while index < args.len() {
        if args[index] == flag {
            if index + 1 >= args.len() {
                bail!("{flag} needs a value");
            }
            values.push(args.remove(index + 1));
            args.remove(index);
        } else if let Some(value) = args[index].strip_prefix(&prefix) {
            values.push(value.to_string());
            args.remove(index);
        } else {
            index += 1;
        }
    }
    Ok(values)
}

/// The last value of `--name` in `args` (removed), or `given` when absent.
pub(crate) fn take_last(
    args: &mut Vec<String>,
    name: &str,
    given: Option<String>,
) -> Result<Option<String>> {
    Ok(take_option(args, name)?.pop().or(given))
}

/// Orders metric names "naturally": digit runs compare as numbers, so p50 < p95 < p100.
pub(crate) fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(text: &str) -> Vec<(bool, String)> {
        let mut out: Vec<(bool, String)> = Vec::new();
        for ch in text.chars() {
            let digit = ch.is_ascii_digit();
            match out.last_mut() {
                Some((was_digit, chunk)) if *was_digit == digit => chunk.push(ch),
                _ => out.push((digit, ch.to_string())),
            }
        }
        out
    }
    let (left, right) = (chunks(a), chunks(b));
    for ((left_digit, left), (right_digit, right)) in left.iter().zip(&right) {
        let order = if *left_digit && *right_digit {
            let trim = |s: &str| s.trim_start_matches('0').to_string();
            let (l, r) = (trim(left), trim(right));
            l.len().cmp(&r.len()).then_with(|| l.cmp(&r))
        } else {
            left.cmp(right)
        };
        if order.is_ne() {
            return order;
        }
    }
    left.len().cmp(&right.len())
}

/// Report fields that are not results (the seed differs by design; the LP count is fixed).
const NOT_METRICS: [&str; 2] = ["seed", "lps"];

/// The numeric metrics of one run, in display order: the model's own metrics (natural order),
/// then the kernel report's numeric fields, then Time Warp's main figures when it ran.
/// Metrics that are null (not reached) are left out.
pub(crate) fn numeric_metrics(outcome: &Outcome) -> Vec<(String, f64)> {
    let mut model: Vec<(String, f64)> = outcome
        .metrics
        .iter()
        .filter_map(|(name, value)| value.as_f64().map(|v| (name.clone(), v)))
        .collect();
    model.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    let mut report = Vec::new();
    if let Ok(Value::Object(fields)) = serde_json::to_value(&outcome.report) {
        for (name, value) in fields {
            if NOT_METRICS.contains(&name.as_str()) || outcome.metrics.contains_key(&name) {
                continue;
            }
            if let Some(value) = value.as_f64() {
                report.push((name, value));
            }
        }
    }
    model.extend(report);
    if let Some(stats) = &outcome.timewarp {
        model.extend([
            ("commit_ratio".to_string(), stats.efficiency),
            ("rolled_back".to_string(), stats.rolled_back as f64),
            (
                "rollbacks".to_string(),
                (stats.primary_rollbacks + stats.secondary_rollbacks) as f64,
            ),
            ("antimessages".to_string(), stats.antimessages as f64),
            ("lazy_hits".to_string(), stats.lazy_hits as f64),
        ]);
    }
    model
}

/// How many runs of a scenario may go at once: as many as rayon has threads for the
/// sequential kernel (and the game-loop demos) (one thread per run), but for Time Warp at most `cores /
/// threads` (at least one). Time Warp runs that share cores corrupt each other's timings and
/// its workers would only take turns, so a sweep or replications of Time Warp runs never
/// oversubscribe the machine.
pub(crate) fn runs_at_once(scenario: &dyn Scenario) -> usize {
    let pool = rayon::current_num_threads();
    let Some(common) = scenario.kernel_args() else {
        return pool;
    };
    match common.kernel {
        KernelKind::Sequential => pool,
        KernelKind::Timewarp | KernelKind::Mpi => {
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            let threads = crate::run::requested_threads(common).max(1);
            (cores / threads).clamp(1, pool.max(1))
        }
    }
}

/// Runs `work` with at most `at_once` runs in flight: on rayon's global pool when that is
/// small enough, else on a pool of `at_once` threads (`par_iter`s inside use it).
///
/// # Errors
///
/// A pool that cannot be started (the system refused a thread).
pub(crate) fn with_runs_at_once<R: Send>(
    at_once: usize,
    work: impl FnOnce() -> R + Send,
) -> Result<R> {
    if at_once >= rayon::current_num_threads() {
        return Ok(work());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(at_once.max(1))
        .build()
        .map_err(|error| anyhow!("cannot start {at_once} threads for the runs: {error}"))?;
    Ok(pool.install(work))
}

/// A progress bar counting finished runs, on stderr and only on a terminal.
#[derive(Debug, Clone)]
pub(crate) struct RunsBar {
    bar: ProgressBar,
}

impl RunsBar {
    pub(crate) fn new(total: u64, what: &str) -> RunsBar {
        let bar = if std::io::stderr().is_terminal() && total > 1 {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(&format!(
                "{{bar:40}} {{pos}}/{{len}} {what} [{{elapsed_precise}} < {{eta_precise}}]"
            )) {
                bar.set_style(style);
            }
            bar
        } else {
            ProgressBar::hidden()
        };
        RunsBar { bar }
    }

    /// One more run finished (callable from any thread).
    pub(crate) fn tick(&self) {
        self.bar.inc(1);
    }

    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_of_percentiles() {
        let mut names = vec!["p100", "p50", "breakdowns", "p99", "p95"];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(names, ["breakdowns", "p50", "p95", "p99", "p100"]);
    }

    #[test]
    fn options_are_taken_out_of_mixed_flags() {
        let mut args: Vec<String> = ["--tasks", "5", "--set", "gates=1..3", "--set=tasks=4,5"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let sets = take_option(&mut args, "set").unwrap();
        assert_eq!(sets, ["gates=1..3", "tasks=4,5"]);
        assert_eq!(args, ["--tasks", "5"]);
        assert!(take_option(&mut vec!["--set".to_string()], "set").is_err());
    }
}
