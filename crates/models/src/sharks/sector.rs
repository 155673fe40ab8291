//! The sector: the only logical process of Sharks World.
//!
//! # Ground rules
//!
//! These are the invariants the handlers keep; each is what makes the sector model give the
//! brute-force answer on any kernel.
//!
//! 1. **A fish is decided where it is.** A fish's first contact happens at some instant when
//!    the fish is in some sector `S` (its *residency* `[arrived, departs]` there) and the
//!    shark's radius reaches into `S`. So `S` sees both: the shark is in `S`'s list during
//!    that instant (an *entry* `[from, until]`), and every pair of a fish and an entry of
//!    `S` is checked once, by whichever of the two arrived second.
//! 2. **Entries are announced by the shark's owner.** The sector holding a shark's centre
//!    (its owner during `[at, exit)`) computes, for every cell its radius can reach, the
//!    window in which the radius touches that cell, and sends a `SharkVisible` at the window's
//!    start if the start falls in `[at, exit)`. Windows open at time 0 are put in place by
//!    [`SharksParams::build`](super::SharksParams::build). Every window is computed by the same
//!    function of the shark's initial state and the cell, whoever computes it, so each is
//!    announced exactly once.
//! 3. **Radii are reached a hair early.** Windows use `radius + slack`, with a slack a billion
//!    times larger than rounding error and a billion times smaller than the world. A spurious
//!    entry costs a check, never a wrong answer (contacts themselves use the true radius);
//!    and a contact exactly on a boundary is always seen, strictly earlier, by the sectors on
//!    both sides.
//! 4. **Deaths only move earlier.** A fish marked dead stays in the list; a shark announced
//!    later may reach it earlier (or at the same instant with a lower id) and take it over.
//!    A fish found dead while its arrival in the next sector is pending has that arrival
//!    withdrawn — by `ctx.cancel` or by the paper's "ignore" message.
//! 5. **The boundary instant belongs to the next sector.** If a shark is announced at the very
//!    instant a live fish leaves (its departure event is not in the future), the sector does
//!    not judge that fish: the arrival may already have been handled. By (3) the next sector
//!    sees the same shark at that instant, so it judges instead, with the same contact.
//! 6. **A death is final when time has passed it.** Once a sector handles an event later than
//!    a fish's death, every event that could have changed it (all at earlier or equal times)
//!    has been handled, so the death is emitted and the fish forgotten — the paper's garbage
//!    collection. A last `Settle` event just after `end` flushes the rest and reports the
//!    sector's statistics.
//!
//! All state is in the sector (`Clone`, no globals), the model draws no random numbers, and
//! lists are `Vec`s scanned in insertion order, so a Time Warp kernel that rolls a sector back
//! and replays it reproduces the same sends and outputs.

use warpsim_core::{Ctx, EventHandle, LogicalProcess, LpId};

use super::CancelStyle;
use super::geometry::{Cell, Grid, first_contact};
use super::population::Creature;
use crate::busy_work;

/// What every sector knows about the run: fixed when the model is built.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct Setup {
    pub(crate) grid: Grid,
    /// Contacts after this time do not count; no event is sent after it.
    pub(crate) end: f64,
    /// Time of the `Settle` event: the first `f64` after `end`.
    pub(crate) settle: f64,
    /// How much earlier than its radius a shark is announced (ground rule 3).
    pub(crate) slack: f64,
    pub(crate) cancel: CancelStyle,
    pub(crate) work: u32,
}

/// A message between sectors (opaque; its [`kind`](SharksEvent::kind) says what it is).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SharksEvent(Msg);

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
enum Msg {
    /// A fish enters the sector (cell `cell`) at time `at`.
    FishArrives { fish: Creature, cell: Cell, at: f64 },
    /// A shark's centre enters the sector: the sector becomes its owner.
    SharkArrives {
        shark: Creature,
        cell: Cell,
        at: f64,
    },
    /// A shark's radius reaches into the sector during `[from, until]`.
    SharkVisible {
        shark: Creature,
        from: f64,
        until: f64,
    },
    /// Ignore the arrival of `fish` at time `arrival` (application-level withdrawal).
    Withdraw { fish: u32, arrival: f64 },
    /// The run is over: emit what is left and the statistics.
    Settle,
}

/// The kinds of event, for statistics.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[non_exhaustive]
pub enum EventKind {
    /// A fish enters a sector.
    FishArrival,
    /// A shark's centre enters a sector.
    SharkArrival,
    /// A shark's radius first reaches into a sector.
    SharkSighting,
    /// The paper's "ignore that arrival" message (`--cancel app` only).
    Withdrawal,
    /// A sector's last event, just after the end time.
    Settle,
}

impl SharksEvent {
    /// What kind of event this is.
    ///
    /// ```
    /// use warpsim_core::{Kernel, RunConfig, Sequential};
    /// use warpsim_models::sharks::SharksParams;
    /// // A model with no creatures has only the sectors' settle events.
    /// let params = SharksParams { sectors_x: 2, sectors_y: 2, ..SharksParams::default() };
    /// let lps = params.build(&[]).unwrap();
    /// let report = Sequential::new(RunConfig::new(1).end_time(params.kernel_end_time()))
    ///     .run(lps, &mut warpsim_core::Discard)
    ///     .unwrap();
    /// assert_eq!(report.events_committed, 4);
    /// ```
    pub fn kind(&self) -> EventKind {
        match self.0 {
            Msg::FishArrives { .. } => EventKind::FishArrival,
            Msg::SharkArrives { .. } => EventKind::SharkArrival,
            Msg::SharkVisible { .. } => EventKind::SharkSighting,
            Msg::Withdraw { .. } => EventKind::Withdrawal,
            Msg::Settle => EventKind::Settle,
        }
    }
}

/// A fish eaten: which shark ate it, and when.
///
/// ```
/// use warpsim_models::sharks::Death;
/// let death = Death { fish: 4, shark: 1, time: 12.5 };
/// assert_eq!(death.fish, 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Death {
    /// The fish's id.
    pub fish: u32,
    /// The shark's id.
    pub shark: u32,
    /// Time of death.
    pub time: f64,
}

/// What a sector reports through `ctx.emit`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum SharksOutput {
    /// A death, emitted once it is final (see the module's ground rules).
    Death(Death),
    /// A sector's statistics, emitted by its `Settle` event.
    Stats(SectorStats),
}

/// Counters of one sector, or of all (see [`SectorStats::merge`]).
///
/// ```
/// use warpsim_models::sharks::SectorStats;
/// let (mut a, mut b) = (SectorStats::default(), SectorStats::default());
/// (a.fish_arrivals, a.peak_fish) = (3, 2);
/// (b.fish_arrivals, b.peak_fish) = (4, 5);
/// let mut total = SectorStats::default();
/// total.merge(&a);
/// total.merge(&b);
/// assert_eq!((total.fish_arrivals, total.peak_fish, total.events()), (7, 5, 7));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct SectorStats {
    /// Fish arrival events handled (including ignored ones).
    pub fish_arrivals: u64,
    /// Shark arrival events handled.
    pub shark_arrivals: u64,
    /// Shark sighting events handled.
    pub shark_sightings: u64,
    /// Withdrawal messages handled (`--cancel app`).
    pub withdraw_messages: u64,
    /// Settle events handled.
    pub settles: u64,
    /// Fish departures withdrawn because the fish turned out to die first.
    pub withdrawals: u64,
    /// Withdrawals by `ctx.cancel` that found the event gone (never expected).
    pub failed_withdrawals: u64,
    /// Arrivals dropped because of an earlier withdrawal message.
    pub ignored_arrivals: u64,
    /// Deaths emitted.
    pub deaths: u64,
    /// Deaths taken over by a shark that reached the fish earlier.
    pub revisions: u64,
    /// Largest fish list of a sector.
    pub peak_fish: u64,
    /// Largest shark list of a sector.
    pub peak_sharks: u64,
}

impl SectorStats {
    /// Adds `other`'s counters (peaks take the maximum).
    pub fn merge(&mut self, other: &SectorStats) {
        self.fish_arrivals += other.fish_arrivals;
        self.shark_arrivals += other.shark_arrivals;
        self.shark_sightings += other.shark_sightings;
        self.withdraw_messages += other.withdraw_messages;
        self.settles += other.settles;
        self.withdrawals += other.withdrawals;
        self.failed_withdrawals += other.failed_withdrawals;
        self.ignored_arrivals += other.ignored_arrivals;
        self.deaths += other.deaths;
        self.revisions += other.revisions;
        self.peak_fish = self.peak_fish.max(other.peak_fish);
        self.peak_sharks = self.peak_sharks.max(other.peak_sharks);
    }

    /// Events handled, all kinds together.
    pub fn events(&self) -> u64 {
        self.fish_arrivals
            + self.shark_arrivals
            + self.shark_sightings
            + self.withdraw_messages
            + self.settles
    }
}

/// A fish's residency in this sector.
// `Copy`, so that Time Warp's state saves copy a sector's lists with one `memcpy`.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct FishEntry {
    fish: Creature,
    arrived: f64,
    /// When it leaves (infinite if never).
    departs: f64,
    fate: Fate,
}

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
enum Fate {
    /// Swims on; the departure, if one was sent (none when it leaves after `end`).
    Live(Option<Departure>),
    Dead {
        time: f64,
        shark: u32,
    },
}

/// The arrival message a sector sent for a departing fish.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Departure {
    to: LpId,
    handle: EventHandle,
}

/// A window in which a shark's radius reaches into this sector.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct SharkEntry {
    shark: Creature,
    from: f64,
    until: f64,
}

/// An application-level withdrawal waiting for the arrival it cancels.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Tombstone {
    fish: u32,
    arrival: f64,
}

/// One sector of the world: the only kind of LP in Sharks World.
///
/// Made by [`SharksParams::build`](super::SharksParams::build); see the module documentation
/// of [`sharks`](super) for the model.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Sector {
    setup: Setup,
    fish: Vec<FishEntry>,
    sharks: Vec<SharkEntry>,
    tombstones: Vec<Tombstone>,
    /// Creatures that start here, handled by `init` as if they had just arrived.
    start_fish: Vec<(Creature, Cell)>,
    start_sharks: Vec<(Creature, Cell)>,
    stats: SectorStats,
}

/// A delay `d ≥ 0` with `now + d == target` exactly when one exists, else the smallest with
/// `now + d > target`. Not every target is reachable (when `now`'s low bits fall exactly
/// between two steps of `target`'s grid, rounding to even skips every other one), so callers
/// take `now + d`, the time the kernel will give the event, as the authoritative time.
fn delay_to(now: f64, target: f64) -> f64 {
    let mut delay = (target - now).max(0.0);
    for _ in 0..4 {
        let sum = now + delay;
        if sum == target {
            return delay;
        }
        delay = if sum < target {
            delay.next_up()
        } else if delay > 0.0 {
            delay.next_down()
        } else {
            return 0.0;
        };
    }
    while now + delay < target {
        delay = delay.next_up();
    }
    delay
}

/// Whether `(t, id)` beats the current best: earlier, or as early with a lower shark id.
#[inline]
fn beats(t: f64, id: u32, best: Option<(f64, u32)>) -> bool {
    match best {
        None => true,
        Some((bt, bid)) => t < bt || (t == bt && id < bid),
    }
}

impl Sector {
    pub(crate) fn new(setup: Setup) -> Sector {
        Sector {
            setup,
            fish: Vec::new(),
            sharks: Vec::new(),
            tombstones: Vec::new(),
            start_fish: Vec::new(),
            start_sharks: Vec::new(),
            stats: SectorStats::default(),
        }
    }

    pub(crate) fn add_start_fish(&mut self, fish: Creature, cell: Cell) {
        self.start_fish.push((fish, cell));
    }

    pub(crate) fn add_start_shark(&mut self, shark: Creature, cell: Cell) {
        self.start_sharks.push((shark, cell));
    }

    /// A window open at time 0 (ground rule 2).
    pub(crate) fn add_visible(&mut self, shark: Creature, until: f64) {
        self.sharks.push(SharkEntry {
            shark,
            from: 0.0,
            until,
        });
    }

    /// Sends `msg` to arrive at (about) `time`. The event's actual time is what
    /// [`Self::arrival_time`] says.
    fn send_at(ctx: &mut Ctx<'_, Self>, to: u32, time: f64, msg: Msg) -> EventHandle {
        let delay = delay_to(ctx.now().as_f64(), time);
        ctx.send(LpId::new(to), delay, SharksEvent(msg))
    }

    /// The time the kernel gives an event sent now for `target`: `now + delay`, computed as
    /// the kernel computes it. A creature's next residency starts at exactly this time, on
    /// both sides of the boundary, so that the sender and the receiver agree to the bit on
    /// where one residency ends and the next begins (it may differ from the geometric
    /// crossing by an ulp, which the slack of ground rule 3 absorbs).
    fn arrival_time(now: f64, target: f64) -> f64 {
        now + delay_to(now, target)
    }

    /// Drops what can no longer matter and emits the deaths that became final (ground rule 6).
    fn collect_garbage(&mut self, now: f64, ctx: &mut Ctx<'_, Self>) {
        let stats = &mut self.stats;
        self.fish.retain(|entry| match entry.fate {
            Fate::Live(_) => entry.departs >= now,
            Fate::Dead { time, shark } => {
                if time < now {
                    ctx.emit(SharksOutput::Death(Death {
                        fish: entry.fish.id,
                        shark,
                        time,
                    }));
                    stats.deaths += 1;
                    false
                } else {
                    true
                }
            }
        });
        self.sharks.retain(|entry| entry.until >= now);
        self.tombstones.retain(|stone| stone.arrival >= now);
    }

    /// A fish enters at `at`: find the shark, if any, that eats it here; else send it on.
    fn arrive_fish(&mut self, fish: Creature, cell: Cell, at: f64, ctx: &mut Ctx<'_, Self>) {
        let Setup { grid, end, .. } = self.setup;
        let motion = fish.motion();
        let (crossing, next) = grid.next_crossing(&motion, cell);
        let departs = if crossing <= end {
            Self::arrival_time(ctx.now().as_f64(), crossing)
        } else {
            crossing
        };
        let horizon = departs.min(end);
        let mut best: Option<(f64, u32)> = None;
        for entry in &self.sharks {
            let lo = at.max(entry.from);
            let hi = horizon
                .min(entry.until)
                .min(best.map_or(f64::INFINITY, |b| b.0));
            if lo > hi {
                continue;
            }
            let shark = &entry.shark;
            if let Some(t) = first_contact(&grid, &motion, &shark.motion(), shark.radius, lo, hi)
                && beats(t, shark.id, best)
            {
                best = Some((t, shark.id));
            }
        }
        let fate = match best {
            Some((time, shark)) => Fate::Dead { time, shark },
            None if crossing <= end => {
                let to = grid.sector_of(next);
                let msg = Msg::FishArrives {
                    fish,
                    cell: next,
                    at: departs,
                };
                let handle = Self::send_at(ctx, to, departs, msg);
                Fate::Live(Some(Departure {
                    to: LpId::new(to),
                    handle,
                }))
            }
            None => Fate::Live(None),
        };
        self.fish.push(FishEntry {
            fish,
            arrived: at,
            departs,
            fate,
        });
    }

    /// A shark's centre enters at `at`: send it on, and announce its radius to every sector
    /// it starts to reach while it is here (ground rule 2).
    fn arrive_shark(&mut self, shark: Creature, cell: Cell, at: f64, ctx: &mut Ctx<'_, Self>) {
        let Setup {
            grid, end, slack, ..
        } = self.setup;
        let motion = shark.motion();
        let (crossing, next) = grid.next_crossing(&motion, cell);
        let exit = if crossing <= end {
            Self::arrival_time(ctx.now().as_f64(), crossing)
        } else {
            crossing
        };
        if crossing <= end {
            let msg = Msg::SharkArrives {
                shark,
                cell: next,
                at: exit,
            };
            Self::send_at(ctx, grid.sector_of(next), exit, msg);
        }
        let reach = shark.radius + slack;
        for other in grid.neighbourhood(cell, reach) {
            let Some((from, until)) = grid.reach_window(&motion, other, reach) else {
                continue;
            };
            // Windows open at time 0 were set up by `build`; later ones belong to the owner
            // in whose residency they open.
            if from > 0.0 && from >= at && from < exit && from <= end {
                let msg = Msg::SharkVisible { shark, from, until };
                Self::send_at(ctx, grid.sector_of(other), from, msg);
            }
        }
    }

    /// A shark's radius starts to reach into this sector: check every fish, live or dead.
    fn sight_shark(
        &mut self,
        shark: Creature,
        from: f64,
        until: f64,
        now: f64,
        ctx: &mut Ctx<'_, Self>,
    ) {
        let Setup {
            grid, end, cancel, ..
        } = self.setup;
        let motion = shark.motion();
        self.sharks.push(SharkEntry { shark, from, until });
        for entry in &mut self.fish {
            let lo = from.max(entry.arrived);
            match entry.fate {
                Fate::Dead { time, shark: eater } => {
                    let hi = time.min(until);
                    if let Some(t) =
                        first_contact(&grid, &entry.fish.motion(), &motion, shark.radius, lo, hi)
                        && beats(t, shark.id, Some((time, eater)))
                    {
                        entry.fate = Fate::Dead {
                            time: t,
                            shark: shark.id,
                        };
                        self.stats.revisions += 1;
                    }
                }
                Fate::Live(departure) => {
                    // Ground rule 5: at the instant it leaves, the next sector decides.
                    if departure.is_some_and(|d| d.handle.time().as_f64() <= now) {
                        continue;
                    }
                    let hi = entry.departs.min(end).min(until);
                    let Some(t) =
                        first_contact(&grid, &entry.fish.motion(), &motion, shark.radius, lo, hi)
                    else {
                        continue;
                    };
                    entry.fate = Fate::Dead {
                        time: t,
                        shark: shark.id,
                    };
                    let Some(departure) = departure else {
                        continue;
                    };
                    match cancel {
                        CancelStyle::Kernel => {
                            if ctx.cancel(departure.handle) {
                                self.stats.withdrawals += 1;
                            } else {
                                self.stats.failed_withdrawals += 1;
                            }
                        }
                        CancelStyle::App => {
                            // Sent for now, so it is handled before the arrival it withdraws,
                            // which is strictly later (ground rule 5).
                            let msg = Msg::Withdraw {
                                fish: entry.fish.id,
                                arrival: entry.departs,
                            };
                            ctx.send(departure.to, 0.0, SharksEvent(msg));
                            self.stats.withdrawals += 1;
                        }
                    }
                }
            }
        }
    }

    /// Whether an arrival was withdrawn; consumes the tombstone.
    fn take_tombstone(&mut self, fish: u32, arrival: f64) -> bool {
        match self
            .tombstones
            .iter()
            .position(|stone| stone.fish == fish && stone.arrival == arrival)
        {
            Some(index) => {
                self.tombstones.swap_remove(index);
                true
            }
            None => false,
        }
    }
}

impl LogicalProcess for Sector {
    type Event = SharksEvent;
    type Output = SharksOutput;

    fn init(&mut self, ctx: &mut Ctx<'_, Self>) {
        let me = ctx.me().get();
        Self::send_at(ctx, me, self.setup.settle, Msg::Settle);
        for (fish, cell) in std::mem::take(&mut self.start_fish) {
            self.arrive_fish(fish, cell, 0.0, ctx);
        }
        for (shark, cell) in std::mem::take(&mut self.start_sharks) {
            self.arrive_shark(shark, cell, 0.0, ctx);
        }
        self.note_peaks();
    }

    fn on_event(&mut self, event: SharksEvent, ctx: &mut Ctx<'_, Self>) {
        if self.setup.work > 0 {
            std::hint::black_box(busy_work(self.setup.work));
        }
        let now = ctx.now().as_f64();
        self.collect_garbage(now, ctx);
        match event.0 {
            Msg::FishArrives { fish, cell, at } => {
                self.stats.fish_arrivals += 1;
                if self.take_tombstone(fish.id, at) {
                    self.stats.ignored_arrivals += 1;
                } else {
                    self.arrive_fish(fish, cell, at, ctx);
                }
            }
            Msg::SharkArrives { shark, cell, at } => {
                self.stats.shark_arrivals += 1;
                self.arrive_shark(shark, cell, at, ctx);
            }
            Msg::SharkVisible { shark, from, until } => {
                self.stats.shark_sightings += 1;
                self.sight_shark(shark, from, until, now, ctx);
            }
            Msg::Withdraw { fish, arrival } => {
                self.stats.withdraw_messages += 1;
                self.tombstones.push(Tombstone { fish, arrival });
            }
            Msg::Settle => {
                self.stats.settles += 1;
                self.note_peaks();
                ctx.emit(SharksOutput::Stats(self.stats));
                return;
            }
        }
        self.note_peaks();
    }

    /// The creature lists' buffers: a sector's state is mostly there, and Time Warp keeps a
    /// large state's last save rather than copy it again after every GVT.
    fn heap_bytes(&self) -> usize {
        self.fish.capacity() * size_of::<FishEntry>()
            + self.sharks.capacity() * size_of::<SharkEntry>()
            + self.tombstones.capacity() * size_of::<Tombstone>()
            + (self.start_fish.capacity() + self.start_sharks.capacity())
                * size_of::<(Creature, Cell)>()
    }
}

impl Sector {
    fn note_peaks(&mut self) {
        self.stats.peak_fish = self.stats.peak_fish.max(self.fish.len() as u64);
        self.stats.peak_sharks = self.stats.peak_sharks.max(self.sharks.len() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::delay_to;

    #[test]
    fn delays_land_exactly_on_their_target() {
        for (now, target) in [
            (0.0, 1e-300),
            (0.1, 0.3),
            (1e-9, 2000.0),
            (1999.9999999, 2000.0),
            (3.0, 3.0),
            (0.7, 1e6 + 0.1),
        ] {
            let delay = delay_to(now, target);
            assert!(delay >= 0.0);
            assert_eq!(now + delay, target, "{now} -> {target}");
        }
    }
}
