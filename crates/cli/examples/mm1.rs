//! Example: a user's own model with the whole command line — `run`, `sweep`, `plan`,
//! `--replications`, `--json`, `--config`, `--kernel` and every kernel knob — from a `main`
//! of one line.
//!
//! An M/M/1 queue: Poisson arrivals at rate λ, one server with exponential service at rate
//! μ. Each customer's wait in line is emitted when its service starts; the metrics are the
//! mean wait (Erlang's closed form: λ / (μ (μ − λ))) and the share of customers who waited
//! (ρ = λ / μ). `tests/user_model.rs` runs it end to end against those formulas.
//!
//! ```sh
//! cargo run --release -p warpsim-cli --example mm1 -- run mm1 --replications 20
//! cargo run --release -p warpsim-cli --example mm1 -- sweep mm1 --set arrival-rate=0.5,0.7,0.9
//! ```

use std::collections::VecDeque;

use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};
use warpsim_cli::{App, BoxError, Metrics, Model};
use warpsim_core::{Committed, Ctx, LogicalProcess};

/// The parameters: declared once, they are the flags, the TOML keys and the JSON `params`.
#[derive(Debug, Clone, clap::Args, Serialize)]
struct Mm1 {
    /// Arrival rate λ (customers per time unit).
    #[arg(long, default_value_t = 0.8)]
    arrival_rate: f64,
    /// Service rate μ.
    #[arg(long, default_value_t = 1.0)]
    service_rate: f64,
    /// Customers served before the run ends.
    #[arg(long, default_value_t = 20_000)]
    customers: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum Event {
    Arrival,
    Departure,
}

/// The queue: arrival times of the customers in line, and whether the server is busy.
/// (serde: the command line can checkpoint it.)
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Queue {
    interarrival: Exp<f64>,
    service: Exp<f64>,
    customers: u64,
    arrived: u64,
    line: VecDeque<f64>,
    busy: bool,
}

impl Queue {
    fn serve(&mut self, arrived_at: f64, ctx: &mut Ctx<'_, Self>) {
        self.busy = true;
        ctx.emit(ctx.now().as_f64() - arrived_at);
        let service = self.service.sample(ctx.rng());
        ctx.send(ctx.me(), service, Event::Departure);
    }
}

impl LogicalProcess for Queue {
    type Event = Event;
    type Output = f64;

    fn init(&mut self, ctx: &mut Ctx<'_, Self>) {
        let gap = self.interarrival.sample(ctx.rng());
        ctx.send(ctx.me(), gap, Event::Arrival);
    }

    fn on_event(&mut self, event: Event, ctx: &mut Ctx<'_, Self>) {
        match event {
            Event::Arrival => {
                self.arrived += 1;
                if self.arrived < self.customers {
                    let gap = self.interarrival.sample(ctx.rng());
                    ctx.send(ctx.me(), gap, Event::Arrival);
                }
                if self.busy {
                    self.line.push_back(ctx.now().as_f64());
                } else {
                    self.serve(ctx.now().as_f64(), ctx);
                }
            }
            Event::Departure => match self.line.pop_front() {
                Some(arrived_at) => self.serve(arrived_at, ctx),
                None => self.busy = false,
            },
        }
    }
}

impl Model for Mm1 {
    type Lp = Queue;

    fn end_time(&self) -> f64 {
        f64::INFINITY
    }

    fn build(&self) -> Result<Vec<Queue>, BoxError> {
        Ok(vec![Queue {
            interarrival: Exp::new(self.arrival_rate).map_err(|_| {
                format!("arrival-rate must be positive (got {})", self.arrival_rate)
            })?,
            service: Exp::new(self.service_rate).map_err(|_| {
                format!("service-rate must be positive (got {})", self.service_rate)
            })?,
            customers: self.customers,
            arrived: 0,
            line: VecDeque::new(),
            busy: false,
        }])
    }

    fn metrics(&self, waits: &[Committed<f64>]) -> Metrics {
        let served = waits.len() as f64;
        let waited = waits.iter().filter(|wait| wait.output > 0.0).count() as f64;
        let total: f64 = waits.iter().map(|wait| wait.output).sum();
        Metrics::new()
            .with("mean_wait", total / served)
            .with("p_wait", waited / served)
            .with("served", served)
    }
}

fn main() -> std::process::ExitCode {
    App::new().model::<Mm1>("mm1").main()
}
