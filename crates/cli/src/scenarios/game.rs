//! `warpsim run torches` and `warpsim run warlock`: the game-loop demos. They run on the
//! timer manager (`warpsim-timers`), not on a simulation kernel, so they take no kernel flags
//! (`--kernel`, `--threads`, … are refused as unknown) and the report's event count is the
//! number of callbacks fired.

use std::fmt::Write;

use anyhow::{Result, anyhow};
use serde_json::{Map, Value};
use warpsim_core::Report;
use warpsim_core::StopReason;
use warpsim_models::game::torches::{self, TimeSlice, TorchesParams};
use warpsim_models::game::warlock::{self, WarlockParams};

use super::{BuiltinModel, NoKernel};
use crate::limits::Demand;
use crate::run::Outcome;

/// A report for a run that used no kernel: `events` callbacks fired in `wall` seconds.
fn timers_report(seed: u64, events: u64, end_time: f64, wall: f64) -> Report {
    let mut report = Report::new("timers", seed, 0);
    report.events_committed = events;
    report.events_processed = events;
    report.end_time = end_time;
    report.wall_seconds = wall;
    report.events_per_second = if wall > 0.0 {
        events as f64 / wall
    } else {
        0.0
    };
    report
}

/// A demo's report as JSON metrics, without its parameters (printed separately).
fn metrics_of<R: serde::Serialize>(result: &R) -> Result<Map<String, Value>> {
    let mut metrics = match serde_json::to_value(result)? {
        Value::Object(fields) => fields,
        _ => Map::new(),
    };
    metrics.remove("params");
    Ok(metrics)
}

impl BuiltinModel for TorchesParams {
    const NAME: &'static str = "torches";
    type Kernel = NoKernel;

    fn default_seed(&self) -> u64 {
        TorchesParams::default().seed
    }

    fn title(&self) -> String {
        format!(
            "torches: {} torches burning {}–{} s, {} s at {} fps: polling (the chapter's Listing 3) against event-based timers",
            self.n, self.burn_min, self.burn_max, self.seconds, self.fps
        )
    }

    fn params(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn validate(&self) -> Result<()> {
        TorchesParams::validate(self).map_err(|error| anyhow!(error))
    }

    fn demands(&self) -> Vec<Demand> {
        // Each frame's cost is kept twice (polling and timers), 8 bytes each, for the
        // percentiles.
        let frames = (self.seconds * self.fps).round().clamp(0.0, 1e18) as u128;
        vec![
            Demand::new(
                "--n",
                self.n,
                "torches",
                u128::from(self.n),
                TorchesParams::bytes_per_torch(),
            ),
            Demand::new(
                "--seconds",
                self.seconds,
                "frame times (seconds × fps)",
                frames,
                16,
            ),
        ]
    }

    fn run_once(&self, _: &NoKernel, seed: u64, _primary: bool) -> Result<Outcome> {
        let started = std::time::Instant::now();
        let result = torches::run(&TorchesParams {
            seed,
            ..self.clone()
        })?;
        let wall = started.elapsed().as_secs_f64();
        let mut report = timers_report(seed, result.extinguished_events, self.seconds, wall);
        // The torches still burning are the timers still scheduled.
        report.pending_at_end = result.pending_at_end as usize;
        report.peak_pending = self.n as usize;
        if result.pending_at_end > 0 {
            report.stop_reason = StopReason::EndTime;
        }
        let mut outcome = Outcome::from_result(Ok(report));
        let mut text = String::new();
        let _ = writeln!(text, "frames            {}", result.frames);
        let _ = writeln!(
            text,
            "polling frame     mean {:.0} ns, p99 {:.0} ns",
            result.polling.mean_ns, result.polling.p99_ns
        );
        let _ = writeln!(
            text,
            "timers frame      mean {:.0} ns, p99 {:.0} ns",
            result.events.mean_ns, result.events.p99_ns
        );
        let _ = writeln!(
            text,
            "ratio             {:.1}× cheaper on mean, {:.1}× on p99",
            result.mean_ratio, result.p99_ratio
        );
        let _ = writeln!(
            text,
            "torches out       {} (polling) = {} (timers), {} still burning",
            result.extinguished_polling, result.extinguished_events, result.pending_at_end
        );
        let _ = writeln!(
            text,
            "total             polling {:.1} ms, timers {:.1} ms",
            result.polling_total_ms, result.events_total_ms
        );
        if let Some(sliced) = &result.sliced {
            let slice = match sliced.slice {
                TimeSlice::Millis(ms) => format!("{ms} ms"),
                TimeSlice::Torches(n) => format!("{n} torches"),
            };
            let _ = writeln!(
                text,
                "time-sliced       (Listing 2, {slice} per frame) mean {:.0} ns, p99 {:.0} ns, total {:.1} ms, {:.0} updates per frame",
                sliced.cost.mean_ns,
                sliced.cost.p99_ns,
                sliced.total_ms,
                sliced.mean_updates_per_frame
            );
            let _ = writeln!(
                text,
                "  flaws           torches burn {:.2} s longer on average (at most {:.2} s); {} not put out (starved); up to {} frames between updates; cost only spread: {:.2} ns per torch update against polling's {:.2}",
                sliced.mean_extra_burn_s,
                sliced.max_extra_burn_s,
                sliced.missed,
                sliced.max_gap_frames,
                sliced.total_ms * 1e6
                    / (sliced.mean_updates_per_frame * result.frames as f64).max(1.0),
                result.polling_total_ms * 1e6 / (f64::from(self.n) * result.frames as f64)
            );
        }
        if let Some(budgeted) = &result.budgeted {
            let _ = writeln!(
                text,
                "budgeted timers   (at most {} callbacks per frame) mean {:.0} ns, p99 {:.0} ns; {} late callbacks, at most {:.3} s late; {} frames carried work over; {} torches out",
                budgeted.budget,
                budgeted.cost.mean_ns,
                budgeted.cost.p99_ns,
                budgeted.late,
                budgeted.max_lateness_s,
                budgeted.frames_carrying_over,
                budgeted.extinguished
            );
        }
        outcome.text = text;
        outcome.metrics = metrics_of(&result)?;
        Ok(outcome)
    }
}

/// Seconds without trailing zeros: `15`, `32.5`.
fn fmt_seconds(time: f64) -> String {
    let text = format!("{time:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl BuiltinModel for WarlockParams {
    const NAME: &'static str = "warlock";
    type Kernel = NoKernel;

    fn default_seed(&self) -> u64 {
        0
    }

    fn title(&self) -> String {
        format!(
            "warlock: {} regeneration from {} MP, {} s at {} fps; spells ready when the curve reaches their cost",
            self.curve, self.start_mana, self.seconds, self.fps
        )
    }

    fn params(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn validate(&self) -> Result<()> {
        WarlockParams::validate(self).map_err(|error| anyhow!(error))
    }

    fn run_once(&self, _: &NoKernel, seed: u64, _primary: bool) -> Result<Outcome> {
        let started = std::time::Instant::now();
        let result = warlock::run(self)?;
        let wall = started.elapsed().as_secs_f64();
        let report = timers_report(seed, result.timeline.len() as u64, self.seconds, wall);
        let mut outcome = Outcome::from_result(Ok(report));
        // The chapter's Figure 1: when each spell becomes ready if nothing is cast.
        let figure_1: Vec<String> = result
            .first_ready
            .iter()
            .map(|ready| match ready.time {
                Some(time) => format!("{} in {} s", ready.spell, fmt_seconds(time)),
                None => format!("{} never", ready.spell),
            })
            .collect();
        let mut text = format!(
            "Figure 1 (no casting) {}\ntimeline (game seconds)\n",
            figure_1.join(", ")
        );
        for event in &result.timeline {
            let _ = writeln!(
                text,
                "  {:>9.3}  {:<10} {:?}  ({:.1} MP)",
                event.time, event.spell, event.kind, event.mana
            );
        }
        let _ = writeln!(
            text,
            "casts             {} (final mana {:.1} MP)",
            result.casts, result.final_mana
        );
        outcome.text = text;
        outcome.metrics = metrics_of(&result)?;
        Ok(outcome)
    }
}
