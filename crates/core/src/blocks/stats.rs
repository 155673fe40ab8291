//! Statistics kept inside an LP: [`Tally`] (observations), [`TimeAverage`] (a level over
//! time) and [`Histogram`] (quantiles). All are plain `Clone` data, so an optimistic kernel
//! rolls them back with the LP, and serde types, so they can be emitted as outputs (also
//! across processes).

use sketches_ddsketch::{Config, DDSketch};

use crate::time::Time;

use super::student::student_t_quantile;

/// A statistics call that was refused.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StatsError {
    /// A confidence level or quantile outside its range.
    #[error("{what} must be in {range}, got {value}")]
    OutOfRange {
        /// What was asked for (`confidence level`, `quantile`, `accuracy`).
        what: &'static str,
        /// The range it must be in.
        range: &'static str,
        /// The value given.
        value: f64,
    },
    /// A confidence interval needs at least two observations.
    #[error("a confidence interval needs at least two observations, got {0}")]
    TooFewObservations(u64),
}

/// Observations of one quantity (waiting times, sizes…): count, mean, variance, extremes and
/// a Student-t confidence interval of the mean.
///
/// # Implementation
///
/// Welford's online update (numerically stable, O(1) per observation, 40 bytes).
///
/// ```
/// use warpsim_core::blocks::Tally;
/// let mut waits = Tally::new();
/// for wait in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
///     waits.record(wait);
/// }
/// assert_eq!(waits.count(), 8);
/// assert_eq!(waits.mean(), 5.0);
/// assert!((waits.variance() - 32.0 / 7.0).abs() < 1e-12);
/// let (low, high) = waits.confidence_interval(0.95).unwrap();
/// assert!(low < 5.0 && 5.0 < high);
/// assert!(waits.confidence_interval(1.5).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    count: u64,
    mean: f64,
    /// Sum of squared deviations from the mean.
    m2: f64,
    min: f64,
    max: f64,
}

impl Tally {
    /// No observations yet.
    pub fn new() -> Tally {
        Tally::default()
    }

    /// Adds one observation (a NaN makes the mean NaN, as it should).
    pub fn record(&mut self, value: f64) {
        self.count += 1;
        if self.count == 1 {
            self.min = value;
            self.max = value;
        } else {
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
        let delta = value - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (value - self.mean);
    }

    /// Number of observations.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Mean (0 without observations).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Sample variance (`n − 1` in the denominator; 0 with fewer than two observations).
    pub fn variance(&self) -> f64 {
        if self.count < 2 {
            0.0
        } else {
            self.m2 / (self.count - 1) as f64
        }
    }

    /// Sample standard deviation.
    pub fn std_dev(&self) -> f64 {
        self.variance().sqrt()
    }

    /// Smallest observation (0 without observations).
    pub fn min(&self) -> f64 {
        self.min
    }

    /// Largest observation (0 without observations).
    pub fn max(&self) -> f64 {
        self.max
    }

    /// Sum of the observations.
    pub fn sum(&self) -> f64 {
        self.mean * self.count as f64
    }

    /// Half the width of the two-sided confidence interval of the mean at `level` (e.g.
    /// 0.95): `t(1 − (1 − level)/2, n − 1) · s / √n`. Valid for independent observations —
    /// successive waits in one queue are correlated, so use replications (or batch means)
    /// for those.
    ///
    /// # Errors
    ///
    /// [`StatsError::OutOfRange`] unless `0 < level < 1`;
    /// [`StatsError::TooFewObservations`] with fewer than two observations.
    pub fn half_width(&self, level: f64) -> Result<f64, StatsError> {
        if !(level > 0.0 && level < 1.0) {
            return Err(StatsError::OutOfRange {
                what: "confidence level",
                range: "(0, 1)",
                value: level,
            });
        }
        if self.count < 2 {
            return Err(StatsError::TooFewObservations(self.count));
        }
        let n = self.count as f64;
        Ok(student_t_quantile(0.5 + level / 2.0, n - 1.0) * self.std_dev() / n.sqrt())
    }

    /// The confidence interval of the mean at `level`, `(low, high)`; see
    /// [`Tally::half_width`].
    ///
    /// # Errors
    ///
    /// As [`Tally::half_width`].
    pub fn confidence_interval(&self, level: f64) -> Result<(f64, f64), StatsError> {
        let half = self.half_width(level)?;
        Ok((self.mean - half, self.mean + half))
    }

    /// Merges another tally (Chan et al.'s parallel update): as if its observations had been
    /// recorded here.
    pub fn merge(&mut self, other: &Tally) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        let count = self.count + other.count;
        let delta = other.mean - self.mean;
        let (n_a, n_b) = (self.count as f64, other.count as f64);
        self.mean += delta * n_b / count as f64;
        self.m2 += other.m2 + delta * delta * n_a * n_b / count as f64;
        self.count = count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

/// A level that changes over simulation time (a queue's length, busy servers) and its
/// time-weighted average: `∫ value dt / (now − start)`.
///
/// Tell it every change with the time it happens ([`set`](TimeAverage::set),
/// [`add`](TimeAverage::add)); read the average at any time. Times must not go backwards
/// (an LP's events come in time order; an earlier time counts as no time passing).
///
/// ```
/// use warpsim_core::Time;
/// use warpsim_core::blocks::TimeAverage;
/// let t = |x: f64| Time::new(x).unwrap();
/// let mut length = TimeAverage::new(t(0.0), 0.0);
/// length.set(t(1.0), 2.0);   // 0 on [0, 1)
/// length.add(t(3.0), -1.0);  // 2 on [1, 3)
/// // 1 on [3, 5): (0·1 + 2·2 + 1·2) / 5
/// assert_eq!(length.mean(t(5.0)), 6.0 / 5.0);
/// assert_eq!(length.value(), 1.0);
/// assert_eq!(length.max(), 2.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimeAverage {
    start: Time,
    last: Time,
    value: f64,
    area: f64,
    max: f64,
}

impl Default for TimeAverage {
    fn default() -> Self {
        TimeAverage::new(Time::ZERO, 0.0)
    }
}

impl TimeAverage {
    /// A level of `value` from time `start` on.
    pub fn new(start: Time, value: f64) -> TimeAverage {
        TimeAverage {
            start,
            last: start,
            value,
            area: 0.0,
            max: value,
        }
    }

    fn advance(&mut self, now: Time) {
        if now > self.last {
            self.area += self.value * (now.as_f64() - self.last.as_f64());
            self.last = now;
        }
    }

    /// The level becomes `value` at `now`.
    pub fn set(&mut self, now: Time, value: f64) {
        self.advance(now);
        self.value = value;
        self.max = self.max.max(value);
    }

    /// The level changes by `delta` at `now`.
    pub fn add(&mut self, now: Time, delta: f64) {
        let value = self.value + delta;
        self.set(now, value);
    }

    /// The current level.
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The highest level so far.
    pub fn max(&self) -> f64 {
        self.max
    }

    /// `∫ value dt` from the start to `now`.
    pub fn integral(&self, now: Time) -> f64 {
        let tail = (now.as_f64() - self.last.as_f64()).max(0.0);
        self.area + self.value * tail
    }

    /// The time-weighted average from the start to `now` (the current level if no time has
    /// passed).
    pub fn mean(&self, now: Time) -> f64 {
        let span = now.as_f64() - self.start.as_f64();
        if span > 0.0 {
            self.integral(now) / span
        } else {
            self.value
        }
    }

    /// Forgets the past (end of a warm-up): the average restarts at `now` from the current
    /// level.
    pub fn reset(&mut self, now: Time) {
        *self = TimeAverage::new(now, self.value);
    }
}

/// A distribution of observations with quantiles (p50, p99…) to a relative accuracy, in
/// bounded memory.
///
/// # Implementation
///
/// A DDSketch (Masson, Rim & Lee, VLDB 2019) from the `sketches-ddsketch` crate: values fall
/// in logarithmic buckets, so every quantile is within a relative error `accuracy` of the
/// true one (1 % by default) whatever the distribution, in at most 2048 buckets. Chosen over
/// `hdrhistogram` because simulation values are `f64` (HdrHistogram records integers, so
/// times would need a scale chosen up front) and because the sketch is serde data, so a
/// histogram can be emitted as an output, also over MPI. Quantile `q` is the value of rank
/// `⌊q (n − 1)⌋` (the lower one); 0 and 1 give the exact minimum and maximum.
///
/// ```
/// use warpsim_core::blocks::Histogram;
/// let mut times = Histogram::new();
/// for i in 1..=1000 {
///     times.record(f64::from(i));
/// }
/// let median = times.quantile(0.5).unwrap().unwrap();
/// assert!((median - 500.0).abs() <= 0.01 * 500.0);
/// assert_eq!(times.quantile(1.0).unwrap(), Some(1000.0));
/// assert!(times.quantile(1.5).is_err());
/// ```
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Histogram {
    sketch: DDSketch,
    accuracy: f64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("accuracy", &self.accuracy)
            .field("count", &self.count())
            .field("min", &self.sketch.min())
            .field("max", &self.sketch.max())
            .finish_non_exhaustive()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

impl PartialEq for Histogram {
    /// Equal when both hold the same sketch: the same accuracy, buckets, count, sum, minimum
    /// and maximum. The sketch has no `PartialEq` of its own, so the two are compared by their
    /// encodings (an allocation each: cheap next to a run, not meant for a hot loop).
    ///
    /// ```
    /// use warpsim_core::blocks::Histogram;
    /// let (mut a, mut b) = (Histogram::new(), Histogram::new());
    /// for x in [1.0, 2.5, 40.0] { a.record(x); b.record(x); }
    /// assert_eq!(a, b);
    /// b.record(3.0);
    /// assert_ne!(a, b);
    /// assert_ne!(Histogram::new(), Histogram::with_accuracy(0.05).unwrap());
    /// ```
    fn eq(&self, other: &Histogram) -> bool {
        self.accuracy == other.accuracy
            && match (
                postcard::to_allocvec(&self.sketch),
                postcard::to_allocvec(&other.sketch),
            ) {
                (Ok(mine), Ok(theirs)) => mine == theirs,
                _ => false,
            }
    }
}

/// The sketch's default relative accuracy.
const DEFAULT_ACCURACY: f64 = 0.01;
/// The sketch's bucket limit (its default).
const MAX_BUCKETS: u32 = 2048;
/// Values closer to 0 than this count as 0 (the sketch's default).
const SMALLEST: f64 = 1e-9;

impl Histogram {
    /// An empty histogram with 1 % relative accuracy.
    pub fn new() -> Histogram {
        Histogram {
            sketch: DDSketch::new(Config::new(DEFAULT_ACCURACY, MAX_BUCKETS, SMALLEST)),
            accuracy: DEFAULT_ACCURACY,
        }
    }

    /// An empty histogram whose quantiles are within relative error `accuracy`.
    ///
    /// # Errors
    ///
    /// [`StatsError::OutOfRange`] unless `0 < accuracy < 1`.
    pub fn with_accuracy(accuracy: f64) -> Result<Histogram, StatsError> {
        if !(accuracy > 0.0 && accuracy < 1.0) {
            return Err(StatsError::OutOfRange {
                what: "accuracy",
                range: "(0, 1)",
                value: accuracy,
            });
        }
        Ok(Histogram {
            sketch: DDSketch::new(Config::new(accuracy, MAX_BUCKETS, SMALLEST)),
            accuracy,
        })
    }

    /// Adds one observation.
    pub fn record(&mut self, value: f64) {
        self.sketch.add(value);
    }

    /// Number of observations.
    pub fn count(&self) -> u64 {
        self.sketch.count() as u64
    }

    /// Mean of the observations (exact), `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        self.sketch
            .sum()
            .map(|sum| sum / self.sketch.count() as f64)
    }

    /// The `q` quantile (`0 ≤ q ≤ 1`), within the relative accuracy; `None` when empty.
    ///
    /// # Errors
    ///
    /// [`StatsError::OutOfRange`] unless `0 ≤ q ≤ 1`.
    pub fn quantile(&self, q: f64) -> Result<Option<f64>, StatsError> {
        self.sketch.quantile(q).map_err(|_| StatsError::OutOfRange {
            what: "quantile",
            range: "[0, 1]",
            value: q,
        })
    }

    /// Merges another histogram's observations.
    ///
    /// # Errors
    ///
    /// [`StatsError::OutOfRange`] when the two were made with different accuracies.
    pub fn merge(&mut self, other: &Histogram) -> Result<(), StatsError> {
        self.sketch
            .merge(&other.sketch)
            .map_err(|_| StatsError::OutOfRange {
                what: "accuracy of the merged histogram",
                range: "this histogram's",
                value: other.accuracy,
            })
    }
}
