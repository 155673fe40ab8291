//! Time Warp across ranks (loopback transport, threads standing in for processes) commits
//! exactly what the sequential kernel commits: trace hash, counts, pending events at the end
//! and outputs in order, on 1–3 ranks × 1–2 threads, both cancellation modes.

mod common;

use common::{Canceller, Chaos, Countdown, Misbehave, check_cluster_equivalent, cluster, seeds};
use warpsim_core::{Kernel, RunConfig, Sequential};
use warpsim_models::pets::{PetsParams, Style};
use warpsim_models::phold::PholdParams;
use warpsim_models::sharks::{CancelStyle, RandomPopulation, SharksParams};
use warpsim_timewarp::TimeWarp;

#[test]
fn phold_across_ranks_matches_the_sequential_kernel() {
    let mut rollbacks = 0;
    for seed in 0..seeds() {
        let params = PholdParams {
            lps: 24,
            end: 12.0,
            remote: 0.5,
            lookahead: if seed % 4 == 0 { 0.0 } else { 0.1 },
            ..PholdParams::default()
        };
        rollbacks +=
            check_cluster_equivalent("phold", seed, params.end, || params.build().unwrap());
    }
    assert!(rollbacks > 0, "the runs were optimistic for real");
}

#[test]
fn cancel_and_reschedule_across_ranks_match_the_sequential_kernel() {
    for seed in 0..seeds() {
        check_cluster_equivalent("chaos", seed, 8.0, || vec![Chaos::default(); 12]);
    }
    for seed in 0..seeds() / 4 {
        check_cluster_equivalent("canceller", seed, f64::INFINITY, || {
            vec![Canceller::default(); 2]
        });
        check_cluster_equivalent("countdown", seed, f64::INFINITY, || {
            vec![Countdown { left: 40 }; 7]
        });
    }
}

#[test]
fn pets_and_sharks_across_ranks_match_the_sequential_kernel() {
    let runs = if cfg!(debug_assertions) { 2 } else { 12 };
    for seed in 0..runs {
        let pets = PetsParams {
            tasks: 300,
            gates: 4,
            style: Style::Events,
            ..PetsParams::default()
        };
        check_cluster_equivalent("pets", seed, f64::INFINITY, || pets.build().unwrap());
        for cancel in [CancelStyle::App, CancelStyle::Kernel] {
            let params = SharksParams {
                width: 4096.0,
                height: 4096.0,
                sectors_x: 4,
                sectors_y: 3,
                end: 60.0,
                cancel,
                ..SharksParams::default()
            };
            let population = RandomPopulation {
                creatures: 96,
                radius_min: 40.0,
                radius_max: 120.0,
                ..RandomPopulation::default()
            };
            let creatures = population.generate(&params, seed).unwrap();
            check_cluster_equivalent("sharks", seed, params.kernel_end_time(), || {
                params.build(&creatures).unwrap()
            });
        }
    }
}

#[test]
fn ranks_with_different_parameters_fail_together() {
    use std::time::Duration;
    use warpsim_core::Discard;
    use warpsim_timewarp::cluster::loopback;
    let params = PholdParams {
        lps: 16,
        end: 5.0,
        ..PholdParams::default()
    };
    let kernel = TimeWarp::new(RunConfig::new(1).end_time(5.0)).threads(1);
    let errors: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = loopback(2, Duration::from_secs(30))
            .into_iter()
            .enumerate()
            .map(|(rank, mut transport)| {
                let (kernel, params) = (&kernel, &params);
                scope.spawn(move || {
                    let fingerprint = 10 + rank as u64;
                    let (result, _) = kernel.run_cluster(
                        params.build().unwrap(),
                        &mut Discard,
                        &mut transport,
                        fingerprint,
                    );
                    result.unwrap_err().error.to_string()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for error in &errors {
        assert!(error.contains("different model parameters"), "{error}");
    }
}

#[test]
fn a_rank_that_never_joins_ends_the_run_with_a_timeout() {
    use std::time::Duration;
    use warpsim_core::Discard;
    use warpsim_timewarp::cluster::loopback;
    let params = PholdParams {
        lps: 16,
        end: 5.0,
        ..PholdParams::default()
    };
    let kernel = TimeWarp::new(RunConfig::new(1).end_time(5.0)).threads(1);
    let mut transports = loopback(2, Duration::from_millis(300));
    // Rank 1 dies before it starts.
    drop(transports.pop());
    let (result, _) =
        kernel.run_cluster(params.build().unwrap(), &mut Discard, &mut transports[0], 7);
    let error = result.unwrap_err().error.to_string();
    assert!(error.contains("did a rank die"), "{error}");
}

#[test]
fn model_errors_stop_every_rank_at_the_same_event() {
    for panic in [false, true] {
        let make = || vec![Misbehave { bad: 4, panic }; 7];
        let config = RunConfig::new(5);
        let mut outputs = Vec::new();
        let expected = Sequential::new(config.clone()).run(make(), &mut outputs);
        let expected = expected.unwrap_err();
        for ranks in 1..=3 {
            for threads in 1..=2 {
                let kernel = TimeWarp::new(config.clone()).threads(threads);
                let (result, got_outputs, _) = cluster(&kernel, ranks, &make);
                let error = result.unwrap_err();
                let what = format!("{ranks} ranks × {threads} threads, panic {panic}");
                assert_eq!(error.to_string(), expected.to_string(), "{what}");
                assert_eq!(
                    error.partial.trace_hash, expected.partial.trace_hash,
                    "{what}"
                );
                assert_eq!(
                    error.partial.events_committed, expected.partial.events_committed,
                    "{what}"
                );
                assert!(got_outputs == outputs, "{what}: outputs differ");
            }
        }
    }
}

/// Lazy cancellation across ranks has a known defect (an antimessage can arrive with no event
/// to annihilate, and the run then commits events a sequential run does not): a run asked
/// for it cancels aggressively, says so once (rank 0), and commits what the sequential
/// kernel does.
#[test]
fn lazy_cancellation_across_ranks_runs_aggressive_and_says_so() {
    use std::sync::{Arc, Mutex};
    let config = RunConfig::new(5).end_time(30.0);
    let make = || vec![Chaos::default(); 9];
    let expected = Sequential::new(config.clone())
        .run(make(), &mut Vec::new())
        .unwrap();
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let seen = warnings.clone();
    let kernel = TimeWarp::new(config)
        .threads(1)
        .cancellation(warpsim_timewarp::Cancellation::Lazy)
        .on_warning(Arc::new(move |warning: &warpsim_timewarp::Warning| {
            seen.lock().unwrap().push(warning.clone());
        }));
    let (report, _, stats) = cluster(&kernel, 3, &make);
    assert_eq!(report.unwrap().trace_hash, expected.trace_hash);
    assert_eq!(
        stats.cancellation,
        warpsim_timewarp::Cancellation::Aggressive
    );
    assert_eq!(stats.lazy_hits, 0);
    assert_eq!(
        *warnings.lock().unwrap(),
        vec![warpsim_timewarp::Warning::LazyCancellationAcrossRanks]
    );
}
