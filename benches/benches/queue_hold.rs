//! Pending-event queues under the classic *hold model*, side by side with `std`'s
//! `BinaryHeap`, plus the cost of cancel and reschedule by handle.
//!
//! Keys are `u64` fixed-point times (2³² ticks per time unit), the same for every queue, with
//! a `u64` payload. Each queue is prefilled with `N` entries at `now + Exp(1)` (`now = 0`),
//! then driven through `N` untimed holds so it reaches its steady state. Timed operations:
//!
//! - `hold`: pop the minimum, push it back at `popped_key + Exp(1)`.
//! - `cancel+push`: cancel a uniformly random live entry by handle, push a replacement at
//!   `now + Exp(1)` (keeps `N` constant; reported per pair).
//! - `reschedule`: move a uniformly random live entry to `now + Exp(1)`.
//!
//! The hold group stores no handles (the `BinaryHeap` baseline has none to store); the
//! handle groups keep the handle of every entry in a `Vec`, as a kernel would.
//!
//! **Clock.** Times are the benchmark thread's CPU time (`/proc/thread-self/schedstat`), not
//! wall time, because the benchmark machine is shared with other builds: wall time then
//! counts the time the thread waits for a core. Set `QUEUE_BENCH_CLOCK=wall` for wall time
//! (the default where `/proc` is missing). The CPU-time counter advances in scheduler ticks,
//! so samples are kept long (tens of milliseconds or more).
//!
//! Run with `cargo bench -p warpsim-benches --bench queue_hold`; results in `BENCHMARKS.md`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
};
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp};
use rand_xoshiro::Xoshiro256PlusPlus;
use warpsim_queue::{Handle, IndexedHeap, LadderQueue, PendingSet};

/// Pending-set sizes.
const SIZES: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];

/// Fixed-point scale: ticks per time unit.
const SCALE: f64 = (1u64 << 32) as f64;

/// Exponential(1) increments in ticks, precomputed so the timed loop measures the queue, not
/// the sampler. 2¹⁶ values, cycled.
struct Increments {
    table: Vec<u64>,
    next: usize,
}

impl Increments {
    fn new(seed: u64) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let exp = Exp::new(1.0).unwrap();
        let table = (0..1 << 16)
            .map(|_| (exp.sample(&mut rng) * SCALE) as u64)
            .collect();
        Increments { table, next: 0 }
    }

    #[inline]
    fn next(&mut self) -> u64 {
        self.next = (self.next + 1) & (self.table.len() - 1);
        self.table[self.next]
    }
}

/// The operations the hold loop needs, so `BinaryHeap` can run the same code.
trait HoldQueue {
    fn push(&mut self, key: u64, value: u64);
    fn pop(&mut self) -> Option<(u64, u64)>;
}

struct Std(BinaryHeap<Reverse<(u64, u64)>>);

impl HoldQueue for Std {
    #[inline]
    fn push(&mut self, key: u64, value: u64) {
        self.0.push(Reverse((key, value)));
    }
    #[inline]
    fn pop(&mut self) -> Option<(u64, u64)> {
        self.0.pop().map(|Reverse(e)| e)
    }
}

/// A warpsim queue whose handles are dropped (for the hold group).
struct Untracked<Q>(Q);

impl<Q: PendingSet<u64, u64>> HoldQueue for Untracked<Q> {
    #[inline]
    fn push(&mut self, key: u64, value: u64) {
        black_box(self.0.push(key, value).unwrap());
    }
    #[inline]
    fn pop(&mut self) -> Option<(u64, u64)> {
        self.0.pop()
    }
}

/// A warpsim queue plus the handle of every entry (entry `i` carries payload `i`).
struct Tracked<Q> {
    queue: Q,
    handles: Vec<Handle>,
}

impl<Q: PendingSet<u64, u64>> HoldQueue for Tracked<Q> {
    #[inline]
    fn push(&mut self, key: u64, value: u64) {
        self.handles[value as usize] = self.queue.push(key, value).unwrap();
    }
    #[inline]
    fn pop(&mut self) -> Option<(u64, u64)> {
        self.queue.pop()
    }
}

/// Prefills `n` entries at `Exp(1)` and runs `n` holds untimed.
fn prepare<Q: HoldQueue>(queue: &mut Q, n: usize, inc: &mut Increments) {
    for i in 0..n as u64 {
        queue.push(inc.next(), i);
    }
    for _ in 0..n {
        hold(queue, inc);
    }
}

#[inline]
fn hold<Q: HoldQueue>(queue: &mut Q, inc: &mut Increments) -> u64 {
    let (key, value) = queue.pop().unwrap();
    queue.push(key + inc.next(), value);
    key
}

fn tracked<Q: PendingSet<u64, u64>>(queue: Q, n: usize) -> Tracked<Q> {
    Tracked {
        queue,
        handles: vec![Handle::from_raw(0); n],
    }
}

fn bench_hold(c: &mut Criterion) {
    let mut group = c.benchmark_group("hold");
    group.throughput(Throughput::Elements(1));
    for n in SIZES {
        hold_case(&mut group, "BinaryHeap", n, || {
            Std(BinaryHeap::with_capacity(n))
        });
        hold_case(&mut group, "IndexedHeap", n, || {
            Untracked(IndexedHeap::with_capacity(n))
        });
        hold_case(&mut group, "LadderQueue", n, || {
            Untracked(LadderQueue::with_capacity(n))
        });
    }
    group.finish();
}

fn hold_case<Q: HoldQueue>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    n: usize,
    make: impl Fn() -> Q,
) {
    // Built on first use, so a filtered run (`-- hold/LadderQueue`) prepares only what it
    // measures. The same seed for every queue: they all see the same increments.
    let mut state = None;
    group.bench_function(BenchmarkId::new(name, n), |b| {
        let (queue, inc) = state.get_or_insert_with(|| {
            let (mut queue, mut inc) = (make(), Increments::new(1));
            prepare(&mut queue, n, &mut inc);
            (queue, inc)
        });
        b.iter_custom(|iters| time_holds(queue, inc, iters))
    });
}

/// Where elapsed time comes from (see the module docs).
#[derive(Clone, Copy)]
enum Clock {
    ThreadCpu,
    Wall,
}

/// Thread CPU time in nanoseconds, from the scheduler's statistics.
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

fn clock() -> Clock {
    static CLOCK: OnceLock<Clock> = OnceLock::new();
    *CLOCK.get_or_init(|| {
        let wall = std::env::var("QUEUE_BENCH_CLOCK").is_ok_and(|v| v == "wall");
        if wall || thread_cpu_ns().is_none() {
            Clock::Wall
        } else {
            Clock::ThreadCpu
        }
    })
}

/// A started stopwatch on the chosen clock.
struct Stopwatch(Instant, u64);

impl Stopwatch {
    fn start() -> Self {
        match clock() {
            Clock::ThreadCpu => Stopwatch(Instant::now(), thread_cpu_ns().unwrap()),
            Clock::Wall => Stopwatch(Instant::now(), 0),
        }
    }

    fn elapsed(&self) -> Duration {
        match clock() {
            Clock::ThreadCpu => Duration::from_nanos(thread_cpu_ns().unwrap() - self.1),
            Clock::Wall => self.0.elapsed(),
        }
    }
}

fn time_holds<Q: HoldQueue>(queue: &mut Q, inc: &mut Increments, iters: u64) -> Duration {
    let start = Stopwatch::start();
    let mut sum = 0u64;
    for _ in 0..iters {
        sum = sum.wrapping_add(hold(queue, inc));
    }
    black_box(sum);
    start.elapsed()
}

/// Cancel-and-replace, or reschedule, of random live entries.
fn time_handle_ops<Q: PendingSet<u64, u64>>(
    state: &mut HandleState<Q>,
    iters: u64,
    cancel: bool,
) -> Duration {
    let (tracked, inc, rng, now) = state;
    let n = tracked.handles.len();
    let start = Stopwatch::start();
    for _ in 0..iters {
        let i = rng.random_range(0..n);
        let key = *now + inc.next();
        if cancel {
            let (_, value) = tracked.queue.cancel(tracked.handles[i]).unwrap();
            tracked.push(key, value);
        } else {
            tracked.queue.reschedule(tracked.handles[i], key).unwrap();
        }
    }
    start.elapsed()
}

fn bench_handle_ops(c: &mut Criterion, group_name: &str, cancel: bool) {
    let mut group = c.benchmark_group(group_name);
    group.throughput(Throughput::Elements(1));
    for n in SIZES {
        handle_case(
            &mut group,
            "IndexedHeap",
            n,
            cancel,
            IndexedHeap::with_capacity,
        );
        handle_case(
            &mut group,
            "LadderQueue",
            n,
            cancel,
            LadderQueue::with_capacity,
        );
    }
    group.finish();
}

/// State of a handle benchmark: the queue with its handles, increments, index RNG, `now`.
type HandleState<Q> = (Tracked<Q>, Increments, Xoshiro256PlusPlus, u64);

fn handle_case<Q: PendingSet<u64, u64>>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    n: usize,
    cancel: bool,
    make: impl Fn(usize) -> Q,
) {
    let mut state: Option<HandleState<Q>> = None;
    group.bench_function(BenchmarkId::new(name, n), |b| {
        let state = state.get_or_insert_with(|| {
            let mut inc = Increments::new(2);
            let mut queue = tracked(make(n), n);
            prepare(&mut queue, n, &mut inc);
            let now = queue.queue.peek().unwrap().0;
            (queue, inc, Xoshiro256PlusPlus::seed_from_u64(3), now)
        });
        b.iter_custom(|iters| time_handle_ops(state, iters, cancel))
    });
}

fn bench_cancel(c: &mut Criterion) {
    bench_handle_ops(c, "cancel+push", true);
}

fn bench_reschedule(c: &mut Criterion) {
    bench_handle_ops(c, "reschedule", false);
}

criterion_group! {
    name = benches;
    // No plots: rendering them took longer than the measurements.
    config = Criterion::default()
        .without_plots()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = bench_hold, bench_cancel, bench_reschedule
}
criterion_main!(benches);
