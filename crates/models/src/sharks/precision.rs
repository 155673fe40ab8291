//! How fast is too fast: the bound that keeps Sharks World's floating-point geometry exact.
//!
//! # The arithmetic
//!
//! Every time in the model is solved from the creatures' initial states (`geometry.rs`): a
//! contact from the relative motion `d(t) = d₀ + k·(width, height) + v·t` of a fish and an
//! image of a shark, a crossing from `(line − x) / vx`. Over a run the numbers in these
//! formulas reach the *span*
//!
//! ```text
//! L = width + height + 2 · speed_max · end
//! ```
//!
//! (a relative displacement: two creatures at the largest speed, heading apart, for the whole
//! run, plus the world's own extent), and `f64` represents numbers of size `L` only to within
//! `ε·L` (`ε = 2.2·10⁻¹⁶`, [`f64::EPSILON`]). The discriminant of the contact quadratic is
//! taken in its cross-product form and its roots in the stable pair (see `disk_window`), so
//! the error of a computed distance stays a small multiple of `ε·L`: positions, and thus
//! contacts, are resolved to about `ε·L` — no better.
//!
//! # The bound
//!
//! Sharks World is exact (the sector model and the brute-force oracle agree, except at
//! knife-edge ties) while that resolution is a millionth ([`RESOLUTION`]) of the smallest
//! length the run must tell apart: the side of a sector, and every positive attack radius.
//! So a run needs
//!
//! ```text
//! ε · L ≤ 10⁻⁶ · ℓ,   ℓ = min(sector width, sector height, smallest positive radius)
//! ```
//!
//! that is, `speed_max ≤ (10⁻⁶ · ℓ / ε − width − height) / (2 · end)`. With the default world
//! (65536², 8 × 8 sectors, end 2000) and radius 5 this allows speeds up to 5.6 million — the
//! paper's are 50 to 200. A radius of 0 (contact only on exact collision) is always allowed.
//!
//! The same margin covers the other uses of the span: the sectors announce sharks a hair early
//! (`slack = 10⁻⁹ · L`, ground rule 3 of `sector.rs`), which stays 4.5 million times above the
//! rounding error and below 4.5 ℓ; and an event's time may differ from its geometric crossing
//! by an ulp of time, `ε · end`, which a creature covers in `speed · ε · end ≤ ε · L / 2`, far
//! below the slack.
//!
//! Past the bound the model and the oracle go on agreeing with each other for a while — they
//! round the same formulas the same way (measured: 40-creature bands at `L / r` up to 2·10¹⁷
//! give identical deaths) — but they agree on rounding noise: at `L / r ≈ 4.5·10¹⁵` the error
//! `ε·L` reaches the radius itself, and which fish a shark "reaches" is no longer a property
//! of the creatures. Far past it (a speed of 10³⁰⁸) the span overflows to infinity, the
//! sectors' slack with it, and the model loses fish the oracle counts (issue 17). The bound
//! refuses all of that with one margin, six decimal digits before the radius is reached.
//!
//! The cost of a run is another matter: a creature crosses about `speed · end / sector side`
//! sector boundaries, each an event. That grows with the speed however exact the arithmetic
//! is; `--max-events` caps it.

use super::SharksParams;
use super::population::{Creature, Kind};

/// The resolution a run needs, as a fraction of the smallest length it must tell apart.
pub const RESOLUTION: f64 = 1e-6;

impl SharksParams {
    /// The span `L = width + height + 2 · speed · end` of a run whose fastest creature moves at
    /// `speed` (see the module docs): the size of the largest numbers its geometry computes.
    pub fn span(&self, speed: f64) -> f64 {
        self.width + self.height + 2.0 * speed * self.end
    }

    /// The smallest length a run whose fastest creature moves at `speed` resolves: `ε · L`
    /// over [`RESOLUTION`]. Sectors and positive radii must be at least this long.
    ///
    /// ```
    /// use warpsim_models::sharks::SharksParams;
    /// let params = SharksParams::default(); // 65536² world, end 2000
    /// let smallest = params.smallest_length(200.0);
    /// assert!(smallest > 1e-4 && smallest < 1e-3);
    /// ```
    pub fn smallest_length(&self, speed: f64) -> f64 {
        self.span(speed) * f64::EPSILON / RESOLUTION
    }

    /// The largest speed the geometry resolves when the smallest positive attack radius is
    /// `radius` (0: no radius to resolve, only the sectors); 0 when even a creature at rest
    /// would not be resolved, infinite when nothing moves (`end` is 0).
    ///
    /// ```
    /// use warpsim_models::sharks::SharksParams;
    /// let params = SharksParams::default();
    /// let fastest = params.max_speed(5.0);
    /// assert!(fastest > 5e6 && fastest < 6e6);
    /// assert!(params.max_speed(0.0) > fastest); // then only the 8192-wide sectors count
    /// ```
    pub fn max_speed(&self, radius: f64) -> f64 {
        let smallest = self.smallest_resolved(radius);
        if self.end == 0.0 {
            return f64::INFINITY;
        }
        let span = smallest * RESOLUTION / f64::EPSILON;
        ((span - self.width - self.height) / (2.0 * self.end)).max(0.0)
    }

    /// ℓ: the sectors' sides and `radius` when it is positive.
    fn smallest_resolved(&self, radius: f64) -> f64 {
        let grid = self.grid();
        let sector = grid.sector_width().min(grid.sector_height());
        if radius > 0.0 {
            sector.min(radius)
        } else {
            sector
        }
    }

    /// Why a run with creatures up to `speed` fast and a smallest positive radius `radius`
    /// (0 for none) is beyond the bound, if it is: `<speed> is too fast …`.
    pub(crate) fn precision_problem(&self, speed: f64, radius: f64) -> Option<String> {
        let needed = self.smallest_length(speed);
        let smallest = self.smallest_resolved(radius);
        if needed <= smallest {
            return None;
        }
        let resolution = self.span(speed) * f64::EPSILON;
        let limit = self.max_speed(radius);
        let by = if radius > 0.0 && radius <= smallest {
            format!("the radius {}", show(radius))
        } else {
            format!("the {}-wide sectors", show(smallest))
        };
        Some(format!(
            "{} is too fast to compute exactly: over the run positions reach {:.3e} \
             (width + height + 2 × speed × end), which f64 resolves only to {:.2e}, and Sharks \
             World needs a millionth of its smallest length ({by}); at most {} here",
            show(speed),
            self.span(speed),
            resolution,
            short(limit)
        ))
    }
}

/// A computed number for a message, to four significant digits.
pub(crate) fn short(value: f64) -> String {
    if value.is_finite() && value != 0.0 && (1e-4..1e7).contains(&value.abs()) {
        let decimals = (3 - value.abs().log10().floor() as i32).max(0) as usize;
        format!("{value:.decimals$}")
    } else {
        format!("{value:.3e}")
    }
}

/// A number for a message: plain when of ordinary size, else in scientific notation (Rust
/// prints `1e308` with all its 309 digits otherwise).
pub(crate) fn show(value: f64) -> String {
    if value != 0.0 && !(1e-4..1e7).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

impl SharksParams {
    /// Why a positive `radius` is too small for a run with creatures up to `speed` fast, if
    /// it is: `<radius> is below …`.
    pub(crate) fn radius_problem(&self, speed: f64, radius: f64) -> Option<String> {
        let needed = self.smallest_length(speed);
        (radius > 0.0 && radius < needed).then(|| {
            let limit = self.max_speed(radius);
            format!(
                "{} is below {}, the smallest length a run with speeds up to {} computes \
                 exactly (see the sharks docs, Precision): use a radius of 0 or at least that, \
                 or {}",
                show(radius),
                short(needed),
                show(speed),
                if limit > 0.0 {
                    format!("speeds up to {}", short(limit))
                } else {
                    "a smaller world".to_string()
                }
            )
        })
    }
}

/// Which creature of a population breaks the bound, and why, if one does: the fastest one
/// when even the sectors are not resolved at its speed, else the shark with the smallest
/// positive radius. Returns the creature's index and the message.
pub(crate) fn population_problem(
    params: &SharksParams,
    creatures: &[Creature],
) -> Option<(usize, String)> {
    let speed = |c: &Creature| c.vx.hypot(c.vy);
    let (fastest, top) = creatures
        .iter()
        .enumerate()
        .map(|(index, c)| (index, speed(c)))
        .fold(
            (0, 0.0f64),
            |best, (index, v)| if v > best.1 { (index, v) } else { best },
        );
    let smallest = creatures
        .iter()
        .enumerate()
        .filter(|(_, c)| c.kind == Kind::Shark && c.radius > 0.0)
        .min_by(|a, b| a.1.radius.total_cmp(&b.1.radius));
    let radius = smallest.map_or(0.0, |(_, shark)| shark.radius);
    if params.precision_problem(top, 0.0).is_some() {
        // Too fast even for the sectors: the speed is at fault.
        let problem = params.precision_problem(top, radius)?;
        return Some((fastest, format!("speed {problem}")));
    }
    let (index, _) = smallest?;
    params
        .radius_problem(top, radius)
        .map(|problem| (index, format!("radius {problem}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_where_the_resolution_meets_a_millionth_of_the_smallest_length() {
        let params = SharksParams::default();
        let limit = params.max_speed(5.0);
        // At the bound, ε·L is exactly a millionth of the radius.
        let resolution = params.span(limit) * f64::EPSILON;
        assert!((resolution / 5e-6 - 1.0).abs() < 1e-9, "{resolution}");
        assert!(params.precision_problem(limit * 0.999, 5.0).is_none());
        let message = params.precision_problem(limit * 1.001, 5.0).unwrap();
        assert!(message.contains("the radius 5"), "{message}");
        assert!(params.precision_problem(1e308, 5.0).is_some());
        assert!(params.precision_problem(f64::MAX, 0.0).is_some());
        // Nothing moves after time 0: any finite speed is exact.
        let still = SharksParams {
            end: 0.0,
            ..SharksParams::default()
        };
        assert!(still.precision_problem(1e300, 5.0).is_none());
    }
}
