//! The step style: the article's first version, fixed time increments.

use std::collections::VecDeque;

use warpsim_core::LpRng;

use super::{Breakage, CurvePoint, Marks, PetsParams, PetsResult, Semantics};

/// Runs the step style for at most `max_steps` steps.
///
/// Each step, in the article's order: repairs due by now are done; time advances by one meal
/// (`processing_time`) and every healthy feeder feeds one pet; then each healthy feeder
/// breaks with probability `break_chance`, to be repaired `repair_time` after the end of the
/// step. Repairs are due in the order they were scheduled (the repair time is fixed), so a
/// FIFO ring holds them, as in the article.
pub(super) fn run(params: &PetsParams, rng: &mut LpRng, max_steps: u64) -> PetsResult {
    let tasks = params.tasks;
    let gates = u64::from(params.gates);
    let mut repairs: VecDeque<f64> = VecDeque::new();
    let mut breakage = Breakage::new(params.break_chance);
    breakage.start(rng);
    let mut marks = Marks::new(tasks);
    let mut curve = Vec::new();
    let (mut steps, mut time, mut done, mut broken, mut breakdowns) =
        (0u64, 0.0f64, 0u64, 0u64, 0u64);
    while done < tasks && steps < max_steps {
        while repairs.front().is_some_and(|&due| due <= time) {
            repairs.pop_front();
            broken -= 1;
        }
        // Time as a product, not a running sum, so that `ceil(N/K)·T` comes out exact.
        let next = (steps + 1) as f64 * params.processing_time;
        if next >= params.end {
            break;
        }
        steps += 1;
        time = next;
        done += gates - broken;
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
    let mut result = PetsResult::from_curve(tasks, curve, steps, breakdowns);
    result.fed = done.min(tasks);
    result
}
