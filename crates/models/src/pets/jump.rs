//! The jump style: the article's second version, event-time jumps over the step style.

use std::collections::VecDeque;

use warpsim_core::LpRng;

use super::{Breakage, CurvePoint, Marks, PetsParams, PetsResult, Semantics};

/// Runs the jump style for at most `max_steps` jumps.
///
/// As the step style, except for how time moves: when a repair is pending, time jumps straight
/// to it, and the healthy feeders are credited `floor((K − broken) · Δt / T)` meals for the
/// jump (the article's integer arithmetic); otherwise time moves one meal. Breakage is rolled
/// for the healthy feeders once per jump. See [`Style::Jump`](super::Style::Jump) for what
/// this approximates.
pub(super) fn run(params: &PetsParams, rng: &mut LpRng, max_steps: u64) -> PetsResult {
    let tasks = params.tasks;
    let gates = u64::from(params.gates);
    let meal = params.processing_time;
    let mut repairs: VecDeque<f64> = VecDeque::new();
    let mut breakage = Breakage::new(params.break_chance);
    breakage.start(rng);
    let mut marks = Marks::new(tasks);
    let mut curve = Vec::new();
    let (mut jumps, mut time, mut done, mut broken, mut breakdowns) =
        (0u64, 0.0f64, 0u64, 0u64, 0u64);
    while done < tasks && jumps < max_steps {
        while repairs.front().is_some_and(|&due| due <= time) {
            repairs.pop_front();
            broken -= 1;
        }
        let next = repairs.front().copied().unwrap_or(time + meal);
        if next >= params.end {
            break;
        }
        jumps += 1;
        let credited = ((gates - broken) as f64 * (next - time) / meal).floor();
        // The credit is at most K · R / T, far below 2^53, so the conversion is exact.
        done = done.saturating_add(credited as u64);
        time = next;
        let breaks = match params.semantics {
            Semantics::Corrected => breakage.roll(gates - broken, u64::MAX, rng),
            Semantics::Article => breakage.roll_shrinking(gates - broken, rng),
        };
        broken += breaks;
        breakdowns += breaks;
        for _ in 0..breaks {
            repairs.push_back(time + params.repair_time);
        }
        let fed = done.min(tasks);
        if fed >= marks.next() {
            curve.push(CurvePoint { time, fed });
            marks.advance(fed);
        }
    }
    let mut result = PetsResult::from_curve(tasks, curve, jumps, breakdowns);
    result.fed = done.min(tasks);
    result
}
