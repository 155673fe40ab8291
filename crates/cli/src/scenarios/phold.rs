//! `warpsim run phold`.

use anyhow::{Result, anyhow};
use serde_json::Value;
use warpsim_core::{Committed, Discard, LogicalProcess};
use warpsim_models::phold::{Phold, PholdParams, WatchedPhold};

use super::BuiltinModel;
use crate::cli::KernelArgs;
use crate::limits::{Demand, event_bytes, lp_bytes};
use crate::run::{Outcome, run_config, run_on_kernel};

impl BuiltinModel for PholdParams {
    const NAME: &'static str = "phold";
    type Kernel = KernelArgs;

    fn default_seed(&self) -> u64 {
        7
    }

    fn title(&self) -> String {
        let p = self;
        let watchdog = if p.watchdog > 0.0 {
            format!(", watchdog {}", p.watchdog)
        } else {
            String::new()
        };
        format!(
            "PHOLD: {} LPs, population {}, remote {}, lookahead {}, mean {}, end {}, work {}{watchdog}",
            p.lps, p.population, p.remote, p.lookahead, p.mean, p.end, p.work
        )
    }

    fn params(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn validate(&self) -> Result<()> {
        PholdParams::validate(self).map_err(|error| anyhow!(error))
    }

    fn demands(&self) -> Vec<Demand> {
        let p = self;
        if p.watchdog > 0.0 {
            let lps = u128::from(p.lps);
            return vec![
                Demand::new("--lps", p.lps, "LPs", lps, lp_bytes::<WatchedPhold>()),
                Demand::new(
                    "--lps",
                    p.lps,
                    "pending events (LPs × (population + 1))",
                    lps * (u128::from(p.population) + 1),
                    event_bytes::<<WatchedPhold as LogicalProcess>::Event>(),
                ),
            ];
        }
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

    fn run_once(&self, kernel: &KernelArgs, seed: u64, primary: bool) -> Result<Outcome> {
        // Every delay is at least the lookahead: the kernels may rely on it (and check it).
        let config = run_config(kernel, seed, self.end).lookahead(self.lookahead);
        if self.watchdog > 0.0 {
            // Each LP reports its count of timeouts at the end.
            let lps = self.build_watched()?;
            let mut timeouts = 0u64;
            let mut sink = |committed: Committed<u64>| timeouts += committed.output;
            let result = run_on_kernel(kernel, config, lps, &mut sink, primary)?;
            let mut outcome = Outcome::from_result(result);
            if outcome.error.is_none() {
                outcome
                    .metrics
                    .insert("timeouts".into(), Value::from(timeouts));
                outcome.text = format!("timeouts {timeouts}\n");
            }
            return Ok(outcome);
        }
        let lps = self.build()?;
        let result = run_on_kernel(kernel, config, lps, &mut Discard, primary)?;
        Ok(Outcome::from_result(result))
    }
}
