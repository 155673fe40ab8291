//! Geometry of Sharks World: the torus, its sector grid, straight-line motion, and the exact
//! times at which things touch.
//!
//! # Ground rules
//!
//! - **Positions are never integrated.** A creature's position at time `t` is always
//!   `start + velocity · t`, computed from its state at time 0, and every time below is the
//!   solution of an equation in those initial values. Nothing drifts however many sectors a
//!   creature crosses, and a sector and the brute-force oracle compute a contact time with the
//!   very same arithmetic.
//! - **Unwrapped coordinates.** A creature moves on the plane; the torus only appears as
//!   images: the sector grid repeats every `width × height`, and the distance between two
//!   creatures is the minimum over the images of one of them. Cells are indexed on the plane
//!   ([`Cell`], unbounded `i64`s) and folded onto sectors only to pick an LP.
//! - **Closed sets.** A sector is the closed rectangle between its grid lines, and a radius
//!   "reaches" a point at distance `≤ r`. So a point on a boundary belongs to every sector that
//!   touches it, which is what lets a sector hand an undecidable boundary case to its
//!   neighbour (see `sector.rs`).

/// The torus and its sector grid.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Grid {
    pub(crate) width: f64,
    pub(crate) height: f64,
    pub(crate) nx: u32,
    pub(crate) ny: u32,
}

/// A cell of the sector grid on the unwrapped plane: sector `(ci mod nx, cj mod ny)`, one of
/// its infinitely many images.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Cell {
    pub(crate) ci: i64,
    pub(crate) cj: i64,
}

/// A straight-line motion: position `(x, y)` at time 0 and constant velocity.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Motion {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) vx: f64,
    pub(crate) vy: f64,
}

impl Motion {
    /// Position at time `t` on the unwrapped plane.
    pub(crate) fn at(&self, t: f64) -> (f64, f64) {
        (self.x + self.vx * t, self.y + self.vy * t)
    }
}

/// The grid line `index · length / n`. Every sector and every image computes a line with this
/// one formula, so two neighbours always agree on where their common boundary is.
#[inline]
fn line(index: i64, length: f64, n: u32) -> f64 {
    index as f64 * length / f64::from(n)
}

/// The cell index along one axis of a point `p` moving with speed `v`: the `k` with
/// `line(k) ≤ p < line(k+1)`, except that a point exactly on a line and moving down belongs to
/// the cell below, which it is about to cross. So no creature starts with a residency of zero
/// length.
fn start_index(p: f64, v: f64, length: f64, n: u32) -> i64 {
    let mut k = (p * f64::from(n) / length).floor() as i64;
    // The division above can be off by one either way; settle it with the line formula.
    while line(k, length, n) > p {
        k -= 1;
    }
    while line(k + 1, length, n) <= p {
        k += 1;
    }
    if v < 0.0 && line(k, length, n) == p {
        k -= 1;
    }
    k
}

/// Time at which a motion along one axis leaves cell `k`, or infinity if it never does.
#[inline]
fn exit_time(p: f64, v: f64, k: i64, length: f64, n: u32) -> f64 {
    if v > 0.0 {
        (line(k + 1, length, n) - p) / v
    } else if v < 0.0 {
        (line(k, length, n) - p) / v
    } else {
        f64::INFINITY
    }
}

impl Grid {
    /// Number of sectors.
    pub(crate) fn sectors(&self) -> u32 {
        self.nx * self.ny
    }

    /// Width of one sector.
    pub(crate) fn sector_width(&self) -> f64 {
        self.width / f64::from(self.nx)
    }

    /// Height of one sector.
    pub(crate) fn sector_height(&self) -> f64 {
        self.height / f64::from(self.ny)
    }

    /// The LP (sector) of a cell: row-major, `j · nx + i`.
    pub(crate) fn sector_of(&self, cell: Cell) -> u32 {
        let i = cell.ci.rem_euclid(i64::from(self.nx)) as u32;
        let j = cell.cj.rem_euclid(i64::from(self.ny)) as u32;
        j * self.nx + i
    }

    /// The cell a motion starts in (see `start_index` for points on a boundary).
    pub(crate) fn start_cell(&self, m: &Motion) -> Cell {
        Cell {
            ci: start_index(m.x, m.vx, self.width, self.nx),
            cj: start_index(m.y, m.vy, self.height, self.ny),
        }
    }

    /// The closed rectangle `(x0, x1, y0, y1)` of a cell on the unwrapped plane.
    pub(crate) fn rect(&self, cell: Cell) -> (f64, f64, f64, f64) {
        (
            line(cell.ci, self.width, self.nx),
            line(cell.ci + 1, self.width, self.nx),
            line(cell.cj, self.height, self.ny),
            line(cell.cj + 1, self.height, self.ny),
        )
    }

    /// When a motion in `cell` leaves it, and the cell it enters. Infinite time if it never
    /// leaves. Through a corner (both axes at the same instant) it steps diagonally: the corner
    /// point belongs to the diagonal cell too, so nothing is missed.
    pub(crate) fn next_crossing(&self, m: &Motion, cell: Cell) -> (f64, Cell) {
        let tx = exit_time(m.x, m.vx, cell.ci, self.width, self.nx);
        let ty = exit_time(m.y, m.vy, cell.cj, self.height, self.ny);
        let t = tx.min(ty);
        let mut next = cell;
        if tx == t && t.is_finite() {
            next.ci += if m.vx > 0.0 { 1 } else { -1 };
        }
        if ty == t && t.is_finite() {
            next.cj += if m.vy > 0.0 { 1 } else { -1 };
        }
        (t, next)
    }

    /// The cells within distance `reach` of `cell` (on the unwrapped plane), row by row.
    /// One cell more than strictly needed on each side, so that a radius exactly reaching a
    /// far boundary is never left out by rounding.
    pub(crate) fn neighbourhood(&self, cell: Cell, reach: f64) -> impl Iterator<Item = Cell> {
        let kx = (reach / self.sector_width()).floor() as i64 + 1;
        let ky = (reach / self.sector_height()).floor() as i64 + 1;
        (cell.cj - ky..=cell.cj + ky)
            .flat_map(move |cj| (cell.ci - kx..=cell.ci + kx).map(move |ci| Cell { ci, cj }))
    }

    /// The interval of time during which a disk of radius `r` moving with `m` touches the
    /// closed rectangle of `cell` (one image of a sector), if ever.
    ///
    /// # Implementation
    ///
    /// The disk touches the rectangle exactly when its centre lies in the rectangle grown by
    /// `r`: a rounded rectangle, the union of two bars (grown horizontally, grown vertically)
    /// and four corner disks. That union is convex, so the centre's line meets it in one
    /// interval, whose ends are the smallest entry and largest exit over the six parts.
    pub(crate) fn reach_window(&self, m: &Motion, cell: Cell, r: f64) -> Option<(f64, f64)> {
        let (x0, x1, y0, y1) = self.rect(cell);
        let mut first = f64::INFINITY;
        let mut last = f64::NEG_INFINITY;
        let mut merge = |w: Option<(f64, f64)>| {
            if let Some((a, b)) = w {
                first = first.min(a);
                last = last.max(b);
            }
        };
        merge(box_window(m, x0 - r, x1 + r, y0, y1));
        merge(box_window(m, x0, x1, y0 - r, y1 + r));
        for (cx, cy) in [(x0, y0), (x1, y0), (x0, y1), (x1, y1)] {
            merge(disk_window(m.x - cx, m.y - cy, m.vx, m.vy, r));
        }
        (first <= last).then_some((first, last))
    }
}

/// When `p + v·t` lies in `[lo, hi]`: an interval, possibly infinite, or none.
#[inline]
fn slab(p: f64, v: f64, lo: f64, hi: f64) -> Option<(f64, f64)> {
    if v == 0.0 {
        (lo <= p && p <= hi).then_some((f64::NEG_INFINITY, f64::INFINITY))
    } else {
        let a = (lo - p) / v;
        let b = (hi - p) / v;
        Some((a.min(b), a.max(b)))
    }
}

/// When a moving point lies in the closed box `[x0, x1] × [y0, y1]`.
fn box_window(m: &Motion, x0: f64, x1: f64, y0: f64, y1: f64) -> Option<(f64, f64)> {
    let (ax, bx) = slab(m.x, m.vx, x0, x1)?;
    let (ay, by) = slab(m.y, m.vy, y0, y1)?;
    let (a, b) = (ax.max(ay), bx.min(by));
    (a <= b).then_some((a, b))
}

/// When `|d + v·t| ≤ r`: the closed interval between the roots of
/// `|v|² t² + 2 (d·v) t + |d|² − r² = 0`, or all time if `v = 0` and `|d| ≤ r`.
///
/// # Implementation
///
/// The discriminant is taken in its cross-product form `|v|² r² − (d × v)²`, which does not
/// cancel when `|d|` is large; the roots use the stable pair `q / |v|²` and `c / q` with
/// `q = −(d·v + sign(d·v) √disc)`, so neither loses digits to a subtraction. Exactly one root
/// is ≤ 0 when the point starts inside (the two have opposite signs), so "inside at time 0"
/// is never misjudged.
#[inline]
pub(crate) fn disk_window(dx: f64, dy: f64, vx: f64, vy: f64, r: f64) -> Option<(f64, f64)> {
    let a = vx * vx + vy * vy;
    let c = dx * dx + dy * dy - r * r;
    if a == 0.0 {
        return (c <= 0.0).then_some((f64::NEG_INFINITY, f64::INFINITY));
    }
    let dv = dx * vx + dy * vy;
    let cross = dx * vy - dy * vx;
    let disc = a * r * r - cross * cross;
    if disc < 0.0 {
        return None;
    }
    let root = disc.sqrt();
    let q = if dv >= 0.0 { -(dv + root) } else { -dv + root };
    if q == 0.0 {
        // d·v = 0 and a tangent line: a single instant.
        return Some((0.0, 0.0));
    }
    let (t1, t2) = (q / a, c / q);
    Some((t1.min(t2), t1.max(t2)))
}

/// The earliest `t` in `[lo, hi]` at which the toroidal distance between two motions is at
/// most `r`, if any.
///
/// # Implementation
///
/// The relative motion is `d(t) = (shark − fish)(0) + (v_shark − v_fish)·t`; the toroidal
/// distance is `min |d(t) + (k·width, m·height)|` over integer images `(k, m)`. For each `k`
/// whose x-offset can come within `r` during `[lo, hi]`, the sub-interval where it does bounds
/// the `m` worth trying; each image gives a [`disk_window`]. The bounds are padded by a
/// hair so that rounding cannot drop an image whose contact is a grazing one; an extra image
/// costs a little time, never a wrong answer, because every candidate is checked exactly.
pub(crate) fn first_contact(
    grid: &Grid,
    fish: &Motion,
    shark: &Motion,
    r: f64,
    lo: f64,
    hi: f64,
) -> Option<f64> {
    if lo > hi {
        return None;
    }
    let (w, h) = (grid.width, grid.height);
    let dx0 = shark.x - fish.x;
    let dy0 = shark.y - fish.y;
    let vx = shark.vx - fish.vx;
    let vy = shark.vy - fish.vy;
    let pad = r + 1e-9 * (w + h);
    let (xa, xb) = span(dx0, vx, lo, hi);
    let k_first = ((-pad - xb) / w).ceil() as i64;
    let k_last = ((pad - xa) / w).floor() as i64;
    let mut best = f64::INFINITY;
    for k in k_first..=k_last {
        let dx = image_offset(dx0, k, w);
        // When this x-image is within reach, at most: it bounds the y-images to try.
        let (tl, th) = match slab(dx, vx, -pad, pad) {
            Some((a, b)) => (a.max(lo), b.min(hi).min(best)),
            None => continue,
        };
        if tl > th {
            continue;
        }
        let (ya, yb) = span(dy0, vy, tl, th);
        let m_first = ((-pad - yb) / h).ceil() as i64;
        let m_last = ((pad - ya) / h).floor() as i64;
        for m in m_first..=m_last {
            let dy = image_offset(dy0, m, h);
            if let Some((t_in, t_out)) = disk_window(dx, dy, vx, vy, r) {
                let t = t_in.max(lo);
                if t <= t_out.min(hi) && t < best {
                    best = t;
                }
            }
        }
    }
    best.is_finite().then_some(best)
}

/// The offset of image `k` along one axis. One formula for the model and the oracle alike.
#[inline]
pub(crate) fn image_offset(d0: f64, k: i64, length: f64) -> f64 {
    d0 + k as f64 * length
}

/// The range of `d + v·t` over `t ∈ [lo, hi]`.
#[inline]
fn span(d: f64, v: f64, lo: f64, hi: f64) -> (f64, f64) {
    let (a, b) = (d + v * lo, d + v * hi);
    (a.min(b), a.max(b))
}

/// The shortest vector from `a` to `b` on the torus.
#[cfg(test)]
pub(crate) fn torus_delta(grid: &Grid, a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let wrap = |d: f64, l: f64| d - l * (d / l).round();
    (wrap(b.0 - a.0, grid.width), wrap(b.1 - a.1, grid.height))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRID: Grid = Grid {
        width: 100.0,
        height: 60.0,
        nx: 4,
        ny: 3,
    };

    fn dist(grid: &Grid, f: &Motion, s: &Motion, t: f64) -> f64 {
        let (dx, dy) = torus_delta(grid, f.at(t), s.at(t));
        dx.hypot(dy)
    }

    #[test]
    fn start_cell_on_lines_follows_the_velocity() {
        let m = |x, vx| Motion {
            x,
            y: 10.0,
            vx,
            vy: 0.0,
        };
        assert_eq!(GRID.start_cell(&m(25.0, 1.0)).ci, 1);
        assert_eq!(GRID.start_cell(&m(25.0, 0.0)).ci, 1);
        assert_eq!(GRID.start_cell(&m(25.0, -1.0)).ci, 0);
        assert_eq!(GRID.start_cell(&m(0.0, -1.0)).ci, -1);
        assert_eq!(GRID.sector_of(Cell { ci: -1, cj: 0 }), 3);
    }

    #[test]
    fn crossings_walk_the_cells_and_step_diagonally_at_corners() {
        let m = Motion {
            x: 0.0,
            y: 0.0,
            vx: 25.0,
            vy: 20.0,
        };
        let cell = GRID.start_cell(&m);
        assert_eq!(cell, Cell { ci: 0, cj: 0 });
        let (t, next) = GRID.next_crossing(&m, cell);
        assert_eq!(t, 1.0);
        assert_eq!(next, Cell { ci: 1, cj: 1 });
    }

    #[test]
    fn disk_window_matches_the_definition() {
        // Approaching head-on from x = -10 at speed 2, radius 4: inside during [3, 7].
        let (a, b) = disk_window(-10.0, 0.0, 2.0, 0.0, 4.0).unwrap();
        assert!((a - 3.0).abs() < 1e-12 && (b - 7.0).abs() < 1e-12);
        assert!(disk_window(-10.0, 5.0, 2.0, 0.0, 4.0).is_none());
        let (a, b) = disk_window(1.0, 1.0, 0.0, 0.0, 2.0).unwrap();
        assert!(a.is_infinite() && b.is_infinite());
        let (a, b) = disk_window(1.0, 0.0, 1.0, 0.0, 2.0).unwrap();
        assert!(a <= 0.0 && b > 0.0);
    }

    #[test]
    fn first_contact_agrees_with_dense_sampling() {
        use rand::{RngExt, SeedableRng};
        let mut rng = warpsim_core::LpRng::seed_from_u64(5);
        let mut found = 0;
        for _ in 0..400 {
            let mut motion = || Motion {
                x: rng.random::<f64>() * GRID.width,
                y: rng.random::<f64>() * GRID.height,
                vx: rng.random_range(-30.0..30.0),
                vy: rng.random_range(-30.0..30.0),
            };
            let (f, s) = (motion(), motion());
            let r = rng.random_range(0.5..20.0);
            let hi = 10.0;
            let got = first_contact(&GRID, &f, &s, r, 0.0, hi);
            // Sample densely: the contact must be a real one, and no sample before it may be
            // inside.
            let steps = 20_000;
            let first_inside = (0..=steps)
                .map(|i| hi * f64::from(i) / f64::from(steps))
                .find(|&t| dist(&GRID, &f, &s, t) <= r);
            match (got, first_inside) {
                (Some(t), Some(sample)) => {
                    found += 1;
                    assert!(t <= sample + 1e-9, "contact {t} after sample {sample}");
                    assert!(dist(&GRID, &f, &s, t) <= r + 1e-6);
                }
                (Some(t), None) => assert!(dist(&GRID, &f, &s, t) <= r + 1e-6),
                (None, Some(sample)) => panic!("missed a contact at {sample}"),
                (None, None) => {}
            }
        }
        assert!(found > 100);
    }

    #[test]
    fn reach_window_is_when_the_disk_touches_the_rectangle() {
        // Cell (1, 0) is [25, 50] × [0, 20]; a disk of radius 5 moving right along y = 10
        // from x = 0 touches it when its centre is in [20, 55].
        let m = Motion {
            x: 0.0,
            y: 10.0,
            vx: 1.0,
            vy: 0.0,
        };
        let (a, b) = GRID.reach_window(&m, Cell { ci: 1, cj: 0 }, 5.0).unwrap();
        assert!((a - 20.0).abs() < 1e-12 && (b - 55.0).abs() < 1e-12);
        // Passing above the corner (50, 20) at distance 3 < 5 along y = 23.
        let m = Motion {
            x: 60.0,
            y: 23.0,
            vx: -1.0,
            vy: 0.0,
        };
        let (a, _) = GRID.reach_window(&m, Cell { ci: 1, cj: 0 }, 5.0).unwrap();
        assert!((a - (10.0 - 4.0)).abs() < 1e-12);
    }
}
