//! Every cookbook model on the sequential kernel and on Time Warp with 2 threads (both
//! cancellation modes): the same trace hash, content hash, outputs and final report; and each
//! against something independent (Erlang C; conservation of the network's packets).

use std::fmt::Debug;

use warpsim_core::{Committed, Kernel, LogicalProcess, RunConfig, Sequential};
use warpsim_examples::bank::{BankParams, summarise};
use warpsim_examples::mmc::QueueParams;
use warpsim_examples::network::{NetOutput, NetworkParams};
use warpsim_timewarp::{Cancellation, TimeWarp};

/// Runs `lps` on the sequential kernel and on Time Warp with 2 threads; checks they agree and
/// returns the outputs.
fn on_every_kernel<M>(seed: u64, end: f64, make: impl Fn() -> Vec<M>) -> Vec<Committed<M::Output>>
where
    M: LogicalProcess,
    M::Output: PartialEq + Debug,
{
    let config = RunConfig::new(seed).end_time(end).content_hash(true);
    let mut expected = Vec::new();
    let report = Sequential::new(config.clone())
        .run(make(), &mut expected)
        .unwrap();
    for cancellation in [Cancellation::Aggressive, Cancellation::Lazy] {
        let mut outputs = Vec::new();
        let kernel = TimeWarp::new(config.clone())
            .threads(2)
            .cancellation(cancellation);
        let (result, stats) = kernel.run_with_stats(make(), &mut outputs);
        let got = result.unwrap();
        assert_eq!(got.trace_hash, report.trace_hash, "{cancellation}\n{stats}");
        assert_eq!(got.content_hash, report.content_hash, "{cancellation}");
        assert_eq!(got.events_committed, report.events_committed);
        assert_eq!(got.pending_at_end_time, report.pending_at_end_time);
        assert!(outputs == expected, "{cancellation}: outputs differ");
    }
    expected
}

#[test]
fn the_bank_is_the_same_on_every_kernel() {
    let params = BankParams {
        branches: 4,
        end: 500.0,
        ..BankParams::default()
    };
    for seed in 0..3 {
        let outputs = on_every_kernel(seed, params.end, || params.build().unwrap());
        assert_eq!(outputs.len(), 4, "one result per branch, from finish");
        let summary = summarise(&outputs);
        assert!(summary.fraction_reneged > 0.0);
    }
}

#[test]
fn the_network_is_the_same_on_every_kernel_and_keeps_its_packets() {
    let params = NetworkParams::default();
    for seed in 0..3 {
        let outputs = on_every_kernel(seed, params.end, || params.build().unwrap());
        let (mut alarms, mut counted) = (0, None);
        for output in &outputs {
            match output.output {
                NetOutput::Alarm { router } => {
                    assert!(router < params.routers);
                    alarms += 1;
                }
                NetOutput::Watchdog { alarms } => counted = Some(alarms),
                NetOutput::Router { .. } => {}
            }
        }
        assert!(
            alarms > 0,
            "seed {seed}: a router failed for longer than the timeout"
        );
        assert_eq!(
            counted,
            Some(alarms),
            "the watchdog counted every alarm it raised"
        );
    }
}

#[test]
fn mmc_is_the_same_on_every_kernel_and_matches_erlang_c() {
    let params = QueueParams {
        queues: 2,
        end: 2_000.0,
        ..QueueParams::default()
    };
    on_every_kernel(1, params.end, || params.build().unwrap());

    // Against Erlang C: independent replications (the queues of one run are independent
    // too), a 99.9 % interval of the replication means.
    let params = QueueParams {
        queues: if cfg!(debug_assertions) { 4 } else { 16 },
        end: if cfg!(debug_assertions) {
            5_000.0
        } else {
            20_000.0
        },
        ..QueueParams::default()
    };
    let theory =
        warpsim_models::mmc::erlang_c(params.arrival_rate, params.service_rate, params.servers)
            .unwrap();
    let mut outputs = Vec::new();
    Sequential::new(RunConfig::new(3).end_time(params.end))
        .run(params.build().unwrap(), &mut outputs)
        .unwrap();
    let (mut waits, mut lines, mut busy) = (
        warpsim_core::blocks::Tally::new(),
        warpsim_core::blocks::Tally::new(),
        warpsim_core::blocks::Tally::new(),
    );
    for output in &outputs {
        waits.record(output.output.mean_wait);
        lines.record(output.output.mean_line);
        busy.record(output.output.utilisation);
    }
    for (what, tally, expected) in [
        ("mean wait", waits, theory.mean_wait),
        ("mean line", lines, theory.mean_queue),
        ("utilisation", busy, theory.utilisation),
    ] {
        let (low, high) = tally.confidence_interval(0.999).unwrap();
        assert!(
            low <= expected && expected <= high,
            "{what}: Erlang C {expected} outside [{low}, {high}]"
        );
    }
}

#[test]
fn bad_parameters_are_refused_by_name() {
    let bank = BankParams {
        mean_patience: -1.0,
        ..BankParams::default()
    };
    assert_eq!(bank.build().unwrap_err().param, "mean_patience");
    let queue = QueueParams {
        servers: 0,
        ..QueueParams::default()
    };
    assert_eq!(queue.build().unwrap_err().param, "servers");
    let network = NetworkParams {
        timeout: f64::NAN,
        ..NetworkParams::default()
    };
    assert_eq!(network.build().unwrap_err().param, "timeout");
}
