//! Differential tests: `Timers` against the naive reference manager of `common`, over seeded
//! random interleavings of add / cancel / set_time / delay / pause / resume / time scale /
//! advance, with callbacks that change timers (their own included) while an advance runs. The
//! firing sequences (timer, scheduled time, clock, occurrences) and every operation's result
//! must be identical.

mod common;

use common::{Op, first_difference, random_op, run_both};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use warpsim_timers::TimerQueue;

/// Release builds run the full budget; debug builds a fortieth of it.
fn budget(release: usize) -> usize {
    if cfg!(debug_assertions) {
        release / 40
    } else {
        release
    }
}

fn script(seed: u64, n_ops: usize) -> Vec<Op> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    // Labels grow by at most one per op at the top level; callbacks add more, but a script
    // that picks labels up to the top-level count is enough to hit live and stale ones alike.
    let mut n_labels = 0;
    (0..n_ops)
        .map(|_| {
            let op = random_op(&mut rng, n_labels);
            if matches!(op, Op::Add { .. }) {
                n_labels += 1;
            }
            op
        })
        .collect()
}

/// Runs one script on both pending sets; returns the number of callbacks fired.
fn check(seed: u64, n_ops: usize, max_labels: usize, callbacks_act: bool) -> usize {
    let ops = script(seed, n_ops);
    let mut n_fired = 0;
    for queue in [TimerQueue::Wheel, TimerQueue::Heap, TimerQueue::Ladder] {
        let (real, reference) = run_both(&ops, queue, seed, max_labels, callbacks_act);
        if let Some(diff) = first_difference(&real, &reference) {
            panic!("{queue:?}, seed {seed}: {diff}");
        }
        n_fired = real
            .iter()
            .filter(|e| matches!(e, common::Entry::Fire { .. }))
            .count();
    }
    n_fired
}

#[test]
fn matches_reference_top_level_only() {
    let mut n_fired = 0;
    for seed in 0..budget(200) as u64 {
        n_fired += check(seed, 400, 1000, false);
    }
    assert!(n_fired > 1000, "the scripts should fire timers ({n_fired})");
}

#[test]
fn matches_reference_with_callbacks_changing_timers() {
    let mut n_fired = 0;
    for seed in 0..budget(400) as u64 {
        n_fired += check(1_000 + seed, 500, 300, true);
    }
    assert!(n_fired > 1000, "the scripts should fire timers ({n_fired})");
}

#[test]
fn matches_reference_long_runs() {
    // Long scripts grow large populations, with many equal times on the quarter-second grid.
    let n_ops = if cfg!(debug_assertions) { 600 } else { 5_000 };
    for seed in 0..budget(40) as u64 {
        check(50_000 + seed, n_ops, 2_000, true);
    }
}
