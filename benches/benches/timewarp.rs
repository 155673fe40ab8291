//! Time Warp on threads against the sequential kernel, side by side in one run: PHOLD with
//! the parameters (population 1, remote 0.25, lookahead 0.1, mean 1) at 1024 and
//! 16384 LPs, on 1 and 2 worker threads, both cancellation modes; and Sharks World (2048
//! creatures, 8×8 and 16×16 sectors, end 2000) on 2 threads, both cancellation modes.
//!
//! `cargo bench -p warpsim-benches --bench timewarp`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use warpsim_core::{Discard, Kernel, RunConfig, Sequential};
use warpsim_models::phold::PholdParams;
use warpsim_timewarp::{Cancellation, TimeWarp};

fn phold(c: &mut Criterion) {
    let mut group = c.benchmark_group("timewarp_phold");
    group.sample_size(10);
    for (lps, end) in [(1024u32, 200.0), (16384, 20.0)] {
        let params = PholdParams {
            lps,
            end,
            ..PholdParams::default()
        };
        let config = RunConfig::new(7).end_time(end);
        let events = Sequential::new(config.clone())
            .run(params.build().unwrap(), &mut Discard)
            .unwrap()
            .events_committed;
        group.throughput(Throughput::Elements(events));
        group.bench_with_input(BenchmarkId::new("sequential", lps), &lps, |b, _| {
            b.iter(|| {
                Sequential::new(config.clone())
                    .run(params.build().unwrap(), &mut Discard)
                    .unwrap()
            })
        });
        for threads in [1, 2] {
            for cancellation in [Cancellation::Lazy, Cancellation::Aggressive] {
                let name = format!("timewarp_{threads}t_{cancellation}");
                group.bench_with_input(BenchmarkId::new(name, lps), &lps, |b, _| {
                    b.iter(|| {
                        TimeWarp::new(config.clone())
                            .threads(threads)
                            .cancellation(cancellation)
                            .run(params.build().unwrap(), &mut Discard)
                            .unwrap()
                    })
                });
            }
        }
    }
    group.finish();
}

fn sharks(c: &mut Criterion) {
    use warpsim_models::sharks::{RandomPopulation, SharksParams};
    let mut group = c.benchmark_group("timewarp_sharks");
    group.sample_size(10);
    for sectors in [8u32, 16] {
        let params = SharksParams {
            sectors_x: sectors,
            sectors_y: sectors,
            end: 2000.0,
            ..SharksParams::default()
        };
        let population = RandomPopulation {
            creatures: 2048,
            ..RandomPopulation::default()
        };
        let creatures = population.generate(&params, 7).unwrap();
        let config = RunConfig::new(7).end_time(params.kernel_end_time());
        let events = Sequential::new(config.clone())
            .run(params.build(&creatures).unwrap(), &mut Discard)
            .unwrap()
            .events_committed;
        group.throughput(Throughput::Elements(events));
        let label = format!("{sectors}x{sectors}");
        group.bench_function(BenchmarkId::new("sequential", &label), |b| {
            b.iter(|| {
                Sequential::new(config.clone())
                    .run(params.build(&creatures).unwrap(), &mut Discard)
                    .unwrap()
            })
        });
        for cancellation in [Cancellation::Lazy, Cancellation::Aggressive] {
            let name = format!("timewarp_2t_{cancellation}");
            group.bench_function(BenchmarkId::new(name, &label), |b| {
                b.iter(|| {
                    TimeWarp::new(config.clone())
                        .threads(2)
                        .cancellation(cancellation)
                        .run(params.build(&creatures).unwrap(), &mut Discard)
                        .unwrap()
                })
            });
        }
    }
    group.finish();
}

/// Dynamic load balancing on an unbalanced start: PHOLD 16384 LPs with three quarters of the
/// LPs on thread 0 (a user partition), 2 threads, with and without `load_balancing`.
fn balancing(c: &mut Criterion) {
    use warpsim_timewarp::Partition;
    let mut group = c.benchmark_group("timewarp_balancing");
    group.sample_size(10);
    let lps = 16384usize;
    let params = PholdParams {
        lps: lps as u32,
        end: 20.0,
        ..PholdParams::default()
    };
    let config = RunConfig::new(7).end_time(params.end);
    let skewed = Partition::Map((0..lps).map(|i| usize::from(i >= lps * 3 / 4)).collect());
    for balance in [false, true] {
        let name = if balance { "balanced" } else { "static" };
        group.bench_function(BenchmarkId::new(name, "phold_16384_skewed_2t"), |b| {
            b.iter(|| {
                TimeWarp::new(config.clone())
                    .threads(2)
                    .partition(skewed.clone())
                    .load_balancing(balance)
                    .run(params.build().unwrap(), &mut Discard)
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, phold, sharks, balancing);
criterion_main!(benches);
