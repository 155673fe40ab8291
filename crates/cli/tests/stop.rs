//! Graceful stops and periodic checkpoints of Time Warp runs through the real binary: a
//! real SIGINT/SIGTERM stops `--kernel timewarp` at its next GVT with the partial report,
//! exit code 130/143 and a checkpoint that `warpsim resume` finishes to the uninterrupted
//! run's result; checkpoints every few hundred milliseconds change nothing, and the last
//! one resumes to the same result.

mod common;

use common::interrupted;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn warpsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .args(args)
        .output()
        .expect("the warpsim binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpsim-stop-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn json(output: &Output) -> Value {
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|_| panic!("one JSON object, got {text:?}; stderr: {}", stderr(output)))
}

/// What the committed events decide (Time Warp's own figures — what it processed and
/// rolled back, its peak of pending events — and the wall clock are left out).
fn committed(output: &Output) -> Value {
    assert!(output.status.success(), "stderr: {}", stderr(output));
    let mut value = json(output);
    let fields = value.as_object_mut().unwrap();
    for own in [
        "wall_seconds",
        "events_per_second",
        "peak_rss_bytes",
        "events_processed",
        "peak_pending",
        "timewarp",
    ] {
        fields.remove(own);
    }
    value
}

/// PHOLD on Time Warp with two threads: about two seconds of work at `long_end` (in release,
/// on a quiet machine; the debug build runs a tenth of it in about as long) — longer than
/// the half second after which the tests signal it, however fast the kernel gets.
fn phold_on_time_warp(end: &'static str) -> Vec<&'static str> {
    vec![
        "run",
        "phold",
        "--lps",
        "128",
        "--end",
        end,
        "--kernel",
        "timewarp",
        "--threads",
        "2",
        "--json",
        "--content-hash",
    ]
}

fn long_end() -> &'static str {
    // 40,000 took 0.45 s in release by 2026-11-28: the signal at 0.5 s came after the end.
    if cfg!(debug_assertions) {
        "20000"
    } else {
        "200000"
    }
}

#[test]
fn a_signal_stops_a_time_warp_run_at_gvt_with_a_checkpoint_that_resumes_it() {
    let dir = scratch("timewarp-signal");
    let args = phold_on_time_warp(long_end());
    let reference = committed(&warpsim(&args));
    let total = reference["events_committed"].as_u64().unwrap();
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        let file = dir.join(format!("{signal}.ckpt"));
        let mut checkpointed = args.clone();
        checkpointed.extend(["--checkpoint-file", path(&file)]);
        let stopped = interrupted(&checkpointed, signal, 500);
        assert_eq!(stopped.status.code(), Some(code), "{}", stderr(&stopped));
        let err = stderr(&stopped);
        assert!(err.contains("checkpoint written"), "{err}");
        assert!(err.contains("stopped the run"), "{err}");
        assert!(err.contains("resume"), "{err}");
        let partial = json(&stopped);
        assert_eq!(partial["stop_reason"], "interrupted");
        assert_eq!(partial["kernel"], "timewarp");
        let done = partial["events_committed"].as_u64().unwrap();
        assert!(done > 0 && done < total, "{done} of {total}");
        assert!(partial["timewarp"]["committed"].as_u64() == Some(done));
        // Resumed on the kernel that stopped, and on the other one.
        let resumed = warpsim(&["resume", path(&file)]);
        assert_eq!(committed(&resumed), reference, "resumed after {signal}");
        let mut on_sequential =
            committed(&warpsim(&["resume", path(&file), "--kernel", "sequential"]));
        on_sequential["kernel"] = Value::from("timewarp");
        assert_eq!(
            on_sequential, reference,
            "resumed after {signal} sequentially"
        );
    }
    // Without a checkpoint file, in text: the partial report still comes.
    let mut text = args.clone();
    text.retain(|arg| *arg != "--json");
    let stopped = interrupted(&text, "-INT", 500);
    assert_eq!(stopped.status.code(), Some(130), "{}", stderr(&stopped));
    let out = String::from_utf8_lossy(&stopped.stdout);
    assert!(out.contains("(interrupted)"), "{out}");
    assert!(out.contains("trace hash"), "{out}");
    assert!(out.contains("commit ratio"), "{out}");
}

#[test]
fn periodic_checkpoints_on_time_warp_change_nothing_and_the_last_one_resumes() {
    let dir = scratch("timewarp-every");
    // About 1.4 s in release on a quiet machine (30,000 took 0.35 s by 2026-11-28, too short
    // for two checkpoints 150 ms apart to be sure).
    let end = if cfg!(debug_assertions) {
        "12000"
    } else {
        "120000"
    };
    let args = phold_on_time_warp(end);
    let reference = committed(&warpsim(&args));
    let file = dir.join("every.ckpt");
    let mut checkpointed = args.clone();
    checkpointed.extend([
        "--checkpoint-file",
        path(&file),
        "--checkpoint-every",
        "150ms",
    ]);
    let through = warpsim(&checkpointed);
    let err = stderr(&through);
    assert!(
        err.matches("checkpoint written").count() >= 2,
        "fewer than two checkpoints in a run of over a second: {err}"
    );
    assert_eq!(committed(&through), reference, "the run that checkpointed");
    assert_eq!(
        committed(&warpsim(&["resume", path(&file)])),
        reference,
        "resumed from the last checkpoint"
    );
}

#[test]
fn bad_checkpoint_periods_are_refused_in_one_line() {
    let dir = scratch("timewarp-bad-every");
    let file = dir.join("x.ckpt");
    for bad in ["0s", "-1s", "soon", "0.0001s"] {
        let every = format!("--checkpoint-every={bad}");
        let output = warpsim(&[
            "run",
            "phold",
            "--kernel",
            "timewarp",
            "--checkpoint-file",
            path(&file),
            &every,
        ]);
        assert_eq!(output.status.code(), Some(1), "{bad}");
        let err = stderr(&output);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("--checkpoint-every"), "{err}");
        assert!(output.stdout.is_empty());
    }
}

/// The end time of a PHOLD run of 64 LPs that takes a few tenths of a second.
fn short_end() -> &'static str {
    if cfg!(debug_assertions) {
        "2000"
    } else {
        "20000"
    }
}

/// `events_committed` of one PHOLD run of 64 LPs with `seed` on `kernel`.
fn single_run(end: &str, seed: u64, kernel: &str) -> u64 {
    let seed = seed.to_string();
    let output = warpsim(&[
        "run", "phold", "--lps", "64", "--end", end, "--seed", &seed, "--kernel", kernel, "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    json(&output)["events_committed"].as_u64().unwrap()
}

#[test]
fn a_signal_stops_replications_and_the_finished_ones_are_summarised() {
    for (kernel, signal, code) in [("sequential", "-INT", 130), ("timewarp", "-TERM", 143)] {
        // Two hundred runs of a few tenths of a second, two at a time: the signal comes
        // after some have finished and long before all have.
        let stopped = interrupted(
            &[
                "run",
                "phold",
                "--lps",
                "64",
                "--end",
                short_end(),
                "--kernel",
                kernel,
                "--threads",
                "1",
                "--replications",
                "200",
                "--json",
            ],
            signal,
            2500,
        );
        assert_eq!(stopped.status.code(), Some(code), "{}", stderr(&stopped));
        let err = stderr(&stopped);
        assert!(err.contains("stopped the batch"), "{err}");
        let batch = json(&stopped);
        assert_eq!(
            batch["stopped_by"],
            if code == 130 { "SIGINT" } else { "SIGTERM" }
        );
        let finished = batch["finished"].as_u64().unwrap();
        assert!(finished > 0 && finished < 200, "{finished} finished");
        let runs = batch["runs"].as_array().unwrap();
        assert_eq!(runs.len() as u64, finished);
        assert_eq!(batch["metrics"]["events_committed"]["n"], finished);
        // Each finished run is the whole run of its seed (checked for the first and last).
        for run in [&runs[0], &runs[runs.len() - 1]] {
            let seed = run["seed"].as_u64().unwrap();
            assert_eq!(
                run["events_committed"].as_f64().unwrap() as u64,
                single_run(short_end(), seed, kernel),
                "{kernel}: replication {}",
                run["replication"]
            );
        }
    }
}

#[test]
fn a_signal_stops_a_sweep_and_the_finished_points_are_reported() {
    let dir = scratch("sweep-signal");
    let csv = dir.join("sweep.csv");
    // One point ends at once, the other would take minutes.
    let stopped = interrupted(
        &[
            "sweep",
            "phold",
            "--set",
            "end=50,1e9",
            "--lps",
            "64",
            "--seed",
            "5",
            "--csv",
            path(&csv),
            "--json",
        ],
        "-INT",
        1500,
    );
    assert_eq!(stopped.status.code(), Some(130), "{}", stderr(&stopped));
    let err = stderr(&stopped);
    assert!(err.contains("stopped the sweep"), "{err}");
    let sweep = json(&stopped);
    assert_eq!(sweep["stopped_by"], "SIGINT");
    assert_eq!(sweep["points_total"], 2);
    assert_eq!(sweep["points_finished"], 1);
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points.len(), 1);
    assert_eq!(points[0]["set"]["end"], 50);
    let committed = points[0]["metrics"]["events_committed"]["mean"]
        .as_f64()
        .unwrap() as u64;
    assert_eq!(committed, {
        let output = warpsim(&[
            "run", "phold", "--lps", "64", "--end", "50", "--seed", "5", "--json",
        ]);
        json(&output)["events_committed"].as_u64().unwrap()
    });
    let table = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(table.lines().count(), 2, "{table}");
}

/// Periodic checkpoints on Time Warp that cannot be written (a full device): the write
/// after the first failed one cannot start, which stops the run; the error is said once, in
/// one line, and the exit code is 1 (the run stopped itself: no signal came).
#[cfg(target_os = "linux")]
#[test]
fn periodic_checkpoints_that_cannot_be_written_stop_a_time_warp_run_with_one_error() {
    let mut args = phold_on_time_warp(long_end());
    args.extend([
        "--checkpoint-file",
        "/dev/full",
        "--checkpoint-every",
        "0.2s",
    ]);
    let output = warpsim(&args);
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.matches("cannot write /dev/full").count(),
        1,
        "{stderr}"
    );
    assert!(
        !String::from_utf8_lossy(&output.stdout).contains("end_time"),
        "the run went on to its end"
    );
}
