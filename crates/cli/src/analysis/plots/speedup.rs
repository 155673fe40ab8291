//! The speedup plot of `warpsim speedup --plot`.

use std::path::Path;

use anyhow::Result;
use plotters::prelude::*;

use super::{PALETTE, drawing};

const SIZE: (u32, u32) = (960, 600);

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

pub(super) fn speedup_curves_svg(svg: &mut String, plot: &SpeedupPlot) -> Result<()> {
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
    let body = super::draw_title(&root, &plot.title, Some(&plot.subtitle))?;
    let mut chart = ChartBuilder::on(&body)
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
