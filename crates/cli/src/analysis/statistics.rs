//! Summary statistics of replicated metrics: mean, standard deviation, Student-t confidence
//! interval, min and max.

use serde_json::{Map, Value};
use warpsim_core::blocks::student_t_quantile;

/// The summary of one metric over independent replications.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    /// Number of values (replications that produced this metric).
    pub(crate) n: usize,
    pub(crate) mean: f64,
    /// Sample standard deviation (n − 1 in the denominator); NaN for one value.
    pub(crate) std_dev: f64,
    /// Two-sided 95 % Student-t confidence interval of the mean; NaN for one value.
    pub(crate) ci_low: f64,
    pub(crate) ci_high: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

/// Confidence level of the reported intervals.
pub(crate) const CONFIDENCE: f64 = 0.95;

impl Summary {
    /// Summarises `values` (at least one), with a two-sided 95 % interval
    /// `mean ± t(0.975, n−1) · s / √n`.
    pub(crate) fn of(values: &[f64]) -> Option<Summary> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let count = n as f64;
        // Two passes (mean, then squared deviations) for accuracy: the values can be large
        // times with small spreads.
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for &value in values {
            min = min.min(value);
            max = max.max(value);
        }
        // A constant metric (a parameter echoed as a metric, a theoretical value) keeps its
        // exact value instead of picking up rounding from the sum.
        let mean = if min == max {
            min
        } else {
            values.iter().sum::<f64>() / count
        };
        let (std_dev, ci_low, ci_high) = if n >= 2 {
            let squares: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
            let std_dev = (squares / (count - 1.0)).sqrt();
            let half =
                student_t_quantile(0.5 + CONFIDENCE / 2.0, count - 1.0) * std_dev / count.sqrt();
            (std_dev, mean - half, mean + half)
        } else {
            (f64::NAN, f64::NAN, f64::NAN)
        };
        Some(Summary {
            n,
            mean,
            std_dev,
            ci_low,
            ci_high,
            min,
            max,
        })
    }

    /// Half the width of the confidence interval.
    pub(crate) fn half_width(&self) -> f64 {
        (self.ci_high - self.ci_low) / 2.0
    }

    /// The JSON object of the summary (NaN as null).
    pub(crate) fn to_json(self) -> Value {
        let mut object = Map::new();
        object.insert("n".into(), Value::from(self.n));
        for (name, value) in [
            ("mean", self.mean),
            ("std_dev", self.std_dev),
            ("ci95_low", self.ci_low),
            ("ci95_high", self.ci_high),
            ("min", self.min),
            ("max", self.max),
        ] {
            object.insert(name.into(), number(value));
        }
        Value::Object(object)
    }
}

/// A JSON number (an integer when the value is a whole number, as counts are), or null when
/// `value` is not finite.
pub(crate) fn number(value: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: every integer below is exact
    if value.is_finite() && value.fract() == 0.0 && value.abs() < EXACT {
        Value::from(value as i64)
    } else if value.is_finite() {
        Value::from(value)
    } else {
        Value::Null
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_values() {
        let summary = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(summary.n, 8);
        assert!((summary.mean - 5.0).abs() < 1e-12);
        assert!((summary.std_dev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        let half = 2.364_624_252 * summary.std_dev / 8f64.sqrt();
        assert!((summary.half_width() - half).abs() < 1e-6);
        assert_eq!((summary.min, summary.max), (2.0, 9.0));
        let single = Summary::of(&[3.0]).unwrap();
        assert!(single.std_dev.is_nan() && single.ci_low.is_nan());
        assert!(Summary::of(&[]).is_none());
    }
}
