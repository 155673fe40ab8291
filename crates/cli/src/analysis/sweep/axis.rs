//! The axes of a sweep: `--set KEY=VALUES` parsed into values, and the grid of their
//! combinations, computed point by point from an index (never built).

use anyhow::{Result, anyhow, bail};

use crate::text::excerpt;

/// Most values one `--set` range may have.
pub(crate) const MAX_AXIS_VALUES: u64 = 100_000;

/// One swept parameter and its values, as text (they are handed back to clap).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    pub(crate) key: String,
    pub(crate) values: Vec<String>,
}

/// Parses `key=values`.
///
/// # Errors
///
/// No `=`, an empty key, a malformed number, a step that is not positive, or an empty range.
pub(crate) fn parse_axis(spec: &str) -> Result<Axis> {
    let (key, values) = spec.split_once('=').ok_or_else(|| {
        anyhow!(
            "--set `{}`: expected KEY=VALUES (e.g. gates=4..20)",
            excerpt(spec)
        )
    })?;
    let key = key.trim().trim_start_matches("--").to_string();
    if key.is_empty() {
        bail!("--set `{}`: the parameter name is empty", excerpt(spec));
    }
    let values = values.trim();
    let values = if values.contains(',') {
        let list: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if list.iter().any(String::is_empty) {
            bail!(
                "--set {}: empty value in the list `{}`",
                excerpt(&key),
                excerpt(values)
            );
        }
        if list.len() as u64 > MAX_AXIS_VALUES {
            bail!(
                "--set {}: the list has {} values (at most {MAX_AXIS_VALUES})",
                excerpt(&key),
                list.len()
            );
        }
        list
    } else if let Some((start, rest)) = values.split_once("..") {
        let (end, step) = match rest.split_once(':') {
            Some((end, step)) => (end, Some(step)),
            None => (rest, None),
        };
        range(
            &excerpt(&key),
            start.trim(),
            end.trim(),
            step.map(str::trim),
        )?
    } else if values.is_empty() {
        bail!("--set {}: no value", excerpt(&key));
    } else {
        vec![values.to_string()]
    };
    Ok(Axis { key, values })
}

/// The values of `start..end[:step]`, both ends included.
fn range(key: &str, start: &str, end: &str, step: Option<&str>) -> Result<Vec<String>> {
    let text = format!(
        "{start}..{end}{}",
        step.map(|s| format!(":{s}")).unwrap_or_default()
    );
    let number = |value: &str| -> Result<f64> {
        value
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| {
                anyhow!(
                    "--set {key}: `{}` in `{}` is not a number",
                    excerpt(value),
                    excerpt(&text)
                )
            })
    };
    let (first, last) = (number(start)?, number(end)?);
    let step_value = match step {
        Some(step) => number(step)?,
        None => 1.0,
    };
    if step_value <= 0.0 {
        bail!(
            "--set {key}: the step of `{}` must be positive",
            excerpt(&text)
        );
    }
    if first > last {
        bail!(
            "--set {key}: the range `{}` is empty (its start is after its end)",
            excerpt(&text)
        );
    }
    // Print as many decimals as the user wrote (counting an exponent: `1e-5` has five), so
    // that 0.1 + 0.2 shows as 0.3 and integers stay integers. The step has at most this many
    // decimals, so distinct values never print alike.
    let decimals = [start, end, step.unwrap_or("1")]
        .iter()
        .map(|text| decimals_of(text))
        .max()
        .unwrap_or(0);
    // Count in floating point first: `1..1e30` or a step of `1e-300` has more values than
    // any integer type holds, and a cast would saturate (then wrap on `+ 1`).
    let steps = ((last - first) / step_value + 1e-9).floor();
    if !(steps.is_finite() && steps < MAX_AXIS_VALUES as f64) {
        bail!(
            "--set {key}: the range `{}` has {} values (at most {MAX_AXIS_VALUES})",
            excerpt(&text),
            if steps.is_finite() {
                format!("{:.3e}", steps + 1.0)
            } else {
                "too many".to_string()
            }
        );
    }
    let count = steps as u64 + 1;
    Ok((0..count)
        .map(|index| {
            let value = first + index as f64 * step_value;
            if decimals == 0 {
                format!("{value:.0}")
            } else {
                format!("{value:.decimals$}")
            }
        })
        .collect())
}

/// The decimals a number is written with: those of its mantissa, less its exponent
/// (`2.5e-3` has four), at most 400 (beyond what any `f64` needs).
fn decimals_of(text: &str) -> usize {
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i64>().unwrap_or(0)),
        None => (text, 0),
    };
    let fraction = mantissa
        .split_once('.')
        .map_or(0, |(_, fraction)| fraction.len());
    (i64::try_from(fraction).unwrap_or(i64::MAX))
        .saturating_sub(exponent)
        .clamp(0, 400) as usize
}

/// The number of points of the grid of `axes`: the product of their lengths.
///
/// # Errors
///
/// A product that overflows `u64`.
pub(crate) fn grid_size(axes: &[Axis]) -> Result<u64> {
    axes.iter().try_fold(1u64, |points, axis| {
        points.checked_mul(axis.values.len() as u64).ok_or_else(|| {
            anyhow!(
                "--set: the grid of {} has more than {} points",
                axes.iter()
                    .map(|axis| format!("{} values of {}", axis.values.len(), excerpt(&axis.key)))
                    .collect::<Vec<_>>()
                    .join(" × "),
                u64::MAX
            )
        })
    })
}

/// Point `index` of the grid of `axes` (every combination of the axes' values, the first axis
/// varying slowest), computed on demand: the grid itself is never built.
pub(crate) fn grid_point(axes: &[Axis], mut index: u64) -> Vec<&str> {
    let mut values = vec![""; axes.len()];
    for (slot, axis) in values.iter_mut().zip(axes).rev() {
        let n = axis.values.len() as u64;
        *slot = &axis.values[(index % n) as usize];
        index /= n;
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(spec: &str) -> Vec<String> {
        parse_axis(spec).unwrap().values
    }

    #[test]
    fn ranges_and_lists() {
        assert_eq!(values("gates=4..7"), ["4", "5", "6", "7"]);
        assert_eq!(values("gates=4..10:3"), ["4", "7", "10"]);
        assert_eq!(values("p=0..0.3:0.1"), ["0.0", "0.1", "0.2", "0.3"]);
        assert_eq!(values("style=step,events"), ["step", "events"]);
        assert_eq!(values("tasks=1000"), ["1000"]);
        assert_eq!(parse_axis("--gates=1..2").unwrap().key, "gates");
    }

    #[test]
    fn bad_ranges_are_errors() {
        for spec in [
            "gates=5..4",
            "gates=1..5:0",
            "gates=1..5:-1",
            "gates=a..5",
            "gates",
            "=1",
            "gates=",
        ] {
            assert!(parse_axis(spec).is_err(), "{spec}");
        }
    }

    #[test]
    fn grid_is_the_cartesian_product() {
        let axes = [
            Axis {
                key: "a".into(),
                values: vec!["1".into(), "2".into()],
            },
            Axis {
                key: "b".into(),
                values: vec!["x".into(), "y".into(), "z".into()],
            },
        ];
        assert_eq!(grid_size(&axes).unwrap(), 6);
        assert_eq!(grid_point(&axes, 1), ["1", "y"]);
        assert_eq!(grid_point(&axes, 3), ["2", "x"]);
        assert_eq!(grid_point(&axes, 5), ["2", "z"]);
    }

    #[test]
    fn counts_that_overflow_are_errors() {
        for spec in [
            "gates=1..1e30",
            "gates=1..3:1e-300",
            "x=0..1.7976931348623157e308",
        ] {
            let error = parse_axis(spec).unwrap_err().to_string();
            assert!(error.contains("at most 100000"), "{spec}: {error}");
        }
        let wide = Axis {
            key: "a".into(),
            values: vec!["1".into(); 100_000],
        };
        let axes = vec![wide; 4];
        assert_eq!(grid_size(&axes[..3]).unwrap(), 1_000_000_000_000_000);
        assert!(
            grid_size(&axes)
                .unwrap_err()
                .to_string()
                .contains("more than")
        );
    }

    #[test]
    fn exponents_are_not_rounded_away() {
        assert_eq!(
            values("p=0..3e-5:1e-5"),
            ["0.00000", "0.00001", "0.00002", "0.00003"]
        );
        assert_eq!(values("n=1e3..3e3:1e3"), ["1000", "2000", "3000"]);
    }
}
