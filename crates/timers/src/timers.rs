//! The manager the game loop owns and advances.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use crate::TimerError;
use crate::ctx::TimerCtx;
use crate::id::{MilestoneId, TimerId};
use crate::queue::TimerQueue;
use crate::scheduler::{CatchUp, MilestoneState, RemovalReason, Repeat, Scheduler, State};

/// The delayed-callback manager, driven by the game loop.
///
/// `C` is the context handed to every callback (typically the game world). Each frame, call
/// [`advance`](Self::advance) with the frame time; every timer that comes due fires, in time
/// order, equal times in the order the timers were added. Everything else — adding,
/// cancelling, changing, pausing timers, owners, meters — is on the [`Scheduler`] this type
/// dereferences to, which callbacks reach as well through their [`TimerCtx`].
///
/// ```
/// use warpsim_timers::Timers;
///
/// struct World { torches_lit: u32 }
/// let mut world = World { torches_lit: 3 };
/// let mut timers = Timers::new();
/// for burn_time in [0.5, 1.0, 30.0] {
///     timers.add(burn_time, |world: &mut World, _| world.torches_lit -= 1)?;
/// }
/// for _frame in 0..60 {
///     timers.advance(1.0 / 60.0, &mut world)?; // about one second of frames
/// }
/// assert_eq!(world.torches_lit, 1);
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
///
/// # Dropping
///
/// Dropping the manager drops every callback and tells each owner about each of its live
/// timers ([`RemovalReason::ManagerDropped`]).
pub struct Timers<C> {
    scheduler: Scheduler<C>,
}

impl<C> Timers<C> {
    /// An empty manager at time `0` with time scale `1`.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let timers = Timers::<()>::new();
    /// assert_eq!((timers.now(), timers.len()), (0.0, 0));
    /// ```
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// An empty manager with room for `capacity` timers before it reallocates.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let timers = Timers::<()>::with_capacity(1_000_000);
    /// assert!(timers.is_empty());
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        Self::builder().capacity(capacity).build()
    }

    /// Starts configuring a manager: its capacity and its pending set.
    ///
    /// ```
    /// use warpsim_timers::{TimerQueue, Timers};
    /// let timers = Timers::<()>::builder().capacity(1000).queue(TimerQueue::Heap).build();
    /// assert_eq!(timers.queue(), TimerQueue::Heap);
    /// ```
    pub fn builder() -> TimersBuilder<C> {
        TimersBuilder {
            capacity: 0,
            queue: TimerQueue::default(),
            context: PhantomData,
        }
    }

    /// The pending set this manager uses.
    ///
    /// ```
    /// use warpsim_timers::{TimerQueue, Timers};
    /// assert_eq!(Timers::<()>::new().queue(), TimerQueue::default());
    /// ```
    pub fn queue(&self) -> TimerQueue {
        self.scheduler.queue.kind()
    }

    /// Advances the clock by `dt × time_scale` and fires every timer that comes due, in time
    /// order (equal times in insertion order). Returns the number of callbacks run.
    ///
    /// Callbacks may change any timer while the advance runs. Work they schedule at or before
    /// the current event's time (a zero delay, a time in the past) fires in the *next* advance,
    /// so no callback can keep a frame from ending; work scheduled later within this advance
    /// fires in it, in order.
    ///
    /// # Errors
    ///
    /// [`TimerError::InvalidStep`] for a NaN, infinite or negative `dt`;
    /// [`TimerError::TimeOverflow`] when the clock would overflow. Nothing happens then.
    ///
    /// # Panics
    ///
    /// Only if a callback panics; the panic propagates. The manager stays usable: the timer
    /// whose callback panicked is removed at the start of the next advance.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<Vec<&str>>::new();
    /// timers.add(1.0, |log, _| log.push("b"))?;
    /// timers.add(0.5, |log, _| log.push("a"))?;
    /// timers.add(1.0, |log, _| log.push("c"))?; // same time as "b", added later
    /// let mut log = Vec::new();
    /// assert_eq!(timers.advance(2.0, &mut log)?, 3);
    /// assert_eq!(log, ["a", "b", "c"]);
    /// assert!(timers.advance(-1.0, &mut log).is_err());
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    #[inline]
    pub fn advance(&mut self, dt: f64, context: &mut C) -> Result<usize, TimerError> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(TimerError::InvalidStep(dt));
        }
        // `now` is never `-0.0` and `dt × scale` is at least `-0.0`, so the sum is never
        // `-0.0` either: no normalisation needed on this hot path.
        let target = self.scheduler.now + dt * self.scheduler.time_scale;
        if !target.is_finite() {
            return Err(TimerError::TimeOverflow);
        }
        Ok(self.run_until(target, context))
    }

    /// Advances the clock to absolute time `target` (not scaled) and fires what comes due, as
    /// [`advance`](Self::advance) does.
    ///
    /// # Errors
    ///
    /// [`TimerError::InvalidTime`] for NaN or infinite `target`,
    /// [`TimerError::TimeWentBackwards`] when `target` is before [`now`](Scheduler::now).
    ///
    /// # Panics
    ///
    /// Only if a callback panics, as for [`advance`](Self::advance).
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<u32>::new();
    /// timers.add(5.0, |n, _| *n += 1)?;
    /// let mut n = 0;
    /// timers.advance_to(5.0, &mut n)?;
    /// assert_eq!((n, timers.now()), (1, 5.0));
    /// assert!(timers.advance_to(4.0, &mut n).is_err());
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn advance_to(&mut self, target: f64, context: &mut C) -> Result<usize, TimerError> {
        if !target.is_finite() {
            return Err(TimerError::InvalidTime(target));
        }
        let now = self.scheduler.now;
        if target < now {
            return Err(TimerError::TimeWentBackwards { now, target });
        }
        Ok(self.run_until(target + 0.0, context))
    }

    /// The fast path: with nothing due, an advance is a comparison and a store.
    /// Like [`advance`](Self::advance), but fires at most what `budget` allows: at most
    /// `max_callbacks` callbacks, and none after `max_time` of wall-clock time has gone into
    /// this advance. The clock still moves by `dt × time_scale`; timers that were due but
    /// not fired are *carried over*: they stay due, keep their scheduled time, and fire first
    /// (in time order) in the next advance. The [`FrameReport`] says how many callbacks
    /// fired, how many of them had been carried over from earlier frames and how late the
    /// latest of those was, and whether any due timer is still waiting.
    ///
    /// This is what keeps a frame in which many timers fall due from spiking: the work is
    /// spread over the next frames, and its cost — lateness — is measured, not hidden.
    ///
    /// # Errors
    ///
    /// As [`advance`](Self::advance).
    ///
    /// ```
    /// use warpsim_timers::{Budget, Timers};
    ///
    /// let mut timers = Timers::<u32>::new();
    /// for _ in 0..5 {
    ///     timers.add(0.01, |n, _| *n += 1)?;
    /// }
    /// let mut n = 0;
    /// let dt = 1.0 / 60.0;
    /// let first = timers.advance_within(dt, &mut n, Budget::callbacks(2))?;
    /// assert_eq!((first.fired, first.late, first.carried_over), (2, 0, true));
    /// let second = timers.advance_within(dt, &mut n, Budget::callbacks(2))?;
    /// assert_eq!((second.fired, second.late), (2, 2));
    /// assert!((second.max_lateness - (dt - 0.01)).abs() < 1e-12); // due at 0.01, run from 1/60
    /// let third = timers.advance_within(dt, &mut n, Budget::callbacks(2))?;
    /// assert_eq!((third.fired, third.carried_over, n), (1, false, 5));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn advance_within(
        &mut self,
        dt: f64,
        context: &mut C,
        budget: Budget,
    ) -> Result<FrameReport, TimerError> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(TimerError::InvalidStep(dt));
        }
        let target = self.scheduler.now + dt * self.scheduler.time_scale;
        if !target.is_finite() {
            return Err(TimerError::TimeOverflow);
        }
        let scheduler = &mut self.scheduler;
        if target < scheduler.next_due && !scheduler.in_advance {
            scheduler.now = target;
            return Ok(FrameReport::default());
        }
        Ok(self.fire_due_within(target, context, budget))
    }

    #[inline(never)]
    fn fire_due_within(&mut self, target: f64, context: &mut C, budget: Budget) -> FrameReport {
        let started = budget.max_time.map(|_| std::time::Instant::now());
        let max_callbacks = budget.max_callbacks.unwrap_or(usize::MAX);
        let scheduler = &mut self.scheduler;
        if scheduler.in_advance {
            scheduler.recover();
        }
        let frame_start = scheduler.now;
        scheduler.in_advance = true;
        let mut report = FrameReport::default();
        loop {
            let out_of_time = match (started, budget.max_time) {
                // Reading the clock costs tens of ns: look every 16 callbacks.
                (Some(started), Some(limit)) if report.fired % 16 == 0 && report.fired > 0 => {
                    started.elapsed() >= limit
                }
                _ => false,
            };
            if report.fired >= max_callbacks || out_of_time {
                report.carried_over = scheduler.queue.has_due(target);
                scheduler.next_due = scheduler.queue.lower_bound();
                break;
            }
            let Some(((due, _), idx)) = scheduler.queue.pop_due(target) else {
                scheduler.next_due = scheduler.queue.lower_bound();
                break;
            };
            let scheduled = due.get();
            if scheduled < frame_start {
                report.late += 1;
                report.max_lateness = report.max_lateness.max(frame_start - scheduled);
            }
            report.fired += 1;
            prefetch_next(scheduler);
            fire_one(scheduler, idx, scheduled, target, context);
        }
        scheduler.finish_advance(target);
        report
    }

    #[inline]
    fn run_until(&mut self, target: f64, context: &mut C) -> usize {
        let scheduler = &mut self.scheduler;
        if target < scheduler.next_due && !scheduler.in_advance {
            scheduler.now = target;
            return 0;
        }
        self.fire_due(target, context)
    }

    /// Fires everything due at or before `target`.
    #[inline(never)]
    fn fire_due(&mut self, target: f64, context: &mut C) -> usize {
        let scheduler = &mut self.scheduler;
        if scheduler.in_advance {
            scheduler.recover();
        }
        scheduler.in_advance = true;
        let mut n_fired = 0;
        loop {
            let Some(((due, _), idx)) = scheduler.queue.pop_due(target) else {
                // A lower bound of the earliest time, now that the queue has been looked at.
                scheduler.next_due = scheduler.queue.lower_bound();
                break;
            };
            n_fired += 1;
            prefetch_next(scheduler);
            fire_one(scheduler, idx, due.get(), target, context);
        }
        scheduler.finish_advance(target);
        n_fired
    }
}

/// Fires the timer in slot `idx`, just popped from the queue with due time `scheduled`.
/// A limit on the work of one [`Timers::advance_within`]: at most `max_callbacks`
/// callbacks, and no new callback once `max_time` of wall-clock time has gone into the
/// advance (checked every 16 callbacks, so a frame may overrun by up to 15 callbacks).
///
/// ```
/// use std::time::Duration;
/// use warpsim_timers::Budget;
///
/// let budget = Budget::callbacks(500).and_time(Duration::from_millis(2));
/// assert_eq!(budget.max_callbacks, Some(500));
/// assert_eq!(Budget::default(), Budget::unlimited());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    /// At most this many callbacks per advance (`None`: no limit).
    pub max_callbacks: Option<usize>,
    /// No new callback after this much wall-clock time in the advance (`None`: no limit).
    pub max_time: Option<std::time::Duration>,
}

impl Budget {
    /// No limit: the same as [`Timers::advance`], with a report.
    pub fn unlimited() -> Budget {
        Budget::default()
    }

    /// At most `n` callbacks per advance.
    pub fn callbacks(n: usize) -> Budget {
        Budget {
            max_callbacks: Some(n),
            max_time: None,
        }
    }

    /// No new callback after `limit` of wall-clock time in the advance.
    pub fn time(limit: std::time::Duration) -> Budget {
        Budget {
            max_callbacks: None,
            max_time: Some(limit),
        }
    }

    /// This budget with a time limit as well.
    pub fn and_time(self, limit: std::time::Duration) -> Budget {
        Budget {
            max_time: Some(limit),
            ..self
        }
    }
}

/// What one [`Timers::advance_within`] did.
///
/// ```
/// use warpsim_timers::FrameReport;
/// assert_eq!(FrameReport::default().fired, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrameReport {
    /// Callbacks fired (repeating timers count once per firing).
    pub fired: usize,
    /// Of those, how many were due before this advance began (carried over by the budget of
    /// an earlier frame).
    pub late: usize,
    /// The largest lateness among them: the start of this advance minus the callback's
    /// scheduled time, in game seconds (0 when none was late).
    pub max_lateness: f64,
    /// Whether timers due by the end of this advance are still waiting (carried over to the
    /// next).
    pub carried_over: bool,
}

/// Starts loading the slot of a timer about to fire while this one fires: with a million
/// timers each slot is a cache miss, and the queue already knows which ones come next (the
/// wheel several places ahead). The queue prefetches its own records; this is the manager's
/// slot behind the entry.
#[inline]
fn prefetch_next<C>(scheduler: &mut Scheduler<C>) {
    if let Some(next) = scheduler.queue.upcoming_slot() {
        prefetch_index::prefetch_index(&scheduler.slots, next as usize);
    }
}

#[inline]
fn fire_one<C>(
    scheduler: &mut Scheduler<C>,
    idx: u32,
    scheduled: f64,
    target: f64,
    context: &mut C,
) {
    if scheduled > scheduler.now {
        scheduler.now = scheduled;
    }
    let i = idx as usize;
    let slot = &mut scheduler.slots[i];
    let id = TimerId {
        slot: idx,
        generation: slot.generation,
    };
    slot.state = State::Firing;
    slot.time = scheduled;
    let occurrences = match slot.repeat.as_deref_mut() {
        Some(repeat) => {
            let (next, occurrences) = next_occurrence(repeat, target);
            // Parking at `scheduled`, not at the clock: past occurrences still catch up within
            // this advance, and a period too small to move the clock cannot loop forever.
            scheduler.place(idx, next, scheduled);
            occurrences
        }
        None => 1,
    };
    let Some(mut callback) = scheduler.slots[i].callback.take() else {
        // The callback was lost to a panic; the timer goes with it.
        scheduler.release(i, Some(RemovalReason::Cancelled));
        return;
    };
    scheduler.firing = Some(id);
    let payload = scheduler.slots[i].payload;
    let mut ctx = TimerCtx {
        scheduler: &mut *scheduler,
        id,
        scheduled,
        occurrences,
        milestone: None,
        payload,
    };
    callback(context, &mut ctx);
    scheduler.firing = None;
    // Put the callback back, or finish a one-shot timer (ground rule 4).
    match scheduler.live_slot(id) {
        Some(i) if scheduler.slots[i].state == State::Firing => {
            drop(callback);
            scheduler.finish(i);
        }
        Some(i) => scheduler.slots[i].callback = Some(callback),
        // Cancelled or replaced by its own callback.
        None => drop(callback),
    }
}

/// Computes a repeating timer's next due time after the occurrence just popped, and how many
/// occurrences this firing stands for. Occurrence `k` is due at `anchor + k · period`.
#[inline]
fn next_occurrence(repeat: &mut Repeat, target: f64) -> (f64, u64) {
    let Repeat {
        period,
        anchor,
        occurrences: fired,
        catch_up,
    } = *repeat;
    let k = match catch_up {
        CatchUp::FireAll => fired.saturating_add(1),
        CatchUp::FireOnce => {
            // The first occurrence after the end of the advance; the estimate is off by at most
            // a rounding step, and a period below the clock's resolution is left for the
            // parking rule to handle.
            let estimate = ((target - anchor) / period).floor() + 1.0;
            let mut k = (estimate as u64).max(fired.saturating_add(1));
            for _ in 0..4 {
                if anchor + k as f64 * period > target {
                    break;
                }
                k = k.saturating_add(1);
            }
            k
        }
    };
    repeat.occurrences = k;
    (anchor + k as f64 * period, k - fired)
}

/// The callback of a milestone's internal timer: runs the milestone's own callback if this
/// timer is still the milestone's pending timer, marking the crossing as fired first so that
/// it can never fire twice.
pub(crate) fn fire_milestone<C>(
    ctx: &mut TimerCtx<'_, C>,
    milestone: MilestoneId,
    context: &mut C,
) {
    let (timer, scheduled) = (ctx.id, ctx.scheduled);
    let scheduler = &mut *ctx.scheduler;
    let now = scheduler.now;
    let meter_idx = milestone.meter.slot as usize;
    let Some(slot) = scheduler
        .meters
        .get_mut(meter_idx)
        .filter(|m| m.generation == milestone.meter.generation)
    else {
        return;
    };
    let Some(entry) = slot.milestones.get_mut(milestone.index as usize) else {
        return;
    };
    if entry.state != MilestoneState::Waiting(Some(timer)) {
        return;
    }
    entry.state = MilestoneState::Fired;
    let level = entry.level;
    let callback = entry.callback.take();
    if let Some(meter) = slot.meter.as_mut()
        && meter.value_at(now) < level
    {
        // The curve's inverse is only as exact as floating point: make the callback see the
        // level it was promised.
        meter.rebase(now, level.min(meter.max()));
    }
    let Some(mut callback) = callback else {
        return;
    };
    let mut inner = TimerCtx {
        scheduler: &mut *scheduler,
        id: timer,
        scheduled,
        occurrences: 1,
        milestone: Some(milestone),
        payload: 0,
    };
    callback(context, &mut inner);
    // Put the callback back unless the meter went away meanwhile.
    if let Some(slot) = scheduler
        .meters
        .get_mut(meter_idx)
        .filter(|m| m.generation == milestone.meter.generation)
        && let Some(entry) = slot.milestones.get_mut(milestone.index as usize)
        && entry.callback.is_none()
    {
        entry.callback = Some(callback);
    }
}

/// Configures a [`Timers`]: its initial capacity and its pending set ([`TimerQueue`]).
///
/// ```
/// use warpsim_timers::{TimerQueue, Timers};
/// let timers = Timers::<()>::builder().capacity(1 << 20).queue(TimerQueue::Ladder).build();
/// assert!(timers.is_empty());
/// ```
#[must_use = "a builder does nothing until `build` is called"]
pub struct TimersBuilder<C> {
    capacity: usize,
    queue: TimerQueue,
    context: PhantomData<fn(&mut C)>,
}

impl<C> TimersBuilder<C> {
    /// Room for this many timers before the manager reallocates (default 0).
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let timers = Timers::<()>::builder().capacity(1 << 16).build();
    /// assert!(timers.is_empty());
    /// ```
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// The pending set (default [`TimerQueue::Wheel`]).
    ///
    /// ```
    /// use warpsim_timers::{TimerQueue, Timers};
    /// let timers = Timers::<()>::builder().queue(TimerQueue::Heap).build();
    /// assert_eq!(timers.queue(), TimerQueue::Heap);
    /// ```
    pub fn queue(mut self, queue: TimerQueue) -> Self {
        self.queue = queue;
        self
    }

    /// An empty manager at time `0` with time scale `1`.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let timers = Timers::<()>::builder().build();
    /// assert_eq!((timers.now(), timers.time_scale()), (0.0, 1.0));
    /// ```
    pub fn build(self) -> Timers<C> {
        Timers {
            scheduler: Scheduler::new(self.queue, self.capacity),
        }
    }
}

impl<C> fmt::Debug for TimersBuilder<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimersBuilder")
            .field("capacity", &self.capacity)
            .field("queue", &self.queue)
            .finish()
    }
}

impl<C> Default for Timers<C> {
    /// Same as [`Timers::new`].
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let timers: Timers<()> = Default::default();
    /// assert!(timers.is_empty());
    /// ```
    fn default() -> Self {
        Self::new()
    }
}

impl<C> Deref for Timers<C> {
    type Target = Scheduler<C>;

    fn deref(&self) -> &Scheduler<C> {
        &self.scheduler
    }
}

impl<C> DerefMut for Timers<C> {
    fn deref_mut(&mut self) -> &mut Scheduler<C> {
        &mut self.scheduler
    }
}

impl<C> Drop for Timers<C> {
    fn drop(&mut self) {
        self.scheduler.notify_dropped();
    }
}

impl<C> fmt::Debug for Timers<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timers")
            .field("scheduler", &self.scheduler)
            .finish()
    }
}

// `Timers` can live in another thread, or be an engine resource (Bevy requires `Send`):
// callbacks, owners' observers and curves are all `Send`, and `C` appears only in signatures.
const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<Timers<std::rc::Rc<u8>>>();
};
