//! The `warpsim` command-line tool, as a library: the analyst's toolkit for any model.
//!
//! `run <model> [flags]` runs a model and prints a readable report, or one JSON object with
//! `--json`; `--replications R` runs it R times (seeds derived from the base seed) with
//! confidence intervals; `sweep` runs a grid of parameters, with a table, CSV and plots;
//! `plan` finds the smallest whole value of a parameter that meets a target; `speedup` times
//! Time Warp against the sequential kernel; `models` lists the models and their parameters;
//! `--config FILE.toml` reads parameters from a TOML scenario.
//!
//! The main types:
//!
//! - [`Model`]: what a user's model provides — a parameter struct that derives
//!   `clap::Args` (its fields are the flags, with defaults and help, and the TOML keys) and
//!   `serde::Serialize` (the JSON `params`), and the LPs it builds; its end time (by default
//!   the parameter `end`) and metrics (by default the numeric fields of the LPs' outputs,
//!   averaged over them) when the defaults do not fit.
//! - [`App`]: the command line over registered models. The `warpsim` binary is
//!   `App::warpsim().main()`; a user's is as short:
//!
//! ```no_run
//! # #[derive(Debug, Clone, clap::Args, serde::Serialize)] struct Mm1 {}
//! # #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)] struct Queue;
//! # impl warpsim_core::LogicalProcess for Queue {
//! #     type Event = (); type Output = f64;
//! #     fn on_event(&mut self, _: (), _: &mut warpsim_core::Ctx<Self>) {}
//! # }
//! # impl warpsim_cli::Model for Mm1 {
//! #     type Lp = Queue;
//! #     fn end_time(&self) -> f64 { 1.0 }
//! #     fn build(&self) -> Result<Vec<Queue>, warpsim_cli::BoxError> { Ok(vec![Queue]) }
//! #     fn metrics(&self, _: &[warpsim_core::Committed<f64>]) -> warpsim_cli::Metrics {
//! #         warpsim_cli::Metrics::new()
//! #     }
//! # }
//! fn main() -> std::process::ExitCode {
//!     warpsim_cli::App::new().model::<Mm1>("mm1").main()
//! }
//! ```
//!
//! `examples/mm1.rs` is a whole M/M/1 model this way; `tests/user_model.rs` checks it end to
//! end against the closed forms.
//!
//! The key design decision: parameters are declared once. A model's flags are its parameter
//! struct; the kernel flags are added to every model that runs on a kernel (the game-loop
//! demos, which do not, refuse them); the built-in models' flags are their
//! `warpsim-models` params structs too (that crate's `clap` feature); TOML keys are the flag
//! names; sweeps and plans vary a
//! parameter by re-parsing the model's command line with `--key=value`, so they work for
//! every flag of every model without knowing it. Library enums (queues, cancellation,
//! partition, the pets model's choices) are command-line values through their crates'
//! `clap` feature, not through copies here.
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
mod checkpointing;
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
    // A run a signal stopped ends with 128 + the signal's number, as the shell expects,
    // whether or not it also failed.
    let stopped = checkpointing::signal().and_then(|signal| u8::try_from(128 + signal).ok());
    match outcome {
        Ok(Ok(())) => stopped.map_or(ExitCode::SUCCESS, ExitCode::from),
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
            ExitCode::from(stopped.unwrap_or(1))
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
    // `resume FILE [FLAGS]` is the command line stored in the checkpoint, with those flags.
    let args = match args.get(1).and_then(|arg| arg.to_str()) {
        Some("resume")
            if args
                .get(2)
                .is_some_and(|arg| arg != "--help" && arg != "-h") =>
        {
            checkpointing::resume_args(&args[0], &args[2..])?
        }
        _ => args,
    };
    let args = config::expand(app, args)?;
    checkpointing::set_command(&args);
    let kernel_note = cli::kernel_flag_note(app, &args);
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
            ErrorKind::UnknownArgument if kernel_note.is_some() => anyhow::bail!(
                "{}: {}",
                text::clap_message(&error),
                kernel_note.unwrap_or_default()
            ),
            _ => anyhow::bail!("{} (see `{program} --help`)", text::clap_message(&error)),
        },
    };
    let result = match parsed {
        Parsed::Run(scenario) => run::execute(&*scenario),
        Parsed::Other(Command::Sweep(sweep)) => analysis::sweep::run(app, sweep),
        Parsed::Other(Command::Plan(plan)) => analysis::plan::run(app, plan),
        Parsed::Other(Command::Speedup(speedup)) => analysis::speedup::run(app, speedup),
        Parsed::Other(Command::Resume(_)) => {
            anyhow::bail!("resume needs a checkpoint file: {program} resume FILE [FLAGS]")
        }
        Parsed::Other(Command::Models) => {
            out::print(&listing::listing(app)).map_err(anyhow::Error::from)
        }
    };
    mpi::finish();
    result
}
