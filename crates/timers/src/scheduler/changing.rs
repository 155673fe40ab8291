//! Cancelling, moving, pausing and resuming timers, and asking about them.

use super::{RemovalReason, Scheduler, State};
use crate::error::TimerError;
use crate::id::TimerId;
use crate::time::{check_time, offset};

impl<C> Scheduler<C> {
    // ----- changing ------------------------------------------------------------------------

    /// Cancels a timer. Returns `false`, touching nothing, for a stale id. Its owner is told
    /// ([`RemovalReason::Cancelled`]). A callback may cancel its own timer; a repeating timer
    /// then stops.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<u32>::new();
    /// let id = timers.add(1.0, |n, _| *n += 1)?;
    /// assert!(timers.cancel(id));
    /// assert!(!timers.cancel(id));
    /// let mut n = 0;
    /// timers.advance(2.0, &mut n)?;
    /// assert_eq!(n, 0);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn cancel(&mut self, id: TimerId) -> bool {
        self.prefetch_entry(id.slot);
        match self.live_slot(id) {
            Some(idx) => {
                self.release(idx, Some(RemovalReason::Cancelled));
                true
            }
            None => false,
        }
    }

    /// Moves a timer to fire at absolute time `at` (the chapter's `ChangeTime`). A time in the
    /// past fires in the next advance, and the callback sees `at` as its scheduled time. A
    /// repeating timer's later occurrences follow `at + k · period`. A paused timer stays
    /// paused with `at − now` left (at least zero). Inside its own callback, a one-shot timer
    /// can re-arm itself this way.
    ///
    /// # Errors
    ///
    /// [`TimerError::StaleTimer`], [`TimerError::InvalidTime`] for NaN or infinite `at`.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// let id = timers.add(1.0, |_, _| {})?;
    /// timers.set_time(id, 5.0)?;
    /// assert_eq!(timers.remaining(id), Some(5.0));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn set_time(&mut self, id: TimerId, at: f64) -> Result<(), TimerError> {
        self.prefetch_entry(id.slot);
        let idx = self.live_slot(id).ok_or(TimerError::StaleTimer(id))?;
        let at = check_time(at)?;
        self.move_to(idx, at);
        Ok(())
    }

    /// Shifts a timer by `by` (positive: later; negative: sooner). A paused timer's remaining
    /// time shifts instead (not below zero). Inside its own callback, a one-shot timer re-arms
    /// itself at its scheduled time plus `by`.
    ///
    /// # Errors
    ///
    /// [`TimerError::StaleTimer`], [`TimerError::InvalidDelay`] for NaN or infinite `by`,
    /// [`TimerError::TimeOverflow`].
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// let id = timers.add(1.0, |_, _| {})?;
    /// timers.delay(id, 2.5)?;
    /// assert_eq!(timers.remaining(id), Some(3.5));
    /// timers.delay(id, -3.0)?;
    /// assert_eq!(timers.remaining(id), Some(0.5));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn delay(&mut self, id: TimerId, by: f64) -> Result<(), TimerError> {
        self.prefetch_entry(id.slot);
        let idx = self.live_slot(id).ok_or(TimerError::StaleTimer(id))?;
        if !by.is_finite() {
            return Err(TimerError::InvalidDelay(by));
        }
        let at = offset(self.slots[idx].time, by)?;
        if self.slots[idx].state == State::Paused {
            self.slots[idx].time = at.max(0.0);
        } else {
            self.move_to(idx, at);
        }
        Ok(())
    }

    /// Reschedules live slot `idx` to `at` (or, if paused, sets its remaining time).
    fn move_to(&mut self, idx: usize, at: f64) {
        let slot = &mut self.slots[idx];
        if slot.state == State::Paused {
            slot.time = (at - self.now).max(0.0);
            return;
        }
        if let Some(repeat) = slot.repeat.as_mut() {
            repeat.anchor = at;
            repeat.occurrences = 0;
        }
        let now = self.now;
        self.place(idx as u32, at, now);
    }

    /// Time left until the timer fires (`0` when overdue), the remaining time of a paused
    /// timer, or `None` for a stale id or a one-shot timer whose callback is running.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// let id = timers.add(2.0, |_, _| {})?;
    /// timers.advance(0.5, &mut ())?;
    /// assert_eq!(timers.remaining(id), Some(1.5));
    /// timers.advance(2.0, &mut ())?;
    /// assert_eq!(timers.remaining(id), None);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn remaining(&self, id: TimerId) -> Option<f64> {
        let slot = &self.slots[self.live_slot(id)?];
        match slot.state {
            State::Scheduled | State::Parked => Some((slot.time - self.now).max(0.0)),
            State::Paused => Some(slot.time),
            State::Firing | State::Free => None,
        }
    }

    /// The earliest time any timer is due at, or `None` when none is scheduled (paused timers
    /// do not count). A game loop can sleep until then.
    ///
    /// With the ladder queue this also does, ahead of time, the one-off work of spreading
    /// timers added in bulk over its buckets — work the first advance that reaches them would
    /// otherwise do. Call it after adding many timers at once (during loading) to keep that
    /// cost out of a frame. With the timing wheel (the default) it looks through the first
    /// bucket that holds timers: O(its size), never needed by the game loop itself.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// assert_eq!(timers.next_due(), None);
    /// for i in 0..1000 {
    ///     timers.add(5.0 + f64::from(i), |_, _| {})?;
    /// }
    /// assert_eq!(timers.next_due(), Some(5.0));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn next_due(&mut self) -> Option<f64> {
        let queued = self.queue.peek_time();
        self.next_due = queued.unwrap_or(f64::INFINITY);
        // Timers held back for the next advance are due too (only while an advance runs).
        let parked = self
            .parked
            .iter()
            .filter_map(|&(idx, generation)| {
                let slot = &self.slots[idx as usize];
                (slot.generation == generation && slot.state == State::Parked).then_some(slot.time)
            })
            .reduce(f64::min);
        match (queued, parked) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The absolute time the timer is due at, or `None` when it is paused, stale, or a
    /// one-shot timer whose callback is running.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// timers.advance(1.0, &mut ())?;
    /// let id = timers.add(2.0, |_, _| {})?;
    /// assert_eq!(timers.due_time(id), Some(3.0));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn due_time(&self, id: TimerId) -> Option<f64> {
        let slot = &self.slots[self.live_slot(id)?];
        matches!(slot.state, State::Scheduled | State::Parked).then_some(slot.time)
    }

    /// `true` when the id names a timer that will fire if time runs: live, not paused, and not
    /// a one-shot timer whose callback is running.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// let id = timers.add(1.0, |_, _| {})?;
    /// assert!(timers.is_active(id));
    /// timers.pause(id);
    /// assert!(!timers.is_active(id));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn is_active(&self, id: TimerId) -> bool {
        self.live_slot(id)
            .is_some_and(|idx| matches!(self.slots[idx].state, State::Scheduled | State::Parked))
    }

    /// `true` when the id names a paused timer.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// let id = timers.add(1.0, |_, _| {})?;
    /// timers.pause(id);
    /// assert!(timers.is_paused(id));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn is_paused(&self, id: TimerId) -> bool {
        self.live_slot(id)
            .is_some_and(|idx| self.slots[idx].state == State::Paused)
    }

    /// Pauses one timer, keeping its remaining time. Returns `false` (and changes nothing)
    /// unless the timer was active.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<u32>::new();
    /// let id = timers.add(1.0, |n, _| *n += 1)?;
    /// let mut n = 0;
    /// timers.advance(0.25, &mut n)?;
    /// assert!(timers.pause(id));
    /// timers.advance(10.0, &mut n)?;
    /// assert_eq!((n, timers.remaining(id)), (0, Some(0.75)));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn pause(&mut self, id: TimerId) -> bool {
        let Some(idx) = self.live_slot(id) else {
            return false;
        };
        if !matches!(self.slots[idx].state, State::Scheduled | State::Parked) {
            return false;
        }
        self.unschedule(idx);
        let slot = &mut self.slots[idx];
        slot.state = State::Paused;
        slot.time = (slot.time - self.now).max(0.0);
        true
    }

    /// Resumes a paused timer: it fires after its remaining time, and a repeating timer keeps
    /// its period from there. Returns `false` (and changes nothing) unless it was paused.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<u32>::new();
    /// let id = timers.add(1.0, |n, _| *n += 1)?;
    /// timers.pause(id);
    /// let mut n = 0;
    /// timers.advance(5.0, &mut n)?;
    /// assert!(timers.resume(id));
    /// timers.advance(1.0, &mut n)?;
    /// assert_eq!(n, 1);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn resume(&mut self, id: TimerId) -> bool {
        let Some(idx) = self.live_slot(id) else {
            return false;
        };
        if self.slots[idx].state != State::Paused {
            return false;
        }
        let at = self.now + self.slots[idx].time;
        // A remaining time short of overflow is always representable; clamp just in case.
        let at = if at.is_finite() { at } else { f64::MAX };
        let slot = &mut self.slots[idx];
        slot.state = State::Firing; // unscheduled; `place` puts it back
        if let Some(repeat) = slot.repeat.as_mut() {
            repeat.anchor = at;
            repeat.occurrences = 0;
        }
        let now = self.now;
        self.place(idx as u32, at, now);
        true
    }
}
