//! Differential tests: every queue against a `BTreeMap` shadow over millions of seeded random
//! operations (far fewer in debug builds), for several key distributions.

mod common;

use common::{Driver, K, KeyDist, budget};
use warpsim_queue::{FifoQueue, IndexedHeap, LadderQueue, PendingSet};

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
    for (dist, seed) in [
        (KeyDist::Exponential, 7),
        (KeyDist::ManyEqual, 8),
        (KeyDist::BelowMinimum, 9),
    ] {
        let mut driver = Driver::new(LadderQueue::new(), 200 + seed, dist, false);
        driver.run(budget(600_000), 200_000);
    }
}

/// Cancels and reschedules far outnumber pops, so stale entries pile up in the ladder and must
/// be purged; the heap runs the same workload for comparison.
fn churn<Q: PendingSet<K, u64>>(queue: Q, seed: u64) -> Driver<Q> {
    let mut driver = Driver::new(queue, seed, KeyDist::Exponential, false);
    for _ in 0..5000 {
        driver.push_random();
    }
    for i in 0..budget(400_000) {
        match i % 10 {
            0 => driver.pop(),
            1 | 2 => driver.cancel(),
            3 | 4 => driver.push_random(),
            _ => driver.reschedule(),
        }
        driver.check_len();
    }
    driver
}

#[test]
fn churn_heap() {
    churn(IndexedHeap::new(), 400).drain();
}

#[test]
fn churn_ladder_purges_stale_entries() {
    let mut driver = churn(LadderQueue::new(), 401);
    // `stored` counts live and stale entries; the purge keeps it within a bound of `len`.
    let debug = format!("{:?}", driver.queue);
    let stored = debug
        .split("stored: ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    let stored: usize = stored.parse().unwrap();
    assert!(stored <= 2 * driver.queue.len() + 1025, "{debug}");
    driver.drain();
}

#[test]
fn fifo_queue_matches_shadow() {
    let mut driver = Driver::new(FifoQueue::new(), 300, KeyDist::Monotone, true);
    driver.run(budget(2_000_000), 20_000);
}

#[test]
fn ladder_queue_matches_shadow_across_the_small_mode_limit() {
    // Sizes that hover around 64 entries, where the ladder switches between its small-mode
    // ring and its tiers (both ways), with cancels and reschedules in between.
    for (dist, seed) in [
        (KeyDist::Exponential, 10),
        (KeyDist::ManyEqual, 11),
        (KeyDist::BelowMinimum, 12),
        (KeyDist::FarBursts, 13),
    ] {
        let mut driver = Driver::new(LadderQueue::new(), 500 + seed, dist, false);
        driver.run(budget(1_000_000), 100);
    }
}

#[test]
fn ladder_queue_matches_shadow_after_bulk_fills() {
    // A Top of at least 2^16 entries is spread over its rung in chunks and gives its memory
    // back as it goes (`TOP_RELEASE_FROM`): bulk fills (as a kernel's start-up makes), then
    // pops, pushes, cancels and reschedules that refill Top, three times over.
    for (dist, seed) in [
        (KeyDist::Exponential, 14),
        (KeyDist::ManyEqual, 15),
        (KeyDist::HugeSpread, 16),
        (KeyDist::FarBursts, 17),
    ] {
        let mut driver = Driver::new(LadderQueue::new(), 600 + seed, dist, false);
        for _ in 0..3 {
            for _ in 0..70_000 {
                driver.push_random();
            }
            for i in 0..budget(200_000) {
                match i % 8 {
                    0..=2 => driver.pop(),
                    3 => driver.cancel(),
                    4 => driver.reschedule(),
                    5 => driver.push_random(),
                    6 => driver.peek(),
                    _ => driver.get(),
                }
                driver.check_len();
            }
        }
        driver.drain();
    }
}
