//! `warpsim run mmc`: the M/M/c queue, measured against Erlang C.

use std::fmt::Write;

use anyhow::{Result, anyhow};
use clap::Args;
use serde_json::{Map, Value};
use warpsim_models::mmc::{MmcParams, MmcSummary, erlang_c};

use crate::cli::{KernelArgs, RunArgs};
use crate::files::FileSet;
use crate::limits::{Demand, vec_bytes};
use crate::run::{Outcome, Scenario, run_config, run_on_kernel};

/// The M/M/c flags. Without `--customers` or `--end`, 100 000 customers are observed.
#[derive(Debug, Clone, Args)]
pub(crate) struct MmcArgs {
    /// Arrival rate λ (customers per time unit).
    #[arg(long, default_value_t = 4.0, allow_negative_numbers = true)]
    pub(crate) arrival_rate: f64,
    /// Service rate μ of one server.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub(crate) service_rate: f64,
    /// Number of servers c.
    #[arg(long, default_value_t = 5)]
    pub(crate) servers: u32,
    /// Observe the first N arrivals (each is served before the run ends) [default: 100000].
    #[arg(long, conflicts_with = "end")]
    pub(crate) customers: Option<u64>,
    /// Or observe the time window [0, END).
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) end: Option<f64>,
    /// Customers left out of the statistics at the start (the queue starts empty).
    #[arg(long, default_value_t = 0)]
    pub(crate) warmup: u64,
    #[command(flatten)]
    pub(crate) kernel: KernelArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

impl MmcArgs {
    fn params(&self) -> MmcParams {
        MmcParams {
            arrival_rate: self.arrival_rate,
            service_rate: self.service_rate,
            servers: self.servers,
            customers: match (self.customers, self.end) {
                (None, None) => Some(100_000),
                (customers, _) => customers,
            },
            end: self.end,
            warmup: self.warmup,
        }
    }
}

impl Scenario for MmcArgs {
    fn name(&self) -> &str {
        "mmc"
    }

    fn run_args(&self) -> &RunArgs {
        &self.run
    }

    fn kernel_args(&self) -> Option<&KernelArgs> {
        Some(&self.kernel)
    }

    fn default_seed(&self) -> u64 {
        1
    }

    fn title(&self) -> String {
        let params = MmcArgs::params(self);
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
        serde_json::to_value(MmcArgs::params(self)).unwrap_or(Value::Null)
    }

    fn validate(&self) -> Result<()> {
        MmcArgs::params(self)
            .validate()
            .map_err(|error| anyhow!(error))
    }

    fn files(&self) -> FileSet {
        FileSet::with_config(self.run.config.as_ref())
    }

    fn demands(&self) -> Vec<Demand> {
        // A stable queue stays short; an unstable one keeps (1 − cμ/λ) of the customers
        // waiting, each an arrival time in a `VecDeque<f64>`.
        let params = MmcArgs::params(self);
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

    fn run_once(&self, seed: u64, primary: bool) -> Result<Outcome> {
        let params = MmcArgs::params(self);
        let lps = params.build()?;
        let config = run_config(&self.kernel, seed, f64::INFINITY);
        let mut summary: Option<MmcSummary> = None;
        let mut sink = |committed: warpsim_core::Committed<MmcSummary>| {
            summary = Some(committed.output);
        };
        let run = run_on_kernel(&self.kernel, config, lps, &mut sink, primary)?;
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
