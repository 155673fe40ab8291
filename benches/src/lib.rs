//! Benchmarks for warpsim live in `benches/`; run them with `cargo bench -p warpsim-benches`.
//! This library holds only what several of them share: criterion needs a package to hang
//! the bench targets on.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A pointer chase around one random cycle of cache lines: each step is a load whose address
/// depends on the previous load, at a random place in the whole buffer. Over a buffer much
/// larger than the last-level cache, one step is one dependent cache miss — the "one cache
/// miss" the pending sets' and timers' cancel is held against (issue 16), measured in the
/// same run as they are.
#[derive(Debug)]
pub struct PointerChase {
    next: Vec<u64>,
}

impl PointerChase {
    /// A chase over `lines` 64-byte lines (`64 × lines` bytes), built from `seed`.
    pub fn new(lines: usize, seed: u64) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        // A random cyclic order (Sattolo's shuffle), one `u64` link per 64-byte line.
        let mut order: Vec<usize> = (0..lines).collect();
        for i in (1..lines).rev() {
            order.swap(i, rng.random_range(0..i));
        }
        let mut next = vec![0u64; lines * 8];
        for (i, &line) in order.iter().enumerate() {
            next[line * 8] = (order[(i + 1) % lines] * 8) as u64;
        }
        PointerChase { next }
    }

    /// Walks `steps` links and returns where it ended (so the walk is not optimised away).
    pub fn walk(&self, steps: usize) -> usize {
        let mut at = 0usize;
        for _ in 0..steps {
            at = self.next[at] as usize;
        }
        at
    }
}
