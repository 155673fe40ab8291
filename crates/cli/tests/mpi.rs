//! `warpsim run --kernel mpi` under `mpirun`: the same committed events and the same results
//! as the sequential kernel for PHOLD, pets (events style) and Sharks World (both cancel
//! styles, `kernel` being the model-level cancel/reschedule path), on 1–3 ranks × 1–2
//! threads; mismatched or dying ranks end with an error and nothing hangs.
//!
//! Needs the `mpi` feature (the README's test command turns it on after installing MPI).

#![cfg(feature = "mpi")]

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Far above what a run takes; a hang fails the test instead of blocking CI.
const LIMIT: Duration = Duration::from_secs(180);

/// One launch at a time: each rank busy-polls, and the machine may have 2 cores.
static SERIAL: Mutex<()> = Mutex::new(());

fn open_mpi() -> bool {
    Command::new("mpirun")
        .arg("--version")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).contains("Open MPI"))
        .unwrap_or(false)
}

/// Runs `mpirun <args>` in its own process group, killed after [`LIMIT`].
fn mpirun(args: &[String]) -> Output {
    mpirun_signalled(args, None)
}

/// [`mpirun`], sending `mpirun` itself `signal` (`-INT`, `-TERM`) after `after` when given
/// (MPICH's and Open MPI's launchers pass it on to every rank).
fn mpirun_signalled(args: &[String], signal: Option<(&str, Duration)>) -> Output {
    let mut command = Command::new("mpirun");
    if open_mpi() {
        command.arg("--oversubscribe");
    }
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .expect("cannot start mpirun: is MPI installed?");
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut text);
            }
            text
        })
    };
    let stdout = read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let mut signal = signal;
    let status = loop {
        if let Some(status) = child.try_wait().expect("cannot wait for mpirun") {
            break status;
        }
        if let Some((name, after)) = signal
            && start.elapsed() >= after
        {
            let sent = Command::new("kill")
                .args([name, &child.id().to_string()])
                .status()
                .expect("cannot run kill");
            assert!(sent.success(), "kill {name} failed");
            signal = None;
        }
        if start.elapsed() > LIMIT {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            panic!("mpirun {args:?} hung for {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

fn warpsim() -> String {
    env!("CARGO_BIN_EXE_warpsim").to_string()
}

/// A JSON report without what depends on the kernel or the clock.
fn essence(json: &Value) -> Value {
    let mut essence = json.as_object().cloned().unwrap_or_default();
    for key in [
        "kernel",
        "timewarp",
        "events_per_second",
        "wall_seconds",
        "peak_rss_bytes",
        "events_processed",
        "peak_pending",
        "granularity_us",
    ] {
        essence.remove(key);
    }
    Value::Object(essence)
}

fn sequential(model_args: &[&str]) -> Value {
    let out = Command::new(warpsim())
        .args(["run"])
        .args(model_args)
        .args(["--kernel", "sequential", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn check(model_args: &[&str]) {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let expected = essence(&sequential(model_args));
    for ranks in 1..=3 {
        for threads in 1..=2 {
            let mut args = vec![
                "-np".to_string(),
                ranks.to_string(),
                warpsim(),
                "run".into(),
            ];
            args.extend(model_args.iter().map(|s| s.to_string()));
            args.extend(
                [
                    "--kernel",
                    "mpi",
                    "--threads",
                    &threads.to_string(),
                    "--json",
                ]
                .map(String::from),
            );
            let out = mpirun(&args);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{model_args:?} on {ranks} × {threads}: {}\n{stdout}",
                String::from_utf8_lossy(&out.stderr)
            );
            // Only rank 0 reports.
            let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with('{')).collect();
            assert_eq!(
                lines.len(),
                1,
                "{model_args:?} on {ranks} × {threads}: {stdout}"
            );
            let json: Value = serde_json::from_str(lines[0]).unwrap();
            assert_eq!(json["kernel"], "mpi");
            assert_eq!(json["timewarp"]["ranks"], ranks);
            assert_eq!(
                essence(&json),
                expected,
                "{model_args:?} on {ranks} ranks × {threads} threads"
            );
        }
    }
}

#[test]
fn phold_over_mpi_matches_the_sequential_kernel() {
    check(&["phold", "--lps", "256", "--end", "30", "--seed", "3"]);
}

#[test]
fn pets_over_mpi_matches_the_sequential_kernel() {
    check(&[
        "pets", "--style", "events", "--tasks", "3000", "--seed", "5",
    ]);
}

#[test]
fn sharks_over_mpi_match_the_sequential_kernel_in_both_cancel_styles() {
    for cancel in ["app", "kernel"] {
        check(&[
            "sharks",
            "--creatures",
            "300",
            "--radius-min",
            "100",
            "--radius-max",
            "400",
            "--sectors",
            "4x4",
            "--end",
            "300",
            "--cancel",
            cancel,
            "--seed",
            "9",
        ]);
    }
}

#[test]
fn ranks_with_different_parameters_fail_on_every_rank() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let rank = |lps: &str| {
        [
            warpsim(),
            "run".into(),
            "phold".into(),
            "--lps".into(),
            lps.into(),
            "--kernel".into(),
            "mpi".into(),
        ]
    };
    let mut args = vec!["-np".to_string(), "1".into()];
    args.extend(rank("64"));
    args.extend([":".to_string(), "-np".into(), "1".into()]);
    args.extend(rank("65"));
    let out = mpirun(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.matches("different").count(), 2, "{stderr}");
}

#[test]
fn a_rank_that_dies_mid_run_ends_the_run() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    // Both ranks run the same (long) command; rank 1's process is killed after 2 s.
    let command = format!(
        "{} run phold --lps 16384 --end 100000 --kernel mpi --threads 1 --mpi-timeout 20",
        warpsim()
    );
    let killer = format!("{command} & p=$!; sleep 2; kill -9 $p; wait $p");
    let args: Vec<String> = [
        "-np", "1", "sh", "-c", &command, ":", "-np", "1", "sh", "-c", &killer,
    ]
    .map(String::from)
    .to_vec();
    let start = Instant::now();
    let out = mpirun(&args);
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Ended by the launcher or by the transport's timeout, not by the test's limit.
    assert!(start.elapsed() < Duration::from_secs(120));
}

#[test]
fn speedup_over_mpi_times_every_configuration_against_the_sequential_kernel() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let model = ["phold", "--lps", "64", "--end", "10", "--seed", "3"];
    let expected = sequential(&model);
    let mut args = vec!["-np".to_string(), "2".into(), warpsim(), "speedup".into()];
    args.extend(model.iter().map(|s| s.to_string()));
    args.extend(
        [
            "--kernel",
            "mpi",
            "--threads",
            "1",
            "--repeat",
            "2",
            "--cancellation",
            "lazy,aggressive",
            "--json",
        ]
        .map(String::from),
    );
    let out = mpirun(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Only rank 0 reports.
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    let study: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(study["kernel"], "mpi");
    assert_eq!(study["trace_hash"], expected["trace_hash"]);
    let runs = study["runs"].as_array().unwrap();
    // Rank 0's 2 sequential and 2 critical-path runs, then 2 modes × 2 repeats over MPI.
    assert_eq!(runs.len(), 2 + 2 + 2 * 2, "{study}");
    for run in runs {
        assert_eq!(run["trace_hash"], expected["trace_hash"]);
    }
    for row in &study["configurations"].as_array().unwrap()[1..] {
        assert_eq!(row["kernel"], "mpi");
        assert_eq!(row["ranks"], 2);
        assert_eq!(row["processors"], 2);
    }
}

/// PHOLD for the stop tests: a few seconds over MPI on two cores (a tenth in debug builds),
/// with the default (lazy) cancellation. (At this size, 1 run in 3 over 3 ranks once
/// committed extra events: MPICH's minimum of unsigned words was signed, and GVT passed
/// events still at risk — fixed in the MPI transport.)
fn long_phold() -> Vec<&'static str> {
    let end = if cfg!(debug_assertions) {
        "400"
    } else {
        "4000"
    };
    vec![
        "phold",
        "--lps",
        "1024",
        "--end",
        end,
        "--seed",
        "11",
        "--content-hash",
    ]
}

/// `-np ranks warpsim <command…> --kernel mpi --threads 1 --json`, as mpirun's arguments.
fn on_ranks(ranks: usize, command: &[&str]) -> Vec<String> {
    let mut args = vec!["-np".to_string(), ranks.to_string(), warpsim()];
    args.extend(command.iter().map(|s| s.to_string()));
    args.extend(["--kernel", "mpi", "--threads", "1", "--json"].map(String::from));
    args
}

fn only_report(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(
        lines.len(),
        1,
        "one report (rank 0's): {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(lines[0]).unwrap()
}

fn succeeded(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    only_report(out)
}

#[test]
fn a_signal_to_mpirun_stops_every_rank_with_a_checkpoint_that_resumes_on_any_kernel() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = std::env::temp_dir().join(format!("warpsim-mpi-stop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let model = long_phold();
    let expected = essence(&sequential(&model));
    let total = expected["events_committed"].as_u64().unwrap();
    for (signal, code, ranks, resume_ranks) in [("-INT", 130, 2, 3), ("-TERM", 143, 3, 1)] {
        let what = format!("{signal} to {ranks} ranks");
        let file = dir.join(format!("{signal}.ckpt"));
        let file = file.to_str().unwrap();
        let mut command = vec!["run"];
        command.extend(&model);
        command.extend(["--checkpoint-file", file]);
        // A loaded machine may take longer than that to start the ranks and install their
        // signal handlers: a job the signal itself killed (no report) is started again, and
        // the signal sent later. A quiet one may finish the run before the signal comes (a
        // report that was not interrupted): then it is sent sooner.
        let mut wait = 1500;
        let mut tries = 0;
        let out = loop {
            let out = mpirun_signalled(
                &on_ranks(ranks, &command),
                Some((signal, Duration::from_millis(wait))),
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            let report = stdout.lines().find(|line| line.starts_with('{'));
            tries += 1;
            if tries >= 8 {
                break out;
            }
            match report {
                Some(line) if !line.contains("\"interrupted\"") => wait = (wait / 2).max(50),
                Some(_) => break out,
                None if wait > 12_000 => break out,
                None => wait *= 2,
            }
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Every rank exits with 128 + the signal (`mpi.rs` shares the signal between the
        // ranks), and mpirun usually passes that on; MPICH's launcher sometimes reports 0
        // for a job it forwarded a Ctrl-C to, whatever the ranks returned.
        assert!(
            out.status.code() == Some(code) || out.status.code() == Some(0),
            "{what}: exit {:?}: {stderr}",
            out.status.code()
        );
        assert!(stderr.contains("checkpoint written"), "{what}: {stderr}");
        assert!(stderr.contains("stopped the run"), "{what}: {stderr}");
        // Rank 0's partial report, for the whole run.
        let partial = only_report(&out);
        assert_eq!(partial["stop_reason"], "interrupted", "{what}");
        assert_eq!(partial["kernel"], "mpi", "{what}");
        assert_eq!(partial["timewarp"]["ranks"], ranks, "{what}");
        let done = partial["events_committed"].as_u64().unwrap();
        assert!(done > 0 && done < total, "{what}: {done} of {total}");

        // The checkpoint resumes on another number of ranks, and sequentially.
        let resumed = mpirun(&on_ranks(resume_ranks, &["resume", file]));
        let resumed = succeeded(&resumed);
        assert_eq!(resumed["timewarp"]["ranks"], resume_ranks, "{what}");
        assert_eq!(
            essence(&resumed),
            expected,
            "{what}, resumed on {resume_ranks} ranks"
        );
        let sequentially = Command::new(warpsim())
            .args(["resume", file, "--kernel", "sequential", "--json"])
            .output()
            .unwrap();
        assert_eq!(
            essence(&succeeded(&sequentially)),
            expected,
            "{what}, resumed sequentially"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn checkpoints_over_mpi_change_nothing_and_resume_across_kernels() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = std::env::temp_dir().join(format!("warpsim-mpi-ckpt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let model = [
        "phold",
        "--lps",
        "256",
        "--end",
        "400",
        "--seed",
        "4",
        "--content-hash",
    ];
    let expected = essence(&sequential(&model));
    // Periodic checkpoints and one at time 150, on two ranks: the run is unchanged.
    let file = dir.join("mpi.ckpt");
    let file = file.to_str().unwrap();
    let mut command = vec!["run"];
    command.extend(model);
    command.extend([
        "--checkpoint-file",
        file,
        "--checkpoint-every",
        "100ms",
        "--checkpoint-at",
        "150",
    ]);
    let out = mpirun(&on_ranks(2, &command));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(essence(&succeeded(&out)), expected, "{stderr}");
    assert!(
        stderr.contains("checkpoint written"),
        "no checkpoint: {stderr}"
    );
    // The last checkpoint resumes (at the end: nothing left to run but `finish`).
    let resumed = Command::new(warpsim())
        .args(["resume", file, "--kernel", "sequential", "--json"])
        .output()
        .unwrap();
    assert_eq!(essence(&succeeded(&resumed)), expected);

    // A sequential checkpoint at 150 resumes on three ranks, and the checkpoint that run
    // writes at 300 resumes on Time Warp threads.
    let seq_file = dir.join("seq.ckpt");
    let seq_file = seq_file.to_str().unwrap();
    let paused = Command::new(warpsim())
        .args(["run"])
        .args(model)
        .args([
            "--kernel",
            "sequential",
            "--json",
            "--checkpoint-file",
            seq_file,
        ])
        .args(["--checkpoint-at", "150"])
        .output()
        .unwrap();
    assert_eq!(essence(&succeeded(&paused)), expected);
    let again = dir.join("again.ckpt");
    let again = again.to_str().unwrap();
    let out = mpirun(&on_ranks(
        3,
        &[
            "resume",
            seq_file,
            "--checkpoint-file",
            again,
            "--checkpoint-at",
            "300",
        ],
    ));
    assert_eq!(essence(&succeeded(&out)), expected, "sequential → 3 ranks");
    let on_threads = Command::new(warpsim())
        .args([
            "resume",
            again,
            "--kernel",
            "timewarp",
            "--threads",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        essence(&succeeded(&on_threads)),
        expected,
        "3 ranks → Time Warp threads"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Periodic checkpoints over MPI that cannot be written (a full device): the write after
/// the first failed one cannot start, which stops every rank at the next GVT; rank 0 says
/// why in one line and the others that rank 0 could not write, and no rank runs to its end.
#[cfg(target_os = "linux")]
#[test]
fn checkpoints_over_mpi_that_cannot_be_written_stop_every_rank() {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let mut command = long_phold();
    command.splice(0..0, ["run"]);
    command.extend([
        "--checkpoint-file",
        "/dev/full",
        "--checkpoint-every",
        "0.2s",
    ]);
    let out = mpirun(&on_ranks(2, &command));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 1, not 129: no signal stopped the ranks.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write /dev/full"), "{stderr}");
    assert!(
        stderr.contains("rank 0 could not write a checkpoint"),
        "{stderr}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("\"stop_reason\":\"end_time\""),
        "a rank ran to its end"
    );
}
