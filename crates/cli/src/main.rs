//! The `warpsim` command-line tool: a thin `main` over the `warpsim_cli` library, which
//! parses the arguments, runs the command and turns every failure into one line on stderr.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    warpsim_cli::App::warpsim().main()
}
