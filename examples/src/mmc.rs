//! Example: an M/M/c queue from the blocks — a [`Station`] of `c` servers and the line in
//! front of them — with the mean wait, line length and utilisation at the end; checked
//! against Erlang C in the tests. `queues` independent queues (one LP each) make it parallel.
//!
//! ```
//! use warpsim_core::{Kernel, RunConfig, Sequential};
//! use warpsim_examples::mmc::QueueParams;
//!
//! let params = QueueParams { end: 5_000.0, ..QueueParams::default() };
//! let mut outputs = Vec::new();
//! Sequential::new(RunConfig::new(2).end_time(params.end))
//!     .run(params.build().unwrap(), &mut outputs)
//!     .unwrap();
//! // ρ = λ / (c μ) = 2.4 / 3.
//! assert!((outputs[0].output.utilisation - 0.8).abs() < 0.05);
//! ```

use warpsim_core::blocks::{Station, StationSummary, Ticket};
use warpsim_core::prelude::{Distribution, Exp};
use warpsim_core::{Ctx, FinishCtx, LogicalProcess};

use crate::{ParamError, positive};

/// The queue's parameters.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueueParams {
    /// Arrivals per time unit (Poisson), λ.
    pub arrival_rate: f64,
    /// Services per time unit per server (exponential), μ.
    pub service_rate: f64,
    /// Servers, c.
    pub servers: u32,
    /// Independent queues (one LP each).
    pub queues: u32,
    /// Time simulated.
    pub end: f64,
}

impl Default for QueueParams {
    fn default() -> Self {
        QueueParams {
            arrival_rate: 2.4,
            service_rate: 1.0,
            servers: 3,
            queues: 1,
            end: 20_000.0,
        }
    }
}

impl QueueParams {
    /// One [`Queue`] per queue.
    ///
    /// # Errors
    ///
    /// [`ParamError`] for a rate that is not positive, no servers or no queues.
    pub fn build(&self) -> Result<Vec<Queue>, ParamError> {
        let exp = |param, rate| {
            Exp::new(positive(param, rate)?).map_err(|error| ParamError {
                param,
                message: error.to_string(),
            })
        };
        positive("end", self.end)?;
        if self.servers == 0 || self.queues == 0 {
            let param = if self.servers == 0 {
                "servers"
            } else {
                "queues"
            };
            return Err(ParamError {
                param,
                message: "must be at least 1".into(),
            });
        }
        let queue = Queue {
            arrivals: exp("arrival_rate", self.arrival_rate)?,
            service: exp("service_rate", self.service_rate)?,
            servers: Station::new(self.servers),
        };
        Ok(vec![queue; self.queues as usize])
    }
}

/// One M/M/c queue: a [`Station`] of `c` servers whose customers never give up.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Queue {
    arrivals: Exp<f64>,
    service: Exp<f64>,
    servers: Station<()>,
}

/// The queue's events.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum QueueEvent {
    /// A customer arrives.
    Arrive,
    /// A server finishes.
    Depart,
    /// Never sent: customers here have infinite patience.
    Renege(Ticket),
}

impl LogicalProcess for Queue {
    type Event = QueueEvent;
    type Output = StationSummary;

    fn init(&mut self, ctx: &mut Ctx<Self>) {
        let gap = self.arrivals.sample(ctx.rng());
        ctx.schedule(gap, QueueEvent::Arrive);
    }

    fn on_event(&mut self, event: QueueEvent, ctx: &mut Ctx<Self>) {
        let served = match event {
            QueueEvent::Arrive => {
                let gap = self.arrivals.sample(ctx.rng());
                ctx.schedule(gap, QueueEvent::Arrive);
                self.servers
                    .arrive(ctx, (), f64::INFINITY, QueueEvent::Renege)
            }
            QueueEvent::Depart => self.servers.depart(ctx),
            QueueEvent::Renege(ticket) => {
                self.servers.renege(ctx, ticket);
                None
            }
        };
        if served.is_some() {
            let service = self.service.sample(ctx.rng());
            ctx.schedule(service, QueueEvent::Depart);
        }
    }

    fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
        ctx.emit(self.servers.summary(ctx.now()));
    }
}
