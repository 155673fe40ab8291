//! The naive reference manager and the harness that runs one script on it and on `Timers`.
//!
//! The reference keeps every timer in a `Vec` and finds the next one to fire by scanning it:
//! O(n) everything, obviously right. It follows the manager's documented rules, written out
//! plainly: fire in `(due, insertion)` order; a user change made during an advance to a time at
//! or before the current event's time waits for the next advance; a repeating timer's next
//! occurrence is `anchor + k · period`, parked only when it does not move past the occurrence
//! just fired; a one-shot timer is finished when its callback returns without re-arming it.
//!
//! Timers are named by *labels* (0, 1, 2, … in order of add attempts), so both managers can be
//! driven by the same script and compared: every operation's result and every firing go into a
//! trace, and the traces must be identical.

#![allow(dead_code, unreachable_pub)]

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use warpsim_timers::{CatchUp, Scheduler, TimerCtx, TimerError, TimerId, TimerQueue, Timers};

/// One line of a trace.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A callback ran.
    Fire {
        label: usize,
        scheduled: f64,
        now: f64,
        occurrences: u64,
    },
    /// An operation returned this.
    Result(&'static str, Result<(), &'static str>),
    Bool(&'static str, bool),
    Remaining(Option<f64>),
    Advance(Result<usize, &'static str>),
    Now(f64),
}

/// The kind of an error, without payloads that name manager-specific ids.
pub fn kind(error: TimerError) -> &'static str {
    match error {
        TimerError::InvalidDelay(_) => "invalid delay",
        TimerError::InvalidPeriod(_) => "invalid period",
        TimerError::InvalidStep(_) => "invalid step",
        TimerError::InvalidTime(_) => "invalid time",
        TimerError::TimeWentBackwards { .. } => "backwards",
        TimerError::TimeOverflow => "overflow",
        TimerError::InvalidTimeScale(_) => "invalid scale",
        TimerError::StaleTimer(_) => "stale",
        _ => "other",
    }
}

/// A top-level operation of a script.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    Add {
        delay: f64,
        period: Option<f64>,
        catch_up: CatchUp,
    },
    Cancel(usize),
    SetTime(usize, f64),
    Delay(usize, f64),
    Pause(usize),
    Resume(usize),
    Query(usize),
    SetScale(f64),
    Advance(f64),
    AdvanceBy(f64),
}

/// What both managers expose to the script, top level and inside callbacks.
pub trait Api {
    fn book(&mut self) -> &mut Book;
    fn now(&self) -> f64;
    fn add(&mut self, delay: f64, period: Option<f64>, catch_up: CatchUp)
    -> Result<(), TimerError>;
    fn cancel(&mut self, label: usize) -> bool;
    fn set_time(&mut self, label: usize, at: f64) -> Result<(), TimerError>;
    fn delay(&mut self, label: usize, by: f64) -> Result<(), TimerError>;
    fn pause(&mut self, label: usize) -> bool;
    fn resume(&mut self, label: usize) -> bool;
    fn remaining(&self, label: usize) -> Option<f64>;
    fn is_active(&self, label: usize) -> bool;
    fn is_paused(&self, label: usize) -> bool;
    fn set_time_scale(&mut self, scale: f64) -> Result<(), TimerError>;
}

/// The bookkeeping both worlds share: the trace, the label count, firing counts.
#[derive(Debug, Default)]
pub struct Book {
    pub trace: Vec<Entry>,
    pub n_labels: usize,
    pub fire_counts: Vec<u64>,
    pub seed: u64,
    pub max_labels: usize,
    /// Whether callbacks act at all (off for scripts that test only the top level).
    pub callbacks_act: bool,
}

impl Book {
    pub fn new(seed: u64, max_labels: usize, callbacks_act: bool) -> Self {
        Book {
            seed,
            max_labels,
            callbacks_act,
            ..Book::default()
        }
    }

    fn new_label(&mut self) -> usize {
        self.n_labels += 1;
        self.fire_counts.push(0);
        self.n_labels - 1
    }
}

// ----- random inputs -------------------------------------------------------------------------

/// Delays: often zero or on a quarter-second grid (so equal times are common), sometimes
/// arbitrary, rarely invalid.
pub fn random_delay(rng: &mut Xoshiro256PlusPlus) -> f64 {
    match rng.random_range(0..100) {
        0..25 => 0.0,
        25..65 => 0.25 * f64::from(rng.random_range(1..=16u32)),
        65..97 => rng.random_range(0.0..5.0),
        97 => -1.0,
        98 => f64::NAN,
        _ => f64::INFINITY,
    }
}

pub fn random_period(rng: &mut Xoshiro256PlusPlus) -> Option<f64> {
    match rng.random_range(0..100) {
        0..55 => None,
        55..80 => Some(0.25 * f64::from(rng.random_range(1..=8u32))),
        80..97 => Some(rng.random_range(0.1..3.0)),
        97 => Some(0.0),
        98 => Some(-1.0),
        _ => Some(f64::NAN),
    }
}

pub fn random_catch_up(rng: &mut Xoshiro256PlusPlus) -> CatchUp {
    if rng.random_bool(0.5) {
        CatchUp::FireAll
    } else {
        CatchUp::FireOnce
    }
}

fn random_shift(rng: &mut Xoshiro256PlusPlus) -> f64 {
    match rng.random_range(0..100) {
        0..10 => 0.0,
        10..50 => 0.25 * f64::from(rng.random_range(-8..=16i32)),
        50..98 => rng.random_range(-3.0..6.0),
        98 => f64::NAN,
        _ => f64::NEG_INFINITY,
    }
}

fn random_label(rng: &mut Xoshiro256PlusPlus, n_labels: usize) -> Option<usize> {
    (n_labels > 0).then(|| rng.random_range(0..n_labels))
}

/// A random top-level operation.
pub fn random_op(rng: &mut Xoshiro256PlusPlus, n_labels: usize) -> Op {
    let label = |rng: &mut Xoshiro256PlusPlus| random_label(rng, n_labels).unwrap_or(0);
    match rng.random_range(0..100) {
        0..28 => Op::Add {
            delay: random_delay(rng),
            period: random_period(rng),
            catch_up: random_catch_up(rng),
        },
        28..35 if n_labels > 0 => Op::Cancel(label(rng)),
        35..42 if n_labels > 0 => Op::SetTime(label(rng), random_shift(rng)),
        42..49 if n_labels > 0 => Op::Delay(label(rng), random_shift(rng)),
        49..54 if n_labels > 0 => Op::Pause(label(rng)),
        54..59 if n_labels > 0 => Op::Resume(label(rng)),
        59..63 if n_labels > 0 => Op::Query(label(rng)),
        63..66 => Op::SetScale(match rng.random_range(0..8) {
            0 => 0.0,
            1 => 0.5,
            2 => 2.0,
            3 => f64::NAN,
            4 => -1.0,
            _ => 1.0,
        }),
        66..70 => Op::AdvanceBy(match rng.random_range(0..10) {
            0 => -1.0,
            1 => 0.0,
            _ => 0.25 * f64::from(rng.random_range(0..12u32)),
        }),
        _ => Op::Advance(match rng.random_range(0..100) {
            0..15 => 0.0,
            15..55 => 1.0 / 60.0,
            55..85 => rng.random_range(0.0..2.0),
            85..97 => rng.random_range(2.0..12.0),
            97 => -0.5,
            98 => f64::NAN,
            _ => f64::INFINITY,
        }),
    }
}

// ----- the script ----------------------------------------------------------------------------

/// Applies one top-level operation that is not an advance, recording its result.
pub fn apply(api: &mut impl Api, op: Op) {
    let entry = match op {
        Op::Add {
            delay,
            period,
            catch_up,
        } => Entry::Result("add", api.add(delay, period, catch_up).map_err(kind)),
        Op::Cancel(label) => Entry::Bool("cancel", api.cancel(label)),
        Op::SetTime(label, shift) => {
            let at = api.now() + shift;
            Entry::Result("set_time", api.set_time(label, at).map_err(kind))
        }
        Op::Delay(label, by) => Entry::Result("delay", api.delay(label, by).map_err(kind)),
        Op::Pause(label) => Entry::Bool("pause", api.pause(label)),
        Op::Resume(label) => Entry::Bool("resume", api.resume(label)),
        Op::Query(label) => {
            let active = api.is_active(label);
            let paused = api.is_paused(label);
            api.book().trace.push(Entry::Bool("is_active", active));
            api.book().trace.push(Entry::Bool("is_paused", paused));
            Entry::Remaining(api.remaining(label))
        }
        Op::SetScale(scale) => Entry::Result("scale", api.set_time_scale(scale).map_err(kind)),
        Op::Advance(_) | Op::AdvanceBy(_) => unreachable!("advances are the driver's"),
    };
    api.book().trace.push(entry);
}

/// What a callback does when timer `label` fires: log it, then 0–3 random actions drawn from a
/// stream seeded by (script seed, label, firing count), so both managers do the same thing.
pub fn on_fire(api: &mut impl Api, label: usize, scheduled: f64, occurrences: u64) {
    let now = api.now();
    let book = api.book();
    book.trace.push(Entry::Fire {
        label,
        scheduled,
        now,
        occurrences,
    });
    let count = book.fire_counts[label];
    book.fire_counts[label] += 1;
    if !book.callbacks_act {
        return;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(
        book.seed
            ^ (label as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ count.wrapping_mul(0xd1b5_4a32_d192_ed03),
    );
    let n_actions = [0, 0, 1, 1, 1, 2, 3][rng.random_range(0..7)];
    for _ in 0..n_actions {
        let n_labels = api.book().n_labels;
        let other = random_label(&mut rng, n_labels).unwrap_or(label);
        let entry = match rng.random_range(0..100) {
            0..30 => {
                if n_labels >= api.book().max_labels {
                    continue;
                }
                let delay = random_delay(&mut rng);
                let period = random_period(&mut rng);
                let catch_up = random_catch_up(&mut rng);
                Entry::Result("cb add", api.add(delay, period, catch_up).map_err(kind))
            }
            30..40 => Entry::Bool("cb cancel", api.cancel(other)),
            40..45 => Entry::Bool("cb cancel self", api.cancel(label)),
            45..55 => {
                let at = api.now() + random_shift(&mut rng);
                Entry::Result("cb set_time", api.set_time(other, at).map_err(kind))
            }
            55..62 => {
                // Re-arm or move itself relative to its own scheduled time.
                let at = scheduled + random_shift(&mut rng).abs();
                Entry::Result("cb set_time self", api.set_time(label, at).map_err(kind))
            }
            62..72 => {
                let by = random_shift(&mut rng);
                Entry::Result("cb delay", api.delay(other, by).map_err(kind))
            }
            72..77 => {
                let by = random_shift(&mut rng);
                Entry::Result("cb delay self", api.delay(label, by).map_err(kind))
            }
            77..84 => Entry::Bool("cb pause", api.pause(other)),
            84..91 => Entry::Bool("cb resume", api.resume(other)),
            91..96 => Entry::Remaining(api.remaining(other)),
            _ => Entry::Bool("cb is_active", api.is_active(other)),
        };
        api.book().trace.push(entry);
    }
}

// ----- the real manager behind the Api -------------------------------------------------------

/// The game context of the real manager: the book plus label → id.
#[derive(Debug, Default)]
pub struct World {
    pub book: Book,
    pub ids: Vec<Option<TimerId>>,
}

/// `Api` over the real manager: a scheduler (top level or a callback's) and the world.
pub struct RealApi<'a> {
    pub world: &'a mut World,
    pub scheduler: &'a mut Scheduler<World>,
}

fn real_callback(
    label: usize,
) -> impl FnMut(&mut World, &mut TimerCtx<'_, World>) + Send + 'static {
    move |world, ctx| {
        let (scheduled, occurrences) = (ctx.scheduled(), ctx.occurrences());
        let mut api = RealApi {
            world,
            scheduler: ctx,
        };
        on_fire(&mut api, label, scheduled, occurrences);
    }
}

impl RealApi<'_> {
    fn id(&self, label: usize) -> Option<TimerId> {
        self.world.ids.get(label).copied().flatten()
    }
}

impl Api for RealApi<'_> {
    fn book(&mut self) -> &mut Book {
        &mut self.world.book
    }

    fn now(&self) -> f64 {
        self.scheduler.now()
    }

    fn add(
        &mut self,
        delay: f64,
        period: Option<f64>,
        catch_up: CatchUp,
    ) -> Result<(), TimerError> {
        let label = self.world.book.new_label();
        let mut builder = self.scheduler.timer(delay).catch_up(catch_up);
        if let Some(period) = period {
            builder = builder.repeat(period);
        }
        let result = builder.build(real_callback(label));
        self.world.ids.push(result.as_ref().ok().copied());
        // A refused add hands its callback back; the model only needs the reason.
        result.map(|_| ()).map_err(|refused| refused.error)
    }

    fn cancel(&mut self, label: usize) -> bool {
        self.id(label).is_some_and(|id| self.scheduler.cancel(id))
    }

    fn set_time(&mut self, label: usize, at: f64) -> Result<(), TimerError> {
        match self.id(label) {
            Some(id) => self.scheduler.set_time(id, at),
            None => Err(TimerError::StaleTimer(stale_id())),
        }
    }

    fn delay(&mut self, label: usize, by: f64) -> Result<(), TimerError> {
        match self.id(label) {
            Some(id) => self.scheduler.delay(id, by),
            None => Err(TimerError::StaleTimer(stale_id())),
        }
    }

    fn pause(&mut self, label: usize) -> bool {
        self.id(label).is_some_and(|id| self.scheduler.pause(id))
    }

    fn resume(&mut self, label: usize) -> bool {
        self.id(label).is_some_and(|id| self.scheduler.resume(id))
    }

    fn remaining(&self, label: usize) -> Option<f64> {
        self.scheduler.remaining(self.id(label)?)
    }

    fn is_active(&self, label: usize) -> bool {
        self.id(label)
            .is_some_and(|id| self.scheduler.is_active(id))
    }

    fn is_paused(&self, label: usize) -> bool {
        self.id(label)
            .is_some_and(|id| self.scheduler.is_paused(id))
    }

    fn set_time_scale(&mut self, scale: f64) -> Result<(), TimerError> {
        self.scheduler.set_time_scale(scale)
    }
}

/// Any id, for labels whose add failed (the error kind is all that is compared).
fn stale_id() -> TimerId {
    let mut timers = Timers::<()>::new();
    let id = timers.add(0.0, |_, _| {}).expect("valid");
    timers.cancel(id);
    id
}

/// The real manager with its world.
pub struct RealRun {
    pub timers: Timers<World>,
    pub world: World,
}

impl RealRun {
    pub fn new(book: Book, queue: TimerQueue) -> Self {
        RealRun {
            timers: Timers::builder().queue(queue).build(),
            world: World {
                book,
                ids: Vec::new(),
            },
        }
    }

    pub fn step(&mut self, op: Op) {
        match op {
            Op::Advance(dt) => {
                let result = self.timers.advance(dt, &mut self.world).map_err(kind);
                self.world.book.trace.push(Entry::Advance(result));
                self.world.book.trace.push(Entry::Now(self.timers.now()));
            }
            Op::AdvanceBy(shift) => {
                let target = self.timers.now() + shift;
                let result = self
                    .timers
                    .advance_to(target, &mut self.world)
                    .map_err(kind);
                self.world.book.trace.push(Entry::Advance(result));
                self.world.book.trace.push(Entry::Now(self.timers.now()));
            }
            op => {
                let mut api = RealApi {
                    world: &mut self.world,
                    scheduler: &mut self.timers,
                };
                apply(&mut api, op);
            }
        }
    }

    pub fn n_labels(&self) -> usize {
        self.world.book.n_labels
    }
}

// ----- the reference -------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum RefState {
    Dead,
    Scheduled,
    Paused,
    Firing,
}

#[derive(Debug, Clone)]
struct RefTimer {
    state: RefState,
    /// Scheduled: due time; Paused: time left; Firing: the scheduled time.
    time: f64,
    parked: bool,
    period: f64,
    anchor: f64,
    occurrences: u64,
    catch_up: CatchUp,
}

/// The naive manager: a `Vec` of timers indexed by label, scanned for everything.
#[derive(Debug, Default)]
pub struct Reference {
    pub book: Book,
    now: f64,
    scale: f64,
    in_advance: bool,
    timers: Vec<Option<RefTimer>>,
}

impl Reference {
    pub fn new(book: Book) -> Self {
        Reference {
            book,
            scale: 1.0,
            ..Reference::default()
        }
    }

    fn live(&self, label: usize) -> Option<&RefTimer> {
        self.timers
            .get(label)?
            .as_ref()
            .filter(|t| t.state != RefState::Dead)
    }

    fn live_mut(&mut self, label: usize) -> Option<&mut RefTimer> {
        self.timers
            .get_mut(label)?
            .as_mut()
            .filter(|t| t.state != RefState::Dead)
    }

    /// A user change: due at `due`, held to the next advance if at or before the clock.
    fn schedule(&mut self, label: usize, due: f64) {
        let (in_advance, now) = (self.in_advance, self.now);
        let timer = self.live_mut(label).expect("live");
        timer.state = RefState::Scheduled;
        timer.time = due;
        timer.parked = in_advance && due <= now;
    }

    pub fn step(&mut self, op: Op) {
        match op {
            Op::Advance(dt) => {
                let result = if !(dt.is_finite() && dt >= 0.0) {
                    Err("invalid step")
                } else {
                    let target = self.now + dt * self.scale;
                    if target.is_finite() {
                        Ok(self.run_until(target + 0.0))
                    } else {
                        Err("overflow")
                    }
                };
                self.book.trace.push(Entry::Advance(result));
                self.book.trace.push(Entry::Now(self.now));
            }
            Op::AdvanceBy(shift) => {
                let target = self.now + shift;
                let result = if !target.is_finite() {
                    Err("invalid time")
                } else if target < self.now {
                    Err("backwards")
                } else {
                    Ok(self.run_until(target + 0.0))
                };
                self.book.trace.push(Entry::Advance(result));
                self.book.trace.push(Entry::Now(self.now));
            }
            op => apply(self, op),
        }
    }

    fn run_until(&mut self, target: f64) -> usize {
        self.in_advance = true;
        let mut n_fired = 0;
        loop {
            // The next timer: smallest (due, label) among scheduled, unparked, due timers.
            let mut next: Option<(f64, usize)> = None;
            for (label, timer) in self.timers.iter().enumerate() {
                let Some(timer) = timer else { continue };
                if timer.state != RefState::Scheduled || timer.parked || timer.time > target {
                    continue;
                }
                if next.is_none_or(|(due, _)| timer.time < due) {
                    next = Some((timer.time, label));
                }
            }
            let Some((scheduled, label)) = next else {
                break;
            };
            n_fired += 1;
            self.now = self.now.max(scheduled);
            let timer = self.timers[label].as_mut().expect("live");
            let occurrences = if timer.period > 0.0 {
                let (anchor, period) = (timer.anchor, timer.period);
                let (next_due, occurrences) = match timer.catch_up {
                    CatchUp::FireAll => {
                        timer.occurrences += 1;
                        (anchor + timer.occurrences as f64 * period, 1)
                    }
                    CatchUp::FireOnce => {
                        let fired = timer.occurrences;
                        let estimate = ((target - anchor) / period).floor() + 1.0;
                        let mut k = (estimate as u64).max(fired + 1);
                        for _ in 0..4 {
                            if anchor + k as f64 * period > target {
                                break;
                            }
                            k += 1;
                        }
                        timer.occurrences = k;
                        (anchor + k as f64 * period, k - fired)
                    }
                };
                timer.time = next_due;
                timer.parked = next_due <= scheduled;
                occurrences
            } else {
                timer.state = RefState::Firing;
                timer.time = scheduled;
                1
            };
            on_fire(self, label, scheduled, occurrences);
            if let Some(timer) = self.live_mut(label)
                && timer.state == RefState::Firing
            {
                timer.state = RefState::Dead;
            }
        }
        self.in_advance = false;
        for timer in self.timers.iter_mut().flatten() {
            timer.parked = false;
        }
        self.now = self.now.max(target);
        n_fired
    }

    fn move_to(&mut self, label: usize, at: f64) {
        let now = self.now;
        let timer = self.live_mut(label).expect("live");
        if timer.state == RefState::Paused {
            timer.time = (at - now).max(0.0);
            return;
        }
        timer.anchor = at;
        timer.occurrences = 0;
        self.schedule(label, at);
    }
}

impl Api for Reference {
    fn book(&mut self) -> &mut Book {
        &mut self.book
    }

    fn now(&self) -> f64 {
        self.now
    }

    fn add(
        &mut self,
        delay: f64,
        period: Option<f64>,
        catch_up: CatchUp,
    ) -> Result<(), TimerError> {
        let label = self.book.new_label();
        self.timers.push(None);
        if !(delay.is_finite() && delay >= 0.0) {
            return Err(TimerError::InvalidDelay(delay));
        }
        let period = match period {
            None => 0.0,
            Some(p) if p.is_finite() && p > 0.0 => p,
            Some(p) => return Err(TimerError::InvalidPeriod(p)),
        };
        let due = self.now + delay;
        self.timers[label] = Some(RefTimer {
            state: RefState::Scheduled,
            time: due,
            parked: false,
            period,
            anchor: due,
            occurrences: 0,
            catch_up,
        });
        self.schedule(label, due);
        Ok(())
    }

    fn cancel(&mut self, label: usize) -> bool {
        match self.live_mut(label) {
            Some(timer) => {
                timer.state = RefState::Dead;
                true
            }
            None => false,
        }
    }

    fn set_time(&mut self, label: usize, at: f64) -> Result<(), TimerError> {
        if self.live(label).is_none() {
            return Err(TimerError::StaleTimer(stale_id()));
        }
        if !at.is_finite() {
            return Err(TimerError::InvalidTime(at));
        }
        self.move_to(label, at + 0.0);
        Ok(())
    }

    fn delay(&mut self, label: usize, by: f64) -> Result<(), TimerError> {
        let Some(timer) = self.live(label) else {
            return Err(TimerError::StaleTimer(stale_id()));
        };
        if !by.is_finite() {
            return Err(TimerError::InvalidDelay(by));
        }
        let at = timer.time + by;
        if !at.is_finite() {
            return Err(TimerError::TimeOverflow);
        }
        if timer.state == RefState::Paused {
            self.live_mut(label).expect("live").time = at.max(0.0);
        } else {
            self.move_to(label, at + 0.0);
        }
        Ok(())
    }

    fn pause(&mut self, label: usize) -> bool {
        let now = self.now;
        match self.live_mut(label) {
            Some(timer) if timer.state == RefState::Scheduled => {
                timer.state = RefState::Paused;
                timer.time = (timer.time - now).max(0.0);
                timer.parked = false;
                true
            }
            _ => false,
        }
    }

    fn resume(&mut self, label: usize) -> bool {
        let now = self.now;
        match self.live_mut(label) {
            Some(timer) if timer.state == RefState::Paused => {
                let at = now + timer.time;
                timer.anchor = at;
                timer.occurrences = 0;
                self.schedule(label, at);
                true
            }
            _ => false,
        }
    }

    fn remaining(&self, label: usize) -> Option<f64> {
        let timer = self.live(label)?;
        match timer.state {
            RefState::Scheduled => Some((timer.time - self.now).max(0.0)),
            RefState::Paused => Some(timer.time),
            _ => None,
        }
    }

    fn is_active(&self, label: usize) -> bool {
        self.live(label)
            .is_some_and(|t| t.state == RefState::Scheduled)
    }

    fn is_paused(&self, label: usize) -> bool {
        self.live(label)
            .is_some_and(|t| t.state == RefState::Paused)
    }

    fn set_time_scale(&mut self, scale: f64) -> Result<(), TimerError> {
        if scale.is_finite() && scale >= 0.0 {
            self.scale = scale + 0.0;
            Ok(())
        } else {
            Err(TimerError::InvalidTimeScale(scale))
        }
    }
}

/// Runs `ops` on both managers and returns the two traces.
pub fn run_both(
    ops: &[Op],
    queue: TimerQueue,
    seed: u64,
    max_labels: usize,
    callbacks_act: bool,
) -> (Vec<Entry>, Vec<Entry>) {
    let mut real = RealRun::new(Book::new(seed, max_labels, callbacks_act), queue);
    let mut reference = Reference::new(Book::new(seed, max_labels, callbacks_act));
    for &op in ops {
        real.step(op);
        reference.step(op);
    }
    (real.world.book.trace, reference.book.trace)
}

/// Runs `ops` on the real manager only and returns its trace.
pub fn run_real(
    ops: &[Op],
    queue: TimerQueue,
    seed: u64,
    max_labels: usize,
    callbacks_act: bool,
) -> Vec<Entry> {
    let mut real = RealRun::new(Book::new(seed, max_labels, callbacks_act), queue);
    for &op in ops {
        real.step(op);
    }
    real.world.book.trace
}

/// Finds the first difference between two traces, with a little context, for a readable
/// failure message.
pub fn first_difference(real: &[Entry], reference: &[Entry]) -> Option<String> {
    let n = real.len().max(reference.len());
    (0..n).find(|&i| real.get(i) != reference.get(i)).map(|i| {
        let from = i.saturating_sub(8);
        format!(
            "traces differ at entry {i}\n real:      {:?}\n reference: {:?}",
            &real[from.min(real.len())..(i + 3).min(real.len())],
            &reference[from.min(reference.len())..(i + 3).min(reference.len())],
        )
    })
}
