//! Random meal and repair durations for the events style.

use rand::RngExt;
use rand_distr::{Distribution, Exp, LogNormal, StandardNormal, Uniform};
use warpsim_core::LpRng;

use crate::ParamError;

/// How the events style draws a duration of mean `m` (the meal time `T` or the repair time
/// `R`).
///
/// Every choice has mean `m`. The article's choice is [`Durations::Normal`]; the others let an
/// analyst see how much the answer depends on that assumption.
///
/// ```
/// use warpsim_models::pets::Durations;
/// assert_eq!("lognormal".parse::<Durations>().unwrap(), Durations::Lognormal);
/// assert!("gamma".parse::<Durations>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Durations {
    /// `max(0, m + N(0,1) · m/4)`: the article's choice (standard deviation `m/4`, truncated
    /// at 0, which shifts the mean up by a negligible 3·10⁻⁷ m).
    #[default]
    Normal,
    /// Exactly `m`.
    Constant,
    /// Exponential with mean `m` (standard deviation `m`): memoryless meals and repairs.
    Exponential,
    /// Log-normal with mean `m` and standard deviation `m/4`: positive, right-skewed.
    Lognormal,
    /// Uniform on `[m − √3·m/4, m + √3·m/4]`: mean `m`, standard deviation `m/4`, bounded.
    Uniform,
}

impl std::str::FromStr for Durations {
    type Err = ParamError;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "normal" => Ok(Durations::Normal),
            "constant" => Ok(Durations::Constant),
            "exponential" => Ok(Durations::Exponential),
            "lognormal" => Ok(Durations::Lognormal),
            "uniform" => Ok(Durations::Uniform),
            other => Err(ParamError::new(
                "durations",
                format!(
                    "unknown distribution `{other}` \
                     (expected normal, constant, exponential, lognormal or uniform)"
                ),
            )),
        }
    }
}

impl std::fmt::Display for Durations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Durations::Normal => "normal",
            Durations::Constant => "constant",
            Durations::Exponential => "exponential",
            Durations::Lognormal => "lognormal",
            Durations::Uniform => "uniform",
        })
    }
}

/// A ready-to-draw distribution of one duration. `Copy` and small: the LP carries two.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) enum Sampler {
    Constant(f64),
    Normal { mean: f64, std_dev: f64 },
    Exponential(Exp<f64>),
    Lognormal(LogNormal<f64>),
    Uniform(Uniform<f64>),
}

impl Sampler {
    /// The sampler of `durations` with mean `mean` (checked finite and non-negative).
    pub(crate) fn new(durations: Durations, mean: f64) -> Sampler {
        let quarter = mean / 4.0;
        // A zero mean makes every distribution a point mass at 0; the constructors of the
        // continuous ones refuse a zero scale, so fall back to the constant 0.
        let built = match durations {
            Durations::Constant => None,
            Durations::Normal => Some(Sampler::Normal {
                mean,
                std_dev: quarter,
            }),
            Durations::Exponential => Exp::new(1.0 / mean).ok().map(Sampler::Exponential),
            Durations::Lognormal => LogNormal::from_mean_cv(mean, 0.25)
                .ok()
                .map(Sampler::Lognormal),
            Durations::Uniform => {
                let half_width = 3f64.sqrt() * quarter;
                Uniform::new_inclusive(mean - half_width, mean + half_width)
                    .ok()
                    .map(Sampler::Uniform)
            }
        };
        match built {
            Some(sampler) if mean > 0.0 => sampler,
            _ => Sampler::Constant(mean),
        }
    }

    /// Draws one duration as the article's Go code does: `T + int(N(0,1) · T / 4)`, the
    /// deviation truncated toward zero to whole time units, then 0 if negative (other
    /// distributions: the draw truncated toward zero). Times then stay integers, as in the
    /// article.
    #[inline]
    pub(crate) fn sample_truncated(&self, rng: &mut LpRng) -> f64 {
        match self {
            Sampler::Normal { mean, std_dev } => {
                let z: f64 = rng.sample(StandardNormal);
                (mean.trunc() + (z * std_dev).trunc()).max(0.0)
            }
            other => other.sample(rng).trunc(),
        }
    }

    /// As [`Sampler::sample`], with the normal distribution's draw in line: the pets' meals
    /// and repairs draw one each per event, and the call cost 22 instructions (issue 16:
    /// `run pets` 1,210.6 M → 1,192.0 M instructions, 1.5 % less CPU; the same numbers).
    #[inline(always)]
    pub(crate) fn sample_inline(&self, rng: &mut LpRng) -> f64 {
        match self {
            Sampler::Normal { mean, std_dev } => {
                let z: f64 = StandardNormal.sample(rng);
                (mean + z * std_dev).max(0.0)
            }
            other => other.sample(rng),
        }
    }

    /// Draws one duration (never negative).
    #[inline]
    pub(crate) fn sample(&self, rng: &mut LpRng) -> f64 {
        match self {
            Sampler::Constant(value) => *value,
            Sampler::Normal { mean, std_dev } => {
                // The distribution called directly, not through `rng.sample`: the same number,
                // and one call fewer per meal in the pets (issue 16: 1,221 M → 1,211 M
                // instructions for `run pets`). The same change in `sample_truncated` made the
                // compiler lay the handler out with more branches (3.46 M mispredictions
                // against 2.73 M), so it stays as it is there.
                let z: f64 = StandardNormal.sample(rng);
                (mean + z * std_dev).max(0.0)
            }
            Sampler::Exponential(exp) => exp.sample(rng),
            Sampler::Lognormal(lognormal) => lognormal.sample(rng),
            Sampler::Uniform(uniform) => uniform.sample(rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_distribution_has_the_requested_mean() {
        let mut rng = LpRng::seed_from_u64(11);
        for durations in [
            Durations::Normal,
            Durations::Constant,
            Durations::Exponential,
            Durations::Lognormal,
            Durations::Uniform,
        ] {
            let sampler = Sampler::new(durations, 15.0);
            let n = 100_000;
            let draws: Vec<f64> = (0..n).map(|_| sampler.sample(&mut rng)).collect();
            assert!(draws.iter().all(|&d| d >= 0.0));
            let mean = draws.iter().sum::<f64>() / n as f64;
            assert!((mean - 15.0).abs() < 0.15, "{durations}: mean {mean}");
        }
        assert_eq!(
            Sampler::new(Durations::Exponential, 0.0).sample(&mut rng),
            0.0
        );
    }
}
