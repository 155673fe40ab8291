//! The reneging bank with the whole command line: `run`, `sweep`, `plan`,
//! `--replications`, `--json`, `--config`, `--kernel` and every kernel knob.
//!
//! ```text
//! cargo run --release -p warpsim-examples --bin bank_cli -- run bank --replications 30
//! cargo run --release -p warpsim-examples --bin bank_cli -- sweep bank --set tellers=2..5
//! ```

fn main() -> std::process::ExitCode {
    warpsim_cli::App::new()
        .model::<warpsim_examples::bank::BankParams>("bank")
        .main()
}
