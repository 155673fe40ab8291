//! Runs the `transport_check` example under `mpirun` on 2 and 3 ranks.
//!
//! Needs the `mpi` feature and an MPI launcher (`mpirun`) on the `PATH`. Each run is killed
//! after a time limit, so a deadlock fails the test instead of hanging CI.

#![cfg(feature = "mpi")]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// Far above the few seconds a run takes. A hang inside the transport usually ends first,
/// with `MPI_Abort` after the example's 60 s transport timeout; this catches the rest.
const LIMIT: Duration = Duration::from_secs(120);

/// One run at a time: several runs at once would crowd a small machine, and each rank busy-polls.
static SERIAL: Mutex<()> = Mutex::new(());

/// The example binary, built once for both tests.
static EXAMPLE: OnceLock<PathBuf> = OnceLock::new();

#[test]
fn two_ranks() {
    run(2);
}

#[test]
fn three_ranks() {
    run(3);
}

fn run(ranks: usize) {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let example = EXAMPLE.get_or_init(build_example);
    let mut command = Command::new("mpirun");
    if open_mpi() {
        // Open MPI refuses more ranks than cores unless told; MPICH oversubscribes anyway.
        command.arg("--oversubscribe");
    }
    command
        .args(["-np", &ranks.to_string()])
        .arg(example)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own process group, so a hung run can be killed with all the ranks it started.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .expect("cannot start mpirun: is MPI installed?");
    // Read as it comes, so a chatty failure cannot fill a pipe and stall mpirun.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("cannot wait for mpirun") {
            break status;
        }
        if start.elapsed() > LIMIT {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            panic!("mpirun -np {ranks} did not finish within {LIMIT:?}: the transport hangs");
        }
        thread::sleep(Duration::from_millis(100));
    };
    let stdout = stdout.join().expect("reading stdout panicked");
    let stderr = stderr.join().expect("reading stderr panicked");
    assert!(
        status.success() && stdout.contains("transport ok"),
        "mpirun -np {ranks} failed ({status}):\n{stdout}\n{stderr}"
    );
}

/// Reads a child's output on a thread, returning it once the child closes it.
fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

/// Builds the example with this test's profile and target directory, and returns its path.
fn build_example() -> PathBuf {
    // This test runs from <target>/<profile>/deps/; examples go to <target>/<profile>/examples/.
    let exe = std::env::current_exe().expect("no path to the test binary");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary is not in <target>/<profile>/deps");
    let target_dir = profile_dir.parent().expect("no target directory");
    let profile = match profile_dir.file_name().and_then(|name| name.to_str()) {
        Some("debug") => "dev",
        Some(name) => name,
        None => panic!("no profile in {}", profile_dir.display()),
    };
    let status = Command::new(env!("CARGO"))
        .args(["build", "-p", "warpsim-mpi", "--features", "mpi"])
        .args(["--example", "transport_check", "--profile", profile])
        .arg("--target-dir")
        .arg(target_dir)
        .status()
        .expect("cannot run cargo");
    assert!(status.success(), "cannot build the transport_check example");
    let example = profile_dir.join("examples").join("transport_check");
    assert!(example.exists(), "no example at {}", example.display());
    example
}

fn open_mpi() -> bool {
    Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).contains("Open MPI"))
}
