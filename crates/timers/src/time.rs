//! Game time as an ordered queue key.

use std::cmp::Ordering;

use warpsim_queue::Key;

/// A finite game time, totally ordered so it can key the pending set.
///
/// Every constructor path checks finiteness first, and `-0.0` is normalised to `+0.0`, so the
/// total order used by the queue agrees with the `<=` comparisons the manager makes on plain
/// `f64`s.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimeKey(f64);

impl TimeKey {
    /// Wraps a time the caller has already checked to be finite.
    #[inline]
    pub(crate) fn new(time: f64) -> Self {
        debug_assert!(time.is_finite(), "queue times are checked before use");
        TimeKey(time + 0.0)
    }

    /// The time as a number.
    #[inline]
    pub(crate) fn get(self) -> f64 {
        self.0
    }
}

impl PartialEq for TimeKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for TimeKey {}

impl PartialOrd for TimeKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TimeKey {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl Key for TimeKey {
    #[inline]
    fn priority(&self) -> f64 {
        self.0
    }
}

/// The queue key: time first, then the timer's insertion sequence number, so timers due at the
/// same time fire in the order they were added.
pub(crate) type QueueKey = (TimeKey, u64);

/// Checks a relative delay: finite and non-negative.
#[inline]
pub(crate) fn check_delay(delay: f64) -> Result<f64, crate::TimerError> {
    if delay.is_finite() && delay >= 0.0 {
        Ok(delay + 0.0)
    } else {
        Err(crate::TimerError::InvalidDelay(delay))
    }
}

/// Checks an absolute time: finite.
#[inline]
pub(crate) fn check_time(time: f64) -> Result<f64, crate::TimerError> {
    if time.is_finite() {
        Ok(time + 0.0)
    } else {
        Err(crate::TimerError::InvalidTime(time))
    }
}

/// `base + offset`, or [`TimerError::TimeOverflow`](crate::TimerError::TimeOverflow) when the
/// sum is not finite.
#[inline]
pub(crate) fn offset(base: f64, offset: f64) -> Result<f64, crate::TimerError> {
    let time = base + offset;
    if time.is_finite() {
        Ok(time + 0.0)
    } else {
        Err(crate::TimerError::TimeOverflow)
    }
}
