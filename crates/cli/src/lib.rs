//! The `warpsim` command-line tool, as a library.
//!
//! `warpsim run <model> [flags]` runs a model and prints a readable report, or one JSON object
//! with `--json`; `warpsim models` lists the models and their parameters; `warpsim sweep` and
//! `warpsim plan` run a model many times. The binary is a thin `main` over [`main()`].
//!
//! # Ground rules
//!
//! - Every failure ends the program with exactly one line on stderr (`error: …`) and exit
//!   code 1, and prints nothing on stdout: a failed run's partial figures go into that line.
//!   Echoed input is cut to a short excerpt, so a huge value never floods the terminal.
//! - A closed stdout (`warpsim … | head -1`) ends the output quietly with exit code 0, as
//!   ripgrep does; any other write error on stdout (a full disk) is one line and exit 1.
//! - Inputs are checked before anything runs: parameters, counts that size allocations
//!   (against the memory available), and output paths (their directory must be writable, and
//!   no output may overwrite an input). Output files are written atomically.
//! - A bug of ours (a panic) is reported as one line too, as an internal error, exit 101.
//!
//! The [`fuzzing`] module exposes the parsers of untrusted input, for the fuzz harnesses in
//! `fuzz/`.

#![forbid(unsafe_code)]

mod analysis;
mod app;
mod cli;
mod config;
mod files;
pub mod fuzzing;
mod limits;
mod listing;
mod model;
mod mpi;
mod out;
mod progress;
mod run;
mod scenarios;
mod text;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::error::ErrorKind;

use crate::cli::{Command, Parsed};

pub use crate::app::App;
pub use crate::model::{BoxError, Metrics, Model, OutputOf};

/// Runs `app` with `args` (the first is the program name) and returns its exit code: 0 on
/// success (or when stdout was closed by the reader), 1 for any error (one line on stderr),
/// 101 for an internal error.
fn main_with(app: &App, args: Vec<OsString>) -> ExitCode {
    // Model panics are caught by the kernels and reported as errors with their LP id, so the
    // default hook's message would only be noise; our own bugs are caught below instead.
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| real_main(app, args)));
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(error)) => {
            if let Some(stdout) = error
                .chain()
                .find_map(|cause| cause.downcast_ref::<out::StdoutError>())
                && stdout.is_closed_pipe()
            {
                // The reader has all it wanted (`| head -1`): not an error.
                return ExitCode::SUCCESS;
            }
            out::error_line(&format!("{error:#}"));
            ExitCode::from(1)
        }
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|m| m.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            out::error_line(&format!("internal error (please report it): {message}"));
            ExitCode::from(101)
        }
    }
}

fn real_main(app: &App, args: Vec<OsString>) -> anyhow::Result<()> {
    let program = app.program();
    let args = config::expand(app, args)?;
    let parsed = match cli::parse(app, args) {
        Ok(cli) => cli,
        Err(error) => match error.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                out::print(&error.render().to_string())?;
                return Ok(());
            }
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                anyhow::bail!("a command is required (see `{program} --help`)");
            }
            _ => anyhow::bail!("{} (see `{program} --help`)", text::clap_message(&error)),
        },
    };
    let result = match parsed {
        Parsed::Run(scenario) => run::execute(&*scenario),
        Parsed::Other(Command::Sweep(sweep)) => analysis::sweep::run(app, sweep),
        Parsed::Other(Command::Plan(plan)) => analysis::plan::run(app, plan),
        Parsed::Other(Command::Speedup(speedup)) => analysis::speedup::run(app, speedup),
        Parsed::Other(Command::Models) => {
            out::print(&listing::listing(app)).map_err(anyhow::Error::from)
        }
    };
    mpi::finish();
    result
}
