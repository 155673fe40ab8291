//! `warpsim models`: the models and their parameters, read off the command-line definition so
//! the listing can never disagree with what `warpsim run` accepts.

use std::fmt::Write;

use clap::{Args, Command};

use crate::cli::{KernelArgs, RunArgs};

fn describe(arg: &clap::Arg) -> Option<String> {
    let long = arg.get_long()?;
    // A hidden default is one the help states in words (it depends on other flags).
    let defaults: Vec<String> = if arg.is_hide_default_value_set() {
        &[][..]
    } else {
        arg.get_default_values()
    }
    .iter()
    .map(|value| value.to_string_lossy().into_owned())
    .collect();
    let default = if defaults.is_empty() {
        String::new()
    } else {
        format!(" (default {})", defaults.join(","))
    };
    let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
    Some(format!("    --{long:<18} {help}{default}\n"))
}

/// The text of `<program> models`: each model's own flags, then the flags every model takes
/// and those of the models that run on a simulation kernel.
pub(crate) fn listing(app: &crate::App) -> String {
    let run = RunArgs::augment_args(Command::new("run"));
    let kernel = KernelArgs::augment_args(Command::new("kernel"));
    let shared: Vec<&str> = run
        .get_arguments()
        .chain(kernel.get_arguments())
        .map(|a| a.get_id().as_str())
        .collect();
    let mut out = String::new();
    for entry in app.entries() {
        let model = entry.command();
        let about = model.get_about().map(|a| a.to_string()).unwrap_or_default();
        let _ = writeln!(out, "{}: {about}", model.get_name());
        for arg in model.get_arguments() {
            if shared.contains(&arg.get_id().as_str()) {
                continue;
            }
            if let Some(line) = describe(arg) {
                out.push_str(&line);
            }
        }
        out.push('\n');
    }
    out.push_str("Every model also takes:\n");
    for arg in run.get_arguments() {
        if let Some(line) = describe(arg) {
            out.push_str(&line);
        }
    }
    let off_kernel: Vec<&str> = app
        .entries()
        .filter(|entry| !entry.on_kernel())
        .map(|entry| entry.name())
        .collect();
    if off_kernel.is_empty() {
        out.push_str("and the kernel's flags:\n");
    } else {
        let _ = writeln!(
            out,
            "Every model but {} (which run on no simulation kernel) also takes:",
            off_kernel.join(", ")
        );
    }
    for arg in kernel.get_arguments() {
        if let Some(line) = describe(arg) {
            out.push_str(&line);
        }
    }
    out
}
