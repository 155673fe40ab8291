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

/// Lazy cancellation across ranks runs lazily (it once ran aggressively: the MPI transport's
/// minimum was wrong, see `signed_minimum_of_the_transport_is_caught`) and commits what the
/// sequential kernel does.
#[test]
fn lazy_cancellation_across_ranks_is_lazy_and_matches_the_sequential_kernel() {
    for seed in 0..4 {
        let params = PholdParams {
            lps: 48,
            end: 40.0,
            remote: 0.9,
            ..PholdParams::default()
        };
        let config = RunConfig::new(seed).end_time(params.end);
        let expected = Sequential::new(config.clone())
            .run(params.build().unwrap(), &mut Vec::new())
            .unwrap();
        let kernel = TimeWarp::new(config)
            .threads(1)
            .cancellation(warpsim_timewarp::Cancellation::Lazy)
            .on_warning(std::sync::Arc::new(
                |warning: &warpsim_timewarp::Warning| panic!("no warning expected: {warning}"),
            ));
        let (report, _, stats) = cluster(&kernel, 3, &|| params.build().unwrap());
        assert_eq!(
            report.unwrap().trace_hash,
            expected.trace_hash,
            "seed {seed}"
        );
        assert_eq!(stats.cancellation, warpsim_timewarp::Cancellation::Lazy);
        assert_eq!(stats.early_antimessages, 0, "seed {seed}");
    }
}

/// A transport whose all-reduce minimum compares words as signed (MPICH 4.0's `MPI_MIN` on
/// `MPI_UINT64_T` did): GVT rounds use `u64::MAX` for "not taking part", which such a minimum
/// picks over every real key, so GVT would pass events still at risk. Start-up probes the
/// minimum, and the run fails with one clear error instead of committing wrong events.
#[test]
fn signed_minimum_of_the_transport_is_caught() {
    use warpsim_timewarp::cluster::{
        Arrived, Loopback, Reduction, Transport, TransportError, loopback,
    };
    struct Signed(Loopback);
    impl Transport for Signed {
        fn rank(&self) -> usize {
            self.0.rank()
        }
        fn ranks(&self) -> usize {
            self.0.ranks()
        }
        fn timeout(&self) -> std::time::Duration {
            self.0.timeout()
        }
        fn send_all(
            &mut self,
            batches: &mut Vec<(usize, Vec<u8>)>,
            arrived: &mut Arrived<'_>,
        ) -> Result<(), TransportError> {
            self.0.send_all(batches, arrived)
        }
        fn receive(&mut self, arrived: &mut Arrived<'_>) -> Result<usize, TransportError> {
            self.0.receive(arrived)
        }
        fn all_gather(
            &mut self,
            mine: &[u64],
            arrived: &mut Arrived<'_>,
        ) -> Result<Vec<u64>, TransportError> {
            self.0.all_gather(mine, arrived)
        }
        fn all_reduce(
            &mut self,
            mine: &[u64],
            op: Reduction,
            arrived: &mut Arrived<'_>,
        ) -> Result<Vec<u64>, TransportError> {
            if op != Reduction::Min {
                return self.0.all_reduce(mine, op, arrived);
            }
            // The order-preserving map between signed and unsigned words, so that the
            // loopback's (right) unsigned minimum computes a signed one.
            let flipped: Vec<u64> = mine.iter().map(|word| word ^ (1 << 63)).collect();
            let least = self.0.all_reduce(&flipped, op, arrived)?;
            Ok(least.into_iter().map(|word| word ^ (1 << 63)).collect())
        }
    }
    let params = PholdParams {
        lps: 24,
        end: 20.0,
        remote: 0.9,
        ..PholdParams::default()
    };
    let kernel = TimeWarp::new(RunConfig::new(1).end_time(params.end)).threads(1);
    let transports = loopback(2, std::time::Duration::from_secs(3));
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = transports
            .into_iter()
            .map(|transport| {
                let (kernel, params) = (&kernel, &params);
                scope.spawn(move || {
                    let mut transport = Signed(transport);
                    let lps = params.build().unwrap();
                    kernel
                        .run_cluster(lps, &mut Vec::new(), &mut transport, 42)
                        .0
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Every rank probes the minimum before any event runs, so every rank fails with it, in
    // every run (a round's own check sees it only in the rounds that find an exact key).
    let errors: Vec<String> = results
        .iter()
        .map(|result| match result {
            Ok(_) => panic!("a wrong minimum must fail the run"),
            Err(error) => error.to_string(),
        })
        .collect();
    assert!(
        errors
            .iter()
            .all(|error| error.contains("all-reduce minimum")),
        "unexpected errors: {errors:?}"
    );
}
