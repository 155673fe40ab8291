//! Differential tests: every queue against a `BTreeMap` shadow over millions of seeded random
//! operations (far fewer in debug builds), for several key distributions.

mod common;

use common::{Driver, KeyDist, budget};
use warpsim_queue::{FifoQueue, IndexedHeap, LadderQueue};

/// Distributions run on the general-purpose queues, each with its own seed.
const DISTS: [(KeyDist, u64); 6] = [
    (KeyDist::Exponential, 1),
    (KeyDist::Uniform, 2),
    (KeyDist::ManyEqual, 3),
    (KeyDist::FarBursts, 4),
    (KeyDist::BelowMinimum, 5),
    (KeyDist::HugeSpread, 6),
];

#[test]
fn indexed_heap_matches_shadow() {
    for (dist, seed) in DISTS {
        let mut driver = Driver::new(IndexedHeap::new(), seed, dist, false);
        driver.run(budget(400_000), 20_000);
    }
}

#[test]
fn ladder_queue_matches_shadow() {
    for (dist, seed) in DISTS {
        let mut driver = Driver::new(LadderQueue::new(), 100 + seed, dist, false);
        driver.run(budget(400_000), 20_000);
    }
}

#[test]
fn ladder_queue_matches_shadow_large() {
    // Big enough for several rungs and for the spill paths of the bottom list.
    for (dist, seed) in [(KeyDist::Exponential, 7), (KeyDist::ManyEqual, 8), (KeyDist::BelowMinimum, 9)] {
        let mut driver = Driver::new(LadderQueue::new(), 200 + seed, dist, false);
        driver.run(budget(600_000), 200_000);
    }
}

#[test]
fn fifo_queue_matches_shadow() {
    let mut driver = Driver::new(FifoQueue::new(), 300, KeyDist::Monotone, true);
    driver.run(budget(1_500_000), 20_000);
}
