//! `warpsim speedup` through the real binary: runs one at a time, the counts, the arithmetic
//! of every figure against the raw runs, the same events as `warpsim run`, the JSON keys, the
//! CSV header, the content hash when asked for, and bad input. Also: Time Warp replications
//! run no more at once than the cores hold.

use std::process::{Command, Output};

use serde_json::Value;

fn warpsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .args(args)
        .output()
        .expect("the warpsim binary runs")
}

fn success(args: &[&str]) -> String {
    let output = warpsim(args);
    assert!(
        output.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn tmp(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

const MODEL: [&str; 6] = ["phold", "--lps", "256", "--end", "20", "--population"];

#[test]
fn a_study_runs_one_run_at_a_time_and_its_figures_add_up() {
    let csv = tmp("speedup.csv");
    let svg = tmp("speedup.svg");
    let _ = std::fs::remove_file(&csv);
    let _ = std::fs::remove_file(&svg);
    let oversubscribed = (2 * cores()).to_string();
    let threads = format!("1,2,{oversubscribed}");
    let mut args = vec!["speedup"];
    args.extend(MODEL);
    args.extend(["2", "--threads", &threads, "--repeat", "2"]);
    args.extend(["--cancellation", "lazy,aggressive", "--json"]);
    let (csv_arg, svg_arg) = (csv.to_str().unwrap(), svg.to_str().unwrap());
    args.extend(["--csv", csv_arg, "--plot", svg_arg]);
    let study: Value = serde_json::from_str(&success(&args)).expect("one JSON object");

    // The same events as a plain run of the model, on every run of the study.
    let mut plain_args: Vec<&str> = vec!["run"];
    plain_args.extend(MODEL);
    plain_args.extend(["2", "--critical-path", "--json"]);
    let plain: Value = serde_json::from_str(&success(&plain_args)).unwrap();
    assert_eq!(study["trace_hash"], plain["trace_hash"]);
    assert_eq!(study["events_committed"], plain["events_committed"]);
    assert_eq!(study["trace_hashes_equal"], true);
    // Without --content-hash no run pays for encoding its events.
    assert!(study["content_hash"].is_null());
    assert_eq!(
        study["critical_path"]["unit"]["parallelism"],
        plain["critical_path"]["parallelism"]
    );
    for key in [
        "model",
        "params",
        "seed",
        "kernel",
        "repeat",
        "cores",
        "load_before",
        "load_after",
        "critical_path_bound",
        "committed_event_seconds",
        "configurations",
        "runs",
    ] {
        assert!(study.get(key).is_some(), "no `{key}` in {study}");
    }

    // 2 sequential runs, 2 critical-path runs, then 3 thread counts × 2 modes × 2 repeats,
    // one after the other: no two runs overlap in time.
    let runs = study["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 + 2 + 3 * 2 * 2);
    let kinds: Vec<&str> = runs.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(
        &kinds[..4],
        [
            "sequential",
            "sequential",
            "critical_path_unit",
            "critical_path_ns"
        ]
    );
    assert!(kinds[4..].iter().all(|kind| *kind == "timewarp"));
    let mut intervals: Vec<(f64, f64)> = runs
        .iter()
        .map(|r| {
            (
                r["started"].as_f64().unwrap(),
                r["finished"].as_f64().unwrap(),
            )
        })
        .collect();
    for (started, finished) in &intervals {
        assert!(started <= finished);
    }
    let in_order = intervals.clone();
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(intervals, in_order, "runs are listed in the order they ran");
    for pair in intervals.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "runs overlap: {pair:?}");
    }
    for run in runs {
        assert_eq!(run["trace_hash"], study["trace_hash"]);
        assert!(
            run["wall_seconds"].as_f64().unwrap() <= {
                run["finished"].as_f64().unwrap() - run["started"].as_f64().unwrap()
            }
        );
    }

    // Every figure of every configuration, recomputed from the runs.
    let configurations = study["configurations"].as_array().unwrap();
    assert_eq!(configurations.len(), 1 + 3 * 2);
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    let sequential: Vec<f64> = runs[..2]
        .iter()
        .map(|r| r["wall_seconds"].as_f64().unwrap())
        .collect();
    let sequential_mean = mean(&sequential);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12);
    let bound = study["critical_path"]["ns"]["parallelism"]
        .as_f64()
        .unwrap();
    let event_seconds = study["critical_path"]["ns"]["total_cost"].as_f64().unwrap() / 1e9;
    assert!(close(
        study["committed_event_seconds"].as_f64().unwrap(),
        event_seconds
    ));
    assert_eq!(configurations[0]["kernel"], "sequential");
    assert!(close(
        configurations[0]["time_mean"].as_f64().unwrap(),
        sequential_mean
    ));
    for row in &configurations[1..] {
        let threads = row["threads"].as_u64().unwrap();
        let cancellation = row["cancellation"].as_str().unwrap();
        let mine: Vec<&Value> = runs
            .iter()
            .filter(|r| r["threads"] == threads && r["cancellation"] == cancellation)
            .collect();
        assert_eq!(mine.len(), 2, "{row}");
        assert_eq!(row["runs"], 2);
        let times: Vec<f64> = mine
            .iter()
            .map(|r| r["wall_seconds"].as_f64().unwrap())
            .collect();
        let time_mean = mean(&times);
        assert!(close(row["time_mean"].as_f64().unwrap(), time_mean));
        assert!(close(
            row["time_min"].as_f64().unwrap(),
            times.iter().copied().fold(f64::INFINITY, f64::min)
        ));
        let speedup = sequential_mean / time_mean;
        assert!(close(row["speedup"].as_f64().unwrap(), speedup), "{row}");
        assert!(close(
            row["efficiency"].as_f64().unwrap(),
            speedup / threads as f64
        ));
        assert!(close(
            row["of_bound"].as_f64().unwrap(),
            speedup / (threads as f64).min(bound)
        ));
        assert!(close(
            row["zero_overhead_speedup"].as_f64().unwrap(),
            event_seconds / time_mean
        ));
        let ratios: Vec<f64> = mine
            .iter()
            .map(|r| {
                r["events_committed"].as_f64().unwrap() / r["events_processed"].as_f64().unwrap()
            })
            .collect();
        assert!(close(row["commit_ratio"].as_f64().unwrap(), mean(&ratios)));
        let antimessages: Vec<f64> = mine
            .iter()
            .map(|r| r["antimessages"].as_f64().unwrap())
            .collect();
        assert!(close(
            row["antimessages"].as_f64().unwrap(),
            mean(&antimessages)
        ));
        if threads == 1 {
            // One worker runs every event in order: nothing to roll back.
            assert_eq!(row["commit_ratio"], 1.0);
            assert_eq!(row["rollbacks"], 0.0);
        }
        if cancellation == "aggressive" {
            assert_eq!(row["lazy_hits"], 0.0);
        }
        assert_eq!(
            row["oversubscribed"],
            threads as usize > cores(),
            "{threads} threads on {} cores",
            cores()
        );
    }

    let csv_text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = csv_text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "kernel,threads,ranks,processors,cancellation,oversubscribed,runs,time_mean_s,\
         time_min_s,time_max_s,speedup,efficiency,commit_ratio,rollbacks,antimessages,\
         lazy_hits,critical_path_bound,critical_path_bound_unit,of_bound,committed_event_s,\
         zero_overhead_speedup,trace_hash"
    );
    assert_eq!(lines.count(), 7);
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.starts_with("<svg"), "{}", &svg_text[..40]);
    assert!(svg_text.contains("critical-path bound"));
    assert!(svg_text.contains("oversubscribed"));
}

#[test]
fn the_table_says_what_it_checked_and_flags_oversubscription() {
    let oversubscribed = (cores() + 1).to_string();
    let threads = format!("1,{oversubscribed}");
    let mut args = vec!["speedup"];
    args.extend(MODEL);
    args.extend(["1", "--threads", &threads, "--repeat", "1"]);
    args.extend(["--cancellation", "lazy", "--content-hash"]);
    let text = success(&args);
    assert!(
        text.contains("committed the sequential kernel's events, with the same contents"),
        "{text}"
    );
    assert!(text.contains("available parallelism"), "{text}");
    assert!(text.contains(&format!("{oversubscribed}*")), "{text}");
    assert!(text.contains("* oversubscribed"), "{text}");
    for header in ["speedup", "efficiency", "commit ratio", "zero-overhead"] {
        assert!(text.contains(header), "{header}: {text}");
    }
}

#[test]
fn bad_input_is_one_line_and_a_failure() {
    let cases: [(&[&str], &str); 8] = [
        (&["--threads", "0"], "--threads"),
        (&["--threads", "1,x"], "--threads"),
        (&["--threads", "2,2"], "listed twice"),
        (&["--repeat", "0"], "--repeat must be at least 1"),
        (&["--cancellation", "eager"], "unknown mode `eager`"),
        (&["--kernel", "sequential"], "--kernel"),
        (&["--critical-path"], "--critical-path"),
        // More threads than the model has LPs: found after the sequential runs.
        (&["--threads", "8", "--lps", "4"], "the model has 4 LPs"),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["speedup", "phold", "--lps", "64", "--end", "5"];
        args.extend(extra);
        let output = warpsim(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(expected),
            "{args:?}: {stderr}"
        );
    }
    let output = warpsim(&["speedup", "nosuchmodel"]);
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn time_warp_replications_never_share_the_cores() {
    let text = success(&[
        "run",
        "phold",
        "--lps",
        "64",
        "--end",
        "5",
        "--kernel",
        "timewarp",
        "--threads",
        "2",
        "--replications",
        "3",
    ]);
    let at_once = (cores() / 2).clamp(1, 3);
    assert!(
        text.contains(&format!("{at_once} at a time")),
        "expected {at_once} at a time: {text}"
    );
    // Its statistics are summarised too, under the paper's name for committed / processed.
    assert!(text.contains("commit_ratio"), "{text}");
    let json = success(&[
        "run", "phold", "--lps", "64", "--end", "5", "--kernel", "timewarp", "--json",
    ]);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert!(json["timewarp"]["commit_ratio"].is_number(), "{json}");
    assert!(json["timewarp"].get("efficiency").is_none(), "{json}");
}
