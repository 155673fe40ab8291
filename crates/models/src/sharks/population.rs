//! The creatures: their type, a seeded random population, and the population CSV format.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rand::{RngExt, SeedableRng};
use warpsim_core::{LpRng, derive_seed};

use super::geometry::Motion;
use super::precision::{population_problem, short, show};
use super::{SharksError, SharksParams};
use crate::{ParamError, check_range};

/// Whether a creature eats or is eaten.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Eats every fish within its radius; never dies.
    Shark,
    /// Swims until a shark's radius reaches it.
    Fish,
}

impl Kind {
    /// The name used in population files: `shark` or `fish`.
    ///
    /// ```
    /// use warpsim_models::sharks::Kind;
    /// assert_eq!(Kind::Shark.name(), "shark");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Kind::Shark => "shark",
            Kind::Fish => "fish",
        }
    }
}

/// One shark or fish: where it is at time 0, its constant velocity, and (sharks only) its
/// attack radius.
///
/// ```
/// use warpsim_models::sharks::{Creature, Kind};
/// let shark = Creature::shark(1, 10.0, 20.0, 100.0, -50.0, 40.0);
/// assert_eq!(shark.kind, Kind::Shark);
/// assert_eq!(shark.position_at(2.0), (210.0, -80.0)); // unwrapped; the world is a torus
/// let fish = Creature::fish(2, 0.0, 0.0, 1.0, 1.0);
/// assert_eq!(fish.radius, 0.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Creature {
    /// Identifier, unique in a population; deaths name fish and sharks by it.
    pub id: u32,
    /// Shark or fish.
    pub kind: Kind,
    /// Position at time 0, in `[0, width)`.
    pub x: f64,
    /// Position at time 0, in `[0, height)`.
    pub y: f64,
    /// Velocity (units per time unit).
    pub vx: f64,
    /// Velocity (units per time unit).
    pub vy: f64,
    /// Attack radius (sharks); 0 for fish.
    pub radius: f64,
}

impl Creature {
    /// A shark.
    pub fn shark(id: u32, x: f64, y: f64, vx: f64, vy: f64, radius: f64) -> Creature {
        Creature {
            id,
            kind: Kind::Shark,
            x,
            y,
            vx,
            vy,
            radius,
        }
    }

    /// A fish (radius 0).
    pub fn fish(id: u32, x: f64, y: f64, vx: f64, vy: f64) -> Creature {
        Creature {
            id,
            kind: Kind::Fish,
            x,
            y,
            vx,
            vy,
            radius: 0.0,
        }
    }

    /// Position at time `t` on the unwrapped plane (reduce modulo the world size to get the
    /// position on the torus).
    pub fn position_at(&self, t: f64) -> (f64, f64) {
        self.motion().at(t)
    }

    pub(crate) fn motion(&self) -> Motion {
        Motion {
            x: self.x,
            y: self.y,
            vx: self.vx,
            vy: self.vy,
        }
    }
}

/// A random population, drawn from a seed before the run (outside the LPs, so that every
/// kernel starts from the same one).
///
/// Positions are uniform over the world, headings uniform, speeds uniform in
/// `[speed_min, speed_max]` and radii uniform in `[radius_min, radius_max]`. Exactly
/// `round(creatures × shark_fraction)` creatures are sharks, spread evenly over the ids.
///
/// The defaults are the paper's: speeds 50–200 in a 65536-wide world, half sharks. The paper
/// does not give the attack radius; the default 5 makes a default run (2048 creatures, 2000
/// time units) eat about half of the fish.
///
/// ```
/// use warpsim_models::sharks::{Kind, RandomPopulation, SharksParams};
/// let population = RandomPopulation { creatures: 10, ..RandomPopulation::default() };
/// let creatures = population.generate(&SharksParams::default(), 7).unwrap();
/// assert_eq!(creatures.len(), 10);
/// assert_eq!(creatures.iter().filter(|c| c.kind == Kind::Shark).count(), 5);
/// assert_eq!(creatures, population.generate(&SharksParams::default(), 7).unwrap());
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RandomPopulation {
    /// Number of creatures.
    pub creatures: u32,
    /// Fraction of them that are sharks.
    pub shark_fraction: f64,
    /// Smallest speed.
    pub speed_min: f64,
    /// Largest speed.
    pub speed_max: f64,
    /// Smallest shark radius.
    pub radius_min: f64,
    /// Largest shark radius.
    pub radius_max: f64,
}

/// The default attack radius (see [`RandomPopulation`]).
pub const DEFAULT_RADIUS: f64 = 5.0;

impl Default for RandomPopulation {
    fn default() -> Self {
        RandomPopulation {
            creatures: 2048,
            shark_fraction: 0.5,
            speed_min: 50.0,
            speed_max: 200.0,
            radius_min: DEFAULT_RADIUS,
            radius_max: DEFAULT_RADIUS,
        }
    }
}

/// The random stream the population is drawn from: distinct from every LP's stream (those
/// are numbered by LP id, which fits in 32 bits).
const POPULATION_STREAM: u64 = 1 << 40;

impl RandomPopulation {
    /// Checks the parameters against the world of `params`.
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter.
    pub fn validate(&self, params: &SharksParams) -> Result<(), ParamError> {
        check_range("shark-fraction", self.shark_fraction, 0.0, 1.0)?;
        check_range("speed-min", self.speed_min, 0.0, f64::MAX)?;
        check_range("speed-max", self.speed_max, self.speed_min, f64::MAX)?;
        let largest = params.width.max(params.height);
        check_range("radius-min", self.radius_min, 0.0, largest)?;
        check_range("radius-max", self.radius_max, self.radius_min, largest)?;
        // The precision bound (see `precision.rs`). Radii are drawn from
        // [radius-min, radius-max], so with any positive radius the smallest one that may be
        // drawn, radius-min, must be resolved too.
        let radius = if self.radius_max > 0.0 {
            self.radius_min
        } else {
            0.0
        };
        if params.precision_problem(self.speed_max, 0.0).is_some()
            && let Some(problem) = params.precision_problem(self.speed_max, radius)
        {
            return Err(ParamError::new("speed-max", problem));
        }
        // One radius for every shark is `--radius` on the command line.
        let radius_name = if self.radius_min == self.radius_max {
            "radius"
        } else {
            "radius-min"
        };
        if let Some(problem) = params.radius_problem(self.speed_max, radius) {
            return Err(ParamError::new(radius_name, problem));
        }
        if radius == 0.0 && self.radius_max > 0.0 {
            return Err(ParamError::new(
                "radius-min",
                format!(
                    "must be positive when radius-max is ({}): radii are drawn from \
                     [radius-min, radius-max], and one too small to compute exactly could be \
                     drawn (at least {}, see the sharks docs, Precision)",
                    show(self.radius_max),
                    short(params.smallest_length(self.speed_max))
                ),
            ));
        }
        if let Some(problem) = params.precision_problem(self.speed_max, radius) {
            return Err(ParamError::new("speed-max", problem));
        }
        Ok(())
    }

    /// Draws the population for `seed`.
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter.
    pub fn generate(&self, params: &SharksParams, seed: u64) -> Result<Vec<Creature>, ParamError> {
        params.validate()?;
        self.validate(params)?;
        let mut rng = LpRng::seed_from_u64(derive_seed(seed, POPULATION_STREAM));
        let n = u64::from(self.creatures);
        let sharks = (self.creatures as f64 * self.shark_fraction).round() as u64;
        let coordinate = |rng: &mut LpRng, length: f64| {
            // `u · length` can round up to `length` itself, which is outside the world.
            (rng.random::<f64>() * length).min(length.next_down())
        };
        let creatures = (0..self.creatures)
            .map(|id| {
                let i = u64::from(id);
                // Creature i is a shark when the running count of sharks steps up at i: exactly
                // `sharks` of them, evenly spread.
                let is_shark = (i + 1) * sharks / n > i * sharks / n;
                let x = coordinate(&mut rng, params.width);
                let y = coordinate(&mut rng, params.height);
                let speed =
                    self.speed_min + (self.speed_max - self.speed_min) * rng.random::<f64>();
                let heading = std::f64::consts::TAU * rng.random::<f64>();
                let (vx, vy) = (speed * heading.cos(), speed * heading.sin());
                if is_shark {
                    let radius =
                        self.radius_min + (self.radius_max - self.radius_min) * rng.random::<f64>();
                    Creature::shark(id, x, y, vx, vy, radius)
                } else {
                    Creature::fish(id, x, y, vx, vy)
                }
            })
            .collect();
        Ok(creatures)
    }
}

/// The header of a population file.
pub const POPULATION_HEADER: &str = "id,kind,x,y,vx,vy,radius";

/// Writes a population as CSV (header [`POPULATION_HEADER`]), with every number in its
/// shortest form that reads back to the same `f64`, so a written population replays exactly.
///
/// ```
/// use warpsim_models::sharks::{Creature, SharksParams, write_population};
/// let creatures = vec![Creature::shark(0, 1.5, 2.0, 3.0, -4.0, 10.0)];
/// let text = write_population(&creatures);
/// assert_eq!(text, "id,kind,x,y,vx,vy,radius\n0,shark,1.5,2,3,-4,10\n");
/// assert_eq!(SharksParams::default().read_population(&text).unwrap(), creatures);
/// ```
pub fn write_population(creatures: &[Creature]) -> String {
    let mut out = String::with_capacity(64 * (creatures.len() + 1));
    out.push_str(POPULATION_HEADER);
    out.push('\n');
    for c in creatures {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{}",
            c.id,
            c.kind.name(),
            c.x,
            c.y,
            c.vx,
            c.vy,
            c.radius
        );
    }
    out
}

/// Input echoed in a message: itself when short, else its start, an ellipsis and its length
/// (a 100 KB header is not repeated whole).
fn excerpt(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().count() <= 80 {
        return std::borrow::Cow::Borrowed(text);
    }
    let head: String = text.chars().take(48).collect();
    std::borrow::Cow::Owned(format!("{head}… ({} bytes)", text.len()))
}

fn line_error(line: usize, message: impl Into<String>) -> SharksError {
    SharksError::Line {
        line,
        message: message.into(),
    }
}

fn number(line: usize, name: &str, field: &str) -> Result<f64, SharksError> {
    let value: f64 = field
        .parse()
        .map_err(|_| line_error(line, format!("{name} `{}` is not a number", excerpt(field))))?;
    if !value.is_finite() {
        return Err(line_error(
            line,
            format!("{name} `{}` is not a finite number", excerpt(field)),
        ));
    }
    Ok(value)
}

impl SharksParams {
    /// Reads a population CSV: the header [`POPULATION_HEADER`], then one creature per line.
    /// `kind` is `shark` or `fish`; a fish's radius is ignored (it may be empty). Blank lines
    /// and lines starting with `#` are skipped.
    ///
    /// # Errors
    ///
    /// [`SharksError::Line`] naming the first bad line: a missing header, a wrong number of
    /// fields, a field that is not a (finite) number, an unknown kind, a negative or too large
    /// radius, a creature outside the world `[0, width) × [0, height)`, or a duplicate id.
    ///
    /// ```
    /// use warpsim_models::sharks::SharksParams;
    /// let params = SharksParams::default();
    /// let error = params.read_population("id,kind,x,y,vx,vy,radius\n1,shark,1,2,3,4,-5\n");
    /// assert_eq!(
    ///     error.unwrap_err().to_string(),
    ///     "line 2: radius `-5` must not be negative"
    /// );
    /// ```
    pub fn read_population(&self, text: &str) -> Result<Vec<Creature>, SharksError> {
        let mut creatures = Vec::new();
        let mut lines = Vec::new();
        let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
        let mut header = false;
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let trimmed = raw.trim().trim_start_matches('\u{feff}');
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            if !header {
                let names: Vec<&str> = trimmed.split(',').map(str::trim).collect();
                if names.join(",") != POPULATION_HEADER {
                    return Err(line_error(
                        line,
                        format!(
                            "expected the header `{POPULATION_HEADER}`, got `{}`",
                            excerpt(trimmed)
                        ),
                    ));
                }
                header = true;
                continue;
            }
            let fields: Vec<&str> = trimmed.split(',').map(str::trim).collect();
            if fields.len() != 7 {
                return Err(line_error(
                    line,
                    format!(
                        "expected 7 fields ({POPULATION_HEADER}), got {}",
                        fields.len()
                    ),
                ));
            }
            let id: u32 = fields[0].parse().map_err(|_| {
                line_error(
                    line,
                    format!(
                        "id `{}` is not an integer in 0..=4294967295",
                        excerpt(fields[0])
                    ),
                )
            })?;
            let kind = match fields[1].to_ascii_lowercase().as_str() {
                "shark" => Kind::Shark,
                "fish" => Kind::Fish,
                other => {
                    return Err(line_error(
                        line,
                        format!("kind `{}` is neither `shark` nor `fish`", excerpt(other)),
                    ));
                }
            };
            let x = number(line, "x", fields[2])?;
            let y = number(line, "y", fields[3])?;
            let vx = number(line, "vx", fields[4])?;
            let vy = number(line, "vy", fields[5])?;
            let creature = match kind {
                Kind::Fish => Creature::fish(id, x, y, vx, vy),
                Kind::Shark => {
                    let radius = number(line, "radius", fields[6])?;
                    Creature::shark(id, x, y, vx, vy, radius)
                }
            };
            if let Err(message) = self.check_creature(&creature, Some(fields[6])) {
                return Err(line_error(line, message));
            }
            if let Some(first) = seen.insert(id, line) {
                return Err(line_error(
                    line,
                    format!("duplicate id {id} (first on line {first})"),
                ));
            }
            creatures.push(creature);
            lines.push(line);
        }
        if let Some((index, problem)) = population_problem(self, &creatures) {
            return Err(line_error(lines[index], problem));
        }
        if !header {
            return Err(line_error(
                1,
                format!("empty population file: expected the header `{POPULATION_HEADER}`"),
            ));
        }
        Ok(creatures)
    }

    /// Checks a population built in code (a file is checked by
    /// [`read_population`](SharksParams::read_population)): finite numbers, radii in
    /// `[0, max(width, height)]`, positions in the world, unique ids.
    ///
    /// # Errors
    ///
    /// [`SharksError::Creature`] naming the first bad creature.
    ///
    /// ```
    /// use warpsim_models::sharks::{Creature, SharksParams};
    /// let params = SharksParams::default();
    /// let twins = [Creature::fish(3, 1.0, 1.0, 0.0, 0.0), Creature::fish(3, 2.0, 2.0, 0.0, 0.0)];
    /// assert_eq!(params.check_population(&twins).unwrap_err().to_string(), "creature 3: duplicate id");
    /// ```
    pub fn check_population(&self, creatures: &[Creature]) -> Result<(), SharksError> {
        let mut seen = std::collections::BTreeSet::new();
        for creature in creatures {
            let fail = |message: String| SharksError::Creature {
                id: creature.id,
                message,
            };
            self.check_creature(creature, None).map_err(fail)?;
            if !seen.insert(creature.id) {
                return Err(fail("duplicate id".to_string()));
            }
        }
        if let Some((index, message)) = population_problem(self, creatures) {
            return Err(SharksError::Creature {
                id: creatures[index].id,
                message,
            });
        }
        Ok(())
    }

    /// The checks of one creature that need the world; `radius_text` is the field as written,
    /// for messages.
    fn check_creature(&self, c: &Creature, radius_text: Option<&str>) -> Result<(), String> {
        for (name, value) in [("x", c.x), ("y", c.y), ("vx", c.vx), ("vy", c.vy)] {
            if !value.is_finite() {
                return Err(format!("{name} {value} is not a finite number"));
            }
        }
        if c.kind == Kind::Shark {
            let shown =
                radius_text.map_or_else(|| show(c.radius), |text| excerpt(text).into_owned());
            let largest = self.width.max(self.height);
            if !c.radius.is_finite() {
                return Err(format!("radius `{shown}` is not a finite number"));
            }
            if c.radius < 0.0 {
                return Err(format!("radius `{shown}` must not be negative"));
            }
            if c.radius > largest {
                return Err(format!(
                    "radius `{shown}` is larger than the world ({})",
                    show(largest)
                ));
            }
        }
        if !(0.0..self.width).contains(&c.x) || !(0.0..self.height).contains(&c.y) {
            return Err(format!(
                "{} {} at ({}, {}) is outside the world [0, {}) × [0, {})",
                c.kind.name(),
                c.id,
                show(c.x),
                show(c.y),
                show(self.width),
                show(self.height)
            ));
        }
        Ok(())
    }
}
