//! SVG plots with plotters: the pets completion curve, and sweep curves with confidence bands.
//!
//! The SVG backend writes text as SVG `<text>` elements, so no font files are needed (the
//! build leaves out plotters' TrueType support); label sizes are estimated, which is all the
//! layout needs.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;
use warpsim_models::pets::PetsResult;

use super::statistics::Summary;

const SIZE: (u32, u32) = (960, 600);

/// Colours of successive series (colour-blind-safe, Wong 2011).
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// A plotters error as a one-line anyhow error.
fn drawing<E: std::fmt::Display>(error: E) -> anyhow::Error {
    anyhow!("plot: {error}")
}

/// The completion curve: the fraction of pets fed against time, with the 50, 95, 99 and 100 %
/// times marked, written atomically to `path`.
pub(crate) fn completion_curve(path: &Path, title: &str, result: &PetsResult) -> Result<()> {
    let mut svg = String::new();
    completion_curve_svg(&mut svg, title, result)?;
    crate::files::write_text(path, &svg)
}

fn completion_curve_svg(svg: &mut String, title: &str, result: &PetsResult) -> Result<()> {
    let tasks = result.tasks.max(1) as f64;
    let mut points: Vec<(f64, f64)> = vec![(0.0, 0.0)];
    points.extend(
        result
            .curve
            .iter()
            .map(|point| (point.time, point.fed as f64 / tasks)),
    );
    let x_max = points
        .iter()
        .map(|&(time, _)| time)
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.02;
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(drawing)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 16))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..x_max, 0.0..1.05)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc("simulated time")
        .y_desc("fraction of pets fed")
        .draw()
        .map_err(drawing)?;
    let line = PALETTE[0];
    chart
        .draw_series(LineSeries::new(points, line.stroke_width(2)))
        .map_err(drawing)?
        .label("fed")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], line.stroke_width(2)));
    let marks = [
        (50.0, result.p50),
        (95.0, result.p95),
        (99.0, result.p99),
        (100.0, result.p100),
    ];
    let marker = PALETTE[1];
    for (index, (percent, time)) in marks.iter().enumerate() {
        let Some(time) = *time else { continue };
        let fraction = percent / 100.0;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(time, 0.0), (time, fraction)],
                marker.mix(0.5),
            )))
            .map_err(drawing)?;
        chart
            .draw_series(std::iter::once(Circle::new(
                (time, fraction),
                4,
                marker.filled(),
            )))
            .map_err(drawing)?;
        // Stagger the labels downwards so that close percentiles stay readable.
        let label_y = fraction - 0.06 * (index as f64 + 1.0);
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{percent:.0}% at {time}"),
                (time, label_y.max(0.02)),
                ("sans-serif", 13).into_font().color(&marker),
            )))
            .map_err(drawing)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(drawing)?;
    root.present().map_err(drawing)?;
    Ok(())
}

/// One curve of a sweep: a metric's summary at each x.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub(crate) label: String,
    pub(crate) points: Vec<(f64, Summary)>,
}

/// Sweep curves: each series' mean against the swept parameter, with its 95 % confidence band
/// (when the points have replications), written atomically to `path`.
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

fn sweep_curves_svg(svg: &mut String, title: &str, x_label: &str, series: &[Series]) -> Result<()> {
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x_min, mut x_max, mut y_min, mut y_max) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for (x, summary) in all {
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
        return Err(anyhow!("plot: nothing to plot"));
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let pad = ((y_max - y_min) * 0.05).max(y_max.abs() * 1e-6).max(1e-12);
    let (y_low, y_high) = (
        (y_min - pad).min(if y_min >= 0.0 { 0.0 } else { y_min }),
        y_max + pad,
    );
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(drawing)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 16))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(x_min..x_max, y_low..y_high)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("mean (band: 95% CI)")
        .draw()
        .map_err(drawing)?;
    for (index, one) in series.iter().enumerate() {
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
            .map_err(drawing)?
            .label(one.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(
                means
                    .into_iter()
                    .map(|point| Circle::new(point, 3, colour.filled())),
            )
            .map_err(drawing)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(drawing)?;
    root.present().map_err(drawing)?;
    Ok(())
}
