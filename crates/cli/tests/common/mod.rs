//! Helpers shared by the CLI's integration tests.

use std::process::{Command, Output, Stdio};

/// Starts `args`, waits `after_ms`, sends `signal`, and returns its output.
pub(crate) fn interrupted(args: &[&str], signal: &str, after_ms: u64) -> Output {
    use std::os::unix::process::ExitStatusExt;
    // A loaded machine may take longer than that to start the process and install its
    // signal handlers: a process that the signal itself killed is started again, and the
    // signal sent later.
    let mut wait = after_ms;
    loop {
        let child = Command::new(env!("CARGO_BIN_EXE_warpsim"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(wait));
        let status = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let output = child.wait_with_output().unwrap();
        if output.status.signal().is_none() || wait > 10_000 {
            return output;
        }
        wait *= 2;
    }
}
