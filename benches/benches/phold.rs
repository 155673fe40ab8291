//! PHOLD on the sequential kernel: events per second at three model sizes, with each queue.
//!
//! Run: `cargo bench -p warpsim-benches --bench phold`. Each iteration is one whole run
//! (initialisation included) sized to commit about two million events; throughput is reported
//! per committed event. Figures go to BENCHMARKS.md.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::time::Duration;
use warpsim_core::{Discard, Kernel, QueueKind, RunConfig, Sequential};
use warpsim_models::phold::PholdParams;

fn phold(c: &mut Criterion) {
    let mut group = c.benchmark_group("phold_sequential");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    // (LPs, end time): about 2M events for the smaller sizes; 1M LPs run to time 3 (3M
    // events), so start-up is a third of the work there, as it is in ROSS's runs of that size.
    for (lps, end) in [(1024u32, 2000.0), (16384, 128.0), (1_048_576, 3.0)] {
        let params = PholdParams {
            lps,
            end,
            ..PholdParams::default()
        };
        let expected = (f64::from(lps) * end / params.mean) as u64;
        group.throughput(Throughput::Elements(expected));
        for queue in [QueueKind::Ladder, QueueKind::Heap] {
            group.bench_with_input(BenchmarkId::new(queue.to_string(), lps), &params, |b, p| {
                b.iter(|| {
                    let kernel = Sequential::new(RunConfig::new(7).end_time(p.end)).queue(queue);
                    kernel.run(p.build().unwrap(), &mut Discard).unwrap()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, phold);
criterion_main!(benches);
