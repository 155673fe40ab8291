//! The brute-force oracle: every fish against every shark, no sectors, no events.

use std::fmt;

use super::geometry::first_contact;
use super::population::{Creature, Kind};
use super::sector::Death;
use super::{SharksError, SharksParams};

/// The deaths of a population, computed by brute force: for every fish, the earliest contact
/// with any shark over `[0, end]` (a tie goes to the lower shark id), found by solving the
/// quadratic of their relative motion over the torus images. Sorted by fish id.
///
/// This is the definition the sector model must agree with; it costs `O(fish × sharks ×
/// images)` and knows nothing of sectors, events or withdrawals.
///
/// # Errors
///
/// A [`SharksError`] for bad parameters or a bad population.
///
/// ```
/// use warpsim_models::sharks::{Creature, SharksParams, oracle};
/// let params = SharksParams { width: 100.0, height: 100.0, end: 10.0, ..SharksParams::default() };
/// let creatures = [
///     Creature::shark(0, 10.0, 50.0, 0.0, 0.0, 5.0),
///     // Swims right from x = 95, wraps around at 100 and meets the radius at x = 5.
///     Creature::fish(1, 95.0, 50.0, 10.0, 0.0),
/// ];
/// let deaths = oracle(&params, &creatures).unwrap();
/// assert_eq!(deaths.len(), 1);
/// assert_eq!((deaths[0].fish, deaths[0].shark), (1, 0));
/// assert!((deaths[0].time - 1.0).abs() < 1e-12);
/// ```
pub fn oracle(params: &SharksParams, creatures: &[Creature]) -> Result<Vec<Death>, SharksError> {
    params.validate()?;
    params.check_population(creatures)?;
    let grid = params.grid();
    let mut sharks: Vec<&Creature> = creatures.iter().filter(|c| c.kind == Kind::Shark).collect();
    sharks.sort_by_key(|c| c.id);
    let mut fish: Vec<&Creature> = creatures.iter().filter(|c| c.kind == Kind::Fish).collect();
    fish.sort_by_key(|c| c.id);
    let mut deaths = Vec::new();
    for f in fish {
        let motion = f.motion();
        let mut best: Option<(f64, u32)> = None;
        for s in &sharks {
            // Sharks come in id order, so a later one must be strictly earlier to win; and
            // no contact after the best so far can matter, which keeps the search short.
            let horizon = best.map_or(params.end, |(t, _)| t);
            if let Some(t) = first_contact(&grid, &motion, &s.motion(), s.radius, 0.0, horizon)
                && best.is_none_or(|(bt, _)| t < bt)
            {
                best = Some((t, s.id));
            }
        }
        if let Some((time, shark)) = best {
            deaths.push(Death {
                fish: f.id,
                shark,
                time,
            });
        }
    }
    Ok(deaths)
}

/// Where the model and the oracle disagree about one fish.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeathMismatch {
    /// The fish.
    pub fish: u32,
    /// The model's verdict (`None`: survives).
    pub model: Option<Death>,
    /// The oracle's verdict.
    pub oracle: Option<Death>,
}

impl fmt::Display for DeathMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = |death: &Option<Death>| match death {
            Some(d) => format!("eaten by shark {} at {}", d.shark, d.time),
            None => "survives".to_string(),
        };
        write!(
            f,
            "fish {}: model says {}, oracle says {}",
            self.fish,
            verdict(&self.model),
            verdict(&self.oracle)
        )
    }
}

/// Whether two times agree: within `1e-6` absolutely, or relatively for times above 1.
pub fn times_agree(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

/// Compares the model's deaths with the oracle's, fish by fish (both in any order).
///
/// A fish agrees when both say it survives, or both say it is eaten at times that
/// [agree](times_agree) by the same shark. A different shark is accepted only for a
/// tie within that tolerance: the model's shark must itself reach the fish at a time that
/// agrees with the oracle's (rounding decides such ties, not the model).
/// A fish reported twice by the model is a mismatch.
///
/// ```
/// use warpsim_models::sharks::{Death, SharksParams, compare_deaths};
/// let a = [Death { fish: 1, shark: 0, time: 8.0 }];
/// let b = [Death { fish: 1, shark: 0, time: 8.0 + 1e-9 }];
/// assert!(compare_deaths(&SharksParams::default(), &[], &a, &b).is_empty());
/// assert_eq!(compare_deaths(&SharksParams::default(), &[], &a, &[]).len(), 1);
/// ```
pub fn compare_deaths(
    params: &SharksParams,
    creatures: &[Creature],
    model: &[Death],
    oracle: &[Death],
) -> Vec<DeathMismatch> {
    let mut model = model.to_vec();
    model.sort_by_key(|d| d.fish);
    let mut oracle = oracle.to_vec();
    oracle.sort_by_key(|d| d.fish);
    let grid = params.grid();
    let find = |id: u32| creatures.iter().find(|c| c.id == id);
    let mut mismatches = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < model.len() || j < oracle.len() {
        let fish = match (model.get(i), oracle.get(j)) {
            (Some(m), Some(o)) => m.fish.min(o.fish),
            (Some(m), None) => m.fish,
            (None, Some(o)) => o.fish,
            (None, None) => break,
        };
        let m = model.get(i).filter(|d| d.fish == fish).copied();
        let o = oracle.get(j).filter(|d| d.fish == fish).copied();
        i += usize::from(m.is_some());
        j += usize::from(o.is_some());
        let duplicate = m.is_some() && model.get(i).is_some_and(|d| d.fish == fish);
        let agree = match (m, o) {
            (Some(m), Some(o)) if times_agree(m.time, o.time) => {
                m.shark == o.shark
                    || match (find(fish), find(m.shark)) {
                        (Some(f), Some(s)) => first_contact(
                            &grid,
                            &f.motion(),
                            &s.motion(),
                            s.radius,
                            0.0,
                            params.end,
                        )
                        .is_some_and(|t| times_agree(t, o.time)),
                        _ => false,
                    }
            }
            (None, None) => true,
            _ => false,
        };
        if !agree || duplicate {
            mismatches.push(DeathMismatch {
                fish,
                model: m,
                oracle: o,
            });
        }
        while duplicate && model.get(i).is_some_and(|d| d.fish == fish) {
            i += 1;
        }
    }
    mismatches
}
