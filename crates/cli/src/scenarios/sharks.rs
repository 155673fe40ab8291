//! `warpsim run sharks`: Sharks World, with population files, a deaths CSV, an SVG of the world
//! at the end, and `--verify` against the brute-force oracle.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use clap::Args;
use plotters::prelude::*;
use serde_json::{Value, json};
use warpsim_models::sharks::{
    CancelStyle, Creature, Death, Kind, RandomPopulation, Sector, SharksParams, Tally,
    compare_deaths, oracle, write_deaths, write_population,
};

use super::BuiltinModel;
use crate::cli::KernelArgs;
use crate::files::{FileSet, write_text};
use crate::limits::{Demand, lp_bytes, vec_bytes};
use crate::run::{Outcome, run_config, run_on_kernel};

/// Sharks World's flags: the model's parameters and the random population's (declared in
/// `warpsim-models`; defaults are the paper's runs with a radius of 5, which eats about half
/// the fish), and the files.
#[derive(Debug, Clone, Args)]
pub(crate) struct Sharks {
    #[command(flatten)]
    pub(crate) random: RandomPopulation,
    #[command(flatten)]
    pub(crate) params: SharksParams,
    /// Read the population from a CSV file (id,kind,x,y,vx,vy,radius) instead of drawing it.
    #[arg(long, value_name = "FILE.csv",
          conflicts_with_all = ["creatures", "shark_fraction", "speed_min", "speed_max", "radius", "radius_min", "radius_max"])]
    pub(crate) population: Option<PathBuf>,
    /// Write the population to a CSV file (replay it with --population).
    #[arg(long, value_name = "FILE.csv")]
    pub(crate) dump_population: Option<PathBuf>,
    /// Write the deaths to a CSV file (fish,shark,time; sorted by fish id).
    #[arg(long, value_name = "FILE.csv")]
    pub(crate) deaths: Option<PathBuf>,
    /// Draw the world at the end as SVG: sectors, sharks and their radii, live fish, deaths.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) plot: Option<PathBuf>,
    /// Check the deaths against the brute-force oracle; fail if they differ.
    #[arg(long)]
    pub(crate) verify: bool,
}

impl Sharks {
    /// The population: read from `--population`, or drawn from `seed`.
    fn population(&self, params: &SharksParams, seed: u64) -> Result<Vec<Creature>> {
        match &self.population {
            Some(path) => {
                // A population is parsed into creatures of about the file's size: read at
                // most a quarter of the memory available.
                let limit = crate::limits::available_bytes().map_or(u64::MAX, |bytes| bytes / 4);
                let text = crate::files::read_text(path, limit)?;
                params
                    .read_population(&text)
                    .map_err(|error| anyhow!("{}: {error}", path.display()))
            }
            None => Ok(self.random.generate(params, seed)?),
        }
    }
}

impl BuiltinModel for Sharks {
    const NAME: &'static str = "sharks";
    type Kernel = KernelArgs;

    fn default_seed(&self) -> u64 {
        7
    }

    fn title(&self) -> String {
        let population = match &self.population {
            Some(path) => format!("population {}", path.display()),
            None => {
                let random = &self.random;
                let radius = if random.radius_min == random.radius_max {
                    format!("radius {}", random.radius_min)
                } else {
                    format!("radius {}-{}", random.radius_min, random.radius_max)
                };
                format!(
                    "{} creatures ({}% sharks), speed {}-{}, {radius}",
                    random.creatures,
                    100.0 * random.shark_fraction,
                    random.speed_min,
                    random.speed_max
                )
            }
        };
        let params = &self.params;
        format!(
            "Sharks World: {population}, world {}x{}, sectors {}x{}, end {}, cancel {}, work {}",
            params.width,
            params.height,
            params.sectors_x,
            params.sectors_y,
            params.end,
            match params.cancel {
                CancelStyle::App => "app",
                CancelStyle::Kernel => "kernel",
            },
            params.work
        )
    }

    fn params(&self) -> Value {
        let mut params = serde_json::to_value(&self.params).unwrap_or(Value::Null);
        if let Value::Object(fields) = &mut params {
            match &self.population {
                Some(path) => {
                    fields.insert("population".into(), Value::from(path.display().to_string()));
                }
                None => {
                    if let Ok(Value::Object(random)) = serde_json::to_value(&self.random) {
                        fields.extend(random);
                    }
                }
            }
        }
        params
    }

    fn validate(&self) -> Result<()> {
        let params = &self.params;
        params.validate()?;
        if self.population.is_none() {
            self.random.validate(params)?;
        }
        Ok(())
    }

    fn files(&self, files: FileSet) -> FileSet {
        files
            .input("--population", self.population.as_ref())
            .output("--dump-population", self.dump_population.as_ref())
            .output("--deaths", self.deaths.as_ref())
            .output("--plot", self.plot.as_ref())
    }

    fn demands(&self) -> Vec<Demand> {
        let params = &self.params;
        let mut demands = vec![Demand::new(
            "--sectors",
            format!("{}x{}", params.sectors_x, params.sectors_y),
            "sectors",
            u128::from(params.sectors_x) * u128::from(params.sectors_y),
            lp_bytes::<Sector>(),
        )];
        if self.population.is_none() {
            // Each creature is in the population and in its first sector's list.
            demands.push(Demand::new(
                "--creatures",
                self.random.creatures,
                "creatures",
                u128::from(self.random.creatures),
                2 * vec_bytes::<Creature>(),
            ));
        }
        demands
    }

    fn run_once(&self, kernel: &KernelArgs, seed: u64, primary: bool) -> Result<Outcome> {
        let params = &self.params;
        let creatures = self.population(params, seed)?;
        if primary && let Some(path) = &self.dump_population {
            write_text(path, &write_population(&creatures))?;
        }
        let lps = params.build(&creatures)?;
        let config = run_config(kernel, seed, params.kernel_end_time());
        let mut tally = Tally::default();
        let result = run_on_kernel(kernel, config, lps, &mut tally, primary)?;
        let mut outcome = Outcome::from_result(result);
        let deaths = tally.sorted_deaths();
        describe(params, &creatures, &tally, &deaths, &mut outcome);
        if !primary || outcome.error.is_some() {
            // A failed run writes no deaths: its error line says how far it got.
            return Ok(outcome);
        }
        let partial = (tally.settled != params.sectors()).then(|| {
            format!(
                "PARTIAL: the run stopped at --max-events {} (time {}) with {} of {} sectors \
                 settled; deaths after that time are missing",
                outcome.report.events_committed,
                outcome.report.end_time,
                tally.settled,
                params.sectors()
            )
        });
        if let Some(path) = &self.deaths {
            // A partial file says so on its first line, which CSV readers must skip on
            // purpose (`#` comment), so partial deaths are never taken for complete ones.
            let mut text = String::new();
            if let Some(partial) = &partial {
                let _ = writeln!(text, "# {partial}");
            }
            text.push_str(&write_deaths(&deaths));
            write_text(path, &text)?;
        }
        if let Some(path) = &self.plot {
            plot_world(path, params, &creatures, &deaths, partial.is_some())?;
        }
        if self.verify {
            if outcome.error.is_some() || tally.settled != params.sectors() {
                bail!("verify: the run did not finish, so its deaths are incomplete");
            }
            let expected = oracle(params, &creatures)?;
            let mismatches = compare_deaths(params, &creatures, &deaths, &expected);
            if let Some(first) = mismatches.first() {
                bail!(
                    "verify failed: {} fish disagree with the brute-force oracle (first: {first})",
                    mismatches.len()
                );
            }
            outcome.metrics.insert("verified".into(), Value::from(true));
            let _ = writeln!(
                outcome.text,
                "verify            {} deaths match the brute-force oracle",
                deaths.len()
            );
        }
        Ok(outcome)
    }
}

/// The model's figures: into the JSON metrics and the readable lines.
fn describe(
    params: &SharksParams,
    creatures: &[Creature],
    tally: &Tally,
    deaths: &[Death],
    outcome: &mut Outcome,
) {
    let sharks = creatures.iter().filter(|c| c.kind == Kind::Shark).count();
    let fish = creatures.len() - sharks;
    let stats = &tally.stats;
    let report = &outcome.report;
    let events = report.events_committed;
    let granularity_us = if events > 0 {
        report.wall_seconds * 1e6 / events as f64
    } else {
        0.0
    };
    let eaten_fraction = if fish > 0 {
        deaths.len() as f64 / fish as f64
    } else {
        0.0
    };
    let metrics = &mut outcome.metrics;
    metrics.insert("creatures".into(), Value::from(creatures.len()));
    metrics.insert("sharks".into(), Value::from(sharks));
    metrics.insert("fish".into(), Value::from(fish));
    metrics.insert("sectors".into(), Value::from(params.sectors()));
    metrics.insert(
        "sector_grid".into(),
        Value::from(format!("{}x{}", params.sectors_x, params.sectors_y)),
    );
    metrics.insert(
        "events_by_kind".into(),
        json!({
            "fish_arrival": stats.fish_arrivals,
            "shark_arrival": stats.shark_arrivals,
            "shark_sighting": stats.shark_sightings,
            "withdrawal_message": stats.withdraw_messages,
            "settle": stats.settles,
        }),
    );
    metrics.insert("withdrawals".into(), Value::from(stats.withdrawals));
    metrics.insert(
        "ignored_arrivals".into(),
        Value::from(stats.ignored_arrivals),
    );
    metrics.insert("death_revisions".into(), Value::from(stats.revisions));
    metrics.insert("fish_eaten".into(), Value::from(deaths.len()));
    metrics.insert("eaten_fraction".into(), Value::from(eaten_fraction));
    metrics.insert("granularity_us".into(), Value::from(granularity_us));
    metrics.insert("peak_fish_per_sector".into(), Value::from(stats.peak_fish));
    metrics.insert(
        "peak_sharks_per_sector".into(),
        Value::from(stats.peak_sharks),
    );
    metrics.insert(
        "complete".into(),
        Value::from(tally.settled == params.sectors()),
    );
    if let Some(cp) = &report.critical_path {
        metrics.insert("available_parallelism".into(), Value::from(cp.parallelism));
    }

    let mut text = String::new();
    let _ = writeln!(
        text,
        "creatures         {} ({sharks} sharks, {fish} fish) in {} sectors ({}x{})",
        creatures.len(),
        params.sectors(),
        params.sectors_x,
        params.sectors_y
    );
    let _ = writeln!(
        text,
        "events by kind    fish arrivals {}, shark arrivals {}, shark sightings {}, withdraw messages {}, settles {}",
        stats.fish_arrivals,
        stats.shark_arrivals,
        stats.shark_sightings,
        stats.withdraw_messages,
        stats.settles
    );
    let _ = writeln!(
        text,
        "withdrawals       {} (ignored arrivals {}, deaths taken over by an earlier shark {})",
        stats.withdrawals, stats.ignored_arrivals, stats.revisions
    );
    let _ = writeln!(
        text,
        "fish eaten        {} of {fish} ({:.1}%)",
        deaths.len(),
        100.0 * eaten_fraction
    );
    let _ = writeln!(text, "granularity       {granularity_us:.3} µs per event");
    if let Some(cp) = &report.critical_path {
        let _ = writeln!(
            text,
            "parallelism       {:.2} available (critical path), at most {} (the sectors)",
            cp.parallelism,
            params.sectors()
        );
    }
    if tally.settled != params.sectors() {
        let _ = writeln!(
            text,
            "incomplete        the run stopped early: {} of {} sectors settled, deaths are partial",
            tally.settled,
            params.sectors()
        );
    }
    outcome.text.push_str(&text);
}

/// A plotters error as a one-line anyhow error.
fn drawing<E: std::fmt::Display>(error: E) -> anyhow::Error {
    anyhow!("plot: {error}")
}

/// The part of segment `a`–`b` inside `[0, w] × [0, h]` (Liang–Barsky), if any.
fn clip(a: (f64, f64), b: (f64, f64), w: f64, h: f64) -> Option<((f64, f64), (f64, f64))> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, a.0), (dx, w - a.0), (-dy, a.1), (dy, h - a.1)] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    (t0 <= t1).then_some((
        (a.0 + t0 * dx, a.1 + t0 * dy),
        (a.0 + t1 * dx, a.1 + t1 * dy),
    ))
}

/// The world at the end: sector grid, sharks with their radius circles (wrapped across the
/// edges), live fish, and crosses where fish died.
fn plot_world(
    path: &Path,
    params: &SharksParams,
    creatures: &[Creature],
    deaths: &[Death],
    partial: bool,
) -> Result<()> {
    let mut svg = String::new();
    draw_world(&mut svg, params, creatures, deaths, partial)?;
    write_text(path, &svg)
}

fn draw_world(
    svg: &mut String,
    params: &SharksParams,
    creatures: &[Creature],
    deaths: &[Death],
    partial: bool,
) -> Result<()> {
    let (w, h) = (params.width, params.height);
    let side = 900u32;
    let size = if w >= h {
        (side, ((f64::from(side) * h / w) as u32).max(200))
    } else {
        (((f64::from(side) * w / h) as u32).max(200), side)
    };
    let wrap = |(x, y): (f64, f64)| (x.rem_euclid(w), y.rem_euclid(h));
    let died: std::collections::BTreeMap<u32, f64> =
        deaths.iter().map(|d| (d.fish, d.time)).collect();
    let live_fish = creatures
        .iter()
        .filter(|c| c.kind == Kind::Fish && !died.contains_key(&c.id))
        .count();
    let sharks: Vec<&Creature> = creatures.iter().filter(|c| c.kind == Kind::Shark).collect();

    // The legend gets a strip of its own under the world, clear of the creatures.
    let legend_strip = 34;
    let root = SVGBackend::with_string(svg, (size.0, size.1 + legend_strip)).into_drawing_area();
    root.fill(&WHITE).map_err(drawing)?;
    let (world_area, legend_area) = root.split_vertically(size.1);
    let title = format!(
        "Sharks World at t = {}: {} sharks, {live_fish} live fish, {} eaten (x){}",
        params.end,
        sharks.len(),
        deaths.len(),
        if partial {
            " — PARTIAL: stopped at --max-events"
        } else {
            ""
        }
    );
    let mut chart = ChartBuilder::on(&world_area)
        .caption(title, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..w, 0.0..h)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_label_formatter(&|x| crate::analysis::plots::tick_text(*x))
        .y_label_formatter(&|y| crate::analysis::plots::tick_text(*y))
        .draw()
        .map_err(drawing)?;

    let grid_style = RGBColor(190, 190, 190).stroke_width(1);
    let mut lines = Vec::new();
    for i in 0..=params.sectors_x {
        let x = f64::from(i) * w / f64::from(params.sectors_x);
        lines.push(vec![(x, 0.0), (x, h)]);
    }
    for j in 0..=params.sectors_y {
        let y = f64::from(j) * h / f64::from(params.sectors_y);
        lines.push(vec![(0.0, y), (w, y)]);
    }
    chart
        .draw_series(
            lines
                .into_iter()
                .map(|line| PathElement::new(line, grid_style)),
        )
        .map_err(drawing)?;

    // Radius circles, drawn as clipped polygons so that a circle across an edge of the torus
    // shows on both sides.
    let pixels_per_unit = f64::from(chart.plotting_area().dim_in_pixel().0) / w;
    let shark_colour = RGBColor(213, 94, 0);
    let mut segments = Vec::new();
    for shark in &sharks {
        let (cx, cy) = wrap(shark.position_at(params.end));
        let radius_px = shark.radius * pixels_per_unit;
        if radius_px < 1.5 {
            continue;
        }
        let steps = (radius_px as usize).clamp(12, 72);
        for (ox, oy) in [-1.0, 0.0, 1.0]
            .iter()
            .flat_map(|&i| [-1.0, 0.0, 1.0].map(move |j| (i * w, j * h)))
        {
            let (x, y) = (cx + ox, cy + oy);
            if x + shark.radius < 0.0
                || x - shark.radius > w
                || y + shark.radius < 0.0
                || y - shark.radius > h
            {
                continue;
            }
            let point = |k: usize| {
                let angle = std::f64::consts::TAU * k as f64 / steps as f64;
                (
                    x + shark.radius * angle.cos(),
                    y + shark.radius * angle.sin(),
                )
            };
            for k in 0..steps {
                if let Some((a, b)) = clip(point(k), point(k + 1), w, h) {
                    segments.push(vec![a, b]);
                }
            }
        }
    }
    chart
        .draw_series(
            segments
                .into_iter()
                .map(|segment| PathElement::new(segment, shark_colour.stroke_width(1))),
        )
        .map_err(drawing)?;
    chart
        .draw_series(sharks.iter().map(|shark| {
            Circle::new(
                wrap(shark.position_at(params.end)),
                3,
                shark_colour.filled(),
            )
        }))
        .map_err(drawing)?;
    let fish_colour = RGBColor(0, 114, 178);
    chart
        .draw_series(
            creatures
                .iter()
                .filter(|c| c.kind == Kind::Fish && !died.contains_key(&c.id))
                .map(|fish| {
                    Circle::new(wrap(fish.position_at(params.end)), 2, fish_colour.filled())
                }),
        )
        .map_err(drawing)?;
    let dead_colour = RGBColor(90, 90, 90);
    chart
        .draw_series(creatures.iter().filter_map(|c| {
            let time = died.get(&c.id)?;
            Some(Cross::new(
                wrap(c.position_at(*time)),
                3,
                dead_colour.stroke_width(1),
            ))
        }))
        .map_err(drawing)?;
    let font = ("sans-serif", 12).into_font().color(&BLACK);
    let y = (legend_strip / 2) as i32;
    legend_area
        .draw(&Circle::new((70, y), 3, shark_colour.filled()))
        .map_err(drawing)?;
    legend_area
        .draw(&Text::new("shark", (80, y - 6), font.clone()))
        .map_err(drawing)?;
    legend_area
        .draw(&Circle::new((170, y), 2, fish_colour.filled()))
        .map_err(drawing)?;
    legend_area
        .draw(&Text::new("live fish", (180, y - 6), font.clone()))
        .map_err(drawing)?;
    legend_area
        .draw(&Cross::new((290, y), 3, dead_colour.stroke_width(1)))
        .map_err(drawing)?;
    legend_area
        .draw(&Text::new("where a fish was eaten", (300, y - 6), font))
        .map_err(drawing)?;
    root.present().map_err(drawing)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_clipped_to_the_world() {
        assert_eq!(
            clip((-1.0, 5.0), (11.0, 5.0), 10.0, 10.0),
            Some(((0.0, 5.0), (10.0, 5.0)))
        );
        assert_eq!(clip((-5.0, -5.0), (-1.0, 20.0), 10.0, 10.0), None);
    }
}
