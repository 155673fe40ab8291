//! `warpsim models`: the models and their parameters, read off the command-line definition so
//! the listing can never disagree with what `warpsim run` accepts.

use std::fmt::Write;

use clap::{Args, Command};

use crate::cli::CommonArgs;

fn describe(arg: &clap::Arg) -> Option<String> {
    let long = arg.get_long()?;
    let defaults: Vec<String> = arg
        .get_default_values()
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

/// The text of `warpsim models`.
pub(crate) fn listing() -> String {
    let common = CommonArgs::augment_args(Command::new("common"));
    let common_ids: Vec<&str> = common
        .get_arguments()
        .map(|a| a.get_id().as_str())
        .collect();
    let cli = crate::cli::command();
    let mut out = String::new();
    if let Some(run) = cli.find_subcommand("run") {
        for model in run.get_subcommands() {
            let about = model.get_about().map(|a| a.to_string()).unwrap_or_default();
            let _ = writeln!(out, "{}: {about}", model.get_name());
            for arg in model.get_arguments() {
                if common_ids.contains(&arg.get_id().as_str()) {
                    continue;
                }
                if let Some(line) = describe(arg) {
                    out.push_str(&line);
                }
            }
            out.push('\n');
        }
    }
    out.push_str("Every model also takes:\n");
    for arg in common.get_arguments() {
        if let Some(line) = describe(arg) {
            out.push_str(&line);
        }
    }
    out
}
