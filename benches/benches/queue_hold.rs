//! The benchmark of record for pending-event sets: the classic *hold model* and cancel by
//! handle, with `warpsim-queue`'s sets side by side with `std`'s `BinaryHeap`, the 4-ary
//! `dary_heap::QuaternaryHeap` and the `echelon` crate's adaptive ladder queue, in one run.
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
//! The hold group stores no handles (the baselines have none to store); the handle groups
//! keep the handle of every entry in a `Vec`, as a kernel would. The next victim is drawn one
//! operation ahead and its handle (or, for the lazy baselines, its generation) prefetched: a
//! kernel cancels an event whose handle sits in the state of the LP it is running, already in
//! cache, so these groups time the queue's cancel rather than the harness's own random read
//! of its handle array (at 10⁶ a second dependent miss). The baselines have no cancel,
//! so in `cancel+push` the two heaps cancel the way one does without handles: *lazy deletion*
//! (each entry carries a generation; cancel bumps the entry's generation in a side table, pops
//! would skip entries whose generation is stale, and the heap is rebuilt without them once
//! they are as many as the live ones). `echelon` is left out of that group: under its
//! push-only load (no pops) it asked the allocator for 25.8 GB at N = 10⁵ and aborted.
//!
//! **Memory.** Before the timed groups, `bytes per event` lines print each queue's heap bytes
//! (allocated minus freed, from an instrumented global allocator) after its untimed warm-up,
//! divided by `N`: what a pending event costs in memory, slack of growing `Vec`s included.
//!
//! **One miss.** First of all, a line gives the CPU time of one dependent cache miss over
//! 64 MB (a pointer chase): what "cancel at 10⁶ within one cache miss" is measured against.
//!
//! **Sizes.** `N` = 10³ … 10⁶; set `QUEUE_BENCH_1E7=1` to add 10⁷ (about 1.5 GB and several
//! minutes of warm-up per queue).
//!
//! **Clock.** Times are the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not
//! wall time, because the benchmark machine is shared with other builds: wall time then
//! counts the time the thread waits for a core. Set `QUEUE_BENCH_CLOCK=wall` for wall time
//! (the default where the thread clock is missing).
//!
//! Run with `cargo bench -p warpsim-benches --bench queue_hold`; results in `BENCHMARKS.md`.

use std::alloc::System;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
};
use prefetch_index::prefetch_index;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp};
use rand_xoshiro::Xoshiro256PlusPlus;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use warpsim_benches::PointerChase;
use warpsim_queue::{Handle, IndexedHeap, LadderQueue, PendingSet};

/// Counts heap bytes, for the `bytes per event` lines.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Pending-set sizes (10⁷ on request, see the module docs).
fn sizes() -> Vec<usize> {
    // 16 and 64: the ladder's small mode (a tournament tree up to 64 entries), where the
    // feeding pets (about 14 pending) live.
    let mut sizes = vec![16, 64, 1_000, 10_000, 100_000, 1_000_000];
    if std::env::var("QUEUE_BENCH_1E7").is_ok_and(|v| v == "1") {
        sizes.push(10_000_000);
    }
    sizes
}

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

/// `dary_heap`'s 4-ary heap.
struct Dary(dary_heap::QuaternaryHeap<Reverse<(u64, u64)>>);

impl HoldQueue for Dary {
    #[inline]
    fn push(&mut self, key: u64, value: u64) {
        self.0.push(Reverse((key, value)));
    }
    #[inline]
    fn pop(&mut self) -> Option<(u64, u64)> {
        self.0.pop().map(|Reverse(e)| e)
    }
}

/// The `echelon` crate's adaptive ladder queue. Its keys are `f64` timestamps (it refuses
/// `u64` keys, which `f64` cannot hold exactly beyond 2⁵³); the benchmark's keys stay below
/// 2⁵³, so the conversion is exact and the order the same.
struct Echelon(echelon::LadderQueue<echelon::Timestamp, u64>);

impl HoldQueue for Echelon {
    #[inline]
    fn push(&mut self, key: u64, value: u64) {
        self.0.push(echelon::Timestamp::new(key as f64), value);
    }
    #[inline]
    fn pop(&mut self) -> Option<(u64, u64)> {
        self.0.pop().map(|(k, v)| (k.value() as u64, v))
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
    for n in sizes() {
        hold_case(&mut group, "BinaryHeap", n, || {
            Std(BinaryHeap::with_capacity(n))
        });
        hold_case(&mut group, "dary_heap4", n, || {
            Dary(dary_heap::QuaternaryHeap::with_capacity(n))
        });
        hold_case(&mut group, "echelon", n, || {
            Echelon(echelon::LadderQueue::new())
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

/// Thread CPU time in nanoseconds (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)` through the
/// `cpu-time` crate). `/proc/thread-self/schedstat`, used before, only advances at scheduler
/// ticks, so criterion's shortest samples read zero.
fn thread_cpu_ns() -> Option<u64> {
    let time = cpu_time::ThreadTime::try_now().ok()?;
    u64::try_from(time.as_duration().as_nanos()).ok()
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
    let mut next = rng.random_range(0..n);
    for _ in 0..iters {
        let i = next;
        next = rng.random_range(0..n);
        // The caller's record of the next victim (its handle) is loaded one operation ahead:
        // a kernel cancels an event whose handle sits in the state of the LP it is running,
        // already in cache, so the group times the queue's cancel, not this harness's own
        // random read of an 8 MB handle array (a second dependent miss at 10⁶).
        prefetch_index(&tracked.handles, next);
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
    for n in sizes() {
        if cancel {
            lazy_case(&mut group, "BinaryHeap", n, || {
                Std(BinaryHeap::with_capacity(2 * n))
            });
            lazy_case(&mut group, "dary_heap4", n, || {
                Dary(dary_heap::QuaternaryHeap::with_capacity(2 * n))
            });
        }
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

/// A baseline without handles, cancelled by lazy deletion: the payload packs an entry id (low
/// 32 bits) and the id's generation when pushed (high 32 bits).
trait Rebuild: HoldQueue {
    /// Keeps only the entries whose payload passes `keep`.
    fn retain(&mut self, keep: impl Fn(u64) -> bool);
}

impl Rebuild for Std {
    fn retain(&mut self, keep: impl Fn(u64) -> bool) {
        self.0.retain(|Reverse((_, v))| keep(*v));
    }
}

impl Rebuild for Dary {
    fn retain(&mut self, keep: impl Fn(u64) -> bool) {
        let mut entries = std::mem::take(&mut self.0).into_vec();
        entries.retain(|Reverse((_, v))| keep(*v));
        self.0 = entries.into();
    }
}

/// Lazy-deletion state: the queue, each id's current generation, entries stored (live and
/// stale), increments, index RNG and `now`.
struct Lazy<Q> {
    queue: Q,
    generations: Vec<u32>,
    stored: usize,
    inc: Increments,
    rng: Xoshiro256PlusPlus,
    now: u64,
}

fn lazy_case<Q: Rebuild>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    n: usize,
    make: impl Fn() -> Q,
) {
    let mut state: Option<Lazy<Q>> = None;
    group.bench_function(BenchmarkId::new(format!("{name} (lazy)"), n), |b| {
        let state = state.get_or_insert_with(|| {
            let mut inc = Increments::new(2);
            let mut queue = make();
            prepare(&mut queue, n, &mut inc);
            let (now, v) = queue.pop().unwrap();
            queue.push(now, v);
            Lazy {
                queue,
                generations: vec![0; n],
                stored: n,
                inc,
                rng: Xoshiro256PlusPlus::seed_from_u64(3),
                now,
            }
        });
        b.iter_custom(|iters| time_lazy_cancels(state, iters))
    });
}

/// Cancel (bump the victim's generation) and push its replacement; rebuild the queue without
/// stale entries once they are as many as the live ones (amortised O(1) per cancel).
fn time_lazy_cancels<Q: Rebuild>(state: &mut Lazy<Q>, iters: u64) -> Duration {
    let n = state.generations.len();
    let start = Stopwatch::start();
    let mut next = state.rng.random_range(0..n);
    for _ in 0..iters {
        let id = next;
        next = state.rng.random_range(0..n);
        // As in `time_handle_ops`: the caller's record of the next victim is loaded ahead.
        prefetch_index(&state.generations, next);
        state.generations[id] = state.generations[id].wrapping_add(1);
        let key = state.now + state.inc.next();
        let payload = (u64::from(state.generations[id]) << 32) | id as u64;
        state.queue.push(key, payload);
        state.stored += 1;
        if state.stored >= 2 * n {
            let generations = &state.generations;
            state
                .queue
                .retain(|v| generations[(v as u32) as usize] == (v >> 32) as u32);
            state.stored = n;
        }
    }
    start.elapsed()
}

/// Prints heap bytes per pending event of every queue after its warm-up (see module docs).
fn bytes_per_event(_: &mut Criterion) {
    fn measure<Q: HoldQueue>(name: &str, n: usize, make: impl Fn() -> Q) {
        let region = Region::new(GLOBAL);
        let mut inc = Increments::new(1);
        let mut queue = make();
        prepare(&mut queue, n, &mut inc);
        let stats = region.change();
        let live = stats.bytes_allocated as isize - stats.bytes_deallocated as isize
            + stats.bytes_reallocated
            - (inc.table.len() * 8) as isize;
        println!(
            "bytes per event: {name:<12} N = {n:>8}: {:.1}",
            live as f64 / n as f64
        );
        drop(queue);
    }
    for n in sizes() {
        measure("BinaryHeap", n, || Std(BinaryHeap::new()));
        measure("dary_heap4", n, || Dary(dary_heap::QuaternaryHeap::new()));
        measure("echelon", n, || Echelon(echelon::LadderQueue::new()));
        measure("IndexedHeap", n, || Untracked(IndexedHeap::new()));
        measure("LadderQueue", n, || Untracked(LadderQueue::new()));
    }
}

/// Prints the CPU nanoseconds of one dependent cache miss over 64 MB (a pointer chase, median
/// of 5 walks of 10⁶ steps): the "one cache miss" that cancel and reschedule at 10⁶ are held
/// against (issue 16), measured in the same run as they are.
fn one_miss(_: &mut Criterion) {
    let chase = PointerChase::new(1 << 20, 12);
    let mut samples: Vec<f64> = (0..5)
        .map(|_| {
            let steps = 1_000_000;
            let start = Stopwatch::start();
            black_box(chase.walk(steps));
            start.elapsed().as_nanos() as f64 / steps as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    println!(
        "one dependent cache miss over 64 MB (pointer chase): {:.0} ns",
        samples[2]
    );
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
    targets = one_miss, bytes_per_event, bench_hold, bench_cancel, bench_reschedule
}
criterion_main!(benches);
