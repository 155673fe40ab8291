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

impl Time {
    /// `self - delay`, checked: the delay must be finite and non-negative and the result not
    /// before time zero.
    ///
    /// ```
    /// use warpsim_core::{Time, TimeError};
    /// let t = Time::new(3.0).unwrap();
    /// assert_eq!(t.checked_sub(1.0).unwrap(), 2.0);
    /// assert_eq!(t.checked_sub(4.0), Err(TimeError::Negative(-1.0)));
    /// ```
    ///
    /// # Errors
    ///
    /// [`TimeError`] for a NaN, infinite or negative delay, or a negative result.
    pub fn checked_sub(self, delay: f64) -> Result<Time, TimeError> {
        let delay = Time::new(delay)?;
        Time::new(self.0 - delay.0)
    }

    /// The time elapsed from `earlier` to `self` (negative if `earlier` is later); the same
    /// as `self - earlier`.
    pub fn since(self, earlier: Time) -> f64 {
        self.0 - earlier.0
    }
}

/// `time + delay`: checked, so the result is a `Result` — a NaN, infinite or negative delay
/// or an overflow is a [`TimeError`], never a panic or a clamp.
///
/// ```
/// use warpsim_core::Time;
/// let t = Time::new(1.5).unwrap();
/// assert_eq!((t + 2.0).unwrap(), 3.5);
/// assert!((t + f64::NAN).is_err());
/// assert!((t + -1.0).is_err());
/// ```
impl std::ops::Add<f64> for Time {
    type Output = Result<Time, TimeError>;
    fn add(self, delay: f64) -> Result<Time, TimeError> {
        self.checked_add(delay)
    }
}

/// `time - delay`: checked like [`Time::checked_sub`].
impl std::ops::Sub<f64> for Time {
    type Output = Result<Time, TimeError>;
    fn sub(self, delay: f64) -> Result<Time, TimeError> {
        self.checked_sub(delay)
    }
}

/// `later - earlier`: the elapsed time, an `f64` (the difference of two finite times is
/// finite, so it cannot fail).
///
/// ```
/// use warpsim_core::Time;
/// let (a, b) = (Time::new(1.0).unwrap(), Time::new(3.5).unwrap());
/// assert_eq!(b - a, 2.5);
/// assert!(b > 3.0 && a == 1.0);
/// ```
impl std::ops::Sub<Time> for Time {
    type Output = f64;
    fn sub(self, earlier: Time) -> f64 {
        self.since(earlier)
    }
}

/// Compares with a plain number (`ctx.now() < 10.0`).
impl PartialEq<f64> for Time {
    fn eq(&self, other: &f64) -> bool {
        self.0 == *other
    }
}

/// Compares with a plain number (`ctx.now() < 10.0`); NaN compares as unordered.
impl PartialOrd<f64> for Time {
    fn partial_cmp(&self, other: &f64) -> Option<Ordering> {
        self.0.partial_cmp(other)
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

impl PartialEq<u32> for LpId {
    fn eq(&self, other: &u32) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for LpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LP {}", self.0)
    }
}

/// The total order of events: `(time, age, src, sent, id)`.
///
/// - `time`: when the event happens.
/// - `age`: 0 for an event sent with a positive delay; for an event that lands at its sender's
///   own time (a zero delay), one more than the sending event's age. This keeps every event
///   strictly after the event that caused it, which Time Warp needs for causality, and orders
///   zero-delay cascades the same way on every kernel.
/// - `src`: the sending LP.
/// - `sent`, `id`: the send's *causal identity* — the time of the event whose handler sent it,
///   and an identity derived from that event's key and the send's place among its sends
///   (see below). Ties are broken by who sent the event, when, and in what order — never by
///   arrival order, which differs between kernels.
///
/// # Causal identity
///
/// `id` is `h + i`, where `h` is a 64-bit hash of the sending event's `(age, src, id)` and `i`
/// the send's place among that event's sends (0, 1, …). So a send's key depends only on the
/// event that sent it, never on how many other events its sender handled before. That is
/// what lets Time Warp's lazy cancellation recognise a message regenerated after a rollback:
/// a straggler that makes an LP send one extra message does not renumber the sends of the
/// events it re-executes afterwards.
///
/// The order among one sender's events at one time and age is therefore: by the time they
/// were sent (first in, first out), then, for sends of one event, in the order it made them;
/// sends of two *different* events the sender handled at the same time are ordered by `h`,
/// arbitrary but the same on every kernel.
///
/// **Uniqueness.** Two events' keys are equal only if they come from the same sender, were
/// sent at the same time, happen at the same time and age, and their ids are equal. Within
/// one sending event ids differ (`h + i`); two distinct sending events at one LP and one time
/// differ in `(age, src, id)`, so their `h` differ unless the hash collides — a chance of
/// about `n² / 2⁶⁴` for `n` such events, and then only if their sends also land at the same
/// time and age. Every kernel checks: two pending events with one key stop the run with
/// [`SimError::DuplicateKey`](crate::SimError::DuplicateKey), never a wrong result.
///
/// ```
/// use warpsim_core::{EventKey, LpId, Time};
/// let t = |x: f64| Time::new(x).unwrap();
/// let a = EventKey::new(t(1.0), 0, LpId::new(5), t(0.5), 9);
/// let b = EventKey::new(t(1.0), 0, LpId::new(6), t(0.0), 0);
/// let c = EventKey::new(t(1.0), 1, LpId::new(0), t(1.0), 0);
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
    /// When it was sent: the time of the event whose handler sent it (0 for `init`).
    pub sent: Time,
    /// Its identity among the sends `src` made at `sent` (see "Causal identity").
    pub id: u64,
}

impl EventKey {
    /// Builds a key.
    pub const fn new(time: Time, age: u32, src: LpId, sent: Time, id: u64) -> EventKey {
        EventKey {
            time,
            age,
            src,
            sent,
            id,
        }
    }

    /// The pseudo-key under which an LP's `init` runs: time 0, age 0, its own id, sent at 0,
    /// id 0. No real event has this key, because a send at time 0 from `init` has age 1.
    pub const fn init(lp: LpId) -> EventKey {
        EventKey::new(Time::ZERO, 0, lp, Time::ZERO, 0)
    }

    /// Whether `self` and `other` name the same send: the same sender and causal identity.
    /// A rescheduled event keeps its identity while its time and age change.
    ///
    /// ```
    /// use warpsim_core::{EventKey, LpId, Time};
    /// let t = |x: f64| Time::new(x).unwrap();
    /// let sent = EventKey::new(t(3.0), 0, LpId::new(1), t(1.0), 7);
    /// let moved = EventKey::new(t(5.0), 0, LpId::new(1), t(1.0), 7);
    /// assert!(sent.same_send(&moved));
    /// assert!(!sent.same_send(&EventKey::new(t(3.0), 0, LpId::new(1), t(1.0), 8)));
    /// ```
    pub fn same_send(&self, other: &EventKey) -> bool {
        self.src == other.src && self.sent == other.sent && self.id == other.id
    }

    /// The identity of this event's first send (`h` in "Causal identity"); its `i`-th send
    /// gets `first_send_id() + i`.
    #[inline]
    pub(crate) fn first_send_id(&self) -> u64 {
        // A multiply-xorshift mix of the event's tie-break fields (a few instructions per
        // handler that sends): distinct sending events land far apart in the id space, so
        // their runs of ids `h + i` do not meet; `DuplicateKey` catches the rare case.
        let tie = (u64::from(self.age) << 32) | u64::from(self.src.get());
        let x = (tie ^ self.id.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let x = (x ^ (x >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
        x ^ (x >> 32)
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
