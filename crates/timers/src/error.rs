//! The crate's one error type.

use crate::id::{MeterId, OwnerId, TimerId};

/// Why a call on the timer manager was refused.
///
/// Every variant leaves the manager exactly as it was before the call: the run can always go
/// on. Nothing in this crate panics on bad input; it returns one of these instead.
///
/// ```
/// use warpsim_timers::{TimerError, Timers};
///
/// let mut timers = Timers::<()>::new();
/// let refused = timers.add(f64::NAN, |_, _| {}).unwrap_err();
/// assert!(matches!(refused.error, TimerError::InvalidDelay(d) if d.is_nan()));
/// assert_eq!(timers.len(), 0); // nothing was added
/// ```
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TimerError {
    /// A delay (or a `delay(id, by)` shift) was NaN, infinite, or negative where only
    /// non-negative delays make sense. The manager is unchanged; the run can go on.
    #[error("invalid delay {0}: delays must be finite and non-negative")]
    InvalidDelay(f64),
    /// A repeat period was zero, negative, NaN or infinite. The manager is unchanged; the run
    /// can go on.
    #[error("invalid period {0}: a repeat period must be finite and greater than zero")]
    InvalidPeriod(f64),
    /// A frame step passed to `advance` was NaN, infinite or negative. The manager is unchanged
    /// (no time passed); the run can go on.
    #[error("invalid step {0}: a frame step must be finite and non-negative")]
    InvalidStep(f64),
    /// An absolute time was NaN or infinite. The manager is unchanged; the run can go on.
    #[error("invalid time {0}: times must be finite")]
    InvalidTime(f64),
    /// `advance_to` was asked to move the clock backwards. The manager is unchanged; the run
    /// can go on.
    #[error("time cannot go backwards: now is {now}, asked for {target}")]
    TimeWentBackwards {
        /// The manager's current time.
        now: f64,
        /// The time that was asked for.
        target: f64,
    },
    /// A time computed from the inputs (now + delay, now + dt × scale) overflowed to infinity.
    /// The manager is unchanged; the run can go on.
    #[error("time overflow: the resulting time is not finite")]
    TimeOverflow,
    /// A time scale was NaN, infinite or negative. Zero is allowed (it pauses everything). The
    /// manager is unchanged; the run can go on.
    #[error("invalid time scale {0}: the scale must be finite and non-negative")]
    InvalidTimeScale(f64),
    /// The timer id names no live timer: it fired, was cancelled, or its slot was reused. No
    /// timer was touched; the run can go on.
    #[error("stale timer id {0:?}: the timer fired or was cancelled")]
    StaleTimer(TimerId),
    /// The owner id names no registered owner. Nothing was changed; the run can go on.
    #[error("stale owner id {0:?}: the owner was removed")]
    StaleOwner(OwnerId),
    /// The meter id names no live meter. Nothing was changed; the run can go on.
    #[error("stale meter id {0:?}: the meter was removed")]
    StaleMeter(MeterId),
    /// A curve or meter parameter is out of range (named in the message). Nothing was built;
    /// the run can go on.
    #[error("invalid parameter `{name}` = {value}: {expected}")]
    InvalidParameter {
        /// Which parameter.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What was expected.
        expected: &'static str,
    },
    /// `spend` asked for more than the meter holds above its minimum. The meter is unchanged;
    /// the run can go on.
    #[error("cannot spend {requested}: only {available} available")]
    Insufficient {
        /// The amount asked for.
        requested: f64,
        /// The amount that could have been spent (value − minimum).
        available: f64,
    },
    /// More than `u32::MAX − 1` timers, owners or meters would be live at once. Nothing was
    /// added; the run can go on.
    #[error("too many live timers, owners or meters")]
    Full,
}

/// A refused `add` (or [`TimerBuilder::build`](crate::TimerBuilder::build)): why, and the
/// callback, handed back unrun and undropped (as crossbeam's `SendError<T>` hands back its
/// message), so a caller can retry it, run it at once, or keep what it captured.
///
/// The manager is unchanged. `?` turns it into a plain [`TimerError`] (dropping the callback)
/// where that is all the caller wants.
///
/// ```
/// use warpsim_timers::{TimerError, Timers};
///
/// let mut timers = Timers::<Vec<&str>>::new();
/// let refused = timers.add(f64::NAN, |log, _| log.push("fired")).unwrap_err();
/// assert!(matches!(refused.error, TimerError::InvalidDelay(_)));
/// // The callback comes back: run it now instead.
/// let mut log = Vec::new();
/// let mut callback = refused.callback;
/// timers.add(0.0, move |log, ctx| callback(log, ctx))?;
/// timers.advance(0.0, &mut log)?;
/// assert_eq!(log, ["fired"]);
/// # Ok::<(), TimerError>(())
/// ```
#[derive(Clone, Copy, thiserror::Error)]
#[error("{error}")]
pub struct AddError<F> {
    /// Why the timer was refused.
    pub error: TimerError,
    /// The callback that was passed in, unrun.
    pub callback: F,
}

impl<F> std::fmt::Debug for AddError<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddError")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl<F> From<AddError<F>> for TimerError {
    /// Keeps the reason, drops the callback.
    fn from(refused: AddError<F>) -> TimerError {
        refused.error
    }
}
