//! PHOLD: reproducibility, queue independence, and event counts against closed forms.

use warpsim_core::{Discard, Kernel, QueueKind, Report, RunConfig, Sequential};
use warpsim_models::phold::PholdParams;

fn run(params: &PholdParams, seed: u64, queue: QueueKind) -> Report {
    Sequential::new(RunConfig::new(seed).end_time(params.end))
        .queue(queue)
        .run(params.build().unwrap(), &mut Discard)
        .unwrap()
}

fn small() -> PholdParams {
    PholdParams {
        lps: 256,
        end: 40.0,
        ..PholdParams::default()
    }
}

#[test]
fn same_seed_same_trace_on_every_queue() {
    let params = small();
    let heap = run(&params, 7, QueueKind::Heap);
    let ladder = run(&params, 7, QueueKind::Ladder);
    let again = run(&params, 7, QueueKind::Ladder);
    assert_eq!(heap.trace_hash, ladder.trace_hash);
    assert_eq!(heap.events_committed, ladder.events_committed);
    assert_eq!(ladder.trace_hash, again.trace_hash);
}

#[test]
fn queues_agree_on_long_runs() {
    // Long enough for the ladder queue to build and tear down rungs many times.
    let end = if cfg!(debug_assertions) { 50.0 } else { 400.0 };
    for (lps, population) in [(1024, 1), (64, 16), (4096, 2)] {
        let params = PholdParams {
            lps,
            population,
            end,
            ..PholdParams::default()
        };
        let heap = run(&params, 7, QueueKind::Heap);
        let ladder = run(&params, 7, QueueKind::Ladder);
        assert_eq!(heap.events_committed, ladder.events_committed, "{lps} LPs");
        assert_eq!(heap.trace_hash, ladder.trace_hash, "{lps} LPs");
    }
}

#[test]
fn different_seeds_give_different_traces() {
    let params = small();
    let hashes: Vec<_> = (0..8)
        .map(|seed| run(&params, seed, QueueKind::Ladder).trace_hash)
        .collect();
    for (i, a) in hashes.iter().enumerate() {
        for b in &hashes[i + 1..] {
            assert_ne!(a, b);
        }
    }
}

#[test]
fn event_count_is_within_statistical_bounds() {
    // Each LP's events form a renewal process with increments lookahead + Exp(mean -
    // lookahead): over [0, end) the count has mean about end / mean and variance about
    // end · var / mean³, with var = (mean - lookahead)². Summed over lps × population
    // independent chains (remote sends only move chains between LPs).
    for (population, remote) in [(1, 0.25), (4, 1.0), (2, 0.0)] {
        let params = PholdParams {
            lps: 512,
            population,
            remote,
            end: 50.0,
            ..PholdParams::default()
        };
        let chains = f64::from(params.lps * population);
        let expected = chains * params.end / params.mean;
        let variance = params.end * (params.mean - params.lookahead).powi(2) / params.mean.powi(3);
        let sd = (chains * variance).sqrt();
        let report = run(&params, 11, QueueKind::Ladder);
        let got = report.events_committed as f64;
        assert!(
            (got - expected).abs() < 6.0 * sd + chains,
            "population {population}, remote {remote}: {got} events, expected {expected} ± {sd}"
        );
        // The population is constant: every event sends exactly one.
        assert_eq!(
            report.pending_at_end,
            params.lps as usize * population as usize
        );
    }
}

#[test]
fn ross_defaults_give_the_exact_count() {
    // With lookahead = mean every delay is exactly `mean`: events at 1, 2, …, end - 1.
    let params = PholdParams {
        lps: 100,
        population: 3,
        lookahead: 1.0,
        mean: 1.0,
        end: 50.0,
        ..PholdParams::default()
    };
    let report = run(&params, 3, QueueKind::Heap);
    assert_eq!(report.events_committed, 100 * 3 * 49);
}

#[test]
fn work_does_not_change_the_trace() {
    let params = small();
    let busy = PholdParams {
        work: 100,
        ..small()
    };
    assert_eq!(
        run(&params, 5, QueueKind::Heap).trace_hash,
        run(&busy, 5, QueueKind::Heap).trace_hash
    );
}

#[test]
fn bad_parameters_are_refused() {
    let cases = [
        (PholdParams { lps: 0, ..small() }, "lps"),
        (
            PholdParams {
                population: 0,
                ..small()
            },
            "population",
        ),
        (
            PholdParams {
                remote: 1.5,
                ..small()
            },
            "remote",
        ),
        (
            PholdParams {
                remote: f64::NAN,
                ..small()
            },
            "remote",
        ),
        (
            PholdParams {
                mean: -1.0,
                ..small()
            },
            "mean",
        ),
        (
            PholdParams {
                mean: f64::NAN,
                ..small()
            },
            "mean",
        ),
        (
            PholdParams {
                mean: 0.05,
                ..small()
            },
            "mean",
        ),
        (
            PholdParams {
                lookahead: -0.1,
                ..small()
            },
            "lookahead",
        ),
        (
            PholdParams {
                end: f64::INFINITY,
                ..small()
            },
            "end",
        ),
    ];
    for (params, name) in cases {
        let error = params.build().unwrap_err();
        assert_eq!(error.param, name, "{error}");
    }
}
