//! The pets completion curve.

use std::path::Path;

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use warpsim_models::pets::PetsResult;

use super::{PALETTE, WIDTH, draw_title, drawing, number_text, tick_text};

const HEIGHT: u32 = 600;
const LABEL_SIZE: u32 = 13;
const COLUMN_WIDTH: u32 = 190;

/// The completion curve: the share of pets fed against time, with the 50, 95, 99 and 100 %
/// times marked, written atomically to `path`.
pub(crate) fn completion_curve(path: &Path, title: &str, result: &PetsResult) -> Result<()> {
    let mut svg = String::new();
    completion_curve_svg(&mut svg, title, result)?;
    crate::files::write_text(path, &svg)
}

pub(super) fn completion_curve_svg(
    svg: &mut String,
    title: &str,
    result: &PetsResult,
) -> Result<()> {
    let tasks = result.tasks.max(1) as f64;
    let mut points: Vec<(f64, f64)> = vec![(0.0, 0.0)];
    points.extend(
        result
            .curve
            .iter()
            .map(|point| (point.time, 100.0 * point.fed as f64 / tasks)),
    );
    let x_max = points
        .iter()
        .map(|&(time, _)| time)
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.02;
    let root = SVGBackend::with_string(svg, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(drawing)?;
    let body = draw_title(&root, title, None)?;
    // The times to each percentile are listed in a column of their own beside the plot: by
    // the marks they would cover the curve where percentiles come close (95, 99 and 100 %
    // often do).
    let (body, column) = body.split_horizontally(WIDTH - COLUMN_WIDTH);
    let mut chart = ChartBuilder::on(&body)
        .margin(16)
        .margin_right(28)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..x_max, 0.0..105.0)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc("simulated time")
        .y_desc("pets fed (%)")
        .x_label_formatter(&|x| tick_text(*x))
        .y_label_formatter(&|y| {
            if *y <= 100.0 {
                tick_text(*y)
            } else {
                String::new()
            }
        })
        .draw()
        .map_err(drawing)?;
    let line = PALETTE[0];
    chart
        .draw_series(LineSeries::new(points, line.stroke_width(2)))
        .map_err(drawing)?;
    let marks = [
        (50.0, result.p50),
        (95.0, result.p95),
        (99.0, result.p99),
        (100.0, result.p100),
    ];
    let marker = PALETTE[1];
    let font = ("sans-serif", LABEL_SIZE).into_font();
    column
        .draw(&Text::new(
            "time to",
            (8, 30),
            font.clone()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Top)),
        ))
        .map_err(drawing)?;
    for (row, (percent, time)) in (0..).zip(marks) {
        let y = 54 + 22 * row;
        let text = match time {
            Some(time) => number_text(time),
            None => "not reached".to_string(),
        };
        column
            .draw(&Circle::new((14, y + 6), 4, marker.filled()))
            .map_err(drawing)?;
        column
            .draw(&Text::new(
                format!("{percent:.0}% fed"),
                (24, y),
                font.clone()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Top)),
            ))
            .map_err(drawing)?;
        let right = COLUMN_WIDTH as i32 - 12;
        column
            .draw(&Text::new(
                text,
                (right, y),
                font.clone()
                    .color(&marker)
                    .pos(Pos::new(HPos::Right, VPos::Top)),
            ))
            .map_err(drawing)?;
        let Some(time) = time else { continue };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(time, 0.0), (time, percent)],
                marker.mix(0.5),
            )))
            .map_err(drawing)?;
        chart
            .draw_series(std::iter::once(Circle::new(
                (time, percent),
                4,
                marker.filled(),
            )))
            .map_err(drawing)?;
    }
    root.present().map_err(drawing)?;
    Ok(())
}
