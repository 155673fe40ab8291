//! Feeding pets: the seed article's scenario (1M pets, 10 feeders) in the events style on the
//! sequential kernel, against the article's Go program (anchor: 0.24 s CPU, about 7.5 M
//! events/s on this machine), plus the step and jump loops and the scaling of replications
//! over threads.
//!
//! Run: `cargo bench -p warpsim-benches --bench pets` (about two minutes). Throughput is per
//! committed event (one per meal, one per repair, as in the Go program). Before criterion's
//! wall-clock groups, the bench prints the CPU time of single runs (from
//! `/proc/thread-self/schedstat`), which is what the anchors are measured in and what other
//! processes on a shared machine do not inflate. Figures go to BENCHMARKS.md.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use warpsim_core::{Discard, Kernel, QueueKind, RunConfig, Sequential, derive_seed};
use warpsim_models::pets::{Durations, PetsParams, Style};

/// CPU time of the calling thread in seconds (Linux; `None` elsewhere).
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(nanos as f64 * 1e-9)
}

/// One events-style run of `params` on the sequential kernel; returns the committed events.
fn run_events(params: &PetsParams, seed: u64, queue: QueueKind) -> u64 {
    let kernel = Sequential::new(RunConfig::new(seed)).queue(queue);
    let report = kernel
        .run(params.build().expect("valid parameters"), &mut Discard)
        .expect("the run succeeds");
    report.events_committed
}

/// Prints the median CPU time of a few default runs per queue, and the events/s it implies.
fn cpu_report() {
    let params = PetsParams::default();
    for queue in [QueueKind::Heap, QueueKind::Ladder] {
        let mut samples = Vec::new();
        let mut events = 0;
        for _ in 0..7 {
            let Some(before) = thread_cpu_seconds() else {
                println!("pets cpu: no /proc/thread-self/schedstat; skipped");
                return;
            };
            events = run_events(&params, 100, queue);
            let after = thread_cpu_seconds().unwrap_or(before);
            samples.push(after - before);
        }
        samples.sort_by(f64::total_cmp);
        let median = samples[samples.len() / 2];
        println!(
            "pets cpu: events style, default scenario, {queue} queue: {events} events, \
             median CPU {median:.3} s (min {:.3} s) = {:.2} M events/s per CPU second",
            samples[0],
            events as f64 / median / 1e6
        );
    }
}

fn pets(c: &mut Criterion) {
    cpu_report();
    let params = PetsParams::default();
    let events = run_events(&params, 100, QueueKind::Heap);
    let mut group = c.benchmark_group("pets_default");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(6));
    group.throughput(Throughput::Elements(events));
    for queue in [QueueKind::Heap, QueueKind::Ladder] {
        group.bench_with_input(
            BenchmarkId::new("events", queue.to_string()),
            &params,
            |b, p| b.iter(|| run_events(p, 100, queue)),
        );
    }
    group.finish();

    // The two loops of the article, for reference (their "events" are loop iterations, so
    // no throughput: only the time to answer the same question).
    let mut loops = c.benchmark_group("pets_loops");
    loops.sample_size(10);
    loops.warm_up_time(Duration::from_secs(1));
    loops.measurement_time(Duration::from_secs(2));
    for style in [Style::Step, Style::Jump] {
        let params = PetsParams {
            style,
            durations: Durations::Constant,
            ..PetsParams::default()
        };
        loops.bench_with_input(
            BenchmarkId::new("loop", style.to_string()),
            &params,
            |b, p| b.iter(|| p.run_loop(100, None).expect("valid parameters")),
        );
    }
    loops.finish();

    // Replications: 8 runs of a 200k-pet scenario, on a pool of 1 and of 2 threads. The runs
    // are independent, so the 2-thread time should be close to half (on an idle 2-core box).
    let small = PetsParams {
        tasks: 200_000,
        ..PetsParams::default()
    };
    let replications = 8u64;
    let per_run = run_events(&small, derive_seed(100, 0), QueueKind::Heap);
    let mut scaling = c.benchmark_group("pets_replications");
    scaling.sample_size(10);
    scaling.warm_up_time(Duration::from_secs(1));
    scaling.measurement_time(Duration::from_secs(8));
    scaling.throughput(Throughput::Elements(per_run * replications));
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        scaling.bench_with_input(BenchmarkId::new("threads", threads), &small, |b, p| {
            b.iter(|| {
                pool.install(|| {
                    (0..replications)
                        .into_par_iter()
                        .map(|index| run_events(p, derive_seed(100, index), QueueKind::Heap))
                        .sum::<u64>()
                })
            })
        });
    }
    scaling.finish();
}

criterion_group!(benches, pets);
criterion_main!(benches);
