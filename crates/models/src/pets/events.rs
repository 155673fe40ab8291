//! The events style: the article's third version, as a warpsim model.

use warpsim_core::{Ctx, EventHandle, LogicalProcess};

use rand::RngExt;
use rand_distr::Exp1;

use super::{Breakage, Breakdowns, Marks, PetsParams, Sampler, Semantics};

/// An event of the feeding station.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PetsEvent {
    /// A pet finished eating and left its feeder.
    Fed,
    /// A feeder's repair is done. The number is where the station keeps the repair's handle
    /// (its table of pending repairs), so that the handle is dropped without a search.
    Repaired(u32),
    /// A candidate breakdown of the per-working-time breakdown model
    /// ([`Breakdowns::PerWorkingTime`]): it hits a working feeder with probability
    /// `working / K` (thinning of a Poisson stream of rate `K · λ`).
    BreakCheck,
    /// The run's end time is reached: report the true number of pets fed (emitted just before
    /// `end`, only when an end time is set).
    Tally,
}

/// What the feeding station reports: at this event's time, `fed` pets had been fed and feeders
/// had broken `breakdowns` times. Emitted every time another 0.1 % of the pets is fed (which
/// includes the 50, 95, 99 and 100 % marks); the last one has `fed == tasks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Milestone {
    /// Pets fed so far.
    pub fed: u64,
    /// Breakdowns so far.
    pub breakdowns: u64,
}

/// The events style of the feeding-pets model: the whole station (pets, feeders, repairs) as
/// one logical process.
///
/// # Why one LP
///
/// In the article's third version every event touches all of the state: it rolls breakage for
/// *every* feeder, and a free healthy feeder takes the next pet from one shared pool of hungry
/// pets. Split into one LP per feeder plus a dispatcher, each event would become a broadcast
/// to `K` feeders and a round trip to the dispatcher, more than doubling the events while
/// exposing no parallelism (the critical path is the whole run). As one LP the model commits
/// exactly the article's events (one per meal and one per repair), and it is still a plain
/// warpsim model: its state is `Clone` (an optimistic kernel can save and restore it), every
/// random number comes from [`Ctx::rng`], and results leave only through [`Ctx::emit`]. So it
/// runs unchanged, with the same outputs, on every kernel.
///
/// # Implementation
///
/// The article's loop body becomes a handler. `init` does the top of the first iteration at
/// time 0: roll breakage, then start meals on the free healthy feeders. Each event then
/// applies its effect (a meal ends, or a repair), records a [`Milestone`] when one is due and,
/// while pets remain, rolls breakage and starts meals again. A broken feeder does not interrupt
/// the meal on it (as in the article: breaking only lowers the number of meals that may be in
/// progress). When the last pet is fed the pending repairs are cancelled, so the run ends at
/// the 100 % time.
///
/// ```
/// use warpsim_core::{Kernel, RunConfig, Sequential};
/// use warpsim_models::pets::{PetsParams, PetsResult};
///
/// let params = PetsParams { tasks: 10_000, ..PetsParams::default() };
/// let mut outputs = Vec::new();
/// let report = Sequential::new(RunConfig::new(100))
///     .run(params.build().unwrap(), &mut outputs)
///     .unwrap();
/// let result = PetsResult::from_milestones(params.tasks, &outputs, report.events_committed);
/// // One event per meal and one per repair, except the (at most K) repairs still pending
/// // when the last pet is fed: they are cancelled, and the run ends at the 100 % time.
/// let events = report.events_committed;
/// let breakdowns = result.breakdowns;
/// assert!(events <= params.tasks + breakdowns);
/// assert!(events >= params.tasks + breakdowns - u64::from(params.gates));
/// assert_eq!(report.end_time, result.p100.unwrap());
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FeedingStation {
    tasks: u64,
    gates: u64,
    meal: Sampler,
    repair: Sampler,
    breakage: Breakage,
    /// Whether to follow the article's code exactly ([`Semantics::Article`]).
    article: bool,
    /// Breakdown rate per unit of working time per feeder, when feeders break per working
    /// time; `None` for the article's per-roll rule.
    working_rate: Option<f64>,
    /// End of the run, when one is set (a [`PetsEvent::Tally`] is due just before it).
    end: Option<f64>,
    /// Pets that have sat down at a feeder (fed or eating).
    started: u64,
    /// Pets fed.
    done: u64,
    /// Meals in progress.
    eating: u64,
    /// Broken feeders.
    broken: u64,
    breakdowns: u64,
    marks: Marks,
    /// The pending repairs (one per broken feeder), so they can be cancelled at the end: a
    /// table whose free entries are reused, indexed by the [`PetsEvent::Repaired`] they sent.
    repairs: Vec<Option<EventHandle>>,
    /// Free entries of `repairs`.
    free_repairs: Vec<u32>,
    /// The pending candidate breakdown and tally, cancelled at the end too.
    others: Vec<EventHandle>,
    /// With the article's semantics, the meals in progress (some may be of pets that do not
    /// exist), cancelled when the last pet is fed; empty otherwise (then no meal is pending
    /// at the end).
    meals: Vec<EventHandle>,
}

impl FeedingStation {
    pub(super) fn new(params: &PetsParams) -> FeedingStation {
        let working_rate = (params.breakdowns == Breakdowns::PerWorkingTime
            && params.break_chance > 0.0)
            .then(|| -(-params.break_chance).ln_1p() / params.processing_time);
        FeedingStation {
            tasks: params.tasks,
            gates: u64::from(params.gates),
            meal: Sampler::new(params.durations, params.processing_time),
            repair: Sampler::new(params.durations, params.repair_time),
            breakage: Breakage::new(params.break_chance),
            article: params.semantics == Semantics::Article,
            working_rate,
            end: params.end.is_finite().then_some(params.end),
            started: 0,
            done: 0,
            eating: 0,
            broken: 0,
            breakdowns: 0,
            marks: Marks::new(params.tasks),
            repairs: Vec::new(),
            free_repairs: Vec::new(),
            others: Vec::new(),
            meals: Vec::new(),
        }
    }

    /// One duration, as the chosen semantics draws it.
    #[inline(always)]
    fn draw(&self, sampler: Sampler, ctx: &mut Ctx<'_, Self>) -> f64 {
        if self.article {
            sampler.sample_truncated(ctx.rng())
        } else {
            sampler.sample_inline(ctx.rng())
        }
    }

    /// A feeder breaks: it is out of service (after the meal on it, if any) until repaired.
    #[inline]
    fn break_one(&mut self, ctx: &mut Ctx<'_, Self>) {
        let delay = self.draw(self.repair, ctx);
        let index = match self.free_repairs.pop() {
            Some(index) => index,
            None => {
                self.repairs.push(None);
                // At most one pending repair per feeder, and `gates` fits in a `u32`.
                (self.repairs.len() - 1) as u32
            }
        };
        let handle = ctx.schedule(delay, PetsEvent::Repaired(index));
        self.repairs[index as usize] = Some(handle);
        self.broken += 1;
        self.breakdowns += 1;
    }

    /// The top of the article's loop: roll breakage for every feeder (until all are broken;
    /// per-roll breakdowns only), then fill the free healthy feeders with hungry pets (with
    /// the article's semantics, with pets whether or not any are left).
    #[inline]
    fn roll_and_fill(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.working_rate.is_none() {
            let breaks = self
                .breakage
                .roll(self.gates, self.gates - self.broken, ctx.rng());
            for _ in 0..breaks {
                self.break_one(ctx);
            }
        }
        while self.eating + self.broken < self.gates && (self.article || self.started < self.tasks)
        {
            self.eating += 1;
            self.started += 1;
            let delay = self.draw(self.meal, ctx);
            let handle = ctx.schedule(delay, PetsEvent::Fed);
            if self.article {
                self.meals.push(handle);
            }
        }
    }

    /// Schedules the next candidate breakdown of the per-working-time model.
    fn schedule_break_check(&mut self, ctx: &mut Ctx<'_, Self>) {
        if let Some(rate) = self.working_rate {
            // Exp(K · λ), from the LP's stream (ziggurat: cheaper than `ln` by inversion).
            let exponential: f64 = ctx.rng().sample(Exp1);
            let delay = exponential / (rate * self.gates as f64);
            let handle = ctx.schedule(delay, PetsEvent::BreakCheck);
            self.others.push(handle);
        }
    }

    /// Reports the pets fed so far as a curve point.
    fn emit(&self, ctx: &mut Ctx<'_, Self>) {
        ctx.emit(Milestone {
            fed: self.done.min(self.tasks),
            breakdowns: self.breakdowns,
        });
    }
}

impl LogicalProcess for FeedingStation {
    type Event = PetsEvent;
    type Output = Milestone;

    fn init(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.breakage.start(ctx.rng());
        if let Some(end) = self.end {
            // Just before the (exclusive) end, so that it still runs.
            let handle = ctx.schedule(end.next_down().max(0.0), PetsEvent::Tally);
            self.others.push(handle);
        }
        self.schedule_break_check(ctx);
        self.roll_and_fill(ctx);
    }

    #[inline]
    fn on_event(&mut self, event: PetsEvent, ctx: &mut Ctx<'_, Self>) {
        match event {
            PetsEvent::Fed => {
                self.done += 1;
                self.eating -= 1;
                if self.article {
                    let key = ctx.key();
                    if let Some(index) = self.meals.iter().position(|h| h.key() == key) {
                        self.meals.swap_remove(index);
                    }
                }
                if self.done >= self.marks.next() {
                    self.emit(ctx);
                    self.marks.advance(self.done);
                }
            }
            PetsEvent::Repaired(index) => {
                self.broken -= 1;
                // Repairs end out of order when their durations are random; the event says
                // where its handle is (a search among the pending repairs, whose exit branch
                // the processor cannot predict, cost 13 % of the run's time; issue 16).
                if let Some(entry) = self.repairs.get_mut(index as usize) {
                    *entry = None;
                    self.free_repairs.push(index);
                }
            }
            PetsEvent::BreakCheck => {
                self.others.retain(|handle| handle.key() != ctx.key());
                // Healthy feeders that are feeding; a broken one may still finish its meal.
                let working = self.eating.min(self.gates - self.broken);
                if working > 0 && ctx.rng().random_range(0..self.gates) < working {
                    self.break_one(ctx);
                }
                self.schedule_break_check(ctx);
            }
            PetsEvent::Tally => {
                self.others.retain(|handle| handle.key() != ctx.key());
                self.emit(ctx);
                return;
            }
        }
        if self.done < self.tasks {
            self.roll_and_fill(ctx);
        } else {
            // Every pet is fed: nothing that is still pending matters any more.
            self.free_repairs.clear();
            let repairs = self.repairs.drain(..).flatten();
            let pending = repairs.chain(self.others.drain(..));
            for handle in pending.chain(self.meals.drain(..)) {
                ctx.cancel(handle);
            }
        }
    }
}
