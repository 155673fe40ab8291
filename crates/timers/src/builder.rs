//! The timer builder.

use std::fmt;

use crate::ctx::TimerCtx;
use crate::error::{AddError, TimerError};
use crate::id::{OwnerId, TimerId};
use crate::scheduler::{BoxedCallback, CatchUp, RemovalReason, Repeat, Scheduler};
use crate::time::{check_delay, offset};

/// Builds one timer: its first delay, and optionally a repeat period, a catch-up policy, an
/// owner, and a timer it replaces. Made by [`Scheduler::timer`]; nothing is checked or
/// changed until [`build`](Self::build).
///
/// ```
/// use warpsim_timers::{CatchUp, Timers};
///
/// let mut timers = Timers::<u32>::new();
/// let owner = timers.add_owner(|_, _| {});
/// let id = timers
///     .timer(1.0)
///     .repeat(0.5)
///     .catch_up(CatchUp::FireOnce)
///     .owner(owner)
///     .build(|n, _| *n += 1)?;
/// assert!(timers.is_active(id));
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
#[must_use = "a timer builder does nothing until `build` is called"]
pub struct TimerBuilder<'a, C> {
    scheduler: &'a mut Scheduler<C>,
    delay: f64,
    period: Option<f64>,
    catch_up: CatchUp,
    owner: Option<OwnerId>,
    replacing: Option<TimerId>,
    payload: u64,
}

impl<'a, C> TimerBuilder<'a, C> {
    pub(crate) fn new(scheduler: &'a mut Scheduler<C>, delay: f64) -> Self {
        TimerBuilder {
            scheduler,
            delay,
            period: None,
            catch_up: CatchUp::FireAll,
            owner: None,
            replacing: None,
            payload: 0,
        }
    }

    /// Makes the timer repeat every `period` after its first firing. Occurrence `k` is due at
    /// `first + k · period` exactly: the schedule never drifts.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<Vec<f64>>::new();
    /// timers.timer(0.1).repeat(0.1).build(|log, ctx| log.push(ctx.scheduled()))?;
    /// let mut log = Vec::new();
    /// for _ in 0..600 {
    ///     timers.advance(1.0 / 60.0, &mut log)?;
    /// }
    /// assert_eq!(log.len(), 100);
    /// assert_eq!(log[99], 0.1 + 99.0 * 0.1); // computed, not accumulated
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn repeat(mut self, period: f64) -> Self {
        self.period = Some(period);
        self
    }

    /// What a repeating timer does when one advance spans several periods (default
    /// [`CatchUp::FireAll`]). Ignored for one-shot timers.
    ///
    /// ```
    /// use warpsim_timers::{CatchUp, Timers};
    /// let mut timers = Timers::<u64>::new();
    /// timers.timer(1.0).repeat(1.0).catch_up(CatchUp::FireOnce).build(|n, ctx| *n += ctx.occurrences())?;
    /// let mut n = 0;
    /// assert_eq!(timers.advance(10.0, &mut n)?, 1); // one call…
    /// assert_eq!(n, 10); // …standing for ten occurrences
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn catch_up(mut self, catch_up: CatchUp) -> Self {
        self.catch_up = catch_up;
        self
    }

    /// Gives the timer an owner, told when the timer is removed.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// let owner = timers.add_owner(|_, _| {});
    /// timers.timer(1.0).owner(owner).build(|_, _| {})?;
    /// assert_eq!(timers.cancel_owner(owner), Some(1));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn owner(mut self, owner: OwnerId) -> Self {
        self.owner = Some(owner);
        self
    }

    /// Replaces a timer: when built, `old` (if still live) is removed and its owner told
    /// [`RemovalReason::Replaced`]. A stale `old` is ignored.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// let old = timers.add(1.0, |_, _| {})?;
    /// let new = timers.timer(2.0).replacing(old).build(|_, _| {})?;
    /// assert!(!timers.is_active(old) && timers.is_active(new));
    /// assert_eq!(timers.len(), 1);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn replacing(mut self, old: TimerId) -> Self {
        self.replacing = Some(old);
        self
    }

    /// Attaches a word of data that the callback reads with [`TimerCtx::payload`] (default
    /// `0`). A callback that captures nothing is not allocated, so a million timers that
    /// differ only in which object they act on can share one closure and cost no allocation:
    ///
    /// ```
    /// use warpsim_timers::Timers;
    ///
    /// let mut lit = vec![true; 1000];
    /// let mut timers = Timers::<Vec<bool>>::new();
    /// for torch in 0..1000u64 {
    ///     timers
    ///         .timer(1.0 + torch as f64)
    ///         .payload(torch)
    ///         .build(|lit, ctx| lit[ctx.payload() as usize] = false)?;
    /// }
    /// timers.advance(10.5, &mut lit)?;
    /// assert_eq!(lit.iter().filter(|&&l| !l).count(), 10);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn payload(mut self, payload: u64) -> Self {
        self.payload = payload;
        self
    }

    /// Checks everything, then adds the timer and returns its id. On error nothing changes
    /// (in particular a timer named by `replacing` is left alone).
    ///
    /// # Errors
    ///
    /// [`TimerError::InvalidDelay`], [`TimerError::InvalidPeriod`],
    /// [`TimerError::StaleOwner`], [`TimerError::TimeOverflow`], [`TimerError::Full`].
    ///
    /// ```
    /// use warpsim_timers::{TimerError, Timers};
    /// let mut timers = Timers::<()>::new();
    /// let refused = timers.timer(1.0).repeat(0.0).build(|_, _| {}).unwrap_err();
    /// assert_eq!(refused.error, TimerError::InvalidPeriod(0.0)); // and `refused.callback`
    /// ```
    pub fn build<F>(self, callback: F) -> Result<TimerId, AddError<F>>
    where
        F: FnMut(&mut C, &mut TimerCtx<'_, C>) + Send + 'static,
    {
        // Checked first, so that a refusal changes nothing and hands the callback back.
        match self.check() {
            Ok(due) => Ok(self.build_checked(due, Box::new(callback))),
            Err(error) => Err(AddError { error, callback }),
        }
    }

    /// Every reason `build` may refuse, before anything changes; the due time if none.
    fn check(&self) -> Result<f64, TimerError> {
        let delay = check_delay(self.delay)?;
        if let Some(p) = self.period
            && !(p.is_finite() && p > 0.0)
        {
            return Err(TimerError::InvalidPeriod(p));
        }
        if let Some(owner) = self.owner
            && !self.scheduler.owner_is_live(owner)
        {
            return Err(TimerError::StaleOwner(owner));
        }
        let due = offset(self.scheduler.now, delay)?;
        self.scheduler.check_room(1)?;
        Ok(due)
    }

    /// `build` once `check` passed and gave the due time.
    fn build_checked(self, due: f64, callback: BoxedCallback<C>) -> TimerId {
        let TimerBuilder {
            scheduler,
            delay: _,
            period,
            catch_up,
            owner,
            replacing,
            payload,
        } = self;
        let now = scheduler.now;

        if let Some(old) = replacing
            && let Some(idx) = scheduler.live_slot(old)
        {
            scheduler.release(idx, Some(RemovalReason::Replaced));
        }
        let repeat = period.map(|period| {
            Box::new(Repeat {
                period,
                anchor: due,
                occurrences: 0,
                catch_up,
            })
        });
        let idx = scheduler.alloc(due, callback, repeat, payload);
        if let Some(owner) = owner {
            scheduler.link_owner(idx, owner);
        }
        scheduler.place(idx, due, now);
        TimerId {
            slot: idx,
            generation: scheduler.slots[idx as usize].generation,
        }
    }
}

impl<C> fmt::Debug for TimerBuilder<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimerBuilder")
            .field("delay", &self.delay)
            .field("period", &self.period)
            .field("catch_up", &self.catch_up)
            .field("owner", &self.owner)
            .field("replacing", &self.replacing)
            .field("payload", &self.payload)
            .finish_non_exhaustive()
    }
}
