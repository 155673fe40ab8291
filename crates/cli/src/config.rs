//! Scenarios from TOML: `warpsim run <model> --config file.toml`.
//!
//! The file's keys are the model's flag names (`lps = 1024`, `queue = "heap"`); an optional
//! `model = "phold"` must match the model on the command line. The file's values are turned
//! into flags placed *before* the user's own flags, and the parser lets a later flag override
//! an earlier one, so flags on the command line win over the file.

use std::ffi::OsString;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

/// Finds `--config FILE` in the raw arguments of `warpsim run <model> …` and splices the
/// file's settings in as flags right after the model name. Other commands pass through.
pub(crate) fn expand(args: Vec<OsString>) -> Result<Vec<OsString>> {
    let strings: Vec<Option<&str>> = args.iter().map(|arg| arg.to_str()).collect();
    // Only `warpsim run <model> …` takes a config file.
    if strings.get(1).copied().flatten() != Some("run") {
        return Ok(args);
    }
    let Some(model) = strings.get(2).copied().flatten() else {
        return Ok(args);
    };
    let mut path = None;
    for (index, arg) in strings.iter().enumerate().skip(3) {
        match arg {
            Some("--config") => {
                let value = strings
                    .get(index + 1)
                    .copied()
                    .flatten()
                    .ok_or_else(|| anyhow!("--config needs a file name"))?;
                path = Some(value.to_string());
            }
            Some(arg) if arg.starts_with("--config=") => {
                path = Some(arg["--config=".len()..].to_string());
            }
            _ => {}
        }
    }
    let Some(path) = path else {
        return Ok(args);
    };
    let flags = flags_from_file(Path::new(&path), model)?;
    let mut expanded = args[..3].to_vec();
    expanded.extend(flags.into_iter().map(OsString::from));
    expanded.extend(args[3..].iter().cloned());
    Ok(expanded)
}

/// The 1-based line on which `key` is set in `text` (for error messages).
fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|line| {
            let line = line.trim_start();
            line.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
                || line
                    .strip_prefix(&format!("\"{key}\""))
                    .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(1, |index| index + 1)
}

fn flags_from_file(path: &Path, model: &str) -> Result<Vec<String>> {
    let name = path.display();
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {name}"))?;
    let table: toml::Table = text.parse().map_err(|error: toml::de::Error| {
        // The parser's message already says "at line L, column C"; keep it on one line.
        let message = error.to_string().replace('\n', " ");
        anyhow!(
            "{name}: malformed TOML: {}",
            message.split_whitespace().collect::<Vec<_>>().join(" ")
        )
    })?;
    let command = crate::cli::command();
    let run = command
        .find_subcommand("run")
        .ok_or_else(|| anyhow!("internal: no run command"))?;
    let Some(model_command) = run.find_subcommand(model) else {
        // Let clap report the unknown model.
        return Ok(Vec::new());
    };
    let known: Vec<&str> = model_command
        .get_arguments()
        .filter_map(|arg| arg.get_long())
        .collect();

    let mut flags = Vec::new();
    for (key, value) in &table {
        let line = line_of(&text, key);
        if key == "model" {
            match value.as_str() {
                Some(named) if named == model => continue,
                Some(named) => bail!(
                    "{name} line {line}: the file is for model `{named}`, but the command runs `{model}`"
                ),
                None => bail!("{name} line {line}: `model` must be a string"),
            }
        }
        if key == "config" || !known.contains(&key.as_str()) {
            bail!(
                "{name} line {line}: unknown key `{key}` for model `{model}` (see `warpsim models`)"
            );
        }
        let flag = match value {
            toml::Value::String(text) => format!("--{key}={text}"),
            toml::Value::Integer(number) => format!("--{key}={number}"),
            toml::Value::Float(number) => format!("--{key}={number}"),
            toml::Value::Boolean(true) => format!("--{key}"),
            toml::Value::Boolean(false) => continue,
            _ => bail!("{name} line {line}: `{key}` must be a string, number or boolean"),
        };
        // Check this one value on its own, so that a bad value is reported with its line.
        let probe = ["warpsim", "run", model, flag.as_str()];
        if let Err(error) = crate::cli::command().try_get_matches_from(probe) {
            let first = error.render().to_string();
            let first = first.lines().next().unwrap_or("invalid value");
            let first = first.trim_start_matches("error: ");
            bail!("{name} line {line}: {first}");
        }
        flags.push(flag);
    }
    Ok(flags)
}
