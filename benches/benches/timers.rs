//! The game-loop timer manager (`warpsim-timers`), side by side with the chapter's designs.
//!
//! Every `Timers` benchmark runs on both pending sets (`heap` and `ladder`). Each timer is a
//! torch: its callback puts out the torch whose index is the timer's payload (the callback
//! captures nothing, so no timer allocates).
//!
//! For each pending set and each `N` in 10³, 10⁵, 10⁶, one manager is filled with `N` timers
//! due uniformly over `[1, 101)` s and then measured, `N` staying constant throughout:
//!
//! - `timers_add/Q/N`: add one timer. Timed in chunks of 256; each chunk is cancelled again,
//!   untimed.
//! - `timers_cancel/Q/N`: cancel a uniformly random live timer. Timed in chunks of 256
//!   distinct victims; each chunk is replaced again, untimed.
//! - `timers_set_time/Q/N`: move a uniformly random live timer to a random time.
//! - `timers_idle_advance/Q/N`: `advance` by 10⁻¹² s with nothing due.
//!
//! `timers_cancel/chapter/N` is the chapter's `RemoveCallback` at 10³ and 10⁵: a linear search
//! of the heap vector and a re-heapify (`BinaryHeap::retain`), then a push to keep `N`.
//!
//! `frame_1e6/Q` is one 60 fps frame with 10⁶ torches burning out uniformly over 10 s (about
//! 1 667 callbacks per frame); `frame_1e6/polling` is the chapter's Listing 3 over the same
//! 10⁶ torches. Both repeat the same 600-frame cycle (rebuilt, untimed, when it ends), so each
//! reports the mean frame of the cycle.
//!
//! Run with `cargo bench -p warpsim-benches --bench timers`; results in `BENCHMARKS.md`.

use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use warpsim_timers::{TimerCtx, TimerId, TimerQueue, Timers};

const SIZES: [usize; 3] = [1_000, 100_000, 1_000_000];
const QUEUES: [(&str, TimerQueue); 2] =
    [("heap", TimerQueue::Heap), ("ladder", TimerQueue::Ladder)];
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
                b.iter(|| {
                    let id = ids[rng.random_range(0..n)];
                    timers.set_time(id, random_delay(&mut rng)).unwrap();
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
                let mut n_out = 0u32;
                for torch in torches.iter_mut() {
                    // Listing 3, Torch::Update.
                    if torch.life_span > 0.0 {
                        torch.life_span -= dt;
                        if torch.life_span <= 0.0 {
                            torch.lit = false;
                            n_out += 1;
                        }
                    }
                }
                black_box(n_out);
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
        .measurement_time(Duration::from_secs(2));
    targets = bench_operations, bench_frame
}
criterion_main!(benches);
