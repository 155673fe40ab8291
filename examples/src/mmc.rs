//! Example: an M/M/c queue from the blocks — a [`Resource`] of `c` servers and a
//! [`WaitLine`] — with the mean wait, line length and utilisation at the end; checked against
//! Erlang C in the tests. `queues` independent queues (one LP each) make it parallel.
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

use warpsim_core::blocks::{Resource, Tally, Ticket, WaitLine};
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
            servers: Resource::new(self.servers),
            line: WaitLine::new(),
            waits: Tally::new(),
        };
        Ok(vec![queue; self.queues as usize])
    }
}

/// One M/M/c queue.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Queue {
    arrivals: Exp<f64>,
    service: Exp<f64>,
    servers: Resource,
    line: WaitLine<()>,
    waits: Tally,
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

/// What a queue reports at the end.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueueResult {
    /// Customers that started service.
    pub served: u64,
    /// Their mean wait in line (0 for those served at once).
    pub mean_wait: f64,
    /// Time-average number waiting.
    pub mean_line: f64,
    /// Time-average fraction of servers busy.
    pub utilisation: f64,
}

impl LogicalProcess for Queue {
    type Event = QueueEvent;
    type Output = QueueResult;

    fn init(&mut self, ctx: &mut Ctx<Self>) {
        let gap = self.arrivals.sample(ctx.rng());
        ctx.schedule(gap, QueueEvent::Arrive);
    }

    fn on_event(&mut self, event: QueueEvent, ctx: &mut Ctx<Self>) {
        match event {
            QueueEvent::Arrive => {
                let gap = self.arrivals.sample(ctx.rng());
                ctx.schedule(gap, QueueEvent::Arrive);
                if self.servers.try_acquire(ctx.now()) {
                    self.start(ctx, 0.0);
                } else {
                    self.line.join(ctx, (), f64::INFINITY, QueueEvent::Renege);
                }
            }
            QueueEvent::Depart => match self.line.serve(ctx) {
                Some(next) => self.start(ctx, next.waited),
                None => {
                    self.servers.release(ctx.now());
                }
            },
            QueueEvent::Renege(ticket) => {
                self.line.renege(ctx, ticket);
            }
        }
    }

    fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
        ctx.emit(QueueResult {
            served: self.waits.count(),
            mean_wait: self.waits.mean(),
            mean_line: self.line.mean_length(ctx.now()),
            utilisation: self.servers.utilisation(ctx.now()),
        });
    }
}

impl Queue {
    fn start(&mut self, ctx: &mut Ctx<Self>, waited: f64) {
        self.waits.record(waited);
        let service = self.service.sample(ctx.rng());
        ctx.schedule(service, QueueEvent::Depart);
    }
}
