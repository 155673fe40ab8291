//! Simulation time, LP ids and the deterministic event key.

use std::cmp::Ordering;
use std::fmt;

use crate::error::TimeError;

/// A point in simulation time: a finite, non-negative `f64` with a total order.
///
/// Every `Time` is checked when it is made, so kernels can compare times without thinking
/// about NaN. `-0.0` is stored as `0.0`, so equal times have equal bits.
///
/// ```
/// use warpsim_core::Time;
/// let t = Time::new(2.5).unwrap();
/// assert!(Time::ZERO < t);
/// assert_eq!(t.as_f64(), 2.5);
/// assert!(Time::new(f64::NAN).is_err());
/// assert!(Time::new(-1.0).is_err());
/// ```
#[derive(Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Time(f64);

impl Time {
    /// Time zero, where every run starts.
    pub const ZERO: Time = Time(0.0);

    /// Checks and wraps a time.
    ///
    /// # Errors
    ///
    /// [`TimeError`] when `value` is NaN, infinite or negative.
    pub fn new(value: f64) -> Result<Time, TimeError> {
        if value.is_nan() {
            Err(TimeError::NotANumber)
        } else if value.is_infinite() {
            Err(TimeError::Infinite(value))
        } else if value < 0.0 {
            Err(TimeError::Negative(value))
        } else {
            // `+ 0.0` turns -0.0 into 0.0, so that bit patterns order like values.
            Ok(Time(value + 0.0))
        }
    }

    /// The time as a plain `f64`.
    pub fn as_f64(self) -> f64 {
        self.0
    }

    /// `self + delay`, checked: the delay must be finite and non-negative and the sum finite.
    ///
    /// ```
    /// use warpsim_core::Time;
    /// let t = Time::new(1.0).unwrap();
    /// assert_eq!(t.checked_add(0.5).unwrap().as_f64(), 1.5);
    /// assert!(t.checked_add(-0.5).is_err());
    /// assert!(Time::new(f64::MAX).unwrap().checked_add(f64::MAX).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`TimeError`] for a NaN, infinite or negative delay, or [`TimeError::Overflow`] when the
    /// sum is not finite.
    pub fn checked_add(self, delay: f64) -> Result<Time, TimeError> {
        let delay = Time::new(delay)?;
        let sum = self.0 + delay.0;
        if sum.is_finite() {
            Ok(Time(sum))
        } else {
            Err(TimeError::Overflow)
        }
    }
}

impl Eq for Time {}

impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Time {
    fn cmp(&self, other: &Self) -> Ordering {
        // Finite non-negative floats (with -0.0 normalised) order exactly like their bits,
        // which is cheaper than `f64::total_cmp`.
        self.0.to_bits().cmp(&other.0.to_bits())
    }
}

impl std::hash::Hash for Time {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl TryFrom<f64> for Time {
    type Error = TimeError;
    fn try_from(value: f64) -> Result<Self, Self::Error> {
        Time::new(value)
    }
}

impl From<Time> for f64 {
    fn from(time: Time) -> f64 {
        time.0
    }
}

/// The id of a logical process: its index in the vector of LPs handed to the kernel.
///
/// ```
/// use warpsim_core::LpId;
/// let lp = LpId::new(3);
/// assert_eq!(lp.index(), 3);
/// assert_eq!(lp.to_string(), "LP 3");
/// ```
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(transparent)]
pub struct LpId(u32);

impl LpId {
    /// The LP with index `index`.
    pub const fn new(index: u32) -> LpId {
        LpId(index)
    }

    /// The LP's index as a `usize`, for indexing vectors.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The LP's index as a `u32`.
    pub const fn get(self) -> u32 {
        self.0
    }
}

impl From<u32> for LpId {
    fn from(index: u32) -> Self {
        LpId(index)
    }
}

impl fmt::Display for LpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LP {}", self.0)
    }
}

/// The total order of events: `(time, age, src, seq)`.
///
/// - `time`: when the event happens.
/// - `age`: 0 for an event sent with a positive delay; for an event that lands at its sender's
///   own time (a zero delay), one more than the sending event's age. This keeps every event
///   strictly after the event that caused it, which Time Warp needs for causality, and orders
///   zero-delay cascades the same way on every kernel.
/// - `src`, `seq`: the sending LP and its send counter, so ties are broken by who sent the
///   event and in what order — never by arrival order, which differs between kernels.
///
/// Keys are unique within a run because `(src, seq)` is.
///
/// ```
/// use warpsim_core::{EventKey, LpId, Time};
/// let a = EventKey::new(Time::new(1.0).unwrap(), 0, LpId::new(5), 9);
/// let b = EventKey::new(Time::new(1.0).unwrap(), 0, LpId::new(6), 0);
/// let c = EventKey::new(Time::new(1.0).unwrap(), 1, LpId::new(0), 0);
/// assert!(a < b && b < c);
/// ```
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct EventKey {
    /// When the event happens.
    pub time: Time,
    /// Length of the zero-delay chain that produced the event (0 for positive delays).
    pub age: u32,
    /// The LP that sent the event.
    pub src: LpId,
    /// The sender's send counter when it sent the event.
    pub seq: u64,
}

impl EventKey {
    /// Builds a key.
    pub const fn new(time: Time, age: u32, src: LpId, seq: u64) -> EventKey {
        EventKey {
            time,
            age,
            src,
            seq,
        }
    }

    /// The pseudo-key under which an LP's `init` runs: time 0, age 0, its own id, seq 0.
    /// No real event has this key, because a send at time 0 from `init` has age 1.
    pub const fn init(lp: LpId) -> EventKey {
        EventKey::new(Time::ZERO, 0, lp, 0)
    }
}

impl warpsim_queue::Key for EventKey {
    fn priority(&self) -> f64 {
        self.time.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zero_is_zero() {
        let t = Time::new(-0.0).unwrap();
        assert_eq!(t, Time::ZERO);
        assert_eq!(t.as_f64().to_bits(), 0.0f64.to_bits());
    }

    #[test]
    fn time_order_matches_f64_order() {
        let values = [
            0.0,
            1e-300,
            0.5,
            1.0,
            1.0 + f64::EPSILON,
            3.0,
            1e300,
            f64::MAX,
        ];
        for a in values {
            for b in values {
                let (ta, tb) = (Time::new(a).unwrap(), Time::new(b).unwrap());
                assert_eq!(ta.cmp(&tb), a.partial_cmp(&b).unwrap(), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn bad_times_are_errors() {
        assert_eq!(Time::new(f64::NAN), Err(TimeError::NotANumber));
        assert_eq!(
            Time::new(f64::INFINITY),
            Err(TimeError::Infinite(f64::INFINITY))
        );
        assert_eq!(Time::new(-1.0), Err(TimeError::Negative(-1.0)));
        assert_eq!(
            Time::new(f64::MAX).unwrap().checked_add(f64::MAX),
            Err(TimeError::Overflow)
        );
    }
}
