//! Fuzz target: a `warpsim` command line (arguments separated by NUL bytes, any bytes in
//! them), parsed as `warpsim` parses it (clap, negative values, `--config` not read). The
//! parser must return with a bounded one-line message.

#[cfg(unix)]
fn main() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    afl::fuzz!(|data: &[u8]| {
        let args: Vec<&OsStr> = data.split(|&b| b == 0).map(OsStr::from_bytes).collect();
        if args.len() > 64 {
            return;
        }
        if let Err(message) = warpsim_cli::fuzzing::arguments(&args) {
            // The message itself is bounded (no input echoed whole), and prints as one line.
            assert!(message.len() < 2000, "unbounded message: {} bytes", message.len());
            assert!(!warpsim_cli::fuzzing::error_line(&message).contains('\n'));
        }
    });
}

#[cfg(not(unix))]
fn main() {}
