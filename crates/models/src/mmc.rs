//! M/M/c: Poisson arrivals, exponential service, `c` servers, one FIFO queue — the queue with a
//! known answer (Erlang C), used to validate warpsim's stochastic machinery.
//!
//! Customers arrive at rate λ (`arrival_rate`); each needs an exponential service of rate μ
//! (`service_rate`) from one of `servers` identical servers, and waits in one first-come,
//! first-served queue when all are busy. When `ρ = λ / (c·μ) < 1` the queue is stable and
//! [`erlang_c`] gives its steady state: the probability of waiting, the mean wait in queue
//! `Wq` and the utilisation `ρ`. A run reports the same quantities, measured
//! ([`MmcSummary`]); over replications their confidence intervals must cover the formula.
//!
//! A run observes either the first `customers` arrivals (then lets the queue drain so every
//! one of them is served) or the time window `[0, end)`. The first `warmup` customers are left
//! out of the statistics, because the queue starts empty rather than in its steady state.
//!
//! ```
//! use warpsim_core::{Kernel, RunConfig, Sequential};
//! use warpsim_models::mmc::{MmcParams, erlang_c};
//!
//! let params = MmcParams { customers: Some(20_000), warmup: 1000, ..MmcParams::default() };
//! let mut outputs = Vec::new();
//! Sequential::new(RunConfig::new(5)).run(params.build().unwrap(), &mut outputs).unwrap();
//! let measured = outputs[0].output;
//! let theory = erlang_c(params.arrival_rate, params.service_rate, params.servers).unwrap();
//! assert!((measured.utilisation - theory.utilisation).abs() < 0.03);
//! assert!((measured.mean_wait - theory.mean_wait).abs() < 0.25 * theory.mean_wait);
//! ```
//!
//! # Why one LP
//!
//! The servers share one queue, and every arrival and departure reads and changes it, so the
//! whole system is one logical process (as the feeding station is); the model is still an
//! ordinary warpsim model and runs on every kernel.

use std::collections::VecDeque;

use rand_distr::{Distribution, Exp};
use warpsim_core::{Ctx, EventHandle, LogicalProcess};

use crate::{ParamError, check_range};

/// The M/M/c scenario. Defaults: λ = 4, μ = 1, 5 servers (ρ = 0.8), 100 000 customers.
///
/// ```
/// use warpsim_models::mmc::MmcParams;
/// assert!(MmcParams::default().validate().is_ok());
/// assert!(MmcParams { servers: 0, ..MmcParams::default() }.validate().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct MmcParams {
    /// Arrival rate λ (customers per time unit).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = MmcParams::default().arrival_rate, allow_negative_numbers = true))]
    pub arrival_rate: f64,
    /// Service rate μ of one server.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = MmcParams::default().service_rate, allow_negative_numbers = true))]
    pub service_rate: f64,
    /// Number of servers c.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = MmcParams::default().servers))]
    pub servers: u32,
    /// Observe the first N arrivals (each is served before the run ends) [default: 100000].
    // On the command line the default applies only when `--end` is not given either (the
    // text above says it, so clap's own default note is hidden).
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            conflicts_with = "end",
            default_value = "100000",
            default_value_if("end", clap::builder::ArgPredicate::IsPresent, None),
            hide_default_value = true
        )
    )]
    pub customers: Option<u64>,
    /// Or observe the time window [0, END).
    #[cfg_attr(feature = "clap", arg(long, allow_negative_numbers = true))]
    pub end: Option<f64>,
    /// Customers left out of the statistics at the start (the queue starts empty).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = MmcParams::default().warmup))]
    pub warmup: u64,
}

impl Default for MmcParams {
    fn default() -> Self {
        MmcParams {
            arrival_rate: 4.0,
            service_rate: 1.0,
            servers: 5,
            customers: Some(100_000),
            end: None,
            warmup: 0,
        }
    }
}

impl MmcParams {
    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter: rates that are not positive, no
    /// servers, no customers, a bad end time, or neither a customer count nor an end time, or
    /// a warm-up that leaves no customer to observe.
    pub fn validate(&self) -> Result<(), ParamError> {
        for (param, rate) in [
            ("arrival-rate", self.arrival_rate),
            ("service-rate", self.service_rate),
        ] {
            check_range(param, rate, 0.0, f64::MAX)?;
            if rate <= 0.0 {
                return Err(ParamError::new(
                    param,
                    format!("must be positive (got {rate})"),
                ));
            }
        }
        if self.servers == 0 {
            return Err(ParamError::new("servers", "must be at least 1 (got 0)"));
        }
        match (self.customers, self.end) {
            (Some(0), _) => Err(ParamError::new("customers", "must be at least 1 (got 0)")),
            (Some(customers), _) if self.warmup >= customers => Err(ParamError::new(
                "warmup",
                format!(
                    "must be less than the number of customers {customers} (got {})",
                    self.warmup
                ),
            )),
            (Some(_), _) => Ok(()),
            (None, Some(end)) => {
                check_range("end", end, 0.0, f64::MAX)?;
                if end <= 0.0 {
                    return Err(ParamError::new(
                        "end",
                        format!("must be positive (got {end})"),
                    ));
                }
                Ok(())
            }
            (None, None) => Err(ParamError::new(
                "customers",
                "give a number of customers or an end time",
            )),
        }
    }

    /// Checks the parameters and makes the model: one [`MmcQueue`] LP.
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter.
    pub fn build(&self) -> Result<Vec<MmcQueue>, ParamError> {
        self.validate()?;
        // `validate` checked the rates are positive and finite, so these cannot fail.
        let (Ok(interarrival), Ok(service)) =
            (Exp::new(self.arrival_rate), Exp::new(self.service_rate))
        else {
            return Err(ParamError::new("arrival-rate", "invalid rate"));
        };
        Ok(vec![MmcQueue {
            interarrival,
            service,
            servers: self.servers,
            customers: self.customers,
            end: if self.customers.is_some() {
                None
            } else {
                self.end
            },
            warmup: self.warmup,
            waiting: VecDeque::new(),
            busy: 0,
            arrived: 0,
            closed: false,
            next_arrival: None,
            last_change: 0.0,
            busy_area: 0.0,
            warm: None,
            close: None,
            counted: 0,
            delayed: 0,
            wait_sum: 0.0,
        }])
    }
}

/// An event of the M/M/c queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MmcEvent {
    /// A customer arrives.
    Arrival,
    /// A server finishes a service.
    Departure,
    /// The observation window ends (time-window runs only).
    Close,
}

/// What an M/M/c run measured over its observed customers (emitted once, when the
/// observation ends).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MmcSummary {
    /// Customers whose waits were measured (after the warm-up).
    pub customers: u64,
    /// Mean time in queue before service (`Wq`); NaN when no customer was measured.
    pub mean_wait: f64,
    /// Fraction of the measured customers who had to wait.
    pub p_wait: f64,
    /// Mean fraction of busy servers between the end of the warm-up and the end of the
    /// observation (the last observed arrival, or `end`).
    pub utilisation: f64,
    /// Length of that time span.
    pub horizon: f64,
}

/// The M/M/c queue as one logical process. See the [module docs](self).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct MmcQueue {
    interarrival: Exp<f64>,
    service: Exp<f64>,
    servers: u32,
    customers: Option<u64>,
    end: Option<f64>,
    warmup: u64,
    /// Waiting customers: (arrival index, arrival time), first come first served.
    waiting: VecDeque<(u64, f64)>,
    busy: u32,
    arrived: u64,
    /// No more arrivals are accepted (and, for time windows, no more services start).
    closed: bool,
    next_arrival: Option<EventHandle>,
    last_change: f64,
    /// Integral of the number of busy servers over time.
    busy_area: f64,
    /// (time, busy area) when the warm-up ended.
    warm: Option<(f64, f64)>,
    /// (time, busy area) when the observation ended.
    close: Option<(f64, f64)>,
    counted: u64,
    delayed: u64,
    wait_sum: f64,
}

impl MmcQueue {
    fn advance_clock(&mut self, now: f64) {
        self.busy_area += f64::from(self.busy) * (now - self.last_change);
        self.last_change = now;
    }

    fn start_service(&mut self, index: u64, wait: f64, ctx: &mut Ctx<'_, Self>) {
        self.busy += 1;
        if index >= self.warmup {
            self.counted += 1;
            self.wait_sum += wait;
            if wait > 0.0 {
                self.delayed += 1;
            }
        }
        let service = self.service.sample(ctx.rng());
        ctx.schedule(service, MmcEvent::Departure);
    }

    fn summary(&self) -> MmcSummary {
        let (warm_time, warm_area) = self.warm.unwrap_or((f64::NAN, f64::NAN));
        let (close_time, close_area) = self.close.unwrap_or((f64::NAN, f64::NAN));
        let horizon = close_time - warm_time;
        let counted = self.counted as f64;
        MmcSummary {
            customers: self.counted,
            mean_wait: self.wait_sum / counted,
            p_wait: self.delayed as f64 / counted,
            utilisation: (close_area - warm_area) / (f64::from(self.servers) * horizon),
            horizon,
        }
    }

    fn close_window(&mut self, now: f64) {
        self.closed = true;
        self.close = Some((now, self.busy_area));
        if self.warm.is_none() {
            self.warm = Some((now, self.busy_area));
        }
    }
}

impl LogicalProcess for MmcQueue {
    type Event = MmcEvent;
    type Output = MmcSummary;

    fn init(&mut self, ctx: &mut Ctx<'_, Self>) {
        if let Some(end) = self.end {
            ctx.schedule(end, MmcEvent::Close);
        }
        if self.warmup == 0 {
            self.warm = Some((0.0, 0.0));
        }
        let first = self.interarrival.sample(ctx.rng());
        self.next_arrival = Some(ctx.schedule(first, MmcEvent::Arrival));
    }

    fn on_event(&mut self, event: MmcEvent, ctx: &mut Ctx<'_, Self>) {
        let now = ctx.now().as_f64();
        self.advance_clock(now);
        match event {
            MmcEvent::Arrival => {
                let index = self.arrived;
                self.arrived += 1;
                if index == self.warmup && self.warm.is_none() {
                    self.warm = Some((now, self.busy_area));
                }
                if self.busy < self.servers {
                    self.start_service(index, 0.0, ctx);
                } else {
                    self.waiting.push_back((index, now));
                }
                if self
                    .customers
                    .is_some_and(|customers| self.arrived >= customers)
                {
                    // The last observed arrival: the window closes, the queue drains.
                    self.close_window(now);
                    self.next_arrival = None;
                } else {
                    let gap = self.interarrival.sample(ctx.rng());
                    self.next_arrival = Some(ctx.schedule(gap, MmcEvent::Arrival));
                }
            }
            MmcEvent::Departure => {
                self.busy -= 1;
                // Customer runs serve every observed customer; time windows stop at `end`.
                let serve_more = self.end.is_none() || !self.closed;
                if serve_more && let Some((index, arrival)) = self.waiting.pop_front() {
                    self.start_service(index, now - arrival, ctx);
                }
                if self.end.is_none() && self.closed && self.busy == 0 && self.waiting.is_empty() {
                    ctx.emit(self.summary());
                }
            }
            MmcEvent::Close => {
                self.close_window(now);
                if let Some(handle) = self.next_arrival.take() {
                    ctx.cancel(handle);
                }
                ctx.emit(self.summary());
            }
        }
    }
}

/// The steady state of an M/M/c queue, from the Erlang C formula.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErlangC {
    /// Probability that an arriving customer waits, `C(c, a)` with `a = λ/μ`.
    pub p_wait: f64,
    /// Mean wait in queue, `Wq = C(c, a) / (c·μ − λ)`.
    pub mean_wait: f64,
    /// Server utilisation `ρ = λ / (c·μ)`.
    pub utilisation: f64,
    /// Mean number waiting, `Lq = λ · Wq` (Little's law).
    pub mean_queue: f64,
}

/// The Erlang C steady state of an M/M/c queue, or `None` when it has none (`ρ ≥ 1`, or a rate
/// that is not positive, or no servers).
///
/// # Implementation
///
/// The Erlang B blocking probability by its recurrence `B(0) = 1`,
/// `B(k) = a·B(k−1) / (k + a·B(k−1))`, then `C = c·B / (c − a·(1 − B))`. The recurrence never
/// forms `a^c / c!`, so it stays accurate for thousands of servers.
///
/// ```
/// use warpsim_models::mmc::erlang_c;
/// // M/M/1 with ρ = 0.5: P(wait) = ρ, Wq = ρ / (μ − λ) = 1.
/// let mm1 = erlang_c(0.5, 1.0, 1).unwrap();
/// assert!((mm1.p_wait - 0.5).abs() < 1e-12 && (mm1.mean_wait - 1.0).abs() < 1e-12);
/// // M/M/2 with λ = 1, μ = 1: C = 1/3, Wq = 1/3.
/// let mm2 = erlang_c(1.0, 1.0, 2).unwrap();
/// assert!((mm2.p_wait - 1.0 / 3.0).abs() < 1e-12);
/// assert!(erlang_c(2.0, 1.0, 2).is_none());
/// ```
pub fn erlang_c(arrival_rate: f64, service_rate: f64, servers: u32) -> Option<ErlangC> {
    let rates_ok = arrival_rate > 0.0 && service_rate > 0.0;
    if !rates_ok || servers == 0 {
        return None;
    }
    let offered = arrival_rate / service_rate;
    let c = f64::from(servers);
    let utilisation = offered / c;
    if utilisation.is_nan() || utilisation >= 1.0 {
        return None;
    }
    let mut blocking = 1.0;
    for k in 1..=servers {
        blocking = offered * blocking / (f64::from(k) + offered * blocking);
    }
    let p_wait = c * blocking / (c - offered * (1.0 - blocking));
    let mean_wait = p_wait / (c * service_rate - arrival_rate);
    Some(ErlangC {
        p_wait,
        mean_wait,
        utilisation,
        mean_queue: arrival_rate * mean_wait,
    })
}
