//! PHOLD: the standard synthetic benchmark of parallel discrete-event simulation.
//!
//! `lps` logical processes each start with `population` events addressed to themselves. Every
//! event, when handled, sends exactly one new event, so the number of pending events stays
//! `lps × population` for the whole run:
//!
//! - with probability `remote` to an LP drawn uniformly from *all* LPs (itself included),
//!   otherwise to itself;
//! - with delay `lookahead + Exp(mean − lookahead)`, so the mean delay is `mean` and no delay
//!   is shorter than `lookahead` (the lookahead a conservative kernel could exploit).
//!
//! This follows ROSS's `phold` model, so figures compare: ROSS's defaults are remote 0.25,
//! mean 1.0, lookahead 1.0 (which makes every delay exactly 1.0); our default scenario uses
//! lookahead 0.1 and mean 1.0. The expected number of committed events is
//! `lps × population × end / mean`.
//!
//! `work` adds deterministic busy work to each event (see [`crate::busy_work`]),
//! the usual way PHOLD studies vary event granularity.
//!
//! `watchdog` (off at 0) gives every LP a timeout, as a network node keeps one per link:
//! an event the LP sends itself `watchdog` after the LP's last event, which every event
//! pushes back with [`Ctx::reschedule`] and which, when it fires (the LP heard nothing for
//! that long), counts a timeout and re-arms. Such models reschedule a pending event on
//! almost every event; [`WatchedPhold`] is PHOLD with that pattern added, to measure what it
//! costs an optimistic kernel. The packets are exactly PHOLD's; the timeouts are extra
//! events (with mean 1 and a timeout of 3, about one event in twenty).
//!
//! ```
//! use warpsim_core::{Discard, Kernel, RunConfig, Sequential};
//! use warpsim_models::phold::PholdParams;
//!
//! let params = PholdParams { lps: 64, end: 50.0, ..PholdParams::default() };
//! let report = Sequential::new(RunConfig::new(7).end_time(params.end))
//!     .run(params.build().unwrap(), &mut Discard)
//!     .unwrap();
//! // About 64 × 1 × 50 / 1.0 = 3200 events.
//! assert!((2800..3600).contains(&report.events_committed));
//! ```

use rand::RngExt;
use rand_distr::Exp1;
use warpsim_core::{Ctx, EventHandle, FinishCtx, LogicalProcess, LpId};

use crate::{ParamError, busy_work, check_range};

/// PHOLD's parameters. The defaults are the built-in scenario. With the `clap` feature they
/// are also command-line flags (`--lps`, …) with these defaults and docs.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct PholdParams {
    /// Number of LPs.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PholdParams::default().lps))]
    pub lps: u32,
    /// Events per LP at the start (the constant population of the run is `lps × population`).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PholdParams::default().population))]
    pub population: u32,
    /// Probability that an event goes to a uniformly random LP instead of its own.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PholdParams::default().remote))]
    pub remote: f64,
    /// Smallest delay of any event.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PholdParams::default().lookahead))]
    pub lookahead: f64,
    /// Mean delay of an event (`lookahead` plus an exponential with mean `mean − lookahead`).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PholdParams::default().mean))]
    pub mean: f64,
    /// End of simulated time (events at or after it do not run).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PholdParams::default().end))]
    pub end: f64,
    /// Busy-work iterations per event.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PholdParams::default().work))]
    pub work: u32,
    /// A timeout per LP, pushed back by every event (0: none); see [`WatchedPhold`].
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PholdParams::default().watchdog))]
    #[serde(default)]
    pub watchdog: f64,
}

impl Default for PholdParams {
    fn default() -> Self {
        PholdParams {
            lps: 16384,
            population: 1,
            remote: 0.25,
            lookahead: 0.1,
            mean: 1.0,
            end: 200.0,
            work: 0,
            watchdog: 0.0,
        }
    }
}

impl PholdParams {
    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.lps == 0 {
            return Err(ParamError::new("lps", "must be at least 1 (got 0)"));
        }
        if self.population == 0 {
            return Err(ParamError::new("population", "must be at least 1 (got 0)"));
        }
        check_range("remote", self.remote, 0.0, 1.0)?;
        check_range("lookahead", self.lookahead, 0.0, f64::MAX)?;
        check_range("mean", self.mean, 0.0, f64::MAX)?;
        if self.mean <= 0.0 {
            return Err(ParamError::new("mean", "must be positive (got 0)"));
        }
        if self.mean < self.lookahead {
            return Err(ParamError::new(
                "mean",
                format!(
                    "must be at least the lookahead {} (got {})",
                    self.lookahead, self.mean
                ),
            ));
        }
        check_range("end", self.end, 0.0, f64::MAX)?;
        check_range("watchdog", self.watchdog, 0.0, f64::MAX)?;
        Ok(())
    }

    /// Checks the parameters and makes the LPs.
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter.
    pub fn build(&self) -> Result<Vec<Phold>, ParamError> {
        self.validate()?;
        let lp = Phold {
            remote: self.remote,
            lookahead: self.lookahead,
            exp_mean: self.mean - self.lookahead,
            population: self.population,
            work: self.work,
        };
        Ok(vec![lp; self.lps as usize])
    }

    /// Checks the parameters and makes the LPs of PHOLD with a watchdog per LP (see
    /// [`WatchedPhold`]), whose timeout is `watchdog`.
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter; `watchdog` must be positive here.
    pub fn build_watched(&self) -> Result<Vec<WatchedPhold>, ParamError> {
        if self.watchdog <= 0.0 {
            return Err(ParamError::new(
                "watchdog",
                format!("must be positive for a watchdog (got {})", self.watchdog),
            ));
        }
        let phold = self.build()?;
        Ok(phold
            .into_iter()
            .map(|phold| WatchedPhold {
                phold,
                timeout: self.watchdog,
                timer: EventHandle::DEAD,
                timeouts: 0,
            })
            .collect())
    }
}

/// One PHOLD LP. It has no state of its own beyond its parameters: everything that changes
/// lives in the kernel's pending set and the LP's random stream.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Phold {
    remote: f64,
    lookahead: f64,
    exp_mean: f64,
    population: u32,
    work: u32,
}

impl Phold {
    #[inline]
    fn delay(&self, ctx: &mut Ctx<'_, Self>) -> f64 {
        let unit: f64 = ctx.rng().sample(Exp1);
        self.lookahead + self.exp_mean * unit
    }
}

impl LogicalProcess for Phold {
    type Event = ();
    type Output = ();

    fn init(&mut self, ctx: &mut Ctx<'_, Self>) {
        for _ in 0..self.population {
            let delay = self.delay(ctx);
            ctx.schedule(delay, ());
        }
    }

    #[inline]
    fn on_event(&mut self, _event: (), ctx: &mut Ctx<'_, Self>) {
        if self.work > 0 {
            std::hint::black_box(busy_work(self.work));
        }
        let remote = ctx.rng().random::<f64>() < self.remote;
        let dest = if remote {
            let n_lps = ctx.n_lps();
            LpId::new(ctx.rng().random_range(0..n_lps))
        } else {
            ctx.me()
        };
        let delay = self.delay(ctx);
        ctx.send(dest, delay, ());
    }
}

/// A [`WatchedPhold`] event: PHOLD's packet, or the LP's own timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum WatchedEvent {
    /// A PHOLD event.
    Packet,
    /// The LP heard nothing for its timeout.
    Timeout,
}

/// PHOLD with a watchdog per LP (`--watchdog T`): every packet the LP handles pushes its
/// timeout back to `T` from now with [`Ctx::reschedule`], the way a user writes a
/// per-connection timeout; a timeout that fires counts itself and re-arms. The LP reports
/// its count of timeouts at the end.
///
/// ```
/// use warpsim_core::{Kernel, RunConfig, Sequential};
/// use warpsim_models::phold::PholdParams;
///
/// let params = PholdParams { lps: 64, end: 50.0, watchdog: 2.0, ..PholdParams::default() };
/// let mut outputs = Vec::new();
/// let report = Sequential::new(RunConfig::new(7).end_time(params.end))
///     .run(params.build_watched().unwrap(), &mut outputs)
///     .unwrap();
/// let timeouts: u64 = outputs.iter().map(|c| c.output).sum();
/// // PHOLD's ≈ 3,200 packets, plus the timeouts: an LP hears nothing for 2 about e⁻² of
/// // the time.
/// assert!(timeouts > 0 && report.events_committed > 3_200);
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct WatchedPhold {
    phold: Phold,
    timeout: f64,
    /// The pending timeout.
    timer: EventHandle,
    timeouts: u64,
}

impl LogicalProcess for WatchedPhold {
    type Event = WatchedEvent;
    /// The LP's count of timeouts, at the end.
    type Output = u64;

    fn init(&mut self, ctx: &mut Ctx<'_, Self>) {
        for _ in 0..self.phold.population {
            let unit: f64 = ctx.rng().sample(Exp1);
            let delay = self.phold.lookahead + self.phold.exp_mean * unit;
            ctx.schedule(delay, WatchedEvent::Packet);
        }
        self.timer = ctx.schedule(self.timeout, WatchedEvent::Timeout);
    }

    #[inline]
    fn on_event(&mut self, event: WatchedEvent, ctx: &mut Ctx<'_, Self>) {
        match event {
            WatchedEvent::Packet => {
                if self.phold.work > 0 {
                    std::hint::black_box(busy_work(self.phold.work));
                }
                let remote = ctx.rng().random::<f64>() < self.phold.remote;
                let dest = if remote {
                    let n_lps = ctx.n_lps();
                    LpId::new(ctx.rng().random_range(0..n_lps))
                } else {
                    ctx.me()
                };
                let unit: f64 = ctx.rng().sample(Exp1);
                let delay = self.phold.lookahead + self.phold.exp_mean * unit;
                ctx.send(dest, delay, WatchedEvent::Packet);
                // Heard from: push the timeout back.
                if !ctx.reschedule(&mut self.timer, self.timeout) {
                    self.timer = ctx.schedule(self.timeout, WatchedEvent::Timeout);
                }
            }
            WatchedEvent::Timeout => {
                self.timeouts += 1;
                self.timer = ctx.schedule(self.timeout, WatchedEvent::Timeout);
            }
        }
    }

    fn finish(&mut self, ctx: &mut FinishCtx<'_, Self>) {
        ctx.emit(self.timeouts);
    }
}
