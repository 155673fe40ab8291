//! Example: one queue under the hold model, for instruction counts and cache profiles.
//!
//! `cargo run --release -p warpsim-benches --example hold_probe -- QUEUE N HOLDS` runs `N`
//! prefilled entries (keys `Exp(1)` in 2³²-tick fixed point, as in `benches/queue_hold.rs`)
//! through `N` warm-up holds and then `HOLDS` measured holds, and prints the sum of the popped
//! keys (so nothing is optimised away). `QUEUE` is `ladder`, `heap`, `binary`, `dary4` or
//! `echelon`. Under `valgrind --tool=cachegrind`, the difference between two runs with
//! different `HOLDS` gives instructions per hold without the set-up; `perf stat` gives cache
//! misses per hold the same way.

use std::cmp::Reverse;

use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use rand_xoshiro::Xoshiro256PlusPlus;
use warpsim_queue::{IndexedHeap, LadderQueue, PendingSet};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (queue, n, holds) = match &args[..] {
        [_, q, n, h] => (q.as_str(), n.parse().unwrap(), h.parse().unwrap()),
        _ => {
            eprintln!("usage: hold_probe ladder|heap|binary|dary4|echelon N HOLDS");
            std::process::exit(2);
        }
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let exp = Exp::new(1.0).unwrap();
    let table: Vec<u64> = (0..1 << 16)
        .map(|_| (exp.sample(&mut rng) * (1u64 << 32) as f64) as u64)
        .collect();
    let sum = match queue {
        "ladder" => run(&table, n, holds, Ours(LadderQueue::new())),
        "heap" => run(&table, n, holds, Ours(IndexedHeap::new())),
        "binary" => run(&table, n, holds, std::collections::BinaryHeap::new()),
        "dary4" => run(&table, n, holds, dary_heap::QuaternaryHeap::new()),
        "echelon" => run(&table, n, holds, echelon::TimestampQueue::new()),
        other => {
            eprintln!("unknown queue {other}");
            std::process::exit(2);
        }
    };
    println!("{sum}");
}

/// Push and pop, for every queue compared.
trait Hold {
    fn push(&mut self, key: u64, value: u64);
    fn pop(&mut self) -> Option<(u64, u64)>;
}

/// One of ours (handles are dropped, as in the benchmark's hold group).
struct Ours<Q>(Q);

impl<Q: PendingSet<u64, u64>> Hold for Ours<Q> {
    fn push(&mut self, key: u64, value: u64) {
        self.0.push(key, value).unwrap();
    }
    fn pop(&mut self) -> Option<(u64, u64)> {
        self.0.pop()
    }
}

impl Hold for std::collections::BinaryHeap<Reverse<(u64, u64)>> {
    fn push(&mut self, key: u64, value: u64) {
        self.push(Reverse((key, value)));
    }
    fn pop(&mut self) -> Option<(u64, u64)> {
        self.pop().map(|Reverse(e)| e)
    }
}

impl Hold for dary_heap::QuaternaryHeap<Reverse<(u64, u64)>> {
    fn push(&mut self, key: u64, value: u64) {
        self.push(Reverse((key, value)));
    }
    fn pop(&mut self) -> Option<(u64, u64)> {
        self.pop().map(|Reverse(e)| e)
    }
}

impl Hold for echelon::TimestampQueue<u64> {
    fn push(&mut self, key: u64, value: u64) {
        self.push(echelon::Timestamp::new(key as f64), value);
    }
    fn pop(&mut self) -> Option<(u64, u64)> {
        self.pop().map(|(k, v)| (k.value() as u64, v))
    }
}

/// Prefills, warms up and runs the holds.
fn run(table: &[u64], n: usize, holds: u64, mut queue: impl Hold) -> u64 {
    let mut next = 0usize;
    let mut inc = || {
        next = (next + 1) & (table.len() - 1);
        table[next]
    };
    for i in 0..n as u64 {
        queue.push(inc(), i);
    }
    let mut hold = |queue: &mut dyn Hold| {
        let (key, value) = queue.pop().unwrap();
        queue.push(key + inc(), value);
        key
    };
    for _ in 0..n {
        hold(&mut queue);
    }
    let mut sum = 0u64;
    for _ in 0..holds {
        sum = sum.wrapping_add(hold(&mut queue));
    }
    sum
}
