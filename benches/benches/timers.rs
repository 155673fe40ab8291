//! The game-loop timer manager (`warpsim-timers`), side by side with the chapter's designs.
//!
//! Every `Timers` benchmark runs on the three pending sets (`wheel`, the default; `heap`;
//! `ladder`). Each timer is a
//! torch: its callback puts out the torch whose index is the timer's payload (the callback
//! captures nothing, so no timer allocates).
//!
//! For each pending set and each `N` in 10³, 10⁵, 10⁶, one manager is filled with `N` timers
//! due uniformly over `[1, 101)` s, primed with `next_due` (the ladder then holds its timers in
//! buckets, as it does in a running game), and measured, `N` staying constant throughout:
//!
//! - `timers_add/Q/N`: add one timer. Timed in chunks of 256; each chunk is cancelled again,
//!   untimed.
//! - `timers_cancel/Q/N`: cancel a uniformly random live timer. Timed in chunks of 256
//!   distinct victims; each chunk is replaced again, untimed.
//! - `timers_set_time/Q/N`: move a uniformly random live timer to a random time. Timed in
//!   chunks of 256, the victims and times drawn untimed before each chunk.
//! - `timers_idle_advance/Q/N`: `advance` by 10⁻¹² s with nothing due.
//!
//! `timers_cancel/chapter/N` is the chapter's `RemoveCallback` at 10³ and 10⁵: a linear search
//! of the heap vector and a re-heapify (`BinaryHeap::retain`), then a push to keep `N`.
//!
//! `frame_1e6/Q` is one 60 fps frame with 10⁶ torches burning out uniformly over 10 s (about
//! 1 667 callbacks per frame); `frame_1e6/polling` is the chapter's Listing 3 over the same
//! 10⁶ torches. Both repeat the same 600-frame cycle (rebuilt, untimed, when it ends), so each
//! reports the mean frame of the cycle. Building the timers (10⁶ adds, then `next_due`, which
//! makes the ladder spread them over its buckets once) is setup and untimed, as building the
//! torches is for polling.
//!
//! Before criterion's wall-clock groups, `cpu_report` prints the same key figures at `N` = 10⁶
//! in CPU time of the benchmark thread (`/proc/thread-self/schedstat`), median of 5 runs (3
//! for frames), which other processes on a shared machine do not inflate, and the cost of one
//! dependent cache miss over 64 MB (a pointer chase) that a cancel or change is held against.
//!
//! Run with `cargo bench -p warpsim-benches --bench timers` (≈ 3 min); results in
//! `BENCHMARKS.md`.

use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use warpsim_benches::PointerChase;
use warpsim_timers::{TimerCtx, TimerId, TimerQueue, Timers};

const SIZES: [usize; 3] = [1_000, 100_000, 1_000_000];
const QUEUES: [(&str, TimerQueue); 3] = [
    ("wheel", TimerQueue::Wheel),
    ("heap", TimerQueue::Heap),
    ("ladder", TimerQueue::Ladder),
];
const CHUNK: usize = 256;
const FPS: f64 = 60.0;
const CYCLE_FRAMES: u64 = 600;
const N_TORCHES: usize = 1_000_000;

/// The game world of the benchmarks: which torches are lit.
struct World {
    lit: Vec<bool>,
    n_out: u64,
}

impl World {
    fn new(n: usize) -> Self {
        World {
            lit: vec![true; n],
            n_out: 0,
        }
    }
}

/// A torch going out. The torch's index is the timer's payload, so the callback captures
/// nothing and adding a timer allocates nothing.
fn torch_out(world: &mut World, ctx: &mut TimerCtx<'_, World>) {
    world.lit[ctx.payload() as usize] = false;
    world.n_out += 1;
}

fn add_torch(timers: &mut Timers<World>, delay: f64, i: usize) -> TimerId {
    timers
        .timer(delay)
        .payload(i as u64)
        .build(torch_out)
        .unwrap()
}

fn random_delay(rng: &mut Xoshiro256PlusPlus) -> f64 {
    rng.random_range(1.0..101.0)
}

/// CPU time of the calling thread in nanoseconds (Linux; `None` elsewhere).
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Median over `runs` runs of the CPU nanoseconds per operation of `work`, which times a batch
/// of operations with the stopwatch it is given and returns how many it timed. Each run
/// repeats `work` until it has timed at least 250 ms: the thread's CPU clock only moves at
/// scheduler ticks (a few ms), so short intervals are only right on average.
fn cpu_median(runs: usize, mut work: impl FnMut(&mut CpuWatch) -> u64) -> f64 {
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let mut watch = CpuWatch { total: 0, since: 0 };
            let mut n_ops = 0;
            while watch.total < 250_000_000 {
                n_ops += work(&mut watch);
            }
            watch.total as f64 / n_ops as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Accumulates thread CPU time between `start` and `stop`.
struct CpuWatch {
    total: u64,
    since: u64,
}

impl CpuWatch {
    fn start(&mut self) {
        self.since = thread_cpu_ns().unwrap_or(0);
    }
    fn stop(&mut self) {
        self.total += thread_cpu_ns().unwrap_or(0).saturating_sub(self.since);
    }
}

/// The key figures at `N` = 10⁶ in CPU time (see the module docs).
fn cpu_report(_: &mut Criterion) {
    if thread_cpu_ns().is_none() {
        println!("timers cpu: no /proc/thread-self/schedstat; skipped");
        return;
    }
    const BATCH: usize = 20_000;
    let n = 1_000_000;
    let dt = 1.0 / FPS;
    let burn = burn_times();
    let mut frame_ns = Vec::new();
    for (name, queue) in QUEUES {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let mut timers = Timers::builder().capacity(n).queue(queue).build();
        let mut ids: Vec<TimerId> = (0..n)
            .map(|i| add_torch(&mut timers, random_delay(&mut rng), i))
            .collect();
        let mut world = World::new(n);
        timers.next_due();
        let add = cpu_median(5, |watch| {
            let delays: Vec<f64> = (0..BATCH).map(|_| random_delay(&mut rng)).collect();
            watch.start();
            let added: Vec<TimerId> = delays
                .iter()
                .map(|&d| add_torch(&mut timers, d, 0))
                .collect();
            watch.stop();
            for id in added {
                timers.cancel(id);
            }
            BATCH as u64
        });
        let cancel = cpu_median(5, |watch| {
            for k in 0..BATCH {
                let j = rng.random_range(k..n);
                ids.swap(k, j);
            }
            watch.start();
            for id in &ids[..BATCH] {
                black_box(timers.cancel(*id));
            }
            watch.stop();
            for id in &mut ids[..BATCH] {
                *id = add_torch(&mut timers, random_delay(&mut rng), 0);
            }
            BATCH as u64
        });
        let set_time = cpu_median(5, |watch| {
            let moves: Vec<(TimerId, f64)> = (0..BATCH)
                .map(|_| (ids[rng.random_range(0..n)], random_delay(&mut rng)))
                .collect();
            watch.start();
            for &(id, at) in &moves {
                timers.set_time(id, at).unwrap();
            }
            watch.stop();
            BATCH as u64
        });
        let idle = cpu_median(5, |watch| {
            let n_advances = 20_000_000;
            watch.start();
            for _ in 0..n_advances {
                black_box(timers.advance(black_box(1e-12), &mut world).unwrap());
            }
            watch.stop();
            n_advances
        });
        assert_eq!(world.n_out, 0, "the idle advances fired a timer");
        drop((timers, ids, world));
        let frame = cpu_median(3, |watch| {
            let mut timers = Timers::builder().capacity(n).queue(queue).build();
            for (i, &burn_time) in burn.iter().enumerate() {
                add_torch(&mut timers, burn_time, i);
            }
            timers.next_due();
            let mut world = World::new(n);
            watch.start();
            for _ in 0..CYCLE_FRAMES {
                black_box(timers.advance(dt, &mut world).unwrap());
            }
            watch.stop();
            assert_eq!(world.n_out, N_TORCHES as u64);
            CYCLE_FRAMES
        });
        frame_ns.push(frame);
        println!(
            "timers cpu: {name}, N = 10^6: add {add:.0} ns, cancel {cancel:.0} ns, \
             set_time {set_time:.0} ns, idle advance {idle:.2} ns; \
             60 fps frame over 10^6 torches {:.3} ms",
            frame / 1e6
        );
    }
    let polling = cpu_median(3, |watch| {
        let mut torches: Vec<PolledTorch> = burn
            .iter()
            .map(|&life_span| PolledTorch {
                life_span,
                lit: true,
            })
            .collect();
        watch.start();
        for _ in 0..CYCLE_FRAMES {
            black_box(poll_frame(&mut torches, dt));
        }
        watch.stop();
        CYCLE_FRAMES
    });
    let ratios: Vec<String> = QUEUES
        .iter()
        .zip(&frame_ns)
        .map(|((name, _), frame)| format!("{:.1}x the {name} frame", polling / frame))
        .collect();
    println!(
        "timers cpu: polling frame over 10^6 torches {:.3} ms: {}",
        polling / 1e6,
        ratios.join(", ")
    );
    println!(
        "timers cpu: one dependent cache miss over 64 MB (the slots of 10^6 timers) {:.0} ns",
        dependent_miss_ns()
    );
}

/// CPU nanoseconds of one dependent load at a random place in 64 MB — the size of 10⁶ timer
/// slots — by a pointer chase around one random cycle of 2²⁰ cache lines (median of 5): the
/// "one cache miss" a cancel or change of time is measured against, in the same run.
fn dependent_miss_ns() -> f64 {
    let chase = PointerChase::new(1 << 20, 12);
    cpu_median(5, |watch| {
        let steps = 1_000_000;
        watch.start();
        let at = chase.walk(steps);
        watch.stop();
        black_box(at);
        steps as u64
    })
}

/// Add, cancel, change time and idle advance on one manager per (pending set, `N`).
fn bench_operations(c: &mut Criterion) {
    for (name, queue) in QUEUES {
        for n in SIZES {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(n as u64);
            let mut timers = Timers::builder().capacity(n).queue(queue).build();
            let mut ids: Vec<TimerId> = (0..n)
                .map(|i| add_torch(&mut timers, random_delay(&mut rng), i))
                .collect();
            let mut world = World::new(n);
            // Steady state: the ladder has spread its timers over buckets, as it has in a
            // game that is running (before that, every add is a cheap append to its Top).
            timers.next_due();

            let mut added = Vec::with_capacity(CHUNK);
            c.bench_function(&format!("timers_add/{name}/{n}"), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut left = iters;
                    while left > 0 {
                        let chunk = left.min(CHUNK as u64) as usize;
                        left -= chunk as u64;
                        let delays: Vec<f64> = (0..chunk).map(|_| random_delay(&mut rng)).collect();
                        let start = Instant::now();
                        for &delay in &delays {
                            added.push(add_torch(&mut timers, delay, 0));
                        }
                        total += start.elapsed();
                        for id in added.drain(..) {
                            timers.cancel(id);
                        }
                    }
                    total
                });
            });

            c.bench_function(&format!("timers_cancel/{name}/{n}"), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut left = iters;
                    while left > 0 {
                        let chunk = left.min(CHUNK as u64) as usize;
                        left -= chunk as u64;
                        // Distinct random victims: the first `chunk` of a partial shuffle.
                        for k in 0..chunk {
                            let j = rng.random_range(k..n);
                            ids.swap(k, j);
                        }
                        let start = Instant::now();
                        for id in &ids[..chunk] {
                            black_box(timers.cancel(*id));
                        }
                        total += start.elapsed();
                        for id in &mut ids[..chunk] {
                            *id = add_torch(&mut timers, random_delay(&mut rng), 0);
                        }
                    }
                    total
                });
            });

            c.bench_function(&format!("timers_set_time/{name}/{n}"), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut left = iters;
                    while left > 0 {
                        let chunk = left.min(CHUNK as u64) as usize;
                        left -= chunk as u64;
                        // The victims and their new times are drawn untimed, as in
                        // `cpu_report`: a game holds the id of the timer it moves, while a
                        // draw from this 8 MB array of ids is a cache miss of its own.
                        let moves: Vec<(TimerId, f64)> = (0..chunk)
                            .map(|_| (ids[rng.random_range(0..n)], random_delay(&mut rng)))
                            .collect();
                        let start = Instant::now();
                        for &(id, at) in &moves {
                            timers.set_time(id, at).unwrap();
                        }
                        total += start.elapsed();
                    }
                    total
                });
            });

            // Everything is at least 1 s away; 10⁹ idle advances move the clock by 1 ms.
            timers.advance(0.0, &mut world).unwrap();
            c.bench_function(&format!("timers_idle_advance/{name}/{n}"), |b| {
                b.iter(|| black_box(timers.advance(black_box(1e-12), &mut world)));
            });
            assert_eq!(world.n_out, 0, "the idle advances fired a timer");
        }
    }

    // The chapter's RemoveCallback: linear search, then re-heapify.
    for n in [1_000, 100_000] {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut heap: BinaryHeap<(u64, u32)> = (0..n as u32)
            .map(|id| (rng.random_range(0..1u64 << 40), id))
            .collect();
        let mut next_id = n as u32;
        let mut live: Vec<u32> = (0..n as u32).collect();
        c.bench_function(&format!("timers_cancel/chapter/{n}"), |b| {
            b.iter(|| {
                let k = rng.random_range(0..n);
                let victim = live[k];
                heap.retain(|&(_, id)| id != victim);
                heap.push((rng.random_range(0..1u64 << 40), next_id));
                live[k] = next_id;
                next_id += 1;
            });
        });
    }
}

/// Torches as the chapter's Listing 3 keeps them.
#[derive(Clone, Copy)]
struct PolledTorch {
    life_span: f64,
    lit: bool,
}

/// One frame of the chapter's polling loop: Listing 3 (`Torch::Update`) on every torch.
/// Returns how many went out.
#[inline(never)]
fn poll_frame(torches: &mut [PolledTorch], dt: f64) -> u32 {
    let mut n_out = 0;
    for torch in torches {
        if torch.life_span > 0.0 {
            torch.life_span -= dt;
            if torch.life_span <= 0.0 {
                torch.lit = false;
                n_out += 1;
            }
        }
    }
    n_out
}

fn burn_times() -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
    (0..N_TORCHES)
        .map(|_| rng.random_range(1e-9..10.0))
        .collect()
}

/// One 60 fps frame over 10⁶ torches: event-based on each pending set, then polling.
fn bench_frame(c: &mut Criterion) {
    let dt = 1.0 / FPS;
    let burn = burn_times();
    for (name, queue) in QUEUES {
        let make = || {
            let mut timers = Timers::builder().capacity(N_TORCHES).queue(queue).build();
            for (i, &burn_time) in burn.iter().enumerate() {
                add_torch(&mut timers, burn_time, i);
            }
            // Setup, like the adds: the ladder spreads the bulk-added timers once.
            timers.next_due();
            (timers, World::new(N_TORCHES), 0u64)
        };
        let mut state = make();
        c.bench_function(&format!("frame_1e6/{name}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    if state.2 == CYCLE_FRAMES {
                        state = make();
                    }
                    let (timers, world, frame) = &mut state;
                    let start = Instant::now();
                    black_box(timers.advance(dt, world).unwrap());
                    total += start.elapsed();
                    *frame += 1;
                }
                total
            });
        });
    }

    let make = || {
        let torches: Vec<PolledTorch> = burn
            .iter()
            .map(|&life_span| PolledTorch {
                life_span,
                lit: true,
            })
            .collect();
        (torches, 0u64)
    };
    let mut state = make();
    c.bench_function("frame_1e6/polling", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if state.1 == CYCLE_FRAMES {
                    state = make();
                }
                let (torches, frame) = &mut state;
                let start = Instant::now();
                black_box(poll_frame(torches, dt));
                total += start.elapsed();
                *frame += 1;
            }
            total
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .without_plots();
    targets = cpu_report, bench_operations, bench_frame
}
criterion_main!(benches);
