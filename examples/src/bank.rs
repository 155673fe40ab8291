//! Example: the reneging bank. Customers arrive as a Poisson process, wait in one line for
//! the first free teller, and give up (renege) when their patience runs out first; service
//! and patience are exponential. Reported at the end: mean wait of the customers served,
//! fraction reneged, mean line length and teller utilisation.
//!
//! The model logic is the `impl LogicalProcess for Bank` below (about 35 lines): the blocks
//! do the rest — [`Resource`] for the tellers, [`WaitLine`] with patience (joining schedules
//! the renege, serving cancels it), [`Tally`] for the waits.
//!
//! `branches` independent banks (one LP each) make the model parallel, for Time Warp.
//!
//! ```
//! use warpsim_core::{Kernel, RunConfig, Sequential};
//! use warpsim_examples::bank::{BankParams, summarise};
//!
//! let params = BankParams { end: 2_000.0, ..BankParams::default() };
//! let mut outputs = Vec::new();
//! Sequential::new(RunConfig::new(1).end_time(params.end))
//!     .run(params.build().unwrap(), &mut outputs)
//!     .unwrap();
//! let result = summarise(&outputs);
//! assert!(result.fraction_reneged > 0.0 && result.fraction_reneged < 0.5);
//! assert!(result.utilisation > 0.5 && result.utilisation < 1.0);
//! ```

use warpsim_core::blocks::{Resource, Tally, Ticket, WaitLine};
use warpsim_core::prelude::{Distribution, Exp};
use warpsim_core::{Committed, Ctx, FinishCtx, LogicalProcess};

use crate::{ParamError, positive};

/// The bank's parameters (rates per minute): declared once, they are also the flags, TOML
/// keys and JSON `params` of the `bank` command line (`src/bin/bank.rs`); the defaults are
/// [`BankParams::default`]'s.
#[derive(Debug, Clone, PartialEq, clap::Args, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BankParams {
    /// Customers arriving per minute (Poisson).
    #[arg(long, default_value_t = BankParams::default().arrival_rate)]
    pub arrival_rate: f64,
    /// Tellers.
    #[arg(long, default_value_t = BankParams::default().tellers)]
    pub tellers: u32,
    /// Mean service time, minutes (exponential).
    #[arg(long, default_value_t = BankParams::default().mean_service)]
    pub mean_service: f64,
    /// Mean patience, minutes (exponential).
    #[arg(long, default_value_t = BankParams::default().mean_patience)]
    pub mean_patience: f64,
    /// Independent branches (one LP each).
    #[arg(long, default_value_t = BankParams::default().branches)]
    pub branches: u32,
    /// Minutes simulated.
    #[arg(long, default_value_t = BankParams::default().end)]
    pub end: f64,
}

impl Default for BankParams {
    fn default() -> Self {
        BankParams {
            arrival_rate: 2.5,
            tellers: 3,
            mean_service: 1.0,
            mean_patience: 2.0,
            branches: 1,
            end: 10_000.0,
        }
    }
}

impl BankParams {
    /// The LPs: one [`Bank`] per branch.
    ///
    /// # Errors
    ///
    /// [`ParamError`] for a rate or time that is not a positive number, or no tellers or
    /// branches.
    pub fn build(&self) -> Result<Vec<Bank>, ParamError> {
        let exp = |param, mean: f64| {
            let rate = 1.0 / positive(param, mean)?;
            Exp::new(rate).map_err(|error| ParamError {
                param,
                message: error.to_string(),
            })
        };
        positive("end", self.end)?;
        let whole = |param, value: u32| match value {
            0 => Err(ParamError {
                param,
                message: "must be at least 1".into(),
            }),
            n => Ok(n),
        };
        let bank = Bank {
            gaps: exp(
                "arrival_rate",
                1.0 / positive("arrival_rate", self.arrival_rate)?,
            )?,
            service: exp("mean_service", self.mean_service)?,
            patience: exp("mean_patience", self.mean_patience)?,
            tellers: Resource::new(whole("tellers", self.tellers)?),
            line: WaitLine::new(),
            waits: Tally::new(),
        };
        Ok(vec![bank; whole("branches", self.branches)? as usize])
    }
}

/// One branch: its tellers, its line and what it has seen.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Bank {
    gaps: Exp<f64>,
    service: Exp<f64>,
    patience: Exp<f64>,
    tellers: Resource,
    line: WaitLine<()>,
    waits: Tally,
}

/// The bank's events.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum BankEvent {
    /// A customer arrives.
    Arrive,
    /// A teller finishes a service.
    Depart,
    /// The customer with this ticket runs out of patience.
    GiveUp(Ticket),
}

/// What a branch reports at the end.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BranchResult {
    /// Customers that arrived.
    pub arrived: u64,
    /// Customers that started service, and their mean wait.
    pub served: u64,
    /// Mean wait of the customers served (0 for those served at once).
    pub mean_wait: f64,
    /// Customers that reneged.
    pub reneged: u64,
    /// Time-average number in line.
    pub mean_line: f64,
    /// Time-average fraction of tellers busy.
    pub utilisation: f64,
}

impl LogicalProcess for Bank {
    type Event = BankEvent;
    type Output = BranchResult;

    fn init(&mut self, ctx: &mut Ctx<Self>) {
        let gap = self.gaps.sample(ctx.rng());
        ctx.schedule(gap, BankEvent::Arrive);
    }

    fn on_event(&mut self, event: BankEvent, ctx: &mut Ctx<Self>) {
        match event {
            BankEvent::Arrive => {
                let gap = self.gaps.sample(ctx.rng());
                ctx.schedule(gap, BankEvent::Arrive);
                if self.tellers.try_acquire(ctx.now()) {
                    self.serve(ctx, 0.0);
                } else {
                    let patience = self.patience.sample(ctx.rng());
                    self.line.join(ctx, (), patience, BankEvent::GiveUp);
                }
            }
            BankEvent::GiveUp(ticket) => _ = self.line.renege(ctx, ticket),
            BankEvent::Depart => match self.line.serve(ctx) {
                Some(next) => self.serve(ctx, next.waited),
                None => _ = self.tellers.release(ctx.now()),
            },
        }
    }

    fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
        let (served, reneged) = (self.waits.count(), self.line.reneged());
        ctx.emit(BranchResult {
            arrived: served + reneged + self.line.len() as u64,
            served,
            mean_wait: self.waits.mean(),
            reneged,
            mean_line: self.line.mean_length(ctx.now()),
            utilisation: self.tellers.utilisation(ctx.now()),
        });
    }
}

impl Bank {
    fn serve(&mut self, ctx: &mut Ctx<Self>, waited: f64) {
        self.waits.record(waited);
        let service = self.service.sample(ctx.rng());
        ctx.schedule(service, BankEvent::Depart);
    }
}

/// The bank's four figures, over all branches.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BankSummary {
    /// Mean wait of the customers served, minutes.
    pub mean_wait: f64,
    /// Fraction of arrivals that reneged.
    pub fraction_reneged: f64,
    /// Time-average number in line (per branch).
    pub mean_line: f64,
    /// Time-average fraction of tellers busy.
    pub utilisation: f64,
}

/// Combines the branches' results (weighted by customers served and arrived; the time
/// averages by branch).
pub fn summarise(outputs: &[Committed<BranchResult>]) -> BankSummary {
    let n = outputs.len().max(1) as f64;
    let sum = |f: fn(&BranchResult) -> f64| outputs.iter().map(|c| f(&c.output)).sum::<f64>();
    let served = sum(|r| r.served as f64).max(1.0);
    BankSummary {
        mean_wait: sum(|r| r.mean_wait * r.served as f64) / served,
        fraction_reneged: sum(|r| r.reneged as f64) / sum(|r| r.arrived as f64).max(1.0),
        mean_line: sum(|r| r.mean_line) / n,
        utilisation: sum(|r| r.utilisation) / n,
    }
}

/// The whole command line for the bank (`run`, `sweep`, `--replications`, `--json`,
/// `--config`, `--kernel`…): these lines and a one-line `main` (`src/bin/bank.rs`).
impl warpsim_cli::Model for BankParams {
    type Lp = Bank;
    fn end_time(&self) -> f64 {
        self.end
    }
    fn build(&self) -> Result<Vec<Bank>, warpsim_cli::BoxError> {
        Ok(BankParams::build(self)?)
    }
    fn metrics(&self, outputs: &[Committed<BranchResult>]) -> warpsim_cli::Metrics {
        warpsim_cli::Metrics::of(&summarise(outputs))
    }
}
