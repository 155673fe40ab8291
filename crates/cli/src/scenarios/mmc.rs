//! `warpsim run mmc`: the M/M/c queue, measured against Erlang C.

use std::fmt::Write;

use anyhow::{Result, anyhow};
use serde_json::{Map, Value};
use warpsim_models::mmc::{MmcParams, MmcSummary, erlang_c};

use super::BuiltinModel;
use crate::cli::KernelArgs;
use crate::limits::{Demand, vec_bytes};
use crate::run::{Outcome, run_config, run_on_kernel};

impl BuiltinModel for MmcParams {
    const NAME: &'static str = "mmc";
    type Kernel = KernelArgs;

    fn default_seed(&self) -> u64 {
        1
    }

    fn title(&self) -> String {
        let params = self;
        let window = match (params.customers, params.end) {
            (Some(customers), _) => format!("{customers} customers"),
            (None, Some(end)) => format!("time window [0, {end})"),
            (None, None) => String::new(),
        };
        format!(
            "M/M/c: arrival rate {}, service rate {}, {} servers, {window}, warm-up {}",
            params.arrival_rate, params.service_rate, params.servers, params.warmup
        )
    }

    fn params(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn validate(&self) -> Result<()> {
        MmcParams::validate(self).map_err(|error| anyhow!(error))
    }

    fn demands(&self) -> Vec<Demand> {
        // A stable queue stays short; an unstable one keeps (1 − cμ/λ) of the customers
        // waiting, each an arrival time in a `VecDeque<f64>`.
        let params = self;
        let capacity = f64::from(params.servers) * params.service_rate;
        match params.customers {
            Some(customers) if params.arrival_rate > capacity => {
                let waiting = customers as f64 * (1.0 - capacity / params.arrival_rate);
                vec![Demand::new(
                    "--customers",
                    customers,
                    "waiting customers (the queue is unstable)",
                    waiting as u128,
                    vec_bytes::<f64>(),
                )]
            }
            _ => Vec::new(),
        }
    }

    fn run_once(&self, kernel: &KernelArgs, seed: u64, primary: bool) -> Result<Outcome> {
        let params = self;
        let lps = params.build()?;
        let config = run_config(kernel, seed, f64::INFINITY);
        let mut summary: Option<MmcSummary> = None;
        let mut sink = |committed: warpsim_core::Committed<MmcSummary>| {
            summary = Some(committed.output);
        };
        let run = run_on_kernel(kernel, config, lps, &mut sink, primary)?;
        let mut outcome = Outcome::from_result(run);
        let theory = erlang_c(params.arrival_rate, params.service_rate, params.servers);
        let mut metrics = Map::new();
        let mut text = String::new();
        if let Some(summary) = summary {
            metrics.insert("customers".into(), Value::from(summary.customers));
            metrics.insert("mean_wait".into(), number(summary.mean_wait));
            metrics.insert("p_wait".into(), number(summary.p_wait));
            metrics.insert("utilisation".into(), number(summary.utilisation));
            let _ = writeln!(
                text,
                "measured customers {}, mean wait {:.6}, P(wait) {:.6}, utilisation {:.6}",
                summary.customers, summary.mean_wait, summary.p_wait, summary.utilisation
            );
        }
        match theory {
            Some(theory) => {
                metrics.insert("erlang_c_wait".into(), number(theory.mean_wait));
                metrics.insert("erlang_c_p_wait".into(), number(theory.p_wait));
                metrics.insert("erlang_c_utilisation".into(), number(theory.utilisation));
                let _ = writeln!(
                    text,
                    "Erlang C           mean wait {:.6}, P(wait) {:.6}, utilisation {:.6}",
                    theory.mean_wait, theory.p_wait, theory.utilisation
                );
            }
            None => {
                let _ = writeln!(
                    text,
                    "Erlang C: no steady state (utilisation λ/(cμ) ≥ 1): the queue grows without bound"
                );
            }
        }
        outcome.metrics = metrics;
        outcome.text = text;
        Ok(outcome)
    }
}

/// A JSON number, or null for NaN (no customer measured).
fn number(value: f64) -> Value {
    if value.is_finite() {
        Value::from(value)
    } else {
        Value::Null
    }
}
