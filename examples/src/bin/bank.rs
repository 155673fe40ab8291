//! The reneging bank with the whole `warpsim` command line: `run`, `sweep`, `plan`,
//! `--replications`, `--json`, `--config`, `--kernel` and every kernel knob.
//! `BENCHMARKS.md` compares its figures with the SimPy program in `benches/bank_simpy.py`.
//!
//! ```text
//! cargo run --release -p warpsim-examples --bin bank -- run bank --replications 50
//! cargo run --release -p warpsim-examples --bin bank -- sweep bank --set tellers=2,3,4 --replications 10
//! ```

use warpsim_examples::bank::BankParams;

fn main() -> std::process::ExitCode {
    warpsim_cli::App::new().model::<BankParams>("bank").main()
}
