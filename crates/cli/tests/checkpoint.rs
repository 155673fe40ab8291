//! Checkpoints and graceful stops through the real binary: a run checkpointed at several
//! simulated times, or stopped by a real SIGINT/SIGTERM, and resumed with `warpsim resume`,
//! ends with the uninterrupted run's trace and content hashes, counts, metrics and files;
//! bad checkpoint files and flags that would change the result are refused in one line.

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
    let dir = std::env::temp_dir().join(format!("warpsim-ckpt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The run's JSON without what the wall clock and the machine decide.
fn result(output: &Output) -> Value {
    assert!(output.status.success(), "stderr: {}", stderr(output));
    let text = String::from_utf8_lossy(&output.stdout);
    let mut json: Value = serde_json::from_str(text.trim()).expect("one JSON object");
    let fields = json.as_object_mut().unwrap();
    for volatile in [
        "wall_seconds",
        "events_per_second",
        "peak_rss_bytes",
        "granularity_us",
    ] {
        fields.remove(volatile);
    }
    json
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Checkpoints the run `args` at each of `times` (each time a new run), resumes each
/// checkpoint and compares with the uninterrupted run, and the file named by `--deaths`
/// when `deaths` is given.
fn check_resumes(name: &str, args: &[&str], times: &[&str], deaths: bool) {
    let dir = scratch(name);
    let reference_deaths = dir.join("reference.csv");
    let mut reference_args = args.to_vec();
    if deaths {
        reference_args.extend(["--deaths", path(&reference_deaths)]);
    }
    let reference = result(&warpsim(&reference_args));
    assert!(reference["events_committed"].as_u64().unwrap() > 100);
    for time in times {
        let file = dir.join(format!("at-{time}.ckpt"));
        let resumed_deaths = dir.join(format!("at-{time}.csv"));
        let mut checkpointed = args.to_vec();
        checkpointed.extend(["--checkpoint-file", path(&file), "--checkpoint-at", time]);
        if deaths {
            checkpointed.extend(["--deaths", path(&resumed_deaths)]);
        }
        // The checkpointing run itself goes on to the same result.
        let through = warpsim(&checkpointed);
        assert!(
            stderr(&through).contains("checkpoint written"),
            "{}",
            stderr(&through)
        );
        assert_eq!(
            result(&through),
            reference,
            "{name}: the run that checkpointed at {time}"
        );
        std::fs::remove_file(&resumed_deaths).ok();
        let resumed = warpsim(&["resume", path(&file)]);
        assert_eq!(result(&resumed), reference, "{name}: resumed from {time}");
        if deaths {
            assert_eq!(
                std::fs::read_to_string(&resumed_deaths).unwrap(),
                std::fs::read_to_string(&reference_deaths).unwrap(),
                "{name}: deaths file resumed from {time}"
            );
        }
    }
}

#[test]
fn phold_resumed_from_several_times_ends_as_the_uninterrupted_run() {
    check_resumes(
        "phold",
        &[
            "run",
            "phold",
            "--lps",
            "64",
            "--end",
            "60",
            "--remote",
            "0.5",
            "--json",
            "--content-hash",
        ],
        &["0", "0.5", "17.25", "59.9"],
        false,
    );
}

#[test]
fn pets_resumed_from_several_times_ends_as_the_uninterrupted_run() {
    // The pets' milestones are outputs: the percentiles and the curve come out the same
    // only if the outputs before the checkpoint are replayed into the resumed run's sink.
    check_resumes(
        "pets",
        &[
            "run",
            "pets",
            "--style",
            "events",
            "--tasks",
            "3000",
            "--gates",
            "40",
            "--json",
            "--content-hash",
        ],
        &["1", "30.5", "120"],
        false,
    );
}

#[test]
fn sharks_resumed_from_several_times_ends_as_the_uninterrupted_run_in_both_cancel_styles() {
    for cancel in ["app", "kernel"] {
        check_resumes(
            &format!("sharks-{cancel}"),
            &[
                "run",
                "sharks",
                "--creatures",
                "300",
                "--sectors",
                "4x4",
                "--end",
                "500",
                "--cancel",
                cancel,
                "--json",
                "--content-hash",
            ],
            &["5", "200", "499"],
            true,
        );
    }
}

#[test]
fn a_resumed_run_checkpoints_again_and_resumes_again() {
    let dir = scratch("chain");
    let args = [
        "run",
        "phold",
        "--lps",
        "32",
        "--end",
        "80",
        "--json",
        "--content-hash",
    ];
    let reference = result(&warpsim(&args));
    let first = dir.join("first.ckpt");
    let second = dir.join("second.ckpt");
    let mut checkpointed = args.to_vec();
    checkpointed.extend(["--checkpoint-file", path(&first), "--checkpoint-at", "20"]);
    result(&warpsim(&checkpointed));
    // Resume with another checkpoint file and time: both are allowed, neither changes it.
    let again = warpsim(&[
        "resume",
        path(&first),
        "--checkpoint-file",
        path(&second),
        "--checkpoint-at",
        "50",
        "--queue",
        "heap",
    ]);
    assert_eq!(result(&again), reference);
    assert_eq!(result(&warpsim(&["resume", path(&second)])), reference);
}

#[test]
fn a_signal_stops_the_run_with_a_partial_report_and_a_checkpoint_that_resumes_it() {
    let dir = scratch("signal");
    // About twenty million events: seconds of work, so the signal comes in the middle.
    let args = [
        "run",
        "phold",
        "--lps",
        "128",
        "--end",
        "1e9",
        "--max-events",
        "20000000",
        "--json",
        "--content-hash",
    ];
    let reference = result(&warpsim(&args));
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        let file = dir.join(format!("{signal}.ckpt"));
        let mut checkpointed = args.to_vec();
        checkpointed.extend(["--checkpoint-file", path(&file)]);
        let stopped = interrupted(&checkpointed, signal, 400);
        assert_eq!(stopped.status.code(), Some(code), "{}", stderr(&stopped));
        let err = stderr(&stopped);
        assert!(err.contains("stopped the run"), "{err}");
        assert!(err.contains("resume"), "{err}");
        let text = String::from_utf8_lossy(&stopped.stdout);
        let partial: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(partial["stop_reason"], "interrupted");
        let done = partial["events_committed"].as_u64().unwrap();
        assert!(done > 0 && done < 20_000_000, "{done}");
        let resumed = warpsim(&["resume", path(&file)]);
        assert_eq!(result(&resumed), reference, "resumed after {signal}");
    }
}

#[test]
fn an_interrupted_run_without_a_checkpoint_file_still_reports_in_text() {
    let stopped = interrupted(
        &["run", "phold", "--lps", "64", "--end", "1e12"],
        "-INT",
        400,
    );
    assert_eq!(stopped.status.code(), Some(130), "{}", stderr(&stopped));
    let text = String::from_utf8_lossy(&stopped.stdout);
    assert!(text.contains("(interrupted)"), "{text}");
    assert!(text.contains("trace hash"), "{text}");
}

fn checkpoint_of_a_short_run(dir: &Path) -> PathBuf {
    let file = dir.join("run.ckpt");
    let output = warpsim(&[
        "run",
        "phold",
        "--lps",
        "16",
        "--end",
        "30",
        "--checkpoint-file",
        path(&file),
        "--checkpoint-at",
        "10",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    file
}

fn assert_one_line_error(output: &Output, needle: &str) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err:?} should contain {needle:?}");
    assert!(output.stdout.is_empty());
}

#[test]
fn bad_checkpoint_files_are_refused_in_one_line() {
    let dir = scratch("bad");
    let file = checkpoint_of_a_short_run(&dir);
    let bytes = std::fs::read(&file).unwrap();
    let bad = dir.join("bad.ckpt");
    let write = |contents: &[u8]| std::fs::write(&bad, contents).unwrap();
    write(&bytes[..bytes.len() - 10]);
    assert_one_line_error(&warpsim(&["resume", path(&bad)]), "truncated checkpoint");
    let mut flipped = bytes.clone();
    let middle = bytes.len() / 2;
    flipped[middle] ^= 1;
    write(&flipped);
    assert_one_line_error(&warpsim(&["resume", path(&bad)]), "corrupted checkpoint");
    write(b"name,value\n1,2\n");
    assert_one_line_error(
        &warpsim(&["resume", path(&bad)]),
        "not a warpsim checkpoint",
    );
    let mut future = bytes.clone();
    future[8] = 7;
    write(&future);
    assert_one_line_error(&warpsim(&["resume", path(&bad)]), "format version 7");
    assert_one_line_error(
        &warpsim(&["resume", path(&dir.join("missing.ckpt"))]),
        "cannot read the checkpoint",
    );
}

#[test]
fn resume_refuses_flags_that_would_change_the_result() {
    let dir = scratch("flags");
    let file = checkpoint_of_a_short_run(&dir);
    for flag in [
        &["--end", "50"][..],
        &["--seed=3"],
        &["--max-events", "10"],
        &["--content-hash"],
    ] {
        let mut args = vec!["resume", path(&file)];
        args.extend_from_slice(flag);
        assert_one_line_error(&warpsim(&args), "could change the results");
    }
    // What cannot change it is accepted.
    let fine = warpsim(&["resume", path(&file), "--json", "--queue", "heap"]);
    assert!(fine.status.success(), "{}", stderr(&fine));
}

/// A checkpoint is written on a thread of its own while the run goes on; one that cannot be
/// written (a full device) still fails the run with one line naming the file, on both
/// kernels, and the error says its cause once.
#[cfg(target_os = "linux")]
#[test]
fn a_checkpoint_that_cannot_be_written_fails_the_run_in_one_line() {
    for kernel in ["sequential", "timewarp"] {
        let output = warpsim(&[
            "run",
            "phold",
            "--lps",
            "64",
            "--end",
            "10",
            "--kernel",
            kernel,
            "--checkpoint-file",
            "/dev/full",
            "--checkpoint-at",
            "5",
        ]);
        assert_one_line_error(&output, "cannot write /dev/full");
        assert_eq!(
            stderr(&output).matches("No space left").count(),
            1,
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn checkpoint_flags_are_checked() {
    let output = warpsim(&["run", "phold", "--checkpoint-at", "5"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("--checkpoint-file"),
        "{}",
        stderr(&output)
    );
    let dir = scratch("flags-checked");
    let file = dir.join("x.ckpt");
    assert_one_line_error(
        &warpsim(&[
            "run",
            "phold",
            "--checkpoint-file",
            path(&file),
            "--checkpoint-every",
            "soon",
        ]),
        "expected a duration",
    );
    assert_one_line_error(
        &warpsim(&[
            "run",
            "phold",
            "--checkpoint-file",
            path(&file),
            "--replications",
            "3",
        ]),
        "not --replications",
    );
    assert_one_line_error(
        &warpsim(&[
            "run",
            "phold",
            "--checkpoint-file",
            path(&dir.join("no/such/dir/x.ckpt")),
        ]),
        "--checkpoint-file",
    );
}

#[test]
fn checkpoints_move_between_the_sequential_and_time_warp_kernels() {
    let dir = scratch("kernels");
    let args = [
        "run",
        "sharks",
        "--creatures",
        "300",
        "--sectors",
        "4x4",
        "--end",
        "400",
        "--cancel",
        "kernel",
        "--json",
        "--content-hash",
    ];
    let reference_deaths = dir.join("reference.csv");
    let mut reference_args = args.to_vec();
    reference_args.extend(["--deaths", path(&reference_deaths)]);
    let mut reference = result(&warpsim(&reference_args));
    // Which kernel ran, what it processed (Time Warp rolls back) and its peak of pending
    // events (Time Warp's sums its workers' peaks) are the kernel's own; everything else
    // must be the same.
    for own in ["kernel", "peak_pending", "events_processed"] {
        reference.as_object_mut().unwrap().remove(own);
    }
    for (first, then) in [("timewarp", "sequential"), ("sequential", "timewarp")] {
        let file = dir.join(format!("{first}.ckpt"));
        let deaths = dir.join(format!("{first}.csv"));
        let mut checkpointed = args.to_vec();
        checkpointed.extend([
            "--kernel",
            first,
            "--threads",
            "2",
            "--checkpoint-file",
            path(&file),
            "--checkpoint-at",
            "150",
            "--deaths",
            path(&deaths),
        ]);
        let through = warpsim(&checkpointed);
        assert!(
            stderr(&through).contains("checkpoint written"),
            "{}",
            stderr(&through)
        );
        std::fs::remove_file(&deaths).unwrap();
        let mut resumed = result(&warpsim(&["resume", path(&file), "--kernel", then]));
        let fields = resumed.as_object_mut().unwrap();
        assert_eq!(fields.remove("kernel").unwrap(), then);
        fields.remove("timewarp");
        fields.remove("peak_pending");
        fields.remove("events_processed");
        assert_eq!(resumed, reference, "{first} then {then}");
        assert_eq!(
            std::fs::read_to_string(&deaths).unwrap(),
            std::fs::read_to_string(&reference_deaths).unwrap(),
            "{first} then {then}: deaths file"
        );
    }
}
