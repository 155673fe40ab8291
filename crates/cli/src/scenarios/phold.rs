//! `warpsim run phold`.

use anyhow::{Result, anyhow};
use clap::Args;
use serde_json::Value;
use warpsim_core::{Discard, LogicalProcess};
use warpsim_models::phold::{Phold, PholdParams};

use crate::cli::{KernelArgs, RunArgs};
use crate::files::FileSet;
use crate::limits::{Demand, event_bytes, lp_bytes};
use crate::run::{Outcome, Scenario, run_config, run_on_kernel};

/// PHOLD's flags; defaults are the built-in scenario.
#[derive(Debug, Clone, Args)]
pub(crate) struct PholdArgs {
    /// Number of logical processes.
    #[arg(long, default_value_t = 16384)]
    pub(crate) lps: u32,
    /// Events per LP at the start (the population stays constant).
    #[arg(long, default_value_t = 1)]
    pub(crate) population: u32,
    /// Probability that an event goes to a uniformly random LP.
    #[arg(long, default_value_t = 0.25)]
    pub(crate) remote: f64,
    /// Smallest delay of any event.
    #[arg(long, default_value_t = 0.1)]
    pub(crate) lookahead: f64,
    /// Mean delay (lookahead + exponential with mean `mean - lookahead`).
    #[arg(long, default_value_t = 1.0)]
    pub(crate) mean: f64,
    /// End of simulated time.
    #[arg(long, default_value_t = 200.0)]
    pub(crate) end: f64,
    /// Busy-work iterations per event (event granularity).
    #[arg(long, default_value_t = 0)]
    pub(crate) work: u32,
    #[command(flatten)]
    pub(crate) kernel: KernelArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

impl PholdArgs {
    fn params(&self) -> PholdParams {
        PholdParams {
            lps: self.lps,
            population: self.population,
            remote: self.remote,
            lookahead: self.lookahead,
            mean: self.mean,
            end: self.end,
            work: self.work,
        }
    }
}

impl Scenario for PholdArgs {
    fn name(&self) -> &str {
        "phold"
    }

    fn run_args(&self) -> &RunArgs {
        &self.run
    }

    fn kernel_args(&self) -> Option<&KernelArgs> {
        Some(&self.kernel)
    }

    fn default_seed(&self) -> u64 {
        7
    }

    fn title(&self) -> String {
        format!(
            "PHOLD: {} LPs, population {}, remote {}, lookahead {}, mean {}, end {}, work {}",
            self.lps, self.population, self.remote, self.lookahead, self.mean, self.end, self.work
        )
    }

    fn params(&self) -> Value {
        serde_json::to_value(PholdArgs::params(self)).unwrap_or(Value::Null)
    }

    fn validate(&self) -> Result<()> {
        PholdArgs::params(self)
            .validate()
            .map_err(|error| anyhow!(error))
    }

    fn files(&self) -> FileSet {
        FileSet::with_config(self.run.config.as_ref())
    }

    fn demands(&self) -> Vec<Demand> {
        let lps = u128::from(self.lps);
        // The pending events are LPs × population: the larger factor is the flag to blame.
        let (flag, value) = if u128::from(self.population) > lps {
            ("--population", u64::from(self.population))
        } else {
            ("--lps", u64::from(self.lps))
        };
        vec![
            Demand::new("--lps", self.lps, "LPs", lps, lp_bytes::<Phold>()),
            Demand::new(
                flag,
                value,
                "pending events (LPs × population)",
                lps * u128::from(self.population),
                event_bytes::<<Phold as LogicalProcess>::Event>(),
            ),
        ]
    }

    fn run_once(&self, seed: u64, primary: bool) -> Result<Outcome> {
        let params = PholdArgs::params(self);
        let lps = params.build()?;
        let config = run_config(&self.kernel, seed, params.end);
        let result = run_on_kernel(&self.kernel, config, lps, &mut Discard, primary);
        Ok(Outcome::from_result(result))
    }
}
