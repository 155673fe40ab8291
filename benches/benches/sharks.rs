//! Sharks World on the sequential kernel: a few points of the paper's grid (creatures ×
//! sectors, end 2000), each iteration one whole run from a fixed population.
//!
//! Run: `cargo bench -p warpsim-benches --bench sharks`. Throughput is per committed event
//! (counted once, before measuring), so criterion reports events per second; the full grid
//! with granularity and available parallelism is in BENCHMARKS.md, made with the CLI.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::time::Duration;
use warpsim_core::{Discard, Kernel, RunConfig, Sequential};
use warpsim_models::sharks::{CancelStyle, RandomPopulation, SharksParams};

fn sharks(c: &mut Criterion) {
    let mut group = c.benchmark_group("sharks_sequential");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for (creatures, sectors, cancel) in [
        (512u32, 8u32, CancelStyle::App),
        (2048, 8, CancelStyle::App),
        (2048, 16, CancelStyle::App),
        (2048, 16, CancelStyle::Kernel),
    ] {
        let params = SharksParams {
            sectors_x: sectors,
            sectors_y: sectors,
            cancel,
            ..SharksParams::default()
        };
        let population = RandomPopulation {
            creatures,
            ..RandomPopulation::default()
        };
        let creatures_list = population.generate(&params, 7).unwrap();
        let kernel = Sequential::new(RunConfig::new(7).end_time(params.kernel_end_time()));
        let events = kernel
            .run(params.build(&creatures_list).unwrap(), &mut Discard)
            .unwrap()
            .events_committed;
        group.throughput(Throughput::Elements(events));
        let id = BenchmarkId::new(
            format!("{sectors}x{sectors}-{cancel:?}").to_lowercase(),
            creatures,
        );
        group.bench_with_input(id, &creatures_list, |b, list| {
            b.iter(|| {
                kernel
                    .run(params.build(list).unwrap(), &mut Discard)
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, sharks);
criterion_main!(benches);
