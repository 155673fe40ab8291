//! Sharks World (Presley, Reiher & Bellenot, "A Time Warp implementation of Sharks World"),
//! built as the paper builds it.
//!
//! Sharks and fish swim in straight lines at constant velocity on a torus. A shark eats any
//! fish within its attack radius; fish die, sharks never do, and nothing else interacts. The
//! world is split into `sectors_x × sectors_y` sectors, and **the sectors are the only LPs**:
//! creatures are rows in the sectors' lists, not objects.
//!
//! - Each [`Sector`] keeps its fish (live and dead) and the sharks that may eat in it: its own
//!   and the *visible* ones, whose radius reaches into it.
//! - The only events are boundary crossings ([`EventKind`]): a fish or a shark entering a
//!   sector, and a shark's radius first reaching into one. Eating is not an event.
//! - When a fish enters, the sector decides which shark eats it and when, or sends its
//!   arrival to the next sector. When a shark becomes visible, the sector checks its live
//!   **and dead** fish, since it may reach a "dead" fish before its supposed eater; a live
//!   fish it eats has its already-sent arrival withdrawn, by the kernel's `cancel`
//!   ([`CancelStyle::Kernel`]) or by the paper's "ignore that message" message
//!   ([`CancelStyle::App`]).
//! - Lists are garbage-collected at every event; a death is emitted ([`SharksOutput::Death`])
//!   once no event can change it any more.
//!
//! The [`oracle`] computes the same deaths by brute force; [`compare_deaths`] checks one
//! against the other.
//!
//! # Example
//!
//! ```
//! use warpsim_core::{Kernel, RunConfig, Sequential};
//! use warpsim_models::sharks::{RandomPopulation, SharksParams, Tally, oracle, compare_deaths};
//!
//! let params = SharksParams { end: 500.0, ..SharksParams::default() };
//! let population = RandomPopulation { creatures: 256, radius_min: 200.0, radius_max: 400.0, ..RandomPopulation::default() };
//! let creatures = population.generate(&params, 7).unwrap();
//!
//! let mut tally = Tally::default();
//! let kernel = Sequential::new(RunConfig::new(7).end_time(params.kernel_end_time()));
//! let report = kernel.run(params.build(&creatures).unwrap(), &mut tally).unwrap();
//!
//! let deaths = tally.sorted_deaths();
//! assert!(!deaths.is_empty());
//! assert_eq!(tally.stats.events(), report.events_committed);
//! let expected = oracle(&params, &creatures).unwrap();
//! assert!(compare_deaths(&params, &creatures, &deaths, &expected).is_empty());
//! ```
//!
//! # Design
//!
//! **Exact, not stepped.** Every time in the model — a crossing, the moment a radius reaches a
//! sector, a contact — is solved from the creatures' initial states (see `geometry.rs`), so the
//! sector model and the oracle compute contacts with the same arithmetic and agree to the
//! last bit in all but knife-edge ties.
//!
//! **Ready for Time Warp.** All state is in the sectors, the model draws no random numbers
//! (the population is drawn before the run), lists are scanned in insertion order, and
//! results leave only through `emit`. Simultaneous events are common (many creatures cross at
//! once); the sector's rules never depend on how the kernel orders them, only on the
//! deterministic `(time, age, src, seq)` order being the same on every kernel. The ground
//! rules at the top of `sector.rs` give the argument.
//!
//! **Precision.** Over a run the geometry's numbers reach the span
//! `L = width + height + 2 · speed_max · end`, which `f64` resolves to `ε·L` (`ε` =
//! [`f64::EPSILON`]). A run must resolve a millionth ([`RESOLUTION`]) of its smallest length —
//! a sector's side and every positive attack radius — so populations with
//! `ε·L > 10⁻⁶ · min(sector side, smallest positive radius)` are refused with the reason
//! ([`SharksParams::max_speed`], [`SharksParams::smallest_length`]): the paper's speeds (50–200)
//! are about 28 000 times below the bound, while a creature at `vx = 1e308` would overflow
//! every computed time. The derivation is in `precision.rs`.
//!
//! **The end.** Contacts count up to and including `end`; nothing is sent after it. Each sector
//! has a last `Settle` event at the first `f64` after `end` that flushes its deaths and emits
//! its [`SectorStats`]; run the kernel to [`SharksParams::kernel_end_time`].

#[cfg(feature = "clap")]
mod flags;
mod geometry;
mod oracle;
mod population;
mod precision;
mod sector;

use std::fmt::Write as _;

use warpsim_core::{Committed, OutputSink};

use crate::{ParamError, check_range};
use geometry::Grid;

pub use oracle::{DeathMismatch, compare_deaths, oracle, times_agree};
pub use population::{
    Creature, DEFAULT_RADIUS, Kind, POPULATION_HEADER, RandomPopulation, write_population,
};
pub use precision::RESOLUTION;
pub use sector::{Death, EventKind, Sector, SectorStats, SharksEvent, SharksOutput};

/// How a sector withdraws the arrival it sent for a fish that then turned out to die first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum CancelStyle {
    /// The paper's way (TWOS had no cancel primitive): send the next sector a message telling
    /// it to ignore the arrival. One more event per withdrawal.
    #[default]
    App,
    /// warpsim's `Ctx::cancel(handle)`: the arrival is removed from the pending set (on Time
    /// Warp, annihilated or rolled back by the kernel). No extra event.
    Kernel,
}

/// What can be wrong with a Sharks World setup.
///
/// None of these can be recovered within the run: fix the input and start again.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SharksError {
    /// A model parameter is out of range.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A line of a population file is malformed (lines count from 1).
    #[error("line {line}: {message}")]
    Line {
        /// The line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A creature of a population built in code is invalid.
    #[error("creature {id}: {message}")]
    Creature {
        /// The creature's id.
        id: u32,
        /// What is wrong with it.
        message: String,
    },
}

/// Sharks World's parameters (the population is separate: see [`RandomPopulation`] and
/// [`SharksParams::read_population`]). The defaults are the paper's runs: a 65536 × 65536
/// world in 8 × 8 sectors, 2000 time units.
///
/// ```
/// use warpsim_models::sharks::SharksParams;
/// let params = SharksParams { sectors_x: 0, ..SharksParams::default() };
/// assert_eq!(params.validate().unwrap_err().to_string(), "sectors: must be at least 1x1 (got 0x8)");
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SharksParams {
    /// World width.
    pub width: f64,
    /// World height.
    pub height: f64,
    /// Sectors across.
    pub sectors_x: u32,
    /// Sectors down.
    pub sectors_y: u32,
    /// End of simulated time; contacts at `end` still count.
    pub end: f64,
    /// How withdrawals are done.
    pub cancel: CancelStyle,
    /// Busy-work iterations per event (the paper's "delay loops").
    pub work: u32,
}

impl Default for SharksParams {
    fn default() -> Self {
        SharksParams {
            width: 65536.0,
            height: 65536.0,
            sectors_x: 8,
            sectors_y: 8,
            end: 2000.0,
            cancel: CancelStyle::App,
            work: 0,
        }
    }
}

/// Most sectors a world may have (a million LPs).
const MAX_SECTORS: u64 = 1 << 20;

impl SharksParams {
    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_range("world", self.width, f64::MIN_POSITIVE, 1e12)?;
        check_range("world", self.height, f64::MIN_POSITIVE, 1e12)?;
        if self.sectors_x == 0 || self.sectors_y == 0 {
            return Err(ParamError::new(
                "sectors",
                format!(
                    "must be at least 1x1 (got {}x{})",
                    self.sectors_x, self.sectors_y
                ),
            ));
        }
        let sectors = u64::from(self.sectors_x) * u64::from(self.sectors_y);
        if sectors > MAX_SECTORS {
            return Err(ParamError::new(
                "sectors",
                format!(
                    "at most {MAX_SECTORS} sectors (got {}x{})",
                    self.sectors_x, self.sectors_y
                ),
            ));
        }
        check_range("end", self.end, 0.0, 1e12)?;
        Ok(())
    }

    pub(crate) fn grid(&self) -> Grid {
        Grid {
            width: self.width,
            height: self.height,
            nx: self.sectors_x,
            ny: self.sectors_y,
        }
    }

    /// Number of sectors (LPs).
    pub fn sectors(&self) -> u32 {
        self.sectors_x.saturating_mul(self.sectors_y)
    }

    /// The end time to give the kernel: just after every sector's `Settle` event (which comes
    /// just after `end`), so the run drains.
    ///
    /// ```
    /// let params = warpsim_models::sharks::SharksParams::default();
    /// assert!(params.kernel_end_time() > params.end);
    /// assert!(params.kernel_end_time() - params.end < 1e-9);
    /// ```
    pub fn kernel_end_time(&self) -> f64 {
        self.end.next_up().next_up()
    }

    /// Checks the parameters and the population, and makes the sectors, row by row
    /// (sector `(i, j)` is LP `j · sectors_x + i`, covering `[i·w, (i+1)·w] × [j·h, (j+1)·h]`
    /// with `w × h` the sector size). Each sector starts with the creatures inside it and
    /// the sharks whose radius reaches into it at time 0.
    ///
    /// # Errors
    ///
    /// A [`SharksError`] for a bad parameter or creature.
    pub fn build(&self, creatures: &[Creature]) -> Result<Vec<Sector>, SharksError> {
        self.validate()?;
        self.check_population(creatures)?;
        let grid = self.grid();
        let fastest = creatures
            .iter()
            .map(|c| c.vx.hypot(c.vy))
            .fold(0.0, f64::max);
        // A billionth of the largest coordinate any position reaches: far above rounding
        // error, far below anything a user could mean (ground rule 3 of `sector.rs`).
        let slack = 1e-9 * (self.width + self.height + 2.0 * fastest * self.end);
        let setup = sector::Setup {
            grid,
            end: self.end,
            settle: self.end.next_up(),
            slack,
            cancel: self.cancel,
            work: self.work,
        };
        let mut sectors = vec![Sector::new(setup); grid.sectors() as usize];
        for creature in creatures {
            let motion = creature.motion();
            let cell = grid.start_cell(&motion);
            let home = grid.sector_of(cell) as usize;
            match creature.kind {
                Kind::Fish => sectors[home].add_start_fish(*creature, cell),
                Kind::Shark => {
                    sectors[home].add_start_shark(*creature, cell);
                    let reach = creature.radius + slack;
                    for other in grid.neighbourhood(cell, reach) {
                        if let Some((from, until)) = grid.reach_window(&motion, other, reach)
                            && from <= 0.0
                            && until >= 0.0
                        {
                            sectors[grid.sector_of(other) as usize].add_visible(*creature, until);
                        }
                    }
                }
            }
        }
        Ok(sectors)
    }
}

/// An output sink that keeps the deaths and adds up the sectors' statistics.
///
/// ```
/// use warpsim_models::sharks::Tally;
/// let tally = Tally::default();
/// assert!(tally.sorted_deaths().is_empty());
/// assert_eq!(tally.settled, 0);
/// ```
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    /// Deaths in the order they were emitted.
    pub deaths: Vec<Death>,
    /// All sectors' statistics merged.
    pub stats: SectorStats,
    /// How many sectors reported (all of them, unless the run was cut short).
    pub settled: u32,
}

impl Tally {
    /// The deaths sorted by fish id.
    pub fn sorted_deaths(&self) -> Vec<Death> {
        let mut deaths = self.deaths.clone();
        deaths.sort_by(|a, b| a.fish.cmp(&b.fish).then(a.time.total_cmp(&b.time)));
        deaths
    }
}

impl OutputSink<SharksOutput> for Tally {
    fn deliver(&mut self, output: Committed<SharksOutput>) {
        match output.output {
            SharksOutput::Death(death) => self.deaths.push(death),
            SharksOutput::Stats(stats) => {
                self.stats.merge(&stats);
                self.settled += 1;
            }
        }
    }
}

/// The header of a deaths file.
pub const DEATHS_HEADER: &str = "fish,shark,time";

/// Writes deaths as CSV (`fish,shark,time`), in the order given. Times are written so that
/// they read back to the same `f64`, and with at least 9 significant digits.
///
/// ```
/// use warpsim_models::sharks::{Death, write_deaths};
/// let text = write_deaths(&[Death { fish: 2, shark: 1, time: 12.5 }]);
/// assert_eq!(text, "fish,shark,time\n2,1,12.5000000\n");
/// ```
pub fn write_deaths(deaths: &[Death]) -> String {
    let mut out = String::with_capacity(32 * (deaths.len() + 1));
    out.push_str(DEATHS_HEADER);
    out.push('\n');
    for death in deaths {
        let _ = writeln!(
            out,
            "{},{},{}",
            death.fish,
            death.shark,
            format_time(death.time)
        );
    }
    out
}

/// The shortest decimal that reads back to `t`, padded with zeros to 9 significant digits.
fn format_time(t: f64) -> String {
    let mut text = format!("{t}");
    if t == 0.0 || !t.is_finite() {
        return text;
    }
    let significant = text
        .chars()
        .filter(char::is_ascii_digit)
        .skip_while(|&c| c == '0')
        .count();
    if significant < 9 {
        if !text.contains('.') {
            text.push('.');
        }
        text.extend(std::iter::repeat_n('0', 9 - significant));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::format_time;

    #[test]
    fn times_have_nine_significant_digits_and_round_trip() {
        for (t, text) in [
            (12.5, "12.5000000"),
            (2000.0, "2000.00000"),
            (0.0001234, "0.000123400000"),
            (1.0 / 3.0, "0.3333333333333333"),
            (0.0, "0"),
        ] {
            assert_eq!(format_time(t), text);
            assert_eq!(format_time(t).parse::<f64>().unwrap(), t);
        }
    }
}
