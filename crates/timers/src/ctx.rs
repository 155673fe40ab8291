//! What a callback receives besides the game context.

use std::fmt;
use std::ops::{Deref, DerefMut};

use crate::id::{MilestoneId, TimerId};
use crate::scheduler::Scheduler;

/// The timer manager as seen from inside a callback, plus what fired.
///
/// It dereferences to the [`Scheduler`], so a callback can add, cancel, change, pause and
/// resume timers — its own included — and spend from meters while the advance runs. It cannot
/// advance time: callbacks run *inside* an advance.
///
/// ```
/// use warpsim_timers::{TimerCtx, Timers};
///
/// // A timer that re-arms itself twice, further out each time.
/// fn backoff(n: &mut u32, ctx: &mut TimerCtx<'_, u32>) {
///     *n += 1;
///     if *n < 3 {
///         let (id, scheduled) = (ctx.id(), ctx.scheduled());
///         ctx.set_time(id, scheduled + f64::from(*n)).unwrap();
///     }
/// }
/// let mut timers = Timers::new();
/// let id = timers.add(1.0, backoff)?;
/// let mut n = 0;
/// timers.advance(10.0, &mut n)?; // fires at 1, 2 and 4
/// assert_eq!(n, 3);
/// assert!(!timers.is_active(id));
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
pub struct TimerCtx<'a, C> {
    pub(crate) scheduler: &'a mut Scheduler<C>,
    pub(crate) id: TimerId,
    pub(crate) scheduled: f64,
    pub(crate) occurrences: u64,
    pub(crate) milestone: Option<MilestoneId>,
    pub(crate) payload: u64,
}

impl<C> TimerCtx<'_, C> {
    /// The id of the timer that fired. For a milestone it is the milestone's internal timer.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<u32>::new();
    /// // A repeating timer that stops itself after three runs.
    /// timers.add_repeating(1.0, 1.0, |n, ctx| {
    ///     *n += 1;
    ///     if *n == 3 {
    ///         let me = ctx.id();
    ///         ctx.cancel(me);
    ///     }
    /// })?;
    /// let mut n = 0;
    /// timers.advance(10.0, &mut n)?;
    /// assert_eq!((n, timers.len()), (3, 0));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn id(&self) -> TimerId {
        self.id
    }

    /// The time this occurrence was scheduled for. It equals [`now`](Scheduler::now) unless
    /// the timer was overdue (set to a time in the past, or held over from the previous
    /// advance), in which case `now` is later.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<Vec<(f64, f64)>>::new();
    /// timers.advance(5.0, &mut Vec::new())?;
    /// let id = timers.add(1.0, |log, ctx| log.push((ctx.scheduled(), ctx.now())))?;
    /// timers.set_time(id, 2.0)?; // in the past: fires in the next advance
    /// let mut log = Vec::new();
    /// timers.advance(0.5, &mut log)?;
    /// assert_eq!(log, [(2.0, 5.0)]);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn scheduled(&self) -> f64 {
        self.scheduled
    }

    /// How many occurrences this call stands for: `1`, except for a repeating timer with
    /// [`CatchUp::FireOnce`](crate::CatchUp::FireOnce) that skipped ahead.
    ///
    /// ```
    /// use warpsim_timers::{CatchUp, Timers};
    /// let mut timers = Timers::<Vec<u64>>::new();
    /// timers.timer(0.5).repeat(0.5).catch_up(CatchUp::FireOnce).build(|log, ctx| log.push(ctx.occurrences()))?;
    /// let mut log = Vec::new();
    /// timers.advance(2.0, &mut log)?;
    /// assert_eq!(log, [4]);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn occurrences(&self) -> u64 {
        self.occurrences
    }

    /// The milestone that was reached, when this callback belongs to one.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter, MilestoneId, Timers};
    /// let mut timers = Timers::<Vec<Option<MilestoneId>>>::new();
    /// let mana = timers.add_meter(Meter::builder(Linear::new(1.0)?).build()?)?;
    /// let full = timers.add_milestone(mana, 3.0, |log, ctx| log.push(ctx.milestone()))?;
    /// let mut log = Vec::new();
    /// timers.advance(5.0, &mut log)?;
    /// assert_eq!(log, [Some(full)]);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn milestone(&self) -> Option<MilestoneId> {
        self.milestone
    }

    /// The word of data the timer was built with ([`TimerBuilder::payload`]); `0` if none.
    ///
    /// [`TimerBuilder::payload`]: crate::TimerBuilder::payload
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<Vec<u64>>::new();
    /// timers.timer(1.0).payload(42).build(|log, ctx| log.push(ctx.payload()))?;
    /// let mut log = Vec::new();
    /// timers.advance(1.0, &mut log)?;
    /// assert_eq!(log, [42]);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn payload(&self) -> u64 {
        self.payload
    }
}

impl<C> Deref for TimerCtx<'_, C> {
    type Target = Scheduler<C>;

    fn deref(&self) -> &Scheduler<C> {
        self.scheduler
    }
}

impl<C> DerefMut for TimerCtx<'_, C> {
    fn deref_mut(&mut self) -> &mut Scheduler<C> {
        self.scheduler
    }
}

impl<C> fmt::Debug for TimerCtx<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimerCtx")
            .field("id", &self.id)
            .field("scheduled", &self.scheduled)
            .field("occurrences", &self.occurrences)
            .field("milestone", &self.milestone)
            .field("payload", &self.payload)
            .field("scheduler", &self.scheduler)
            .finish()
    }
}
