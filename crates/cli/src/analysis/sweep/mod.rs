//! `warpsim sweep <model> --set key=values …`: a grid over model parameters, with
//! replications at every point.
//!
//! Values are `a..b` (inclusive, step 1), `a..b:step`, a list `a,b,c`, or one value. Every grid
//! point is the command `warpsim run <model> <flags> --key=value …` parsed by clap, so any flag
//! of the model (numbers, but also `style=step,events` or `queue=heap,ladder`) can be swept,
//! and a bad value is reported exactly as `warpsim run` would report it.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use rayon::prelude::*;
use serde_json::{Map, Value};
use warpsim_core::StopReason;

use super::plots::{self, Series};
use super::replications::{seeds, show, summarise};
use super::statistics::Summary;
use super::{
    RunsBar, model_flags, parse_model, runs_at_once, take_last, take_option, with_runs_at_once,
};
use crate::limits::Demand;
use crate::run::{Outcome, Scenario, seed_of};
use crate::text::excerpt;

mod axis;

pub(crate) use axis::{Axis, grid_point, grid_size, parse_axis};

/// `warpsim sweep <model> --set KEY=VALUES … [model flags]`.
///
/// The sweep's own flags may come anywhere after the model name, mixed with the model's.
#[derive(Debug, clap::Args)]
pub(crate) struct SweepCmd {
    /// The model, as in `warpsim run <model>`.
    pub(crate) model: String,
    /// A swept parameter: KEY=a..b (inclusive), KEY=a..b:step, KEY=a,b,c or KEY=value;
    /// repeat for a grid. KEY is any flag of the model.
    #[arg(long = "set", value_name = "KEY=VALUES")]
    pub(crate) set: Vec<String>,
    /// Write every metric's mean, std dev, 95% CI, min and max per point as CSV.
    #[arg(long, value_name = "FILE.csv")]
    pub(crate) csv: Option<PathBuf>,
    /// Plot the metrics against the first swept parameter, with 95% CI bands, as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) plot: Option<PathBuf>,
    /// A metric to show and plot (repeatable) [default: the model's own metrics].
    #[arg(long, value_name = "METRIC")]
    pub(crate) y: Vec<String>,
    /// The model's flags (e.g. --tasks 100000 --replications 10 --json).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "MODEL FLAGS"
    )]
    pub(crate) args: Vec<String>,
}

/// Flags of the model that make no sense to sweep (they change the output, not the model).
const NOT_SWEPT: [&str; 4] = ["json", "config", "replications", "plot"];

/// One grid point's results.
struct PointResult {
    values: Vec<String>,
    summaries: Vec<(String, Summary)>,
    params: Value,
    /// The model's own metrics, in display order (from the point's first run).
    model_metrics: Vec<String>,
    /// Runs of this point that stopped at `--max-events` (their figures are partial).
    partial: usize,
}

/// Bytes a grid point's result takes: the struct, its values and parameters, and about 40
/// metrics' names and summaries.
const POINT_BYTES: u64 = (std::mem::size_of::<PointResult>()
    + 40 * (std::mem::size_of::<(String, Summary)>() + 24)
    + 1024) as u64;

/// `warpsim sweep`.
///
/// # Errors
///
/// Bad `--set` specifications, an unknown parameter or model, a grid point clap or the model
/// refuses, a failed run, or an output file that cannot be written.
pub(crate) fn run(app: &crate::App, command: SweepCmd) -> Result<()> {
    let mut flags = command.args;
    let mut specs = command.set;
    specs.extend(take_option(&mut flags, "set")?);
    let csv = take_last(&mut flags, "csv", None)?
        .map(PathBuf::from)
        .or(command.csv);
    let plot = take_last(&mut flags, "plot", None)?
        .map(PathBuf::from)
        .or(command.plot);
    let mut y_metrics = command.y;
    y_metrics.extend(take_option(&mut flags, "y")?);
    let model = command.model;

    let known = model_flags(app, &model)?;
    if specs.is_empty() {
        bail!("sweep needs at least one --set KEY=VALUES (e.g. --set gates=4..20)");
    }
    let axes: Vec<Axis> = specs
        .iter()
        .map(|spec| parse_axis(spec))
        .collect::<Result<_>>()?;
    for (index, axis) in axes.iter().enumerate() {
        if !known.contains(&axis.key) || NOT_SWEPT.contains(&axis.key.as_str()) {
            let sweepable: Vec<&str> = known
                .iter()
                .map(String::as_str)
                .filter(|k| !NOT_SWEPT.contains(k))
                .collect();
            bail!(
                "unknown parameter `{}` for model `{model}` (parameters: {})",
                axis.key,
                sweepable.join(", ")
            );
        }
        if axes[..index].iter().any(|other| other.key == axis.key) {
            bail!("--set {}: the parameter is swept twice", axis.key);
        }
        let flag = format!("--{}", axis.key);
        if flags
            .iter()
            .any(|f| *f == flag || f.starts_with(&format!("{flag}=")))
        {
            bail!("`{}` is both swept (--set) and fixed ({flag})", axis.key);
        }
    }

    // Parse and check the base and every point before running anything; points are parsed
    // again when they run, so that no grid-sized list of commands is kept.
    let base = parse_model(app, &model, &flags)?;
    let base_scenario: &dyn Scenario = &*base;
    base_scenario
        .validate()
        .map_err(|error| anyhow!("{model}: {error:#}"))?;
    let model_files = base_scenario.files();
    if let Some((flag, _)) = model_files.outputs.first() {
        bail!(
            "{flag}: a sweep writes no file per run (its outputs are --csv and --plot); drop {flag}"
        );
    }
    let json = base_scenario.run_args().json;
    let base_seed = seed_of(base_scenario);
    let replications = base_scenario.run_args().replications;
    let run_seeds = match replications {
        Some(0) => bail!("--replications must be at least 1 (got 0)"),
        Some(count) => seeds(base_seed, count),
        None => vec![base_seed],
    };
    let n_points = grid_size(&axes)?;
    let mut demands = base_scenario.demands();
    let at_once = rayon::current_num_threads() as u128;
    for demand in &mut demands {
        demand.items = demand.items.saturating_mul(at_once);
    }
    demands.push(Demand::new(
        "--set",
        specs
            .iter()
            .map(|spec| excerpt(spec).into_owned())
            .collect::<Vec<_>>()
            .join(" --set "),
        "grid points (each keeps a summary of every metric)",
        u128::from(n_points),
        POINT_BYTES,
    ));
    crate::limits::check_against(&demands, crate::limits::available_bytes())?;
    let mut files = model_files;
    files
        .outputs
        .extend(csv.iter().map(|path| ("--csv", path.clone())));
    files
        .outputs
        .extend(plot.iter().map(|path| ("--plot", path.clone())));
    crate::files::check_outputs(&files)?;
    let point_command = |index: u64| -> Result<Box<dyn Scenario>> {
        let values = grid_point(&axes, index);
        let label = describe(&axes, &values);
        let mut point_flags = flags.clone();
        for (axis, value) in axes.iter().zip(&values) {
            point_flags.push(format!("--{}={value}", axis.key));
        }
        let command = parse_model(app, &model, &point_flags)
            .map_err(|e| anyhow!("sweep point {label}: {e}"))?;
        command
            .validate()
            .map_err(|e| anyhow!("sweep point {label}: {model}: {e:#}"))?;
        Ok(command)
    };
    // Time Warp points (the kernel and threads can be swept too) run no more at once than
    // the cores hold (see `runs_at_once`).
    let mut at_once = runs_at_once(base_scenario);
    for index in 0..n_points {
        let command = point_command(index)?;
        at_once = at_once.min(runs_at_once(&*command));
    }

    // Points run in parallel, and so do the replications of each (rayon nests), so the pool
    // stays busy across points while only the runs in flight are in memory.
    let bar = RunsBar::new(n_points.saturating_mul(run_seeds.len() as u64), "runs");
    // A signal stops the runs under way; the points whose runs all finished are reported.
    crate::checkpointing::install_signals()?;
    let results: Vec<Result<Option<PointResult>>> = with_runs_at_once(at_once, || {
        (0..n_points)
            .into_par_iter()
            .map(|index| {
                if crate::checkpointing::signal().is_some() {
                    return Ok(None);
                }
                let values = grid_point(&axes, index);
                let label = describe(&axes, &values);
                let command = point_command(index)?;
                let scenario: &dyn Scenario = &*command;
                let outcomes: Vec<Option<Result<Outcome>>> = run_seeds
                    .par_iter()
                    .map(|&seed| {
                        // After a signal, the runs not yet started do not start.
                        if crate::checkpointing::signal().is_some() {
                            return None;
                        }
                        let outcome = scenario.run_once(seed, false);
                        bar.tick();
                        Some(outcome)
                    })
                    .collect();
                let mut kept = Vec::with_capacity(outcomes.len());
                let mut unfinished = false;
                for (outcome, seed) in outcomes.into_iter().zip(&run_seeds) {
                    let Some(outcome) = outcome else {
                        unfinished = true;
                        continue;
                    };
                    let outcome =
                        outcome.map_err(|e| anyhow!("sweep point {label}, seed {seed}: {e:#}"))?;
                    if let Some(error) = &outcome.error {
                        bail!(
                            "sweep point {label}, seed {seed}: run stopped: {}",
                            error.error
                        );
                    }
                    if outcome.report.stop_reason == StopReason::Interrupted {
                        unfinished = true;
                    }
                    kept.push(outcome);
                }
                if unfinished {
                    return Ok(None);
                }
                let model_metrics = kept
                    .first()
                    .map(|outcome| {
                        super::numeric_metrics(outcome)
                            .into_iter()
                            .map(|(name, _)| name)
                            .filter(|name| outcome.metrics.contains_key(name))
                            .collect()
                    })
                    .unwrap_or_default();
                Ok(Some(PointResult {
                    values: values.iter().map(|value| value.to_string()).collect(),
                    summaries: summarise(&kept),
                    params: scenario.params(),
                    model_metrics,
                    partial: kept
                        .iter()
                        .filter(|outcome| outcome.report.stop_reason == StopReason::EventLimit)
                        .count(),
                }))
            })
            .collect()
    })?;
    bar.finish();
    let stopped_by = crate::checkpointing::signal();
    let points: Vec<PointResult> = results
        .into_iter()
        .filter_map(Result::transpose)
        .collect::<Result<_>>()?;

    // The metrics shown in the table and plotted: the model's own, else the event count.
    let mut model_metrics: Vec<String> = points
        .first()
        .map(|point| point.model_metrics.clone())
        .unwrap_or_default();
    if model_metrics.is_empty() {
        model_metrics.push("events_committed".into());
    }
    let shown = if y_metrics.is_empty() {
        model_metrics
    } else {
        let available: Vec<&String> = points
            .first()
            .map(|p| p.summaries.iter().map(|(name, _)| name).collect())
            .unwrap_or_default();
        for name in &y_metrics {
            if !available.contains(&name) {
                bail!(
                    "--y {name}: no such metric (metrics: {})",
                    available
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        y_metrics
    };

    let partial_runs: usize = points.iter().map(|point| point.partial).sum();
    if let Some(path) = &csv {
        crate::files::write_text(path, &csv_text(&axes, &points))?;
    }
    // A sweep stopped before any point finished has nothing to plot.
    if let Some(path) = plot.as_ref().filter(|_| !points.is_empty()) {
        let series = plot_series(&axes, &points, &shown)?;
        let title = format!(
            "{} sweep over {} ({} run{} per point){}",
            model,
            axes[0].key,
            run_seeds.len(),
            if run_seeds.len() == 1 { "" } else { "s" },
            match (stopped_by, partial_runs > 0) {
                (Some(_), _) => format!(" — STOPPED: {} of {n_points} points", points.len()),
                (None, true) => " — PARTIAL: runs stopped at --max-events".to_string(),
                (None, false) => String::new(),
            }
        );
        plots::sweep_curves(path, &title, &axes[0].key, &series)
            .with_context(|| format!("cannot write the plot {}", path.display()))?;
    }
    let mut text = String::new();
    if json {
        let mut object = Map::new();
        object.insert("model".into(), Value::from(model.as_str()));
        object.insert("base_seed".into(), Value::from(base_seed));
        object.insert("runs_per_point".into(), Value::from(run_seeds.len()));
        if let Some(signal) = stopped_by {
            object.insert(
                "stopped_by".into(),
                Value::from(crate::checkpointing::signal_name(signal)),
            );
            object.insert("points_finished".into(), Value::from(points.len()));
            object.insert("points_total".into(), Value::from(n_points));
        }
        let axes_json: Vec<Value> = axes
            .iter()
            .map(|axis| {
                let mut a = Map::new();
                a.insert("key".into(), Value::from(axis.key.as_str()));
                a.insert(
                    "values".into(),
                    Value::Array(axis.values.iter().map(|v| json_value(v)).collect()),
                );
                Value::Object(a)
            })
            .collect();
        object.insert("axes".into(), Value::Array(axes_json));
        let points_json: Vec<Value> = points
            .iter()
            .map(|point| {
                let mut p = Map::new();
                let set: Map<String, Value> = axes
                    .iter()
                    .zip(&point.values)
                    .map(|(axis, value)| (axis.key.clone(), json_value(value)))
                    .collect();
                p.insert("set".into(), Value::Object(set));
                p.insert("params".into(), point.params.clone());
                p.insert("partial_runs".into(), Value::from(point.partial));
                let metrics: Map<String, Value> = point
                    .summaries
                    .iter()
                    .map(|(name, summary)| (name.clone(), summary.to_json()))
                    .collect();
                p.insert("metrics".into(), Value::Object(metrics));
                Value::Object(p)
            })
            .collect();
        object.insert("points".into(), Value::Array(points_json));
        writeln!(text, "{}", Value::Object(object))?;
    } else {
        writeln!(text, "{}", base_scenario.title())?;
        writeln!(
            text,
            "sweep of {} point{} × {} run{} (seeds {}), {} at a time",
            points.len(),
            if points.len() == 1 { "" } else { "s" },
            run_seeds.len(),
            if run_seeds.len() == 1 { "" } else { "s" },
            if replications.is_some() {
                format!("derive_seed({base_seed}, i)")
            } else {
                base_seed.to_string()
            },
            at_once
        )?;
        text.push_str(&table_text(&axes, &points, &shown, replications.is_some()));
    }
    if let Some(signal) = stopped_by {
        crate::out::note(&format!(
            "{} stopped the sweep: {} of {n_points} points had finished, and only those are \
             reported (the runs under way stopped and are left out)",
            crate::checkpointing::signal_name(signal),
            points.len()
        ));
    }
    if partial_runs > 0 {
        crate::out::note(&format!(
            "{partial_runs} run{} stopped at --max-events: their figures are partial (the \
             `partial_runs` column and field count them per point)",
            if partial_runs == 1 { "" } else { "s" }
        ));
    }
    crate::out::print(&text)?;
    Ok(())
}

/// `gates=4, tasks=1000`.
fn describe(axes: &[Axis], values: &[impl AsRef<str>]) -> String {
    axes.iter()
        .zip(values)
        .map(|(axis, value)| format!("{}={}", axis.key, value.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A swept value as JSON: a number when it is one.
fn json_value(value: &str) -> Value {
    if let Ok(integer) = value.parse::<i64>() {
        return Value::from(integer);
    }
    match value.parse::<f64>() {
        Ok(number) if number.is_finite() => Value::from(number),
        _ => Value::from(value),
    }
}

fn table_text(axes: &[Axis], points: &[PointResult], shown: &[String], with_ci: bool) -> String {
    let mut text = String::new();
    let mut header: Vec<String> = axes.iter().map(|axis| axis.key.clone()).collect();
    for name in shown {
        header.push(if with_ci {
            format!("{name} (mean ± 95% CI)")
        } else {
            name.clone()
        });
    }
    let mut rows: Vec<Vec<String>> = vec![header];
    for point in points {
        let mut row = point.values.clone();
        for name in shown {
            let cell = match point.summaries.iter().find(|(n, _)| n == name) {
                Some((_, summary)) if with_ci && summary.n >= 2 => {
                    format!("{} ± {}", show(summary.mean), show(summary.half_width()))
                }
                Some((_, summary)) => show(summary.mean),
                None => "-".to_string(),
            };
            row.push(cell);
        }
        rows.push(row);
    }
    let columns = rows[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:>width$}"))
            .collect();
        let _ = writeln!(text, "{}", cells.join("  "));
    }
    text
}

fn csv_text(axes: &[Axis], points: &[PointResult]) -> String {
    let mut names: Vec<String> = Vec::new();
    for point in points {
        for (name, _) in &point.summaries {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    let mut text = String::new();
    let mut header: Vec<String> = axes.iter().map(|axis| axis.key.clone()).collect();
    header.push("n".into());
    header.push("partial_runs".into());
    for name in &names {
        for stat in ["mean", "std_dev", "ci95_low", "ci95_high", "min", "max"] {
            header.push(format!("{name}_{stat}"));
        }
    }
    let _ = writeln!(text, "{}", header.join(","));
    let cell = |value: f64| {
        if value.is_finite() {
            value.to_string()
        } else {
            String::new()
        }
    };
    for point in points {
        let mut row: Vec<String> = point.values.iter().map(|v| csv_escape(v)).collect();
        row.push(
            point
                .summaries
                .iter()
                .map(|(_, s)| s.n)
                .max()
                .unwrap_or(0)
                .to_string(),
        );
        row.push(point.partial.to_string());
        for name in &names {
            match point.summaries.iter().find(|(n, _)| n == name) {
                Some((_, s)) => {
                    for value in [s.mean, s.std_dev, s.ci_low, s.ci_high, s.min, s.max] {
                        row.push(cell(value));
                    }
                }
                None => row.extend(std::iter::repeat_n(String::new(), 6)),
            }
        }
        let _ = writeln!(text, "{}", row.join(","));
    }
    text
}

fn csv_escape(value: &str) -> String {
    if value.contains([',', '"', '\n']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_string()
    }
}

/// One series per shown metric and per combination of the other axes' values; x is the first
/// axis, which must be numeric.
fn plot_series(axes: &[Axis], points: &[PointResult], shown: &[String]) -> Result<Vec<Series>> {
    let first = &axes[0];
    if first.values.iter().any(|v| v.parse::<f64>().is_err()) {
        bail!(
            "--plot needs a numeric first --set parameter (`{}` has values {})",
            first.key,
            first.values.join(",")
        );
    }
    let mut series: Vec<Series> = Vec::new();
    for name in shown {
        for point in points {
            let others = describe(&axes[1..], &point.values[1..]);
            let label = if others.is_empty() {
                name.clone()
            } else {
                format!("{name} ({others})")
            };
            let Some((_, summary)) = point.summaries.iter().find(|(n, _)| n == name) else {
                continue;
            };
            let x: f64 = point.values[0].parse().unwrap_or(f64::NAN);
            let entry = match series.iter_mut().find(|s| s.label == label) {
                Some(entry) => entry,
                None => {
                    series.push(Series {
                        metric: name.clone(),
                        label,
                        points: Vec::new(),
                    });
                    series.last_mut().expect("just pushed")
                }
            };
            entry.points.push((x, *summary));
        }
    }
    Ok(series)
}
