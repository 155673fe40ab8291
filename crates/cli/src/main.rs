//! The `warpsim` command-line tool.
//!
//! `warpsim run <model> [flags]` runs a model and prints a readable report, or one JSON object
//! with `--json`; `warpsim models` lists the models and their parameters. Every error ends the
//! program with one line on stderr and a non-zero exit code, never a panic message.

#![forbid(unsafe_code)]

mod analysis;
mod cli;
mod config;
mod listing;
mod mpi;
mod progress;
mod run;
mod scenarios;

use std::process::ExitCode;

use clap::error::ErrorKind;

use crate::cli::Command;

fn main() -> ExitCode {
    // Model panics are caught by the kernels and reported as errors with their LP id, so the
    // default hook's message would only be noise; our own bugs are caught below instead.
    std::panic::set_hook(Box::new(|_| {}));
    match std::panic::catch_unwind(real_main) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(error)) => {
            eprintln!("error: {}", one_line(&format!("{error:#}")));
            ExitCode::from(1)
        }
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|m| m.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            eprintln!(
                "error: internal error (please report it): {}",
                one_line(&message)
            );
            ExitCode::from(101)
        }
    }
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn real_main() -> anyhow::Result<()> {
    let args = config::expand(std::env::args_os().collect())?;
    let cli = match cli::parse(args) {
        Ok(cli) => cli,
        Err(error) => match error.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                print!("{}", error.render());
                if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    anyhow::bail!("a command is required (see `warpsim --help`)");
                }
                return Ok(());
            }
            _ => {
                let rendered = error.render().to_string();
                let first = rendered.lines().next().unwrap_or("invalid arguments");
                anyhow::bail!(
                    "{} (see `warpsim --help`)",
                    first.trim_start_matches("error: ")
                );
            }
        },
    };
    let result = match cli.command {
        Command::Run(run) => run::run(*run),
        Command::Sweep(sweep) => analysis::sweep::run(sweep),
        Command::Plan(plan) => analysis::plan::run(plan),
        Command::Models => {
            print!("{}", listing::listing());
            Ok(())
        }
    };
    mpi::finish();
    result
}
