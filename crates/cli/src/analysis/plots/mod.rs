//! SVG plots with plotters: the pets completion curve, sweep panels with confidence bands,
//! and the speedup curves.
//!
//! The SVG backend writes text as SVG `<text>` elements, so no font files are needed (the
//! build leaves out plotters' TrueType support). Text widths are estimated
//! ([`text_width`]), generously, and every label is placed with that estimate so that none
//! runs off the picture: titles wrap, point labels move to the side of their point that has
//! room, and legends sit in a column of their own beside the data.
//!
//! # Ground rules
//!
//! - Numbers carry meaningful digits ([`number_text`], [`tick_text`]): no `200000.0`, no
//!   sixteen decimals.
//! - An axis of whole numbers (a swept feeder count, processors) gets whole-number ticks.
//! - One kind of quantity per axis: a sweep of several metrics draws a panel per metric
//!   (percentiles of one quantity share a panel).
//! - `scripts/render-plots.sh` draws every plot the CLI makes and renders it to PNG.

mod completion;
mod speedup;
mod sweep;

pub(crate) use completion::completion_curve;
pub(crate) use speedup::{SpeedupPlot, SpeedupSeries, ratio_text, speedup_curves};
pub(crate) use sweep::{Series, sweep_curves};

use anyhow::anyhow;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of every plot, in pixels.
pub(crate) const WIDTH: u32 = 960;

/// Colours of successive series: Wong's colour-blind-safe seven (Nature Methods, 2011), then
/// three darker tones, so that a panel's first ten curves all differ.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(136, 34, 85),
    RGBColor(68, 119, 17),
    RGBColor(119, 119, 119),
];

/// Size of a title's text, in pixels.
pub(crate) const TITLE_SIZE: u32 = 16;

/// A plotters error as a one-line anyhow error.
pub(crate) fn drawing<E: std::fmt::Display>(error: E) -> anyhow::Error {
    anyhow!("plot: {error}")
}

/// The width `text` takes at `size` pixels in a sans-serif font, over-estimated: 0.62 em a
/// character (digits and most lower-case letters are narrower, about 0.55 em in DejaVu Sans
/// and Liberation Sans, which renderers substitute for `sans-serif`).
pub(crate) fn text_width(text: &str, size: u32) -> f64 {
    text.chars().count() as f64 * f64::from(size) * 0.62
}

/// `value` with meaningful digits: whole numbers from 10 000 up, four significant digits
/// below, no trailing zeros (`565250.58` → `565251`, `53.0125` → `53.01`, `2.0` → `2`).
pub(crate) fn number_text(value: f64) -> String {
    if !value.is_finite() {
        return "-".to_string();
    }
    if value.abs() >= 1e4 || value == value.round() && value.abs() < 1e15 {
        return format!("{value:.0}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (3 - magnitude).clamp(0, 12) as usize;
    trim_zeros(format!("{value:.decimals$}"))
}

/// A tick label: the tick's value with at most six significant digits and no trailing
/// zeros, so that ticks at whole numbers print as whole numbers (`200000`, `2`, `0.25`).
pub(crate) fn tick_text(value: f64) -> String {
    if !value.is_finite() {
        return String::new();
    }
    if value == 0.0 {
        return "0".to_string();
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (5 - magnitude).clamp(0, 12) as usize;
    trim_zeros(format!("{value:.decimals$}"))
}

/// A tick label on an axis of whole numbers: the number, or nothing between them.
pub(crate) fn whole_tick_text(value: f64) -> String {
    if (value - value.round()).abs() < 1e-9 {
        format!("{value:.0}")
    } else {
        String::new()
    }
}

fn trim_zeros(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Whether every value is a whole number (so the axis gets whole-number ticks).
pub(crate) fn all_whole(values: impl IntoIterator<Item = f64>) -> bool {
    values
        .into_iter()
        .all(|value| value.is_finite() && (value - value.round()).abs() < 1e-9)
}

/// `text` cut into lines of at most `width` pixels at `size`, at spaces.
pub(crate) fn wrap(text: &str, size: u32, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if text_width(&candidate, size) > width && !line.is_empty() {
            lines.push(std::mem::take(&mut line));
            line = word.to_string();
        } else {
            line = candidate;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Draws `title` (wrapped to the width) at the top of `area` and returns the area below it.
pub(crate) fn draw_title<'a>(
    area: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
    subtitle: Option<&str>,
) -> anyhow::Result<DrawingArea<SVGBackend<'a>, Shift>> {
    let width = f64::from(area.dim_in_pixel().0) - 32.0;
    let mut lines: Vec<(String, u32, RGBAColor)> = wrap(title, TITLE_SIZE, width)
        .into_iter()
        .map(|line| (line, TITLE_SIZE, BLACK.to_rgba()))
        .collect();
    if let Some(subtitle) = subtitle {
        lines.extend(
            wrap(subtitle, 12, width)
                .into_iter()
                .map(|line| (line, 12, BLACK.mix(0.7))),
        );
    }
    let mut y = 10;
    for (line, size, colour) in &lines {
        let style = ("sans-serif", *size)
            .into_font()
            .color(colour)
            .pos(Pos::new(HPos::Center, VPos::Top));
        area.draw(&Text::new(
            line.clone(),
            (area.dim_in_pixel().0 as i32 / 2, y),
            style,
        ))
        .map_err(drawing)?;
        y += *size as i32 + 5;
    }
    Ok(area.split_vertically(y + 6).1)
}

/// One legend entry: its text and how its sample is drawn.
pub(crate) struct LegendEntry {
    pub(crate) label: String,
    pub(crate) colour: RGBColor,
    pub(crate) stroke: u32,
}

/// The width a legend column needs for `labels` (at most `max` pixels).
pub(crate) fn legend_width(labels: impl IntoIterator<Item = impl AsRef<str>>, max: f64) -> u32 {
    let widest = labels
        .into_iter()
        .map(|label| text_width(label.as_ref(), LEGEND_SIZE))
        .fold(0.0f64, f64::max);
    (widest + 48.0).min(max) as u32
}

const LEGEND_SIZE: u32 = 12;

/// Draws a legend in `area` (a column beside the plot, so it never covers data), entries
/// from `top` down; labels too long for the column are wrapped.
pub(crate) fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    top: i32,
    entries: &[LegendEntry],
) -> anyhow::Result<()> {
    let text_room = f64::from(area.dim_in_pixel().0) - 40.0;
    let mut y = top;
    for entry in entries {
        area.draw(&PathElement::new(
            vec![(6, y + 7), (28, y + 7)],
            entry.colour.stroke_width(entry.stroke),
        ))
        .map_err(drawing)?;
        for line in wrap(&entry.label, LEGEND_SIZE, text_room) {
            area.draw(&Text::new(
                line,
                (34, y),
                ("sans-serif", LEGEND_SIZE)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Top)),
            ))
            .map_err(drawing)?;
            y += LEGEND_SIZE as i32 + 4;
        }
        y += 6;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod svg_check {
    //! Checks on the SVG text of a plot: every `<text>` inside the picture, no `.0` tick.

    /// Each `<text>` element: its x, its anchor, its font size and its content.
    pub(crate) fn texts(svg: &str) -> Vec<(f64, String, f64, String)> {
        let mut found = Vec::new();
        for piece in svg.split("<text").skip(1) {
            let Some((attrs, rest)) = piece.split_once('>') else {
                continue;
            };
            let content = rest
                .split("</text>")
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            if attrs.contains("rotate(") {
                // Vertical: an axis title, placed by plotters inside its label area.
                continue;
            }
            let attr = |name: &str| -> Option<String> {
                let start = attrs.find(&format!(" {name}=\""))? + name.len() + 3;
                let end = attrs[start..].find('"')? + start;
                Some(attrs[start..end].to_string())
            };
            let x: f64 = attr("x").and_then(|x| x.parse().ok()).unwrap_or(0.0);
            let anchor = attr("text-anchor").unwrap_or_else(|| "start".to_string());
            let size: f64 = attr("font-size")
                .and_then(|size| size.trim_end_matches("px").parse().ok())
                .unwrap_or(12.0);
            found.push((x, anchor, size, content));
        }
        found
    }

    /// The picture's width.
    fn width(svg: &str) -> f64 {
        let start = svg.find("width=\"").expect("an svg width") + 7;
        let end = svg[start..].find('"').expect("end of width") + start;
        svg[start..end].parse().expect("a numeric width")
    }

    /// Panics, naming it, at the first text that (by a generous estimate of its width) runs
    /// past either edge of the picture, or that is a number with a needless `.0`.
    pub(crate) fn assert_readable(svg: &str) {
        let width = width(svg);
        let texts = texts(svg);
        assert!(!texts.is_empty(), "no text in the plot");
        for (x, anchor, size, content) in texts {
            let w = content.chars().count() as f64 * size * 0.55;
            let (left, right) = match anchor.as_str() {
                "end" => (x - w, x),
                "middle" => (x - w / 2.0, x + w / 2.0),
                _ => (x, x + w),
            };
            assert!(
                left >= 0.0 && right <= width,
                "text {content:?} spans {left:.0}..{right:.0}, outside 0..{width}"
            );
            let number = content.trim();
            assert!(
                !(number.ends_with(".0") && number.parse::<f64>().is_ok()),
                "tick {content:?} prints a whole number with `.0`"
            );
            if let Some((_, decimals)) = number.split_once('.')
                && number.parse::<f64>().is_ok()
            {
                assert!(decimals.len() <= 6, "{content:?} has too many digits");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_carry_meaningful_digits() {
        assert_eq!(number_text(565250.5803618476), "565251");
        assert_eq!(number_text(53.0125), "53.01");
        assert_eq!(number_text(2.0), "2");
        assert_eq!(number_text(0.000123456), "0.0001235");
        assert_eq!(tick_text(200000.0), "200000");
        assert_eq!(tick_text(0.25), "0.25");
        assert_eq!(tick_text(0.30000000000000004), "0.3");
        assert_eq!(whole_tick_text(3.0), "3");
        assert_eq!(whole_tick_text(2.5), "");
    }

    fn summary(values: &[f64]) -> crate::analysis::statistics::Summary {
        crate::analysis::statistics::Summary::of(values).expect("values")
    }

    #[test]
    fn completion_labels_stay_inside_and_carry_few_digits() {
        use warpsim_models::pets::{CurvePoint, PetsResult};
        // A long tail: 95 % early, 100 % at the far right, as the article's runs have it.
        let tasks = 1000;
        let curve: Vec<CurvePoint> = (1..=tasks)
            .map(|fed| CurvePoint {
                time: if fed <= 950 {
                    fed as f64 * 112.7
                } else {
                    107069.0 + (fed - 950) as f64 * 9163.6
                },
                fed,
            })
            .collect();
        let result = PetsResult::from_curve(tasks, curve, 0, 0);
        let mut svg = String::new();
        let title = "Feeding pets (events style): 1000000 pets, 10 feeders, break chance 0.05, \
                     repair time 120, eating time 15, normal durations, corrected semantics";
        completion::completion_curve_svg(&mut svg, title, &result).unwrap();
        svg_check::assert_readable(&svg);
        let texts = svg_check::texts(&svg);
        let labels: Vec<&str> = texts
            .iter()
            .map(|(_, _, _, text)| text.as_str())
            .filter(|text| text.ends_with("% fed"))
            .collect();
        assert_eq!(labels.len(), 4, "{labels:?}");
        assert!(
            texts.iter().any(|(_, _, _, text)| text == "565249"),
            "{texts:?}"
        );
    }

    #[test]
    fn sweep_panels_have_whole_ticks_and_one_kind_per_axis() {
        let series: Vec<Series> = ["fed", "breakdowns", "p50", "p100"]
            .iter()
            .enumerate()
            .map(|(index, metric)| Series {
                metric: metric.to_string(),
                label: metric.to_string(),
                points: (2..=6)
                    .map(|gates| {
                        let y = 200000.0 * (index + 1) as f64 / f64::from(gates);
                        (f64::from(gates), summary(&[y, y * 1.01, y * 0.99]))
                    })
                    .collect(),
            })
            .collect();
        let mut svg = String::new();
        sweep::sweep_curves_svg(&mut svg, "pets sweep over gates", "gates", &series).unwrap();
        svg_check::assert_readable(&svg);
        // Three panels: fed, breakdowns, and the percentiles together.
        assert_eq!(svg.matches("(mean, band: 95% CI)").count(), 3, "{svg}");
        assert!(svg.contains("p50, p100 (mean"));
        let texts = svg_check::texts(&svg);
        for gates in ["2", "3", "4", "5", "6"] {
            assert!(
                texts.iter().any(|(_, _, _, text)| text == gates),
                "no tick {gates}"
            );
        }
        assert!(!texts.iter().any(|(_, _, _, text)| text == "2.5"));
    }

    #[test]
    fn speedup_plot_text_stays_inside() {
        let plot = SpeedupPlot {
            title: "Sharks World speedup, 3 runs per point (1234567 events)".into(),
            subtitle: "Sharks World: 2048 creatures (50% sharks), speed 50-200, radius 5, \
                       world 65536x65536, sectors 8x8, end 2000, cancel app, work 0, and \
                       more words to make it wrap past the width of the picture"
                .into(),
            cores: 2,
            bound: 12.1,
            bound_unit: 12.8,
            series: vec![SpeedupSeries {
                label: "timewarp lazy".into(),
                points: vec![
                    (1.0, 0.38, 0.3, 0.4),
                    (2.0, 0.55, 0.5, 0.6),
                    (4.0, 0.5, 0.4, 0.6),
                ],
            }],
        };
        let mut svg = String::new();
        speedup::speedup_curves_svg(&mut svg, &plot).unwrap();
        svg_check::assert_readable(&svg);
    }

    #[test]
    fn long_titles_wrap_within_the_width() {
        let title = "word ".repeat(100);
        let lines = wrap(title.trim(), 16, 500.0);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|line| text_width(line, 16) <= 500.0));
        assert_eq!(lines.join(" "), title.trim());
    }
}
