//! Feeding pets: N hungry pets, K automatic feeders that break now and then, three ways.
//!
//! The scenario of "Golang: Discrete Event Simulation 101" (the seed article of the analyst's
//! toolkit): `tasks` pets are all hungry at the start; `gates` feeders each feed one pet at a
//! time, for `processing_time`; a feeder breaks with probability `break_chance` per roll and
//! then needs `repair_time` to be repaired. The answer is when 50 %, 95 %, 99 % and 100 % of the
//! pets have been fed. The article writes the simulation three times, and so do we
//! ([`Style`]):
//!
//! | style | article's version | how time moves | breakage rolled | durations |
//! |-------|-------------------|----------------|-----------------|-----------|
//! | [`Style::Step`] | 1, fixed time increments | by `processing_time` per step | once per healthy feeder per step | fixed |
//! | [`Style::Jump`] | 2, event-time jumps | to the next repair, or one step | once per healthy feeder per jump | fixed |
//! | [`Style::Events`] | 3, event priority queue | to the next event | once per feeder (all `K`) per event | [`Durations`] |
//!
//! Step and jump are plain loops, as in the article ([`PetsParams::run_loop`]). The events
//! style is a [`LogicalProcess`](warpsim_core::LogicalProcess), [`FeedingStation`], so it runs
//! unchanged on every warpsim kernel.
//!
//! **The styles are different models**, exactly as in the article: the events style rolls
//! breakage for all `K` feeders at *every event* (so breakdowns are far more frequent), lets a
//! pet finish its meal on a feeder that broke meanwhile, and draws random durations. They agree
//! when nothing breaks and durations are constant: then all `N` pets are fed at exactly
//! `ceil(N / K) · T` in every style. The jump style approximates the step style; see
//! [`Style::Jump`] for what it gets wrong and by how much.
//!
//! # Example
//!
//! ```
//! use warpsim_models::pets::{Durations, PetsParams, Style};
//!
//! // The deterministic case: nothing breaks, every meal takes exactly 15.
//! for style in [Style::Step, Style::Jump, Style::Events] {
//!     let params = PetsParams {
//!         tasks: 1000,
//!         gates: 7,
//!         break_chance: 0.0,
//!         style,
//!         durations: Durations::Constant,
//!         ..PetsParams::default()
//!     };
//!     let result = params.run(100).unwrap();
//!     assert_eq!(result.p100, Some(143.0 * 15.0)); // ceil(1000 / 7) = 143 rounds
//! }
//! ```
//!
//! # Deviations from the article, and why
//!
//! [`Semantics::Article`] runs the article's Go code exactly, in every style; the default,
//! [`Semantics::Corrected`], is the model the article describes, and differs as follows (the
//! measured difference is in BENCHMARKS.md, *Feeding pets*):
//!
//! - Step and jump: the article's roll loop `for idx := 0; idx < gateCount-broken; idx++`
//!   re-reads `broken` as it grows, so each breakdown ends the loop one feeder early; we roll
//!   every feeder that was healthy at the start of the step.
//!
//! [`Breakdowns::PerWorkingTime`] replaces the article's rule of rolling breakage for all `K`
//! feeders at every event (which makes more feeders break each other) with a breakdown rate
//! per unit of working time.
//!
//! - Time is a real number, not an integer: the article truncates random durations with Go's
//!   `int(...)`; we keep `max(0, T + N(0,1)·T/4)` as a real, as the issue states it.
//! - In the events style a feeder takes a pet only while hungry pets remain. The article keeps
//!   starting meals after the last pet has sat down (its loop never counts hungry pets), so
//!   with random durations a meal of a pet that does not exist can end before the last real one
//!   and make the 100 % time too early. With constant durations the two agree exactly.
//! - Breakage is rolled as in the article, one Bernoulli(`break_chance`) trial per feeder, but
//!   we draw the number of failed trials before the next success (a geometric variable) instead
//!   of every trial. Trials are independent and memoryless, so the distribution is the same;
//!   only the random numbers consumed differ, and a roll costs O(1) instead of O(K).

mod durations;
mod events;
mod jump;
mod step;

use std::time::Instant;

use rand::SeedableRng;
use rand_distr::{Distribution, Exp1};
use warpsim_core::{Committed, Kernel, LpRng, RunConfig, RunError, Sequential, derive_seed};

pub use durations::Durations;
pub(crate) use durations::Sampler;
pub use events::{FeedingStation, Milestone, PetsEvent};

use crate::{ParamError, check_range};

/// Which of the article's three simulations to run.
///
/// ```
/// use warpsim_models::pets::Style;
/// assert_eq!("jump".parse::<Style>().unwrap(), Style::Jump);
/// assert_eq!(Style::Events.to_string(), "events");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Style {
    /// Fixed time increments (the article's first version): each step lasts `processing_time`,
    /// every healthy feeder feeds one pet, then each healthy feeder breaks with probability
    /// `break_chance` and is repaired `repair_time` later (repairs wait in a FIFO ring, which
    /// is ordered because the repair time is fixed).
    Step,
    /// Event-time jumps (the article's second version): like [`Style::Step`], but time jumps
    /// to the next repair when one is pending, crediting `floor((K − broken) · Δt / T)` meals.
    ///
    /// **What it approximates.** It approximates the step style by treating feeding as a
    /// fluid between repairs. Three errors follow, as the article warns: meals in progress
    /// when a jump ends are lost (the floor), and several short jumps in a row can credit no
    /// meal at all; breakage is rolled only once per jump rather than once per meal, so while
    /// a repair is pending feeders break less often; and a percentile is reported at the end
    /// of the jump that crosses it, which can be up to `repair_time` late. The measured
    /// difference against the step and events styles is in the test `pets_styles` and in
    /// BENCHMARKS.md (`## Feeding pets`).
    Jump,
    /// The event priority queue (the article's third version), as a warpsim model
    /// ([`FeedingStation`]). Meals and repairs are events with random durations
    /// ([`Durations`]); at every event each of the `K` feeders rolls for breakage (stopping
    /// once all are broken), as the article does.
    #[default]
    Events,
}

impl std::str::FromStr for Style {
    type Err = ParamError;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "step" => Ok(Style::Step),
            "jump" => Ok(Style::Jump),
            "events" => Ok(Style::Events),
            other => Err(ParamError::new(
                "style",
                format!("unknown style `{other}` (expected step, jump or events)"),
            )),
        }
    }
}

impl std::fmt::Display for Style {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Style::Step => "step",
            Style::Jump => "jump",
            Style::Events => "events",
        })
    }
}

/// Whose rules a run follows where the article's code and the model it describes part ways.
///
/// ```
/// use warpsim_models::pets::Semantics;
/// assert_eq!("article".parse::<Semantics>().unwrap(), Semantics::Article);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Semantics {
    /// The model the article describes, where its code slips:
    /// - step and jump: every healthy feeder rolls for breakage once per step or jump;
    /// - events: a feeder takes a pet only while hungry pets remain, and durations are real
    ///   numbers, `max(0, T + N(0,1)·T/4)`.
    #[default]
    Corrected,
    /// The article's Go code exactly:
    /// - step and jump: the roll loop `for idx := 0; idx < gateCount-broken; idx++` re-reads
    ///   `broken`, which grows inside it, so each breakdown ends the loop one feeder early
    ///   (fewer rolls, fewer breakdowns);
    /// - events: meals keep starting after the last pet sat down (meals of pets that do not
    ///   exist, which can end before the last real one), and durations are truncated to whole
    ///   units as Go's `int(...)` does, so every time is an integer.
    Article,
}

impl std::str::FromStr for Semantics {
    type Err = ParamError;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "corrected" => Ok(Semantics::Corrected),
            "article" => Ok(Semantics::Article),
            other => Err(ParamError::new(
                "semantics",
                format!("unknown semantics `{other}` (expected corrected or article)"),
            )),
        }
    }
}

impl std::fmt::Display for Semantics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Semantics::Corrected => "corrected",
            Semantics::Article => "article",
        })
    }
}

/// When feeders break.
///
/// ```
/// use warpsim_models::pets::Breakdowns;
/// assert_eq!("per-working-time".parse::<Breakdowns>().unwrap(), Breakdowns::PerWorkingTime);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Breakdowns {
    /// The article's rule: at every roll each feeder breaks with probability `break_chance`.
    /// The step and jump styles roll once per step or jump; the events style rolls for all
    /// `K` feeders at *every event*, so with more feeders (more events per unit of time)
    /// each feeder breaks more often per meal, and past a few feeders more feeders slow
    /// the feeding down. That is an artifact of the article's code, not of feeders.
    #[default]
    PerRoll,
    /// Feeders break per unit of *working* time: a feeder that is feeding breaks at rate
    /// `λ = −ln(1 − break_chance) / processing_time`, i.e. with probability `break_chance`
    /// over one mean meal of work, whatever the number of feeders. Idle and broken feeders
    /// do not break. Only the events style changes: step and jump already roll once per
    /// healthy feeder per meal-long step.
    PerWorkingTime,
}

impl std::str::FromStr for Breakdowns {
    type Err = ParamError;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "per-roll" => Ok(Breakdowns::PerRoll),
            "per-working-time" => Ok(Breakdowns::PerWorkingTime),
            other => Err(ParamError::new(
                "breakdowns",
                format!("unknown breakdowns `{other}` (expected per-roll or per-working-time)"),
            )),
        }
    }
}

impl std::fmt::Display for Breakdowns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Breakdowns::PerRoll => "per-roll",
            Breakdowns::PerWorkingTime => "per-working-time",
        })
    }
}

/// The feeding-pets scenario. The defaults are the article's: a million pets, ten feeders, a
/// 5 % break chance, repairs of 120 and meals of 15 time units, the events style with normal
/// durations.
///
/// ```
/// use warpsim_models::pets::PetsParams;
/// let params = PetsParams::default();
/// assert_eq!((params.tasks, params.gates), (1_000_000, 10));
/// assert!(PetsParams { gates: 0, ..params }.validate().is_err());
/// ```
///
/// With the `clap` feature the struct is also the command line's flags (`--tasks`, …), with
/// these defaults and docs (a field's doc is its flag's help); the durations default to normal
/// in the events style and constant otherwise. The end is exclusive, and infinity (the
/// default) runs until every pet is fed; planning uses it to stop a run at its deadline.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct PetsParams {
    /// Number of pets to feed (N).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PetsParams::default().tasks))]
    pub tasks: u64,
    /// Number of feeders (K).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PetsParams::default().gates))]
    pub gates: u32,
    /// Probability that a feeder breaks at one roll (P).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PetsParams::default().break_chance, allow_negative_numbers = true))]
    pub break_chance: f64,
    /// Mean repair time (R).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PetsParams::default().repair_time, allow_negative_numbers = true))]
    pub repair_time: f64,
    /// Mean eating time (T).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = PetsParams::default().processing_time, allow_negative_numbers = true))]
    pub processing_time: f64,
    /// Simulation style: step, jump or events.
    #[cfg_attr(feature = "clap", arg(long, value_enum, hide_possible_values = true, default_value_t = PetsParams::default().style))]
    pub style: Style,
    /// Duration distribution: normal, constant, exponential, lognormal or uniform (events
    /// style; step and jump use fixed durations) [default: normal for events, constant
    /// otherwise].
    // The default depends on an explicit `--style`; the text above says so, so clap's own
    // default note is hidden.
    #[cfg_attr(feature = "clap", arg(long, value_enum, hide_possible_values = true,
        default_value_t = Durations::Normal, hide_default_value = true,
        default_value_ifs([("style", "step", Some("constant")), ("style", "jump", Some("constant"))])))]
    pub durations: Durations,
    /// Stop at this simulated time (default: when every pet is fed); percentiles not reached
    /// by then are reported as not reached.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = f64::INFINITY, hide_default_value = true, allow_negative_numbers = true))]
    pub end: f64,
    /// `corrected` (the model the article describes) or `article` (its Go code exactly: the
    /// step/jump roll loop that ends early after each breakdown; in the events style, meals
    /// for pets that do not exist and durations truncated to whole units).
    #[cfg_attr(feature = "clap", arg(long, value_enum, hide_possible_values = true, default_value_t = PetsParams::default().semantics))]
    pub semantics: Semantics,
    /// `per-roll` (the article: each feeder rolls at every step, jump or event) or
    /// `per-working-time` (a feeding feeder breaks at a rate per unit of work, so more feeders
    /// never make each one break more often).
    #[cfg_attr(feature = "clap", arg(long, value_enum, hide_possible_values = true, default_value_t = PetsParams::default().breakdowns))]
    pub breakdowns: Breakdowns,
}

impl Default for PetsParams {
    fn default() -> Self {
        PetsParams {
            tasks: 1_000_000,
            gates: 10,
            break_chance: 0.05,
            repair_time: 120.0,
            processing_time: 15.0,
            style: Style::Events,
            durations: Durations::Normal,
            end: f64::INFINITY,
            semantics: Semantics::Corrected,
            breakdowns: Breakdowns::PerRoll,
        }
    }
}

/// A failed pets run: bad parameters, or an error of the kernel running the events style.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PetsError {
    /// A parameter was refused; nothing ran.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The kernel stopped the run (it carries the partial report).
    #[error(transparent)]
    Run(#[from] RunError),
}

impl PetsParams {
    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter: no pets, no feeders, a break chance
    /// outside `[0, 1]` (or of 1 in the events style), a negative or non-finite repair time, a
    /// meal time that is not positive, an end time that is not positive, or random durations
    /// with the step or jump style.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.tasks == 0 {
            return Err(ParamError::new("tasks", "must be at least 1 (got 0)"));
        }
        if self.gates == 0 {
            return Err(ParamError::new("gates", "must be at least 1 (got 0)"));
        }
        check_range("break-chance", self.break_chance, 0.0, 1.0)?;
        check_range("repair-time", self.repair_time, 0.0, f64::MAX)?;
        check_range("processing-time", self.processing_time, 0.0, f64::MAX)?;
        if self.end.is_nan() || self.end <= 0.0 {
            return Err(ParamError::new(
                "end",
                format!("must be positive (got {})", self.end),
            ));
        }
        // A meal of length 0 would let the step style loop without time passing (and the
        // jump style divides by it), so a meal must take some time.
        if self.processing_time <= 0.0 {
            return Err(ParamError::new(
                "processing-time",
                format!("must be positive (got {})", self.processing_time),
            ));
        }
        if self.style == Style::Events && self.break_chance >= 1.0 {
            // In the article's third version every event rolls breakage for every feeder, so
            // with certain breakage a repaired feeder breaks again at once and no pet is ever
            // fed: the run would never end.
            return Err(ParamError::new(
                "break-chance",
                "must be below 1 in the events style (every feeder would break again at every \
                 event and no pet would ever be fed)",
            ));
        }
        if self.style != Style::Events && self.durations != Durations::Constant {
            return Err(ParamError::new(
                "durations",
                format!(
                    "the {} style uses fixed durations (the article's version {}); \
                     random durations ({}) need --style events",
                    self.style,
                    if self.style == Style::Step { 1 } else { 2 },
                    self.durations
                ),
            ));
        }
        Ok(())
    }

    /// Checks the parameters and makes the events-style model: one [`FeedingStation`] LP.
    /// (It builds the events model whatever [`PetsParams::style`] says.)
    ///
    /// ```
    /// use warpsim_core::{Kernel, RunConfig, Sequential};
    /// use warpsim_models::pets::{PetsParams, PetsResult};
    ///
    /// let params = PetsParams { tasks: 500, ..PetsParams::default() };
    /// let mut outputs = Vec::new();
    /// let report = Sequential::new(RunConfig::new(1))
    ///     .run(params.build().unwrap(), &mut outputs)
    ///     .unwrap();
    /// let result = PetsResult::from_milestones(params.tasks, &outputs, report.events_committed);
    /// assert!(result.p50.unwrap() <= result.p100.unwrap());
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter.
    pub fn build(&self) -> Result<Vec<FeedingStation>, ParamError> {
        let mut params = self.clone();
        params.style = Style::Events;
        params.validate()?;
        Ok(vec![FeedingStation::new(&params)])
    }

    /// Runs the step or jump style (plain loops, no kernel) with random seed `seed`, for at
    /// most `max_steps` loop iterations (`None`: until every pet is fed).
    ///
    /// ```
    /// use warpsim_models::pets::{Durations, PetsParams, Style};
    /// let params = PetsParams { tasks: 10_000, style: Style::Step, durations: Durations::Constant, ..PetsParams::default() };
    /// let result = params.run_loop(100, None).unwrap();
    /// assert!(result.complete);
    /// assert!(result.p100.unwrap() >= 1000.0 * 15.0); // at least ceil(10000 / 10) steps
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ParamError`] for bad parameters, or when the style is [`Style::Events`] (which
    /// needs a kernel: use [`PetsParams::build`] or [`PetsParams::run`]).
    pub fn run_loop(&self, seed: u64, max_steps: Option<u64>) -> Result<PetsResult, ParamError> {
        self.validate()?;
        let started = Instant::now();
        let mut rng = LpRng::seed_from_u64(derive_seed(seed, 0));
        let max_steps = max_steps.unwrap_or(u64::MAX);
        let mut result = match self.style {
            Style::Step => step::run(self, &mut rng, max_steps),
            Style::Jump => jump::run(self, &mut rng, max_steps),
            Style::Events => {
                return Err(ParamError::new(
                    "style",
                    "the events style runs on a kernel (use build or run)",
                ));
            }
        };
        result.wall_seconds = started.elapsed().as_secs_f64();
        Ok(result)
    }

    /// Runs the chosen style to completion with seed `seed`; the events style runs on the
    /// sequential kernel.
    ///
    /// ```
    /// use warpsim_models::pets::PetsParams;
    /// let result = PetsParams { tasks: 2000, ..PetsParams::default() }.run(100).unwrap();
    /// assert!(result.complete);
    /// let (p50, p100) = (result.p50.unwrap(), result.p100.unwrap());
    /// assert!(0.0 < p50 && p50 <= p100);
    /// ```
    ///
    /// # Errors
    ///
    /// [`PetsError::Param`] for bad parameters; [`PetsError::Run`] if the kernel fails.
    pub fn run(&self, seed: u64) -> Result<PetsResult, PetsError> {
        match self.style {
            Style::Step | Style::Jump => Ok(self.run_loop(seed, None)?),
            Style::Events => {
                let lps = self.build()?;
                let mut outputs = Vec::new();
                let config = RunConfig::new(seed).end_time(self.end);
                let report = Sequential::new(config).run(lps, &mut outputs)?;
                let mut result =
                    PetsResult::from_milestones(self.tasks, &outputs, report.events_committed);
                result.wall_seconds = report.wall_seconds;
                Ok(result)
            }
        }
    }
}

/// One point of the completion curve: by `time`, `fed` pets had been fed.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CurvePoint {
    /// Simulation time.
    pub time: f64,
    /// Pets fed by then.
    pub fed: u64,
}

/// What a pets run found, in any style.
///
/// Percentile times are `None` when the run stopped (an event limit) before reaching them.
///
/// ```
/// use warpsim_models::pets::{CurvePoint, PetsResult};
/// let curve = vec![CurvePoint { time: 1.0, fed: 5 }, CurvePoint { time: 2.0, fed: 10 }];
/// let result = PetsResult::from_curve(10, curve, 2, 0);
/// assert_eq!(result.time_to(50.0), Some(1.0));
/// assert_eq!(result.p100, Some(2.0));
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PetsResult {
    /// Number of pets.
    pub tasks: u64,
    /// Time by which 50 % of the pets were fed.
    pub p50: Option<f64>,
    /// Time by which 95 % of the pets were fed.
    pub p95: Option<f64>,
    /// Time by which 99 % of the pets were fed.
    pub p99: Option<f64>,
    /// Time by which every pet was fed.
    pub p100: Option<f64>,
    /// How many times a feeder broke.
    pub breakdowns: u64,
    /// Events (events style) or loop iterations (step and jump).
    pub events: u64,
    /// Whether every pet was fed.
    pub complete: bool,
    /// Pets fed by the end of the run: all of them, or, for a run stopped by `end` or an
    /// event limit, the true count then (not just the last 0.1 % point of the curve).
    pub fed: u64,
    /// Wall-clock seconds of the run (0 when unknown).
    pub wall_seconds: f64,
    /// Pets fed against time: a point each time another 0.1 % of the pets (and each of the
    /// four percentiles) was reached, in time order.
    pub curve: Vec<CurvePoint>,
}

impl PetsResult {
    /// A result from a completion curve (points in time order, `fed` never decreasing).
    pub fn from_curve(
        tasks: u64,
        curve: Vec<CurvePoint>,
        events: u64,
        breakdowns: u64,
    ) -> PetsResult {
        let mut result = PetsResult {
            tasks,
            p50: None,
            p95: None,
            p99: None,
            p100: None,
            breakdowns,
            events,
            complete: curve.last().is_some_and(|point| point.fed >= tasks),
            fed: curve.last().map_or(0, |point| point.fed.min(tasks)),
            wall_seconds: 0.0,
            curve,
        };
        result.p50 = result.time_to(50.0);
        result.p95 = result.time_to(95.0);
        result.p99 = result.time_to(99.0);
        result.p100 = result.time_to(100.0);
        result
    }

    /// A result from the committed outputs of a [`FeedingStation`] run.
    pub fn from_milestones(
        tasks: u64,
        outputs: &[Committed<Milestone>],
        events: u64,
    ) -> PetsResult {
        let curve = outputs
            .iter()
            .map(|committed| CurvePoint {
                time: committed.time().as_f64(),
                fed: committed.output.fed,
            })
            .collect();
        let breakdowns = outputs.last().map_or(0, |last| last.output.breakdowns);
        PetsResult::from_curve(tasks, curve, events, breakdowns)
    }

    /// The time by which `percent` % of the pets were fed (the article's rule: the first time
    /// at which `100 · fed / N`, rounded down, reaches `percent`). Exact for multiples of
    /// 0.1 %, which are all on the curve; `None` if the run never got there.
    pub fn time_to(&self, percent: f64) -> Option<f64> {
        let needed = threshold(self.tasks, percent);
        self.curve
            .iter()
            .find(|point| point.fed >= needed)
            .map(|point| point.time)
    }
}

/// The number of fed pets at which `percent` % is reached: the smallest `fed` with
/// `100 · fed / tasks ≥ percent`, i.e. `ceil(percent · tasks / 100)`.
fn threshold(tasks: u64, percent: f64) -> u64 {
    // Integer arithmetic for whole per-mille values keeps the common cases exact.
    let per_mille = percent * 10.0;
    if per_mille.fract() == 0.0 && (0.0..=1000.0).contains(&per_mille) {
        let needed = (u128::from(tasks) * per_mille as u128).div_ceil(1000);
        return needed as u64;
    }
    (percent / 100.0 * tasks as f64).ceil() as u64
}

/// How many points the completion curve has (one per 0.1 % of the pets).
const CURVE_POINTS: u64 = 1000;

/// The fed counts at which a run records a curve point: every 0.1 % of the pets (which
/// includes the 50, 95, 99 and 100 % percentiles). Small and `Copy`, so the events-style LP
/// carries it in its state at no cost.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct Marks {
    tasks: u64,
    /// Index of the next curve point (1 ..= CURVE_POINTS).
    index: u64,
    /// Fed count of the next curve point.
    next: u64,
}

impl Marks {
    pub(crate) fn new(tasks: u64) -> Marks {
        let mut marks = Marks {
            tasks,
            index: 0,
            next: 0,
        };
        marks.advance(0);
        marks
    }

    /// The fed count at which the next point is due.
    #[inline]
    pub(crate) fn next(&self) -> u64 {
        self.next
    }

    /// Moves past every point at or below `fed`.
    pub(crate) fn advance(&mut self, fed: u64) {
        while self.index < CURVE_POINTS && self.next <= fed {
            self.index += 1;
            self.next = (u128::from(self.tasks) * u128::from(self.index))
                .div_ceil(u128::from(CURVE_POINTS)) as u64;
        }
        if self.next <= fed {
            // Every point is behind us.
            self.next = u64::MAX;
        }
    }
}

/// Breakage rolls: a run of independent Bernoulli(`break_chance`) trials, consumed a few at a
/// time. It keeps the number of failures left before the next success, drawn from a geometric
/// distribution, so a roll of many feeders costs one comparison unless one breaks.
///
/// # Implementation
///
/// The gap is `floor(E / −ln(1 − p))` with `E` exponential of mean 1: the same distribution
/// as inversion, `floor(ln U / ln(1 − p))` with `U` uniform on `(0, 1]`, since `−ln U` is
/// exponential. `E` comes from rand_distr's ziggurat sampler (`Exp1`), about 25 instructions;
/// glibc's `ln` cost about 100 per breakdown, 5 % of the events style's instructions (issue
/// 16; rand_distr's exact `Geometric` sampler takes a rejection loop with `powi`, which cost
/// 12 % of its time).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct Breakage {
    /// `−1 / ln(1 − p)` (positive; 0 when `p = 1`), or `None` when the break chance is 0:
    /// nothing breaks.
    inverse_log: Option<f64>,
    /// Failed trials left before the next success.
    failures_left: u64,
}

impl Breakage {
    pub(crate) fn new(break_chance: f64) -> Breakage {
        let inverse_log = (break_chance > 0.0).then(|| -1.0 / (-break_chance).ln_1p());
        Breakage {
            inverse_log,
            failures_left: u64::MAX,
        }
    }

    /// Failed trials before the next success: `floor(E / −ln(1 − p))`. With `p = 1` the
    /// logarithm is −∞ and the quotient 0, so every trial succeeds; a huge quotient saturates.
    #[inline]
    fn gap(inverse_log: f64, rng: &mut LpRng) -> u64 {
        let exponential: f64 = Exp1.sample(rng);
        (exponential * inverse_log) as u64
    }

    /// Draws the first gap (call once, with the run's generator, before rolling).
    pub(crate) fn start(&mut self, rng: &mut LpRng) {
        if let Some(inverse_log) = self.inverse_log {
            self.failures_left = Breakage::gap(inverse_log, rng);
        }
    }

    /// Rolls `rolls` trials, stopping early after `cap` successes (the trials after that are
    /// not made, as in the article's loop). Returns the number of successes.
    #[inline]
    pub(crate) fn roll(&mut self, mut rolls: u64, cap: u64, rng: &mut LpRng) -> u64 {
        let Some(inverse_log) = self.inverse_log else {
            return 0;
        };
        let mut breaks = 0;
        while breaks < cap {
            if self.failures_left >= rolls {
                self.failures_left -= rolls;
                break;
            }
            rolls -= self.failures_left + 1;
            breaks += 1;
            self.failures_left = Breakage::gap(inverse_log, rng);
        }
        breaks
    }

    /// The article's step and jump roll loop, `for idx := 0; idx < healthy0 - breaks; idx++`:
    /// the bound counts down with every breakdown, so trial `idx` is made only while
    /// `idx < healthy − breaks so far`. Returns the number of breakdowns.
    #[inline]
    pub(crate) fn roll_shrinking(&mut self, healthy: u64, rng: &mut LpRng) -> u64 {
        let Some(inverse_log) = self.inverse_log else {
            return 0;
        };
        let (mut index, mut breaks) = (0u64, 0u64);
        loop {
            // Trials the loop will still make under its current bound.
            let left = (healthy - breaks).saturating_sub(index);
            if self.failures_left >= left {
                self.failures_left -= left;
                return breaks;
            }
            index += self.failures_left + 1;
            breaks += 1;
            self.failures_left = Breakage::gap(inverse_log, rng);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn the_shrinking_roll_is_the_article_loop() {
        // The article's loop, trial by trial, against the geometric shortcut: the same
        // distribution of breakdowns per roll (different random numbers, so compared by the
        // frequency of each count over many rolls).
        let (healthy, p, rolls) = (10u64, 0.3, 200_000);
        let mut rng = LpRng::seed_from_u64(5);
        let mut direct = [0u64; 11];
        for _ in 0..rolls {
            let (mut broken, mut idx) = (0u64, 0u64);
            while idx < healthy - broken {
                if rng.random::<f64>() < p {
                    broken += 1;
                }
                idx += 1;
            }
            direct[broken as usize] += 1;
        }
        let mut breakage = Breakage::new(p);
        breakage.start(&mut rng);
        let mut shortcut = [0u64; 11];
        for _ in 0..rolls {
            shortcut[breakage.roll_shrinking(healthy, &mut rng) as usize] += 1;
        }
        for (count, (&a, &b)) in direct.iter().zip(&shortcut).enumerate() {
            let (fa, fb) = (a as f64 / rolls as f64, b as f64 / rolls as f64);
            assert!((fa - fb).abs() < 0.006, "{count} breakdowns: {fa} vs {fb}");
        }
        // Fewer breakdowns than rolling every healthy feeder (mean 3 for 10 × 0.3).
        let mean: f64 = shortcut
            .iter()
            .enumerate()
            .map(|(k, &n)| k as f64 * n as f64)
            .sum::<f64>()
            / rolls as f64;
        assert!(mean < 2.6 && mean > 2.0, "{mean}");
    }

    #[test]
    fn thresholds_follow_the_article_rule() {
        // 100 * fed / tasks (integer division) >= p.
        for tasks in [1u64, 3, 7, 10, 999, 1_000_000] {
            for percent in [50u64, 95, 99, 100] {
                let needed = threshold(tasks, percent as f64);
                assert!(100 * needed / tasks >= percent);
                assert!(needed == 0 || 100 * (needed - 1) / tasks < percent);
            }
        }
    }

    #[test]
    fn marks_cover_every_percentile() {
        for tasks in [1u64, 2, 9, 10, 1001, 123_457] {
            let mut marks = Marks::new(tasks);
            let mut points = Vec::new();
            let mut fed = 0;
            while marks.next() != u64::MAX {
                fed = marks.next();
                points.push(fed);
                marks.advance(fed);
            }
            assert_eq!(fed, tasks);
            for percent in [50.0, 95.0, 99.0, 100.0] {
                assert!(
                    points.contains(&threshold(tasks, percent)),
                    "{tasks} {percent}"
                );
            }
        }
    }

    #[test]
    fn breakage_matches_bernoulli_trials() {
        // Mean number of successes in 10 rolls at p = 0.05 is 0.5, whatever the batching.
        let mut rng = LpRng::seed_from_u64(3);
        let mut breakage = Breakage::new(0.05);
        breakage.start(&mut rng);
        let rounds = 200_000;
        let total: u64 = (0..rounds)
            .map(|_| breakage.roll(10, u64::MAX, &mut rng))
            .sum();
        let mean = total as f64 / rounds as f64;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
        // The cap: at most `cap` successes, and at p = 1 exactly `cap`.
        let mut always = Breakage::new(1.0);
        always.start(&mut rng);
        assert_eq!(always.roll(10, 3, &mut rng), 3);
        assert_eq!(always.roll(10, u64::MAX, &mut rng), 10);
        let mut never = Breakage::new(0.0);
        never.start(&mut rng);
        assert_eq!(never.roll(10, 10, &mut rng), 0);
        // The gaps are geometric: P(gap = 0) = p.
        let mut zeros = 0;
        let inverse_log = -1.0 / (-0.3f64).ln_1p();
        for _ in 0..100_000 {
            zeros += u32::from(Breakage::gap(inverse_log, &mut rng) == 0);
        }
        assert!((f64::from(zeros) / 1e5 - 0.3).abs() < 0.01);
    }
}
