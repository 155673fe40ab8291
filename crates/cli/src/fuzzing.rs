//! The parsers of untrusted input, for fuzz harnesses (`fuzz/` in the repository) and
//! property tests. Each takes arbitrary input and must return — an error for bad input —
//! without panicking, hanging or allocating without bound.
//!
//! ```
//! use warpsim_cli::fuzzing;
//! assert!(fuzzing::sweep_axis("gates=1..1e30").is_err());
//! assert_eq!(fuzzing::sweep_axis("gates=4..7"), Ok(4));
//! assert!(fuzzing::config_text("lps = 64\n", "phold").is_ok());
//! assert!(fuzzing::arguments(&["run", "phold", "--lps", "0"]).is_ok()); // clap accepts 0
//! assert!(fuzzing::arguments(&["run", "phold", "--lps", "x"]).is_err());
//! ```

use std::ffi::OsString;

/// Parses a `warpsim` command line (without the program name) as `warpsim` does, but reads no
/// file (`--config` is parsed as a flag, its file is not expanded: see [`config_text`]) and
/// runs nothing.
///
/// # Errors
///
/// The one-line message `warpsim` would print.
pub fn arguments<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Result<(), String> {
    let mut argv = vec![OsString::from("warpsim")];
    argv.extend(args.iter().map(|arg| arg.as_ref().to_os_string()));
    match crate::cli::parse(&crate::App::warpsim(), argv) {
        Ok(_) => Ok(()),
        Err(error) => Err(crate::text::clap_message(&error)),
    }
}

/// Turns the text of a TOML scenario for `model` into flags, as `--config` does.
///
/// # Errors
///
/// The one-line message `warpsim` would print.
pub fn config_text(text: &str, model: &str) -> Result<Vec<String>, String> {
    crate::config::flags_from_text(&crate::App::warpsim(), text, "scenario.toml", model)
        .map_err(|e| format!("{e:#}"))
}

/// Parses one `--set KEY=VALUES` of `warpsim sweep` and returns the number of values.
///
/// # Errors
///
/// The one-line message `warpsim` would print.
pub fn sweep_axis(spec: &str) -> Result<usize, String> {
    crate::analysis::sweep::parse_axis(spec)
        .map(|axis| axis.values.len())
        .map_err(|error| format!("{error:#}"))
}

/// One line as `warpsim` prints an error: whitespace collapsed, length bounded.
pub fn error_line(message: &str) -> String {
    crate::text::one_line(message)
}
