//! The speedup study as a table, CSV, JSON and plot input.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::{Row, RunRecord, Study};
use crate::analysis::plots::{SpeedupPlot, SpeedupSeries, ratio_text};

/// A JSON number, or null when it is not finite.
fn number(value: f64) -> Value {
    if value.is_finite() {
        Value::from(value)
    } else {
        Value::Null
    }
}

fn load_json(load: Option<[f64; 3]>) -> Value {
    load.map_or(Value::Null, |[one, five, fifteen]| {
        json!([one, five, fifteen])
    })
}

fn row_json(study: &Study, row: &Row) -> Value {
    let mut object = Map::new();
    object.insert("kernel".into(), Value::from(row.kernel));
    object.insert("threads".into(), Value::from(row.threads));
    object.insert("ranks".into(), Value::from(row.ranks));
    object.insert("processors".into(), Value::from(row.processors()));
    object.insert(
        "cancellation".into(),
        row.cancellation.map_or(Value::Null, Value::from),
    );
    object.insert("oversubscribed".into(), Value::from(row.oversubscribed));
    object.insert("runs".into(), Value::from(row.runs));
    object.insert("time_mean".into(), number(row.time_mean));
    object.insert("time_min".into(), number(row.time_min));
    object.insert("time_max".into(), number(row.time_max));
    object.insert("speedup".into(), number(row.speedup));
    object.insert("efficiency".into(), number(row.efficiency));
    object.insert("commit_ratio".into(), number(row.commit_ratio));
    object.insert("rollbacks".into(), number(row.rollbacks));
    object.insert("antimessages".into(), number(row.antimessages));
    object.insert("lazy_hits".into(), number(row.lazy_hits));
    object.insert(
        "critical_path_bound".into(),
        number(study.timed.parallelism),
    );
    object.insert("of_bound".into(), number(row.of_bound));
    object.insert(
        "committed_event_seconds".into(),
        number(study.committed_event_seconds()),
    );
    object.insert(
        "zero_overhead_speedup".into(),
        number(row.zero_overhead_speedup),
    );
    Value::Object(object)
}

fn run_json(study: &Study, run: &RunRecord) -> Value {
    let mut object = Map::new();
    object.insert("kind".into(), Value::from(run.kind));
    if let Some(index) = run.config {
        let row = &study.rows[index + 1];
        object.insert("threads".into(), Value::from(row.threads));
        object.insert(
            "cancellation".into(),
            row.cancellation.map_or(Value::Null, Value::from),
        );
    }
    object.insert("started".into(), number(run.started));
    object.insert("finished".into(), number(run.finished));
    object.insert("wall_seconds".into(), number(run.wall_seconds));
    object.insert("trace_hash".into(), Value::from(run.trace_hash.to_string()));
    object.insert(
        "content_hash".into(),
        run.content_hash
            .map_or(Value::Null, |hash| Value::from(hash.to_string())),
    );
    object.insert("events_committed".into(), Value::from(run.events_committed));
    object.insert("events_processed".into(), Value::from(run.events_processed));
    if let Some(path) = &run.critical_path {
        object.insert(
            "critical_path".into(),
            serde_json::to_value(path).unwrap_or(Value::Null),
        );
    }
    if let Some(stats) = &run.timewarp {
        object.insert(
            "commit_ratio".into(),
            number(run.events_committed as f64 / run.events_processed.max(1) as f64),
        );
        object.insert(
            "rollbacks".into(),
            Value::from(stats.primary_rollbacks + stats.secondary_rollbacks),
        );
        object.insert("antimessages".into(), Value::from(stats.antimessages));
        object.insert("lazy_hits".into(), Value::from(stats.lazy_hits));
    }
    Value::Object(object)
}

/// The one JSON object of `--json`.
pub(super) fn json_value(study: &Study) -> Value {
    let mut object = Map::new();
    object.insert("model".into(), Value::from(study.model.as_str()));
    object.insert("params".into(), study.params.clone());
    object.insert("seed".into(), Value::from(study.seed));
    object.insert("kernel".into(), Value::from(study.kernel.name()));
    object.insert("repeat".into(), Value::from(study.repeat));
    object.insert("cores".into(), Value::from(study.cores));
    object.insert("load_before".into(), load_json(study.load_before));
    object.insert("load_after".into(), load_json(study.load_after));
    object.insert(
        "events_committed".into(),
        Value::from(study.events_committed),
    );
    object.insert("partial".into(), Value::from(study.partial));
    object.insert(
        "trace_hash".into(),
        Value::from(study.trace_hash.to_string()),
    );
    object.insert(
        "content_hash".into(),
        study
            .content_hash
            .map_or(Value::Null, |hash| Value::from(hash.to_string())),
    );
    // Checked as the runs went: a mismatch stops the command with an error.
    object.insert("trace_hashes_equal".into(), Value::from(true));
    object.insert(
        "critical_path".into(),
        json!({
            "ns": serde_json::to_value(study.timed).unwrap_or(Value::Null),
            "unit": serde_json::to_value(study.unit).unwrap_or(Value::Null),
        }),
    );
    object.insert(
        "critical_path_bound".into(),
        number(study.timed.parallelism),
    );
    object.insert(
        "committed_event_seconds".into(),
        number(study.committed_event_seconds()),
    );
    object.insert(
        "configurations".into(),
        Value::Array(study.rows.iter().map(|row| row_json(study, row)).collect()),
    );
    object.insert(
        "runs".into(),
        Value::Array(study.runs.iter().map(|run| run_json(study, run)).collect()),
    );
    Value::Object(object)
}

/// The CSV header of `--csv`.
pub(super) const CSV_HEADER: &str = "kernel,threads,ranks,processors,cancellation,\
oversubscribed,runs,time_mean_s,time_min_s,time_max_s,speedup,efficiency,commit_ratio,\
rollbacks,antimessages,lazy_hits,critical_path_bound,critical_path_bound_unit,of_bound,\
committed_event_s,zero_overhead_speedup,trace_hash";

/// One row per configuration, the sequential kernel first.
pub(super) fn csv_text(study: &Study) -> String {
    let cell = |value: f64| {
        if value.is_finite() {
            value.to_string()
        } else {
            String::new()
        }
    };
    let mut text = String::new();
    let _ = writeln!(text, "{CSV_HEADER}");
    for row in &study.rows {
        let cells = [
            row.kernel.to_string(),
            row.threads.to_string(),
            row.ranks.to_string(),
            row.processors().to_string(),
            row.cancellation.unwrap_or("").to_string(),
            row.oversubscribed.to_string(),
            row.runs.to_string(),
            cell(row.time_mean),
            cell(row.time_min),
            cell(row.time_max),
            cell(row.speedup),
            cell(row.efficiency),
            cell(row.commit_ratio),
            cell(row.rollbacks),
            cell(row.antimessages),
            cell(row.lazy_hits),
            cell(study.timed.parallelism),
            cell(study.unit.parallelism),
            cell(row.of_bound),
            cell(study.committed_event_seconds()),
            cell(row.zero_overhead_speedup),
            study.trace_hash.to_string(),
        ];
        let _ = writeln!(text, "{}", cells.join(","));
    }
    text
}

/// Seconds with three significant digits (`0.0123 s`, `1.23 s`, `123 s`).
fn seconds(value: f64) -> String {
    if !value.is_finite() {
        return "-".into();
    }
    let magnitude = value.abs().max(1e-9).log10().floor() as i32;
    let decimals = (2 - magnitude).clamp(0, 9) as usize;
    format!("{value:.decimals$} s")
}

fn load_text(load: Option<[f64; 3]>) -> String {
    load.map_or("unknown".into(), |[one, _, _]| format!("{one:.2}"))
}

/// The readable table.
pub(super) fn table_text(study: &Study) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "{}", study.title);
    let _ = writeln!(
        text,
        "speedup over the sequential kernel: {} run{} of each configuration, seed {}, one run \
         at a time; {} cores, load average {} before and {} after",
        study.repeat,
        if study.repeat == 1 { "" } else { "s" },
        study.seed,
        study.cores,
        load_text(study.load_before),
        load_text(study.load_after),
    );
    let _ = writeln!(
        text,
        "trace hash {}{} on every run ({} events committed): every configuration committed the \
         sequential kernel's events{}",
        study.trace_hash,
        study
            .content_hash
            .map_or(String::new(), |hash| format!(", content hash {hash}")),
        study.events_committed,
        if study.content_hash.is_some() {
            ", with the same contents"
        } else {
            ""
        }
    );
    let _ = writeln!(
        text,
        "critical path: available parallelism {:.1} with handler times ({:.1} counting \
         events); committed event time {}",
        study.timed.parallelism,
        study.unit.parallelism,
        seconds(study.committed_event_seconds())
    );
    let header = [
        "kernel",
        "threads",
        "cancellation",
        "time mean",
        "time min",
        "speedup",
        "efficiency",
        "of bound",
        "commit ratio",
        "rollbacks",
        "antimessages",
        "lazy hits",
        "zero-overhead",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for row in &study.rows {
        let threads = if row.ranks > 1 {
            format!("{}×{}", row.ranks, row.threads)
        } else {
            row.threads.to_string()
        };
        rows.push(vec![
            row.kernel.to_string(),
            if row.oversubscribed {
                format!("{threads}*")
            } else {
                threads
            },
            row.cancellation.unwrap_or("-").to_string(),
            seconds(row.time_mean),
            seconds(row.time_min),
            ratio_text(row.speedup),
            format!("{:.0}%", row.efficiency * 100.0),
            format!("{:.0}%", row.of_bound * 100.0),
            format!("{:.3}", row.commit_ratio),
            format!("{:.0}", row.rollbacks),
            format!("{:.0}", row.antimessages),
            format!("{:.0}", row.lazy_hits),
            ratio_text(row.zero_overhead_speedup),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(column, (cell, &width))| {
                if column == 0 || column == 2 {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect();
        let _ = writeln!(text, "{}", cells.join("  ").trim_end());
    }
    if study.rows.iter().any(|row| row.oversubscribed) {
        let _ = writeln!(
            text,
            "* oversubscribed: more processors than this machine's {} cores, so the threads \
             take turns",
            study.cores
        );
    }
    let _ = writeln!(
        text,
        "speedup = sequential mean ÷ mean; efficiency = speedup ÷ processors; of bound = \
         speedup ÷ min(processors, critical-path bound); commit ratio = committed ÷ \
         processed; zero-overhead = committed event time ÷ mean"
    );
    text
}

/// The plot's data: one series per cancellation mode.
pub(super) fn plot_input(study: &Study) -> SpeedupPlot {
    let mut series: Vec<SpeedupSeries> = Vec::new();
    let sequential_mean = study.rows[0].time_mean;
    for row in &study.rows[1..] {
        let label = format!("{} {}", study.kernel.name(), row.cancellation.unwrap_or(""));
        let point = (
            row.processors() as f64,
            row.speedup,
            sequential_mean / row.time_max,
            sequential_mean / row.time_min,
        );
        match series.iter_mut().find(|s| s.label == label) {
            Some(entry) => entry.points.push(point),
            None => series.push(SpeedupSeries {
                label,
                points: vec![point],
            }),
        }
    }
    SpeedupPlot {
        title: format!(
            "{} speedup, {} run{} per point ({} events)",
            study.title.split(':').next().unwrap_or(&study.model),
            study.repeat,
            if study.repeat == 1 { "" } else { "s" },
            study.events_committed
        ),
        subtitle: study.title.clone(),
        cores: study.cores,
        bound: study.timed.parallelism,
        bound_unit: study.unit.parallelism,
        series,
    }
}
