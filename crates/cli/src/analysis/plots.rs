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

/// One point of a speedup plot: `(processors, mean speedup, worst run, best run)`.
pub(crate) type SpeedupPoint = (f64, f64, f64, f64);

/// One curve of a speedup plot.
#[derive(Debug, Clone)]
pub(crate) struct SpeedupSeries {
    pub(crate) label: String,
    pub(crate) points: Vec<SpeedupPoint>,
}

/// What `warpsim speedup --plot` draws.
#[derive(Debug, Clone)]
pub(crate) struct SpeedupPlot {
    pub(crate) title: String,
    /// The model's parameters, under the title.
    pub(crate) subtitle: String,
    /// Cores of the machine: beyond them the plot is shaded as oversubscribed.
    pub(crate) cores: usize,
    /// Critical-path bound with handler times, and counting events.
    pub(crate) bound: f64,
    pub(crate) bound_unit: f64,
    pub(crate) series: Vec<SpeedupSeries>,
}

/// Speedup against processors: each series' mean with the range of its runs, the ideal line
/// (speedup = processors) and the critical-path bounds, written atomically to `path`.
pub(crate) fn speedup_curves(path: &Path, plot: &SpeedupPlot) -> Result<()> {
    let mut svg = String::new();
    speedup_curves_svg(&mut svg, plot)?;
    crate::files::write_text(path, &svg)
}

/// A ratio (a speedup) with two decimals, or two significant digits below 0.1, so that small
/// speedups are not all written `0.01`.
pub(crate) fn ratio_text(value: f64) -> String {
    if !value.is_finite() {
        return "-".into();
    }
    let decimals = (1 - value.abs().max(1e-9).log10().floor() as i32).clamp(2, 9) as usize;
    format!("{value:.decimals$}")
}

/// Tick labels of a log axis: enough digits to tell the ticks apart, no more.
fn log_tick(value: f64) -> String {
    if value >= 10.0 {
        format!("{value:.0}")
    } else if value >= 1.0 {
        let text = format!("{value:.1}");
        text.trim_end_matches(".0").to_string()
    } else {
        let text = format!("{value:.2}");
        text.trim_end_matches('0').to_string()
    }
}

fn speedup_curves_svg(svg: &mut String, plot: &SpeedupPlot) -> Result<()> {
    let points = plot.series.iter().flat_map(|s| s.points.iter());
    let x_max = points
        .clone()
        .map(|p| p.0)
        .fold(1.0f64, f64::max)
        .max(plot.cores as f64);
    let y_low = points
        .clone()
        .flat_map(|p| [p.1, p.2])
        .filter(|y| y.is_finite() && *y > 0.0)
        .fold(1.0f64, f64::min);
    let y_data_high = points
        .flat_map(|p| [p.1, p.3])
        .filter(|y| y.is_finite())
        .fold(x_max, f64::max)
        .max(plot.bound)
        .max(plot.bound_unit);
    // A log axis: the bounds (tens to hundreds) and the speedups (around one) both stay
    // readable. The room above the highest line is for the legend, clear of the data.
    // Whole decades, so that each end of the axis has a labelled tick.
    let (y_min, y_max) = (
        10f64.powf((y_low / 1.3).log10().floor()),
        10f64.powf((y_data_high * 3.0).log10().ceil()),
    );
    // Where each point's value is written: of the points at one x, the highest gets its
    // label above, the lowest below, any others to the right, so labels never cover each
    // other when two series come close.
    let mut label_offsets: Vec<Vec<(i32, i32)>> = plot
        .series
        .iter()
        .map(|s| vec![(10, -6); s.points.len()])
        .collect();
    let mut xs: Vec<f64> = plot
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    for x in xs {
        let mut at_x: Vec<(usize, usize, f64)> = Vec::new();
        for (series, one) in plot.series.iter().enumerate() {
            for (index, point) in one.points.iter().enumerate() {
                if point.0 == x {
                    at_x.push((series, index, point.1));
                }
            }
        }
        at_x.sort_by(|a, b| a.2.total_cmp(&b.2));
        if at_x.len() >= 2 {
            let (series, index, _) = at_x[0];
            label_offsets[series][index] = (10, 6);
            let (series, index, _) = at_x[at_x.len() - 1];
            label_offsets[series][index] = (10, -20);
            for (rank, &(series, index, _)) in at_x[1..at_x.len() - 1].iter().enumerate() {
                label_offsets[series][index] = (14 + 34 * rank as i32, -6);
            }
        }
    }
    let x_range = 0.5..x_max + 0.5;
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(drawing)?;
    let (top, body) = root.split_vertically(26);
    top.draw(&Text::new(
        plot.subtitle.clone(),
        (16, 8),
        ("sans-serif", 12).into_font().color(&BLACK.mix(0.7)),
    ))
    .map_err(drawing)?;
    let mut chart = ChartBuilder::on(&body)
        .caption(&plot.title, ("sans-serif", 16))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x_range.clone(), (y_min..y_max).log_scale())
        .map_err(drawing)?;
    let whole = |x: &f64| {
        if (x - x.round()).abs() < 1e-9 {
            format!("{x:.0}")
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .x_desc("processors (worker threads × ranks)")
        .y_desc("speedup over the sequential kernel (log scale)")
        .x_labels((x_max as usize + 1).min(33))
        .x_label_formatter(&whole)
        .y_label_formatter(&|y| log_tick(*y))
        .draw()
        .map_err(drawing)?;
    let cores = plot.cores as f64;
    if x_max > cores {
        // More processors than cores: shade, and say why.
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(cores + 0.5, y_min), (x_max + 0.5, y_max)],
                BLACK.mix(0.06).filled(),
            )))
            .map_err(drawing)?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!("oversubscribed: more than {} cores", plot.cores),
                (cores + 0.6, y_max / 1.5),
                ("sans-serif", 12).into_font().color(&BLACK.mix(0.6)),
            )))
            .map_err(drawing)?;
    }
    let grey = RGBColor(90, 90, 90);
    // Straight on linear axes, so sampled: the y axis is logarithmic.
    let ideal = (0..=200).map(|step| {
        let x = 0.5 + x_max * f64::from(step) / 200.0;
        (x, x)
    });
    chart
        .draw_series(LineSeries::new(ideal, BLACK.stroke_width(1)))
        .map_err(drawing)?
        .label("ideal: speedup = processors")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(1)));
    chart
        .draw_series(LineSeries::new(
            [(0.5, plot.bound), (x_max + 0.5, plot.bound)],
            grey.stroke_width(3),
        ))
        .map_err(drawing)?
        .label(format!(
            "critical-path bound {:.1} (handler times)",
            plot.bound
        ))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(3)));
    let light = RGBColor(170, 170, 170);
    chart
        .draw_series(LineSeries::new(
            [(0.5, plot.bound_unit), (x_max + 0.5, plot.bound_unit)],
            light.stroke_width(1),
        ))
        .map_err(drawing)?
        .label(format!(
            "critical-path bound {:.1} (counting events)",
            plot.bound_unit
        ))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], light.stroke_width(1)));
    for (index, one) in plot.series.iter().enumerate() {
        let colour = PALETTE[index % PALETTE.len()];
        let mut points: Vec<(SpeedupPoint, (i32, i32))> = one
            .points
            .iter()
            .copied()
            .zip(label_offsets[index].iter().copied())
            .collect();
        points.sort_by(|a, b| a.0.0.total_cmp(&b.0.0));
        let (points, offsets): (Vec<_>, Vec<_>) = points.into_iter().unzip();
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|p| (p.0, p.1)),
                colour.stroke_width(2),
            ))
            .map_err(drawing)?
            .label(format!("{} (bars: fastest to slowest run)", one.label))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(
                points
                    .iter()
                    .map(|p| ErrorBar::new_vertical(p.0, p.2, p.1, p.3, colour.stroke_width(1), 8)),
            )
            .map_err(drawing)?;
        chart
            .draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((p.0, p.1), 4, colour.filled())),
            )
            .map_err(drawing)?;
        // The mean speedup beside each point, so the figure can be read without the table.
        chart
            .draw_series(points.iter().zip(&offsets).map(|(p, &offset)| {
                EmptyElement::at((p.0, p.1))
                    + Text::new(
                        ratio_text(p.1),
                        offset,
                        ("sans-serif", 12).into_font().color(&colour),
                    )
            }))
            .map_err(drawing)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(drawing)?;
    root.present().map_err(drawing)?;
    Ok(())
}
