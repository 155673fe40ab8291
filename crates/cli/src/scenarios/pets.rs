//! `warpsim run pets`: the feeding-pets model in any of its three styles.

use std::fmt::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use serde_json::{Map, Value};
use warpsim_core::{LogicalProcess, Report, StopReason};
use warpsim_models::pets::{FeedingStation, PetsParams, PetsResult, Style};

use super::BuiltinModel;
use crate::analysis::plots;
use crate::cli::KernelArgs;
use crate::files::FileSet;
use crate::limits::{Demand, event_bytes, vec_bytes};
use crate::run::{Outcome, run_config, run_on_kernel};

/// The feeding-pets flags: the model's parameters (declared in `warpsim-models`; defaults
/// are the article's scenario) and the plot.
#[derive(Debug, Clone, Args)]
pub(crate) struct Pets {
    #[command(flatten)]
    pub(crate) params: PetsParams,
    /// Write the completion curve (fraction fed against time, percentiles marked) as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) plot: Option<PathBuf>,
}

/// The article's output lines, plus the 100 % time and a note on what the style means.
fn result_text(params: &PetsParams, result: &PetsResult) -> String {
    let show = |time: Option<f64>| time.map_or("not reached".to_string(), |t| t.to_string());
    let relative = |time: Option<f64>| match (time, result.p50) {
        (Some(time), Some(p50)) if p50 > 0.0 => format!("{:.2}x", time / p50),
        _ => "-".to_string(),
    };
    let mut text = String::new();
    let _ = writeln!(
        text,
        "Time to X%: 50% = {}, 95% = {}, 99% = {}",
        show(result.p50),
        show(result.p95),
        show(result.p99)
    );
    let _ = writeln!(
        text,
        "Relative Time to X%: 50% = 1x, 95% = {}, 99% = {}",
        relative(result.p95),
        relative(result.p99)
    );
    let _ = writeln!(
        text,
        "Time to 100%: {} ({} of {} pets fed, {} breakdowns)",
        show(result.p100),
        result.fed,
        result.tasks,
        result.breakdowns
    );
    match params.style {
        Style::Step => {}
        Style::Jump => {
            let _ = writeln!(
                text,
                "Note: the jump style approximates the step style: meals are credited as \
                 floor((K - broken) * jump / T), so partial meals are lost; breakage is rolled \
                 once per jump, not per meal; percentiles are reported at the end of the jump \
                 that crosses them."
            );
        }
        Style::Events => {}
    }
    text
}

impl BuiltinModel for Pets {
    const NAME: &'static str = "pets";
    type Kernel = KernelArgs;

    fn default_seed(&self) -> u64 {
        100
    }

    fn title(&self) -> String {
        let params = &self.params;
        format!(
            "Feeding pets ({} style): {} pets, {} feeders, break chance {}, repair time {}, \
             eating time {}, {} durations, {} semantics, {} breakdowns",
            params.style,
            params.tasks,
            params.gates,
            params.break_chance,
            params.repair_time,
            params.processing_time,
            params.durations,
            params.semantics,
            params.breakdowns
        )
    }

    fn params(&self) -> Value {
        serde_json::to_value(&self.params).unwrap_or(Value::Null)
    }

    fn validate(&self) -> Result<()> {
        self.params.validate().map_err(|error| anyhow!(error))
    }

    fn files(&self, files: FileSet) -> FileSet {
        files.output("--plot", self.plot.as_ref())
    }

    fn demands(&self) -> Vec<Demand> {
        let params = &self.params;
        if params.style != Style::Events {
            // The loops keep counters, not feeders.
            return Vec::new();
        }
        // At the first event every pet that finds a feeder starts eating, and every feeder
        // rolls breakage: min(K, N) meals and about K·P repairs pending at once, each repair's
        // handle kept by the station.
        let gates = u128::from(params.gates);
        let meals = gates.min(u128::from(params.tasks));
        let repairs = (params.gates as f64 * params.break_chance) as u128;
        let event = event_bytes::<<FeedingStation as LogicalProcess>::Event>();
        vec![Demand::new(
            "--gates",
            params.gates,
            "pending meals and repairs",
            meals + repairs,
            event + vec_bytes::<warpsim_core::EventHandle>(),
        )]
    }

    fn run_once(&self, kernel: &KernelArgs, seed: u64, primary: bool) -> Result<Outcome> {
        let params = &self.params;
        let (mut outcome, result) = match params.style {
            Style::Events => {
                let lps = params.build()?;
                // Pets run until every pet is fed, unless an end time is given.
                let config = run_config(kernel, seed, params.end);
                let mut outputs = Vec::new();
                let run = run_on_kernel(kernel, config, lps, &mut outputs, primary)?;
                let outcome = Outcome::from_result(run);
                let result = PetsResult::from_milestones(
                    params.tasks,
                    &outputs,
                    outcome.report.events_committed,
                );
                (outcome, result)
            }
            Style::Step | Style::Jump => {
                let started = Instant::now();
                let result = params.run_loop(seed, kernel.max_events)?;
                let mut report = Report::new(
                    if params.style == Style::Step {
                        "none (step loop)"
                    } else {
                        "none (jump loop)"
                    },
                    seed,
                    0,
                );
                report.events_committed = result.events;
                report.events_processed = result.events;
                report.end_time = result.curve.last().map_or(0.0, |point| point.time);
                report.stop_reason = if result.complete {
                    StopReason::Drained
                } else if kernel
                    .max_events
                    .is_some_and(|limit| result.events >= limit)
                {
                    StopReason::EventLimit
                } else {
                    StopReason::EndTime
                };
                report.wall_seconds = started.elapsed().as_secs_f64();
                report.events_per_second = if report.wall_seconds > 0.0 {
                    result.events as f64 / report.wall_seconds
                } else {
                    0.0
                };
                (Outcome::from_result(Ok(report)), result)
            }
        };
        let mut metrics = Map::new();
        for (name, value) in [
            ("p50", result.p50),
            ("p95", result.p95),
            ("p99", result.p99),
            ("p100", result.p100),
        ] {
            metrics.insert(name.into(), value.map_or(Value::Null, Value::from));
        }
        metrics.insert("breakdowns".into(), Value::from(result.breakdowns));
        // The true count at the end of the run (an `--end` before the last pet is fed stops
        // between two curve points).
        metrics.insert("fed".into(), Value::from(result.fed));
        // The completion curve: `[time, fed]` at every 0.1 % of the pets (and at `--end`).
        metrics.insert(
            "curve".into(),
            Value::Array(
                result
                    .curve
                    .iter()
                    .map(|point| Value::from(vec![Value::from(point.time), Value::from(point.fed)]))
                    .collect(),
            ),
        );
        outcome.metrics = metrics;
        outcome.text = result_text(params, &result);
        if primary
            && outcome.error.is_none()
            && let Some(path) = &self.plot
        {
            // A run cut short by --max-events draws what it reached, and says so.
            let title = if outcome.report.stop_reason != StopReason::EventLimit {
                self.title()
            } else {
                format!(
                    "{} — PARTIAL: stopped at --max-events before every pet was fed",
                    self.title()
                )
            };
            plots::completion_curve(path, &title, &result)
                .with_context(|| format!("cannot write the plot {}", path.display()))?;
        }
        Ok(outcome)
    }
}
