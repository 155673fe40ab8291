//! Replications of the reneging bank: each metric's mean over independent runs with a
//! Student-t confidence interval (seeds derived from the base seed), on the kernel of your
//! choice. `BENCHMARKS.md` compares its figures with the SimPy program in
//! `benches/bank_simpy.py`.
//!
//! ```text
//! cargo run --release -p warpsim-examples --bin bank -- --replications 30 --kernel timewarp:2
//! ```

use clap::Parser;
use warpsim_core::blocks::Tally;
use warpsim_core::{Kernel, RunConfig, derive_seed};
use warpsim_examples::bank::{BankParams, summarise};
use warpsim_timewarp::AnyKernel;

/// Replications of the reneging bank.
#[derive(Debug, Parser)]
struct Args {
    /// Independent replications.
    #[arg(long, default_value_t = 20)]
    replications: u64,
    /// Base seed; replication i runs with derive_seed(seed, i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Minutes simulated per replication.
    #[arg(long, default_value_t = 10_000.0)]
    end: f64,
    /// sequential, timewarp or timewarp:THREADS.
    #[arg(long, default_value = "sequential")]
    kernel: String,
}

fn main() {
    let args = Args::parse();
    if let Err(message) = run(&args) {
        eprintln!("bank: {message}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), String> {
    let params = BankParams {
        end: args.end,
        ..BankParams::default()
    };
    let mut metrics = [Tally::new(); 4];
    for i in 0..args.replications {
        let config = RunConfig::new(derive_seed(args.seed, i)).end_time(params.end);
        let kernel =
            AnyKernel::parse(&args.kernel, config).map_err(|e| format!("--kernel: {e}"))?;
        let lps = params.build().map_err(|e| e.to_string())?;
        let mut outputs = Vec::new();
        kernel.run(lps, &mut outputs).map_err(|e| e.to_string())?;
        let summary = summarise(&outputs);
        let values = [
            summary.mean_wait,
            summary.fraction_reneged,
            summary.mean_line,
            summary.utilisation,
        ];
        for (tally, value) in metrics.iter_mut().zip(values) {
            tally.record(value);
        }
    }
    println!(
        "reneging bank: {} replications of {} minutes, {} tellers, λ = {}/min, mean service {} min, mean patience {} min",
        args.replications,
        params.end,
        params.tellers,
        params.arrival_rate,
        params.mean_service,
        params.mean_patience
    );
    for (name, tally) in [
        "mean wait (min)",
        "fraction reneged",
        "mean line length",
        "utilisation",
    ]
    .iter()
    .zip(&metrics)
    {
        let half = tally.half_width(0.95).map_err(|e| e.to_string())?;
        println!("{name:<18} {:.4} ± {:.4}", tally.mean(), half);
    }
    Ok(())
}
