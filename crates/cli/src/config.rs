//! Scenarios from TOML: `warpsim run <model> --config file.toml`.
//!
//! The file's keys are the model's flag names (`lps = 1024`, `queue = "heap"`); an optional
//! `model = "phold"` must match the model on the command line. The file's values are turned
//! into flags placed *before* the user's own flags, and the parser lets a later flag override
//! an earlier one, so flags on the command line win over the file.
//!
//! Errors name the line of the key (taken from the parser's spans, so a `[table]` or a dotted
//! key is found where it is) and show long values as excerpts.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};

use crate::text::excerpt;

/// Finds `--config FILE` in the raw arguments of `warpsim run <model> …` and splices the
/// file's settings in as flags right after the model name. Other commands pass through.
///
/// The path may be any bytes the system allows (it is never required to be Unicode).
///
/// # Errors
///
/// `--config` without a file name, a file that cannot be read, or a bad setting in it.
pub(crate) fn expand(app: &crate::App, args: Vec<OsString>) -> Result<Vec<OsString>> {
    // Only `warpsim run <model> …` takes a config file.
    if args.get(1).and_then(|arg| arg.to_str()) != Some("run") {
        return Ok(args);
    }
    let Some(model) = args.get(2).and_then(|arg| arg.to_str()) else {
        return Ok(args);
    };
    let Some(path) = config_path(&args[3.min(args.len())..])? else {
        return Ok(args);
    };
    let flags = flags_from_file(app, &path, model)?;
    let mut expanded = args[..3].to_vec();
    expanded.extend(flags.into_iter().map(OsString::from));
    expanded.extend(args[3..].iter().cloned());
    Ok(expanded)
}

/// The last `--config FILE` or `--config=FILE` among `args` (before a `--`), if any.
fn config_path(args: &[OsString]) -> Result<Option<PathBuf>> {
    let mut path = None;
    let mut index = 0;
    while index < args.len() {
        let arg = &args[index];
        if arg == "--" {
            break;
        }
        if arg == "--config" {
            let value = args
                .get(index + 1)
                .ok_or_else(|| anyhow!("--config needs a file name"))?;
            path = Some(PathBuf::from(value));
            index += 2;
            continue;
        }
        if let Some(value) = strip_prefix_os(arg, "--config=") {
            path = Some(PathBuf::from(value));
        }
        index += 1;
    }
    Ok(path)
}

/// `arg` without `prefix`, for any bytes after the prefix.
#[cfg(unix)]
fn strip_prefix_os(arg: &OsStr, prefix: &str) -> Option<OsString> {
    use std::os::unix::ffi::OsStrExt;
    arg.as_bytes()
        .strip_prefix(prefix.as_bytes())
        .map(|rest| OsStr::from_bytes(rest).to_os_string())
}

/// `arg` without `prefix` (on this platform, only for a Unicode argument).
#[cfg(not(unix))]
fn strip_prefix_os(arg: &OsStr, prefix: &str) -> Option<OsString> {
    if arg.as_encoded_bytes().starts_with(prefix.as_bytes()) && arg.to_str().is_none() {
        // Reported by clap, which reads the same argument as a path.
        return None;
    }
    arg.to_str()?.strip_prefix(prefix).map(OsString::from)
}

/// The 1-based line and column of byte `offset` of `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// The largest scenario file read: a scenario is a few lines, so this is only a guard against
/// reading a device or a huge file by mistake.
const MAX_CONFIG_BYTES: u64 = 256 << 20;

fn flags_from_file(app: &crate::App, path: &Path, model: &str) -> Result<Vec<String>> {
    let shown = path.display().to_string();
    let name = excerpt(&shown);
    let text = crate::files::read_text(path, MAX_CONFIG_BYTES)?;
    flags_from_text(app, &text, &name, model)
}

/// The flags the TOML `text` sets for `model`, checked one by one with clap; `name` names the
/// file in messages.
///
/// # Errors
///
/// Malformed TOML, an unknown key, a value of the wrong type, a value clap refuses, or a
/// `model` key for another model: one line naming the file, the line and the key.
pub(crate) fn flags_from_text(
    app: &crate::App,
    text: &str,
    name: &str,
    model: &str,
) -> Result<Vec<String>> {
    let table: toml::Table = text.parse().map_err(|error: toml::de::Error| {
        let (line, column) = position(text, error.span().map_or(0, |span| span.start));
        anyhow!(
            "{name} line {line}, column {column}: malformed TOML: {}",
            crate::text::shorten_quoted(error.message().trim())
        )
    })?;
    // The same text parsed again, for the place of each key.
    let spans = toml::de::DeTable::parse(text).map_err(|error| anyhow!("{name}: {error}"))?;
    let line_of = |key: &str| {
        spans
            .get_ref()
            .iter()
            .find(|(known, _)| known.get_ref().as_ref() == key)
            .map_or(1, |(known, _)| position(text, known.span().start).0)
    };

    let Some(model_command) = app.entry(model).map(|entry| entry.command()) else {
        // Let clap report the unknown model.
        return Ok(Vec::new());
    };
    let known: Vec<&str> = model_command
        .get_arguments()
        .filter_map(|arg| arg.get_long())
        .collect();

    let mut entries: Vec<(usize, &String, &toml::Value)> = table
        .iter()
        .map(|(key, value)| (line_of(key), key, value))
        .collect();
    entries.sort_by_key(|(line, _, _)| *line);
    let mut flags = Vec::new();
    for (line, key, value) in entries {
        let key_shown = excerpt(key);
        if key == "model" {
            match value.as_str() {
                Some(named) if named == model => continue,
                Some(named) => bail!(
                    "{name} line {line}: the file is for model `{}`, but the command runs \
                     `{model}`",
                    excerpt(named)
                ),
                None => bail!("{name} line {line}: `model` must be a string"),
            }
        }
        if key == "config" || !known.contains(&key.as_str()) {
            bail!(
                "{name} line {line}: unknown key `{key_shown}` for model `{model}` (see \
                 `{} models`)",
                app.program()
            );
        }
        let flag = match value {
            toml::Value::String(text) => format!("--{key}={text}"),
            toml::Value::Integer(number) => format!("--{key}={number}"),
            toml::Value::Float(number) => format!("--{key}={number}"),
            toml::Value::Boolean(true) => format!("--{key}"),
            toml::Value::Boolean(false) => continue,
            toml::Value::Table(_) => bail!(
                "{name} line {line}: `{key_shown}` is a table; it must be a string, number or \
                 boolean"
            ),
            _ => bail!("{name} line {line}: `{key_shown}` must be a string, number or boolean"),
        };
        // Check this one value on its own, so that a bad value is reported with its line.
        let probe = [app.program(), "run", model, flag.as_str()].map(OsString::from);
        if let Err(error) = crate::cli::parse(app, probe.to_vec()) {
            bail!("{name} line {line}: {}", crate::text::clap_message(&error));
        }
        flags.push(flag);
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_and_keys_are_reported_on_their_own_line() {
        let error = flags_from_text(
            &crate::App::warpsim(),
            "lps = 64\n\n[extra]\nx = 1\n",
            "f.toml",
            "phold",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("f.toml line 3: unknown key `extra`"),
            "{error}"
        );
        let error = flags_from_text(
            &crate::App::warpsim(),
            "lps = 64\nend = 30\nlookahead.x = 1\n",
            "f.toml",
            "phold",
        )
        .unwrap_err()
        .to_string();
        assert!(error.starts_with("f.toml line 3:"), "{error}");
        let error = flags_from_text(
            &crate::App::warpsim(),
            "lps = 64\nend = = 3\n",
            "f.toml",
            "phold",
        )
        .unwrap_err()
        .to_string();
        assert!(error.starts_with("f.toml line 2, column"), "{error}");
    }

    #[test]
    fn huge_values_are_not_echoed() {
        let value = "9".repeat(1_000_000);
        for text in [
            format!("lps = \"{value}\"\n"),
            format!("{value} = 1\n"),
            format!("model = \"{value}\"\n"),
            format!("lps = {value}\n"),
        ] {
            let error = flags_from_text(&crate::App::warpsim(), &text, "f.toml", "phold")
                .unwrap_err()
                .to_string();
            assert!(error.len() < 400, "{}", &error[..400]);
        }
    }

    #[test]
    fn non_unicode_config_paths_are_found() {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let args = [OsStr::from_bytes(b"--config=\xff.toml").to_os_string()];
            assert_eq!(
                config_path(&args).unwrap().unwrap().as_os_str().as_bytes(),
                b"\xff.toml"
            );
        }
        let args = ["--config", "a.toml", "--", "--config", "b.toml"].map(OsString::from);
        assert_eq!(config_path(&args).unwrap(), Some(PathBuf::from("a.toml")));
    }
}
