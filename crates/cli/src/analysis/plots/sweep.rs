//! Sweep plots: a panel per kind of quantity, each metric's mean against the swept
//! parameter with its 95 % confidence band.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;

use super::{
    LegendEntry, PALETTE, WIDTH, all_whole, draw_legend, draw_title, drawing, legend_width,
    tick_text, whole_tick_text,
};
use crate::analysis::statistics::Summary;

/// One curve of a sweep: a metric's summary at each x.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    /// The metric.
    pub(crate) metric: String,
    /// The curve's name in its panel's legend: the metric, and the values of the other swept
    /// parameters.
    pub(crate) label: String,
    pub(crate) points: Vec<(f64, Summary)>,
}

/// Height of one panel.
const PANEL_HEIGHT: u32 = 340;

/// The panel a metric goes to, among the `shown` metrics: percentiles of one quantity
/// (`p50`, `p95`, `p100`, or `wait_p90`) share one; a metric `<prefix>_<name>` goes with a
/// shown metric `<name>` (a formula's value beside the measured one: `erlang_c_p_wait` with
/// `p_wait`); any other metric has a panel of its own, so that no axis mixes kinds of
/// quantity (counts with times, say).
fn panel_key(metric: &str, shown: &[&str]) -> String {
    let stem = metric.trim_end_matches(|c: char| c.is_ascii_digit());
    if stem.len() < metric.len() && (stem == "p" || stem.ends_with("_p")) {
        return format!("{stem}…");
    }
    let partner = shown.iter().find(|&&other| {
        other != metric
            && metric
                .strip_suffix(other)
                .is_some_and(|prefix| prefix.ends_with('_'))
    });
    partner.map_or_else(|| metric.to_string(), |other| other.to_string())
}

/// Sweep panels, one per kind of quantity among `series`, stacked, written atomically to
/// `path`.
pub(crate) fn sweep_curves(
    path: &Path,
    title: &str,
    x_label: &str,
    series: &[Series],
) -> Result<()> {
    let mut svg = String::new();
    sweep_curves_svg(&mut svg, title, x_label, series)?;
    crate::files::write_text(path, &svg)
}

pub(super) fn sweep_curves_svg(
    svg: &mut String,
    title: &str,
    x_label: &str,
    series: &[Series],
) -> Result<()> {
    let mut shown: Vec<&str> = series.iter().map(|s| s.metric.as_str()).collect();
    shown.dedup();
    let mut panels: Vec<(String, Vec<&Series>)> = Vec::new();
    for one in series {
        let key = panel_key(&one.metric, &shown);
        match panels.iter_mut().find(|(known, _)| *known == key) {
            Some((_, members)) => members.push(one),
            None => panels.push((key, vec![one])),
        }
    }
    if panels.is_empty() {
        return Err(anyhow!("plot: nothing to plot"));
    }
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|(x, _)| *x))
        .collect();
    let whole_x = all_whole(xs.iter().copied());
    let height = 70 + PANEL_HEIGHT * panels.len() as u32;
    let root = SVGBackend::with_string(svg, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE).map_err(drawing)?;
    let body = draw_title(&root, title, None)?;
    let legend = legend_width(
        series.iter().map(|s| s.label.as_str()),
        f64::from(WIDTH) * 0.4,
    );
    let areas = body.split_evenly((panels.len(), 1));
    for ((key, members), area) in panels.iter().zip(areas) {
        let (plot, side) = area.split_horizontally(WIDTH - legend);
        let entries = draw_panel(&plot, key, members, x_label, whole_x)?;
        draw_legend(&side, 24, &entries)?;
    }
    root.present().map_err(drawing)?;
    Ok(())
}

fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    key: &str,
    members: &[&Series],
    x_label: &str,
    whole_x: bool,
) -> Result<Vec<LegendEntry>> {
    let (mut x_min, mut x_max, mut y_min, mut y_max) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for (x, summary) in members.iter().flat_map(|s| s.points.iter()) {
        x_min = x_min.min(*x);
        x_max = x_max.max(*x);
        for y in [summary.mean, summary.ci_low, summary.ci_high] {
            if y.is_finite() {
                y_min = y_min.min(y);
                y_max = y_max.max(y);
            }
        }
    }
    if !(x_min.is_finite() && y_min.is_finite()) {
        return Err(anyhow!("plot: nothing to plot for {key}"));
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let pad = ((y_max - y_min) * 0.05).max(y_max.abs() * 1e-6).max(1e-12);
    let (y_low, y_high) = (
        (y_min - pad).min(if y_min >= 0.0 { 0.0 } else { y_min }),
        y_max + pad,
    );
    // On a whole-number axis the ticks are the whole numbers (at most a dozen of them, and
    // plotters keeps a whole step when the range is wider).
    let x_ticks = if whole_x {
        ((x_max - x_min) as usize + 1).clamp(2, 12)
    } else {
        10
    };
    let (x_low, x_high) = if whole_x {
        (x_min - 0.25, x_max + 0.25)
    } else {
        (x_min, x_max)
    };
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(72)
        .build_cartesian_2d(x_low..x_high, y_low..y_high)
        .map_err(drawing)?;
    let mut metrics: Vec<&str> = members.iter().map(|s| s.metric.as_str()).collect();
    metrics.dedup();
    let y_desc = format!("{} (mean, band: 95% CI)", metrics.join(", "));
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_desc)
        .x_labels(x_ticks)
        .x_label_formatter(&|x| {
            if whole_x {
                whole_tick_text(*x)
            } else {
                tick_text(*x)
            }
        })
        .y_label_formatter(&|y| tick_text(*y))
        .draw()
        .map_err(drawing)?;
    let mut entries = Vec::new();
    for (index, one) in members.iter().enumerate() {
        let colour = PALETTE[index % PALETTE.len()];
        let mut points = one.points.clone();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let band: Vec<(f64, f64)> = points
            .iter()
            .filter(|(_, s)| s.ci_high.is_finite())
            .map(|(x, s)| (*x, s.ci_high))
            .chain(
                points
                    .iter()
                    .rev()
                    .filter(|(_, s)| s.ci_low.is_finite())
                    .map(|(x, s)| (*x, s.ci_low)),
            )
            .collect();
        if band.len() >= 3 {
            chart
                .draw_series(std::iter::once(Polygon::new(band, colour.mix(0.18))))
                .map_err(drawing)?;
        }
        let means: Vec<(f64, f64)> = points.iter().map(|(x, s)| (*x, s.mean)).collect();
        chart
            .draw_series(LineSeries::new(means.clone(), colour.stroke_width(2)))
            .map_err(drawing)?;
        chart
            .draw_series(
                means
                    .into_iter()
                    .map(|point| Circle::new(point, 3, colour.filled())),
            )
            .map_err(drawing)?;
        entries.push(LegendEntry {
            label: one.label.clone(),
            colour,
            stroke: 2,
        });
    }
    Ok(entries)
}
