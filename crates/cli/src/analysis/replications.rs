//! `--replications R`: R independent runs of one scenario, in parallel, summarised metric by
//! metric.

use std::fmt::Write;
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use rayon::prelude::*;
use serde_json::{Map, Value};
use warpsim_core::derive_seed;

use super::statistics::{CONFIDENCE, Summary, number};
use super::{RunsBar, numeric_metrics};
use crate::run::{Outcome, Scenario, seed_of};

/// The seeds of `replications` replications of base seed `base`: `derive_seed(base, i)`.
pub(crate) fn seeds(base: u64, replications: u32) -> Vec<u64> {
    (0..u64::from(replications))
        .map(|index| derive_seed(base, index))
        .collect()
}

/// Runs `scenario` once per seed, in parallel on rayon's pool (Time Warp runs at most
/// [`runs_at_once`](super::runs_at_once) at a time), and returns the outcomes in seed order.
/// `primary_first` makes the first run the primary one (it alone may write side files such
/// as plots). Ticks `bar` once per finished run.
///
/// # Errors
///
/// The first failure in seed order, naming the replication and its seed: a scenario error, or
/// a run the kernel stopped with an error; and a signal, which stops the batch (see
/// [`replicate_until_stopped`] for a caller that reports what finished).
pub(crate) fn replicate(
    scenario: &dyn Scenario,
    seeds: &[u64],
    primary_first: bool,
    bar: &RunsBar,
) -> Result<Vec<Outcome>> {
    let batch = replicate_until_stopped(scenario, seeds, primary_first, bar)?;
    if let Some(signal) = batch.stopped_by {
        bail!(
            "{} stopped the batch: {} of {} runs had finished; nothing is summarised",
            crate::checkpointing::signal_name(signal),
            batch.finished.len(),
            seeds.len()
        );
    }
    Ok(batch
        .finished
        .into_iter()
        .map(|(_, outcome)| outcome)
        .collect())
}

/// The runs of a batch that finished, with their indices in the batch, in order; all of
/// them unless a signal stopped the batch.
pub(crate) struct Batch {
    pub(crate) finished: Vec<(usize, Outcome)>,
    /// The signal that stopped the batch: the runs under way stopped (their partial figures
    /// are left out) and the runs not yet started did not start.
    pub(crate) stopped_by: Option<i32>,
}

/// [`replicate`] that, when a signal stops the batch, returns the runs that had finished.
///
/// # Errors
///
/// The first failure in seed order, naming the replication and its seed (runs a signal
/// stopped are not failures).
pub(crate) fn replicate_until_stopped(
    scenario: &dyn Scenario,
    seeds: &[u64],
    primary_first: bool,
    bar: &RunsBar,
) -> Result<Batch> {
    let results: Vec<Option<Result<Outcome>>> =
        super::with_runs_at_once(super::runs_at_once(scenario), || {
            seeds
                .par_iter()
                .enumerate()
                .map(|(index, &seed)| {
                    // After a signal, the runs not yet started do not start.
                    if crate::checkpointing::signal().is_some() {
                        return None;
                    }
                    let outcome = scenario.run_once(seed, primary_first && index == 0);
                    bar.tick();
                    Some(outcome)
                })
                .collect()
        })?;
    let stopped_by = crate::checkpointing::signal();
    let mut finished = Vec::with_capacity(results.len());
    for (index, result) in results.into_iter().enumerate() {
        let Some(result) = result else {
            continue;
        };
        let outcome = result
            .map_err(|error| anyhow!("replication {index} (seed {}): {error:#}", seeds[index]))?;
        if let Some(error) = &outcome.error {
            bail!(
                "replication {index} (seed {}): run stopped: {}",
                seeds[index],
                error.error
            );
        }
        if outcome.report.stop_reason == warpsim_core::StopReason::Interrupted {
            continue;
        }
        finished.push((index, outcome));
    }
    Ok(Batch {
        finished,
        stopped_by,
    })
}

/// Each numeric metric of `outcomes` with its summary, in display order (the order of first
/// appearance; a metric missing from some runs is summarised over the runs that have it).
pub(crate) fn summarise(outcomes: &[Outcome]) -> Vec<(String, Summary)> {
    let mut names: Vec<String> = Vec::new();
    let mut values: Vec<Vec<f64>> = Vec::new();
    for outcome in outcomes {
        for (name, value) in numeric_metrics(outcome) {
            match names.iter().position(|known| *known == name) {
                Some(index) => values[index].push(value),
                None => {
                    names.push(name);
                    values.push(vec![value]);
                }
            }
        }
    }
    names
        .into_iter()
        .zip(values)
        .filter_map(|(name, values)| Summary::of(&values).map(|summary| (name, summary)))
        .collect()
}

/// A number for a table: integers as integers, others with 6 significant digits.
pub(crate) fn show(value: f64) -> String {
    if !value.is_finite() {
        return "-".to_string();
    }
    if value.fract() == 0.0 && value.abs() < 1e15 {
        return format!("{value:.0}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (5 - magnitude).clamp(0, 12) as usize;
    format!("{value:.decimals$}")
}

/// The readable table of summaries.
pub(crate) fn table(summaries: &[(String, Summary)]) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:<22} {:>14} {:>12} {:>31} {:>14} {:>14}",
        "metric",
        "mean",
        "std dev",
        format!("{:.0}% CI", CONFIDENCE * 100.0),
        "min",
        "max"
    );
    for (name, summary) in summaries {
        let interval = if summary.ci_low.is_finite() {
            format!("[{}, {}]", show(summary.ci_low), show(summary.ci_high))
        } else {
            "-".to_string()
        };
        let _ = writeln!(
            text,
            "{:<22} {:>14} {:>12} {:>31} {:>14} {:>14}",
            name,
            show(summary.mean),
            show(summary.std_dev),
            interval,
            show(summary.min),
            show(summary.max)
        );
    }
    text
}

/// `warpsim run <model> --replications R`: runs, then prints the table (or one JSON object).
///
/// # Errors
///
/// `R = 0`, or the first failed replication.
pub(crate) fn execute(scenario: &dyn Scenario, replications: u32) -> Result<()> {
    if replications == 0 {
        bail!("--replications must be at least 1 (got 0)");
    }
    // A signal stops the runs under way and the batch reports the runs that finished.
    crate::checkpointing::install_signals()?;
    let base = seed_of(scenario);
    let seeds = seeds(base, replications);
    let started = Instant::now();
    let bar = RunsBar::new(u64::from(replications), "replications");
    let batch = replicate_until_stopped(scenario, &seeds, true, &bar);
    bar.finish();
    let Batch {
        finished,
        stopped_by,
    } = batch?;
    let indices: Vec<usize> = finished.iter().map(|(index, _)| *index).collect();
    let outcomes: Vec<Outcome> = finished.into_iter().map(|(_, outcome)| outcome).collect();
    let summaries = summarise(&outcomes);
    let mut text = String::new();
    if scenario.run_args().json {
        let mut object = Map::new();
        object.insert("model".into(), Value::from(scenario.name()));
        object.insert("replications".into(), Value::from(replications));
        object.insert("base_seed".into(), Value::from(base));
        object.insert("params".into(), scenario.params());
        if let Some(signal) = stopped_by {
            object.insert(
                "stopped_by".into(),
                Value::from(crate::checkpointing::signal_name(signal)),
            );
            object.insert("finished".into(), Value::from(outcomes.len()));
        }
        let metrics: Map<String, Value> = summaries
            .iter()
            .map(|(name, summary)| (name.clone(), summary.to_json()))
            .collect();
        object.insert("metrics".into(), Value::Object(metrics));
        let runs: Vec<Value> = outcomes
            .iter()
            .zip(&indices)
            .map(|(outcome, &index)| {
                let mut run = Map::new();
                run.insert("replication".into(), Value::from(index));
                run.insert("seed".into(), Value::from(seeds[index]));
                for (name, value) in numeric_metrics(outcome) {
                    run.insert(name, number(value));
                }
                Value::Object(run)
            })
            .collect();
        object.insert("runs".into(), Value::Array(runs));
        writeln!(text, "{}", Value::Object(object))?;
    } else {
        writeln!(text, "{}", scenario.title())?;
        let finished = match stopped_by {
            Some(_) => format!("{} of ", outcomes.len()),
            None => String::new(),
        };
        writeln!(
            text,
            "{finished}{replications} replications, seeds derive_seed({base}, 0..{replications}), \
             {} at a time, {:.3} s",
            super::runs_at_once(scenario).min(replications as usize),
            started.elapsed().as_secs_f64()
        )?;
        text.push_str(&table(&summaries));
    }
    let partial = outcomes
        .iter()
        .filter(|outcome| outcome.report.stop_reason == warpsim_core::StopReason::EventLimit)
        .count();
    if partial > 0 {
        crate::out::note(&format!(
            "{partial} of {replications} replications stopped at --max-events: their figures \
             are partial"
        ));
    }
    if let Some(signal) = stopped_by {
        crate::out::note(&format!(
            "{}: {} stopped the batch: {} of {replications} replications had finished, and \
             the summary is of those (the runs under way stopped and are left out)",
            scenario.name(),
            crate::checkpointing::signal_name(signal),
            outcomes.len()
        ));
    }
    crate::out::print(&text)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(show(1_000_000.0), "1000000");
        assert_eq!(show(0.123_456_789), "0.123457");
        assert_eq!(show(1234.5678), "1234.57");
        assert_eq!(show(f64::NAN), "-");
    }
}
