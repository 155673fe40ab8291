//! Example: the reneging bank. Customers arrive as a Poisson process, wait in one line for
//! the first free teller, and give up (renege) when their patience runs out first; service
//! and patience are exponential. Reported at the end: mean wait of the customers served,
//! fraction reneged, mean line length and teller utilisation.
//!
//! The model logic is the `impl LogicalProcess for Bank` below (30 lines of code, `finish`
//! included): a [`Station`] does the rest — tellers and the line in front of them, with
//! patience (joining schedules the renege, serving cancels it) and the figures the bank
//! reports ([`StationSummary`]). The model only says when customers arrive and how long a
//! service takes.
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

use warpsim_core::blocks::{Station, StationSummary, Ticket};
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
            tellers: Station::new(whole("tellers", self.tellers)?),
        };
        Ok(vec![bank; whole("branches", self.branches)? as usize])
    }
}

/// One branch: its tellers (and the line in front of them), and three distributions.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Bank {
    gaps: Exp<f64>,
    service: Exp<f64>,
    patience: Exp<f64>,
    tellers: Station<()>,
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

impl LogicalProcess for Bank {
    type Event = BankEvent;
    type Output = StationSummary;

    fn init(&mut self, ctx: &mut Ctx<Self>) {
        let gap = self.gaps.sample(ctx.rng());
        ctx.schedule(gap, BankEvent::Arrive);
    }

    fn on_event(&mut self, event: BankEvent, ctx: &mut Ctx<Self>) {
        let served = match event {
            BankEvent::Arrive => {
                let gap = self.gaps.sample(ctx.rng());
                ctx.schedule(gap, BankEvent::Arrive);
                self.tellers
                    .arrive(ctx, (), &self.patience, BankEvent::GiveUp)
            }
            BankEvent::GiveUp(ticket) => {
                self.tellers.renege(ctx, ticket);
                None
            }
            BankEvent::Depart => self.tellers.depart(ctx),
        };
        if served.is_some() {
            let service = self.service.sample(ctx.rng());
            ctx.schedule(service, BankEvent::Depart);
        }
    }

    fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
        ctx.emit(self.tellers.summary(ctx.now()));
    }
}

/// The bank's figures over all branches ([`StationSummary::pool`]).
pub fn summarise(outputs: &[Committed<StationSummary>]) -> StationSummary {
    StationSummary::pool(outputs.iter().map(|committed| &committed.output))
}

/// The whole command line for the bank (`run`, `sweep`, `--replications`, `--json`,
/// `--config`, `--kernel`…): these lines and a one-line `main` (`src/bin/bank.rs`). A run
/// ends at `end`, and its metrics are the branches' [`StationSummary`] fields (averaged over
/// the branches): the trait's defaults.
impl warpsim_cli::Model for BankParams {
    type Lp = Bank;
    fn build(&self) -> Result<Vec<Bank>, warpsim_cli::BoxError> {
        Ok(BankParams::build(self)?)
    }
}
