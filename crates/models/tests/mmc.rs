//! The M/M/c queue against Erlang C: over independent replications, the 95 % confidence
//! intervals of the mean wait and the utilisation cover the formula's values.

use warpsim_core::{Committed, Kernel, QueueKind, RunConfig, Sequential, derive_seed};
use warpsim_models::mmc::{MmcParams, MmcSummary, erlang_c};

fn size(release: u64, debug: u64) -> u64 {
    if cfg!(debug_assertions) {
        debug
    } else {
        release
    }
}

fn run(params: &MmcParams, seed: u64, queue: QueueKind) -> (MmcSummary, u64) {
    let mut outputs: Vec<Committed<MmcSummary>> = Vec::new();
    let report = Sequential::new(RunConfig::new(seed))
        .queue(queue)
        .run(params.build().unwrap(), &mut outputs)
        .unwrap();
    assert_eq!(outputs.len(), 1, "one summary per run");
    (outputs[0].output, report.trace_hash.value())
}

/// Two-sided 95 % Student-t critical values for the replication counts used below.
fn t_975(replications: u64) -> f64 {
    match replications {
        8 => 2.364_624_252,
        20 => 2.093_024_054,
        other => panic!("no t value for {other} replications"),
    }
}

/// (mean, half width of the 95 % CI).
fn interval(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, t_975(values.len() as u64) * (variance / n).sqrt())
}

#[test]
fn waits_and_utilisation_match_erlang_c_within_the_confidence_interval() {
    let replications = size(20, 8);
    let customers = size(60_000, 6_000);
    for (arrival_rate, service_rate, servers) in [
        (0.5, 1.0, 1u32),
        (1.5, 1.0, 2),
        (4.0, 1.0, 5),
        (8.0, 2.0, 6),
    ] {
        let params = MmcParams {
            arrival_rate,
            service_rate,
            servers,
            customers: Some(customers),
            end: None,
            warmup: customers / 10,
        };
        let theory = erlang_c(arrival_rate, service_rate, servers).unwrap();
        let summaries: Vec<MmcSummary> = (0..replications)
            .map(|index| run(&params, derive_seed(42, index), QueueKind::Ladder).0)
            .collect();
        let waits: Vec<f64> = summaries.iter().map(|s| s.mean_wait).collect();
        let utilisations: Vec<f64> = summaries.iter().map(|s| s.utilisation).collect();
        let (wait, wait_half) = interval(&waits);
        let (busy, busy_half) = interval(&utilisations);
        println!(
            "λ={arrival_rate} μ={service_rate} c={servers}: Wq {wait:.4} ± {wait_half:.4} \
             (Erlang C {:.4}), ρ {busy:.4} ± {busy_half:.4} (exact {:.4})",
            theory.mean_wait, theory.utilisation
        );
        assert!(
            (wait - theory.mean_wait).abs() <= wait_half,
            "mean wait {wait} ± {wait_half} misses Erlang C {}",
            theory.mean_wait
        );
        assert!(
            (busy - theory.utilisation).abs() <= busy_half,
            "utilisation {busy} ± {busy_half} misses {}",
            theory.utilisation
        );
        // And the interval is tight enough to mean something: within 15 % of the value.
        assert!(
            wait_half < 0.15 * theory.mean_wait,
            "interval too wide: {wait_half}"
        );
    }
}

#[test]
fn same_run_on_both_queues() {
    let params = MmcParams {
        customers: Some(5000),
        ..MmcParams::default()
    };
    let (heap, heap_hash) = run(&params, 9, QueueKind::Heap);
    let (ladder, ladder_hash) = run(&params, 9, QueueKind::Ladder);
    assert_eq!(heap, ladder);
    assert_eq!(heap_hash, ladder_hash);
}

#[test]
fn time_window_runs_stop_at_the_end() {
    let params = MmcParams {
        customers: None,
        end: Some(2000.0),
        warmup: 100,
        ..MmcParams::default()
    };
    let (summary, _) = run(&params, 3, QueueKind::Heap);
    // About λ · end = 8000 arrivals, less the warm-up.
    assert!(
        (7000..8500).contains(&summary.customers),
        "{}",
        summary.customers
    );
    assert!((summary.utilisation - 0.8).abs() < 0.05);
}

#[test]
fn bad_parameters_are_refused() {
    let base = MmcParams::default();
    for (params, name) in [
        (
            MmcParams {
                arrival_rate: 0.0,
                ..base.clone()
            },
            "arrival-rate",
        ),
        (
            MmcParams {
                service_rate: -1.0,
                ..base.clone()
            },
            "service-rate",
        ),
        (
            MmcParams {
                servers: 0,
                ..base.clone()
            },
            "servers",
        ),
        (
            MmcParams {
                customers: Some(0),
                ..base.clone()
            },
            "customers",
        ),
        (
            MmcParams {
                warmup: 100_000,
                ..base.clone()
            },
            "warmup",
        ),
        (
            MmcParams {
                customers: None,
                end: Some(-1.0),
                ..base.clone()
            },
            "end",
        ),
        (
            MmcParams {
                customers: None,
                end: None,
                ..base.clone()
            },
            "customers",
        ),
    ] {
        assert_eq!(params.validate().unwrap_err().param, name);
    }
}
