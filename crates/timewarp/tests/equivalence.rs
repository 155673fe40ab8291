//! Time Warp commits exactly what the sequential kernel commits — trace hash, counts, pending
//! events at the end and outputs in order — over many seeds, on 1–4 threads, both
//! cancellation modes, with and without periodic state saving, and under a tiny window and a
//! tiny memory budget.

mod common;

use common::{Canceller, Cascade, Chaos, Countdown, check_equivalent, seeds};
use warpsim_models::phold::PholdParams;

#[test]
fn phold_matches_the_sequential_kernel() {
    let mut rollbacks = 0;
    for seed in 0..seeds() {
        let params = PholdParams {
            lps: 24,
            end: 12.0,
            remote: 0.5,
            lookahead: if seed % 4 == 0 { 0.0 } else { 0.1 },
            ..PholdParams::default()
        };
        let (r, _) = check_equivalent("phold", seed, params.end, 64 * 1024, || {
            params.build().unwrap()
        });
        rollbacks += r;
    }
    // The runs were optimistic for real, not accidentally sequential.
    assert!(rollbacks > 0);
}

#[test]
fn cancel_and_reschedule_heavy_model_matches_the_sequential_kernel() {
    let mut rollbacks = 0;
    let mut antimessages = 0;
    for seed in 0..seeds() {
        let (r, a) = check_equivalent("chaos", seed, 8.0, 256 * 1024, || {
            vec![Chaos::default(); 12]
        });
        rollbacks += r;
        antimessages += a;
    }
    assert!(rollbacks > 0 && antimessages > 0);
}

#[test]
fn zero_delay_cascades_match_the_sequential_kernel() {
    for seed in 0..seeds() / 2 {
        check_equivalent("cascade", seed, 10.0, 64 * 1024, || vec![Cascade; 9]);
    }
}

#[test]
fn drained_runs_match_the_sequential_kernel() {
    // No end time: the runs end when no event is left.
    for seed in 0..seeds() / 4 {
        check_equivalent("canceller", seed, f64::INFINITY, 64 * 1024, || {
            vec![Canceller::default(); 2]
        });
        check_equivalent("countdown", seed, f64::INFINITY, 64 * 1024, || {
            vec![Countdown { left: 40 }; 7]
        });
    }
}
