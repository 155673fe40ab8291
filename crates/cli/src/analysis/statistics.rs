//! Summary statistics of replicated metrics: mean, standard deviation, Student-t confidence
//! interval, min and max.

use serde_json::{Map, Value};

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
            let half = t_quantile(0.5 + CONFIDENCE / 2.0, count - 1.0) * std_dev / count.sqrt();
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

/// The `p` quantile of Student's t distribution with `df` degrees of freedom (`0 < p < 1`).
///
/// Inverts the distribution function by bisection; the function comes from the regularised
/// incomplete beta function, `P(|T| > t) = I_{df/(df+t²)}(df/2, 1/2)`. Accurate to about
/// 1e-12, which is far more than a confidence interval needs, and it works for every `df`
/// (tables stop at 30).
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0 && df > 0.0) {
        return f64::NAN;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let upper_tail = 1.0 - p;
    // P(T > t) decreases in t; bracket, then bisect.
    let tail = |t: f64| 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    let (mut low, mut high) = (0.0f64, 1.0f64);
    while tail(high) > upper_tail {
        high *= 2.0;
        if high > 1e12 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let middle = 0.5 * (low + high);
        if tail(middle) > upper_tail {
            low = middle;
        } else {
            high = middle;
        }
        if high - low <= 1e-13 * high {
            break;
        }
    }
    0.5 * (low + high)
}

/// The regularised incomplete beta function `I_x(a, b)`, by its continued fraction (Lentz's
/// method, as in Numerical Recipes §6.4).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast for x < (a+1)/(a+b+2); use the symmetry
    // I_x(a,b) = 1 − I_{1−x}(b,a) otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// `ln Γ(x)` for `x > 0` (Lanczos approximation, g = 7, n = 9; relative error below 1e-15).
fn ln_gamma(x: f64) -> f64 {
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1−x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEFFICIENTS[0];
    for (index, coefficient) in COEFFICIENTS.iter().enumerate().skip(1) {
        sum += coefficient / (x + index as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 95 % critical values from any table.
        for (df, expected) in [
            (1.0, 12.706_204_736),
            (2.0, 4.302_652_730),
            (4.0, 2.776_445_105),
            (9.0, 2.262_157_163),
            (19.0, 2.093_024_054),
            (29.0, 2.045_229_642),
            (100.0, 1.983_971_519),
            (1e6, 1.959_966_),
        ] {
            let t = t_quantile(0.975, df);
            assert!((t - expected).abs() < 1e-6, "df {df}: {t} vs {expected}");
        }
        assert!((t_quantile(0.95, 10.0) - 1.812_461_123).abs() < 1e-6);
        assert!((t_quantile(0.025, 19.0) + 2.093_024_054).abs() < 1e-6);
    }

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
