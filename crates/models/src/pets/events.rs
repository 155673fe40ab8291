//! The events style: the article's third version, as a warpsim model.

use warpsim_core::{Ctx, EventHandle, LogicalProcess};

use super::{Breakage, Marks, PetsParams, Sampler};

/// An event of the feeding station.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum PetsEvent {
    /// A pet finished eating and left its feeder.
    Fed,
    /// A feeder's repair is done.
    Repaired,
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
#[derive(Debug, Clone)]
pub struct FeedingStation {
    tasks: u64,
    gates: u64,
    meal: Sampler,
    repair: Sampler,
    breakage: Breakage,
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
    /// The pending repairs (one per broken feeder), so they can be cancelled at the end.
    repairs: Vec<EventHandle>,
}

impl FeedingStation {
    pub(super) fn new(params: &PetsParams) -> FeedingStation {
        FeedingStation {
            tasks: params.tasks,
            gates: u64::from(params.gates),
            meal: Sampler::new(params.durations, params.processing_time),
            repair: Sampler::new(params.durations, params.repair_time),
            breakage: Breakage::new(params.break_chance),
            started: 0,
            done: 0,
            eating: 0,
            broken: 0,
            breakdowns: 0,
            marks: Marks::new(params.tasks),
            repairs: Vec::new(),
        }
    }

    /// The top of the article's loop: roll breakage for every feeder (until all are broken),
    /// then fill the free healthy feeders with hungry pets.
    #[inline]
    fn roll_and_fill(&mut self, ctx: &mut Ctx<'_, Self>) {
        let breaks = self
            .breakage
            .roll(self.gates, self.gates - self.broken, ctx.rng());
        for _ in 0..breaks {
            let delay = self.repair.sample(ctx.rng());
            let handle = ctx.schedule(delay, PetsEvent::Repaired);
            self.repairs.push(handle);
        }
        self.broken += breaks;
        self.breakdowns += breaks;
        while self.eating + self.broken < self.gates && self.started < self.tasks {
            self.eating += 1;
            self.started += 1;
            let delay = self.meal.sample(ctx.rng());
            ctx.schedule(delay, PetsEvent::Fed);
        }
    }
}

impl LogicalProcess for FeedingStation {
    type Event = PetsEvent;
    type Output = Milestone;

    fn init(&mut self, ctx: &mut Ctx<'_, Self>) {
        self.breakage.start(ctx.rng());
        self.roll_and_fill(ctx);
    }

    #[inline]
    fn on_event(&mut self, event: PetsEvent, ctx: &mut Ctx<'_, Self>) {
        match event {
            PetsEvent::Fed => {
                self.done += 1;
                self.eating -= 1;
                if self.done >= self.marks.next() {
                    ctx.emit(Milestone {
                        fed: self.done,
                        breakdowns: self.breakdowns,
                    });
                    self.marks.advance(self.done);
                }
            }
            PetsEvent::Repaired => {
                self.broken -= 1;
                // At most K repairs are pending, so a linear search is cheap; repairs end out
                // of order when their durations are random.
                let key = ctx.key();
                if let Some(index) = self
                    .repairs
                    .iter()
                    .position(|handle| handle.key().same_send(&key))
                {
                    self.repairs.swap_remove(index);
                }
            }
        }
        if self.done < self.tasks {
            self.roll_and_fill(ctx);
        } else {
            // Every pet is fed: nothing that is still pending matters any more.
            for handle in self.repairs.drain(..) {
                ctx.cancel(handle);
            }
        }
    }
}
