//! The program's two streams: results on stdout, one-line errors and notes on stderr.
//!
//! `println!` panics when stdout is closed or full; everything here writes to the locked
//! stream and hands the error back instead, so that `main` can end a closed pipe quietly and
//! report any other failure in one line.

use std::fmt;
use std::io::{self, Write};

use crate::text;

/// Writing to stdout failed.
#[derive(Debug)]
pub(crate) struct StdoutError(io::Error);

impl StdoutError {
    /// Whether the reader went away (`warpsim … | head -1`): the end of the output, not an
    /// error.
    pub(crate) fn is_closed_pipe(&self) -> bool {
        self.0.kind() == io::ErrorKind::BrokenPipe
    }
}

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write to stdout: {}", self.0)
    }
}

impl std::error::Error for StdoutError {}

/// Writes `text` to stdout and flushes it, so that a full disk is noticed here and not lost
/// at exit.
///
/// # Errors
///
/// The write's error, as a [`StdoutError`].
pub(crate) fn print(text: &str) -> Result<(), StdoutError> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(StdoutError)
}

/// `error: <message>` on stderr, as one line of bounded length. If stderr itself cannot be
/// written there is nobody left to tell, so the failure is ignored.
pub(crate) fn error_line(message: &str) {
    let _ = writeln!(io::stderr().lock(), "error: {}", text::one_line(message));
}

/// `note: <message>` on stderr (one line): something the user should know that is not an
/// error, such as a setting that was capped.
pub(crate) fn note(message: &str) {
    let _ = writeln!(io::stderr().lock(), "note: {}", text::one_line(message));
}

/// `warning: <message>` on stderr (one line): something went worse than asked but the run goes
/// on (the Time Warp kernel's warnings).
pub(crate) fn warning(message: &str) {
    let _ = writeln!(io::stderr().lock(), "warning: {}", text::one_line(message));
}
