//! Regeneration curves: how a [`Meter`](crate::Meter)'s value moves over time.

use std::fmt;

use crate::TimerError;

/// A monotone increasing curve `value(s)` together with its inverse.
///
/// A meter does not remember *when* it started regenerating, only where it is now: a meter at
/// value `v` finds its place on the curve with `s0 = inverse(v)`, and `Δt` later it is at
/// `value(s0 + Δt)`. The time it needs to reach a threshold `L` is therefore computed
/// analytically as `inverse(L) − s0`, never by polling. This makes regeneration depend only on
/// the current value (an autonomous process, like "regenerate faster when nearly empty"), which
/// is what lets a meter be recomputed after any change to its value.
///
/// # Contract
///
/// `value` must be increasing, and `inverse(value(s)) ≈ s` wherever `value(s)` is finite.
/// `inverse(v)` returns `None` when the curve never takes the value `v` (for example the
/// asymptote of an [`Exponential`]). The meter tolerates rounding and a misbehaving curve
/// (NaN is treated as "never"), but milestone times are only as exact as the inverse.
///
/// ```
/// use warpsim_timers::{Curve, Linear};
///
/// let linear = Linear::new(2.0)?;
/// assert_eq!(linear.value(3.0), 6.0);
/// assert_eq!(linear.inverse(6.0), Some(3.0));
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
pub trait Curve: fmt::Debug + Send {
    /// The curve's value at parameter `s` (time along the curve).
    fn value(&self, s: f64) -> f64;

    /// The parameter `s` at which the curve reaches `value`, or `None` if it never does.
    fn inverse(&self, value: f64) -> Option<f64>;
}

fn positive(name: &'static str, value: f64) -> Result<f64, TimerError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(TimerError::InvalidParameter {
            name,
            value,
            expected: "a finite number greater than zero",
        })
    }
}

/// Linear regeneration: `value(s) = rate · s` (the chapter's `kMagicPointRegenTime` is
/// `1 / rate`).
///
/// ```
/// use warpsim_timers::{Curve, Linear};
///
/// let two_per_second = Linear::new(2.0)?;
/// assert_eq!(two_per_second.inverse(35.0), Some(17.5));
/// assert!(Linear::new(0.0).is_err());
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Linear {
    rate: f64,
}

impl Linear {
    /// A line rising by `rate` per unit of time.
    ///
    /// # Errors
    ///
    /// [`TimerError::InvalidParameter`] unless `rate` is finite and greater than zero.
    pub fn new(rate: f64) -> Result<Self, TimerError> {
        Ok(Linear {
            rate: positive("rate", rate)?,
        })
    }
}

impl Curve for Linear {
    fn value(&self, s: f64) -> f64 {
        self.rate * s
    }

    fn inverse(&self, value: f64) -> Option<f64> {
        Some(value / self.rate).filter(|s| s.is_finite())
    }
}

/// Exponential approach to a limit: `value(s) = limit · (1 − e^(−s/τ))`.
///
/// Regeneration is fast when the meter is low and slows down near the limit, which the curve
/// never reaches (`inverse(limit)` is `None`).
///
/// ```
/// use warpsim_timers::{Curve, Exponential};
///
/// let curve = Exponential::new(100.0, 10.0)?;
/// let s = curve.inverse(50.0).unwrap();
/// assert!((s - 10.0 * std::f64::consts::LN_2).abs() < 1e-12);
/// assert_eq!(curve.inverse(100.0), None);
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exponential {
    limit: f64,
    time_constant: f64,
}

impl Exponential {
    /// A curve rising towards `limit` with time constant `time_constant` (τ).
    ///
    /// # Errors
    ///
    /// [`TimerError::InvalidParameter`] unless both are finite and greater than zero.
    pub fn new(limit: f64, time_constant: f64) -> Result<Self, TimerError> {
        Ok(Exponential {
            limit: positive("limit", limit)?,
            time_constant: positive("time_constant", time_constant)?,
        })
    }
}

impl Curve for Exponential {
    fn value(&self, s: f64) -> f64 {
        // −expm1(−x) = 1 − e^(−x), accurate near zero.
        -self.limit * (-s / self.time_constant).exp_m1()
    }

    fn inverse(&self, value: f64) -> Option<f64> {
        if value >= self.limit {
            return None;
        }
        Some(-self.time_constant * (-value / self.limit).ln_1p()).filter(|s| s.is_finite())
    }
}

/// Logarithmic growth: `value(s) = scale · ln(1 + s/τ)`.
///
/// Regeneration slows down the fuller the meter is, but without a limit.
///
/// ```
/// use warpsim_timers::{Curve, Logarithmic};
///
/// let curve = Logarithmic::new(10.0, 5.0)?;
/// let s = curve.inverse(10.0).unwrap();
/// assert!((s - 5.0 * (std::f64::consts::E - 1.0)).abs() < 1e-12);
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Logarithmic {
    scale: f64,
    time_constant: f64,
}

impl Logarithmic {
    /// A curve `scale · ln(1 + s/time_constant)`.
    ///
    /// # Errors
    ///
    /// [`TimerError::InvalidParameter`] unless both are finite and greater than zero.
    pub fn new(scale: f64, time_constant: f64) -> Result<Self, TimerError> {
        Ok(Logarithmic {
            scale: positive("scale", scale)?,
            time_constant: positive("time_constant", time_constant)?,
        })
    }
}

impl Curve for Logarithmic {
    fn value(&self, s: f64) -> f64 {
        if s <= -self.time_constant {
            return f64::NEG_INFINITY;
        }
        self.scale * (s / self.time_constant).ln_1p()
    }

    fn inverse(&self, value: f64) -> Option<f64> {
        Some(self.time_constant * (value / self.scale).exp_m1()).filter(|s| s.is_finite())
    }
}

/// Any increasing curve, given as a function and its inverse.
///
/// ```
/// use warpsim_timers::{Curve, FnCurve};
///
/// // Quadratic regeneration for s ≥ 0.
/// let curve = FnCurve::new(|s: f64| s * s, |v: f64| (v >= 0.0).then(|| v.sqrt()));
/// assert_eq!(curve.value(3.0), 9.0);
/// assert_eq!(curve.inverse(16.0), Some(4.0));
/// assert_eq!(curve.inverse(-1.0), None);
/// ```
#[derive(Clone, Copy)]
pub struct FnCurve<F, G> {
    value: F,
    inverse: G,
}

impl<F, G> FnCurve<F, G>
where
    F: Fn(f64) -> f64,
    G: Fn(f64) -> Option<f64>,
{
    /// A curve from `value` and its `inverse`; see the [`Curve`] contract.
    pub fn new(value: F, inverse: G) -> Self {
        FnCurve { value, inverse }
    }
}

impl<F, G> fmt::Debug for FnCurve<F, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnCurve").finish_non_exhaustive()
    }
}

impl<F, G> Curve for FnCurve<F, G>
where
    F: Fn(f64) -> f64 + Send,
    G: Fn(f64) -> Option<f64> + Send,
{
    fn value(&self, s: f64) -> f64 {
        (self.value)(s)
    }

    fn inverse(&self, value: f64) -> Option<f64> {
        (self.inverse)(value)
    }
}

/// A boxed curve is a curve, so one chosen at run time can be handed to
/// [`Meter::builder`](crate::Meter::builder).
///
/// ```
/// use warpsim_timers::{Curve, Exponential, Linear, Meter};
///
/// let curve: Box<dyn Curve> = if true { Box::new(Linear::new(1.0)?) } else {
///     Box::new(Exponential::new(10.0, 1.0)?)
/// };
/// let meter = Meter::builder(curve).build()?;
/// assert_eq!(meter.value_at(2.0), 2.0);
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
impl<T: Curve + ?Sized> Curve for Box<T> {
    fn value(&self, s: f64) -> f64 {
        (**self).value(s)
    }

    fn inverse(&self, value: f64) -> Option<f64> {
        (**self).inverse(value)
    }
}
