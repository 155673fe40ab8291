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

/// PHOLD's flags: its parameters (declared in `warpsim-models`) and the shared ones.
#[derive(Debug, Clone, Args)]
pub(crate) struct PholdArgs {
    #[command(flatten)]
    pub(crate) params: PholdParams,
    #[command(flatten)]
    pub(crate) kernel: KernelArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
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
        let p = &self.params;
        format!(
            "PHOLD: {} LPs, population {}, remote {}, lookahead {}, mean {}, end {}, work {}",
            p.lps, p.population, p.remote, p.lookahead, p.mean, p.end, p.work
        )
    }

    fn params(&self) -> Value {
        serde_json::to_value(&self.params).unwrap_or(Value::Null)
    }

    fn validate(&self) -> Result<()> {
        self.params.validate().map_err(|error| anyhow!(error))
    }

    fn files(&self) -> FileSet {
        FileSet::with_config(self.run.config.as_ref())
    }

    fn demands(&self) -> Vec<Demand> {
        let p = &self.params;
        let lps = u128::from(p.lps);
        // The pending events are LPs × population: the larger factor is the flag to blame.
        let (flag, value) = if u128::from(p.population) > lps {
            ("--population", u64::from(p.population))
        } else {
            ("--lps", u64::from(p.lps))
        };
        vec![
            Demand::new("--lps", p.lps, "LPs", lps, lp_bytes::<Phold>()),
            Demand::new(
                flag,
                value,
                "pending events (LPs × population)",
                lps * u128::from(p.population),
                event_bytes::<<Phold as LogicalProcess>::Event>(),
            ),
        ]
    }

    fn run_once(&self, seed: u64, primary: bool) -> Result<Outcome> {
        let params = &self.params;
        let lps = params.build()?;
        let config = run_config(&self.kernel, seed, params.end);
        let result = run_on_kernel(&self.kernel, config, lps, &mut Discard, primary)?;
        Ok(Outcome::from_result(result))
    }
}
