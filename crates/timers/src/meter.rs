//! Meters: a value that moves along a curve, in closed form.

use std::fmt;

use crate::TimerError;
use crate::curve::Curve;

/// A value that regenerates over time along a [`Curve`], between a minimum and a cap.
///
/// A meter is pure arithmetic: it stores where it was last changed (`base_time`, `base_value`)
/// and answers "what is the value at time `t`?" ([`Meter::value_at`]) and "when does it reach
/// `level`?" ([`Meter::reach_time`]) in closed form. Hand it to
/// [`Scheduler::add_meter`](crate::Scheduler::add_meter) to get milestone callbacks that fire
/// when the value reaches a threshold, recomputed every time the value changes.
///
/// The value never decreases on its own, stops at the cap (`max`, default `+∞`) and can be
/// lowered only by [`Scheduler::spend`](crate::Scheduler::spend) or set with
/// [`Scheduler::set_meter_value`](crate::Scheduler::set_meter_value), never below `min`
/// (default `0`).
///
/// ```
/// use warpsim_timers::{Linear, Meter};
///
/// // The seed's warlock: 5 MP now, 2 MP per second, at most 100.
/// let mana = Meter::builder(Linear::new(2.0)?).value(5.0).max(100.0).build()?;
/// assert_eq!(mana.value_at(10.0), 25.0);
/// assert_eq!(mana.value_at(1000.0), 100.0); // capped
/// assert_eq!(mana.reach_time(35.0), Some(15.0)); // ice
/// assert_eq!(mana.reach_time(65.0), Some(30.0)); // fireball
/// assert_eq!(mana.reach_time(95.0), Some(45.0)); // lightning
/// assert_eq!(mana.reach_time(101.0), None); // above the cap
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
pub struct Meter {
    curve: Box<dyn Curve>,
    min: f64,
    max: f64,
    base_time: f64,
    base_value: f64,
    /// Where `base_value` sits on the curve; `None` when the curve never takes that value
    /// (the meter then stays where it is).
    base_param: Option<f64>,
}

impl Meter {
    /// Starts building a meter that moves along `curve`.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter};
    /// let meter = Meter::builder(Linear::new(1.0)?).build()?;
    /// assert_eq!(meter.value_at(3.0), 3.0);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn builder(curve: impl Curve + 'static) -> MeterBuilder {
        MeterBuilder {
            curve: Box::new(curve),
            value: 0.0,
            min: 0.0,
            max: f64::INFINITY,
        }
    }

    /// The value at time `t`. Times before the last change return the value set then.
    ///
    /// ```
    /// use warpsim_timers::{Exponential, Meter};
    /// let meter = Meter::builder(Exponential::new(100.0, 10.0)?).build()?;
    /// let half = 10.0 * std::f64::consts::LN_2;
    /// assert!((meter.value_at(half) - 50.0).abs() < 1e-9);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn value_at(&self, t: f64) -> f64 {
        let Some(s0) = self.base_param else {
            return self.base_value;
        };
        if t.is_nan() || t <= self.base_time {
            return self.base_value;
        }
        // `f64::max` ignores NaN, so a misbehaving curve leaves the value where it was.
        self.curve
            .value(s0 + (t - self.base_time))
            .max(self.base_value)
            .min(self.max)
    }

    /// The first time at which the value is at least `level`, or `None` if it never gets
    /// there (above the cap, or a curve that never takes that value). A level already reached
    /// returns the time of the last change.
    ///
    /// ```
    /// use warpsim_timers::{Logarithmic, Meter};
    /// let meter = Meter::builder(Logarithmic::new(10.0, 5.0)?).max(50.0).build()?;
    /// let t = meter.reach_time(10.0).unwrap();
    /// assert!((meter.value_at(t) - 10.0).abs() < 1e-9);
    /// assert_eq!(meter.reach_time(0.0), Some(0.0));
    /// assert_eq!(meter.reach_time(60.0), None);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn reach_time(&self, level: f64) -> Option<f64> {
        if level.is_nan() {
            return None;
        }
        if level <= self.base_value {
            return Some(self.base_time);
        }
        if level > self.max {
            return None;
        }
        let s0 = self.base_param?;
        let s_level = self.curve.inverse(level)?;
        let t = self.base_time + (s_level - s0).max(0.0);
        t.is_finite().then_some(t)
    }

    /// The smallest value the meter can be spent down to.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter};
    /// assert_eq!(Meter::builder(Linear::new(1.0)?).build()?.min(), 0.0);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn min(&self) -> f64 {
        self.min
    }

    /// The cap: the value never regenerates above it.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter};
    /// assert_eq!(Meter::builder(Linear::new(1.0)?).max(10.0).build()?.max(), 10.0);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn max(&self) -> f64 {
        self.max
    }

    /// The curve the value moves along.
    ///
    /// ```
    /// use warpsim_timers::{Curve, Linear, Meter};
    /// let meter = Meter::builder(Linear::new(4.0)?).build()?;
    /// assert_eq!(meter.curve().value(1.0), 4.0);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn curve(&self) -> &dyn Curve {
        &*self.curve
    }

    /// The value at the last change.
    pub(crate) fn base_value(&self) -> f64 {
        self.base_value
    }

    /// Restarts the curve from `value` at time `t`.
    pub(crate) fn rebase(&mut self, t: f64, value: f64) {
        self.base_time = t;
        self.base_value = value;
        self.base_param = self.curve.inverse(value).filter(|s| s.is_finite());
    }

    /// Checks that `value` may be stored in this meter.
    pub(crate) fn check_value(&self, value: f64) -> Result<f64, TimerError> {
        if value.is_finite() && value >= self.min && value <= self.max {
            Ok(value)
        } else {
            Err(TimerError::InvalidParameter {
                name: "value",
                value,
                expected: "a finite number between the meter's min and max",
            })
        }
    }
}

impl fmt::Debug for Meter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Meter")
            .field("curve", &self.curve)
            .field("min", &self.min)
            .field("max", &self.max)
            .field("base_time", &self.base_time)
            .field("base_value", &self.base_value)
            .finish()
    }
}

/// Builds a [`Meter`]: the curve, the starting value (default `0`), the minimum (default `0`)
/// and the cap (default `+∞`).
///
/// ```
/// use warpsim_timers::{Linear, Meter, TimerError};
///
/// let meter = Meter::builder(Linear::new(1.0)?).value(5.0).min(-10.0).max(20.0).build()?;
/// assert_eq!(meter.value_at(0.0), 5.0);
/// let err = Meter::builder(Linear::new(1.0)?).value(30.0).max(20.0).build().unwrap_err();
/// assert!(matches!(err, TimerError::InvalidParameter { name: "value", .. }));
/// # Ok::<(), TimerError>(())
/// ```
pub struct MeterBuilder {
    curve: Box<dyn Curve>,
    value: f64,
    min: f64,
    max: f64,
}

impl MeterBuilder {
    /// The starting value (default `0`).
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter};
    /// let meter = Meter::builder(Linear::new(1.0)?).value(7.0).build()?;
    /// assert_eq!(meter.value_at(0.0), 7.0);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn value(mut self, value: f64) -> Self {
        self.value = value;
        self
    }

    /// The minimum value (default `0`; `-∞` for none). `spend` never goes below it.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter};
    /// let debt = Meter::builder(Linear::new(1.0)?).min(f64::NEG_INFINITY).value(-5.0).build()?;
    /// assert_eq!(debt.reach_time(0.0), Some(5.0));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn min(mut self, min: f64) -> Self {
        self.min = min;
        self
    }

    /// The cap (default `+∞`). Regeneration stops there.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter};
    /// let meter = Meter::builder(Linear::new(1.0)?).max(10.0).build()?;
    /// assert_eq!(meter.value_at(60.0), 10.0);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn max(mut self, max: f64) -> Self {
        self.max = max;
        self
    }

    /// Builds the meter, starting at time `0` (a manager restarts it at its own current time).
    ///
    /// # Errors
    ///
    /// [`TimerError::InvalidParameter`] when `min` or `max` is NaN, `min > max`, or the value is
    /// not finite or lies outside `[min, max]`.
    pub fn build(self) -> Result<Meter, TimerError> {
        if self.min.is_nan() || self.min == f64::INFINITY {
            return Err(TimerError::InvalidParameter {
                name: "min",
                value: self.min,
                expected: "a number below +∞ (−∞ for no minimum)",
            });
        }
        if self.max.is_nan() || self.max < self.min || self.max == f64::NEG_INFINITY {
            return Err(TimerError::InvalidParameter {
                name: "max",
                value: self.max,
                expected: "a number at least `min` (+∞ for no cap)",
            });
        }
        let mut meter = Meter {
            curve: self.curve,
            min: self.min,
            max: self.max,
            base_time: 0.0,
            base_value: 0.0,
            base_param: None,
        };
        let value = meter.check_value(self.value)?;
        meter.rebase(0.0, value);
        Ok(meter)
    }
}

impl fmt::Debug for MeterBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MeterBuilder")
            .field("curve", &self.curve)
            .field("value", &self.value)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish()
    }
}
