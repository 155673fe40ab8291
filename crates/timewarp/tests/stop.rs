//! Graceful stops and pauses of a running Time Warp run through its
//! [`StopHandle`](warpsim_core::StopHandle): the run ends at the GVT after the request with
//! a checkpoint of the committed state, and that checkpoint, resumed on any kernel, ends
//! exactly as the uninterrupted run — trace and content hashes, counts, outputs, final states.
//!
//! The request is made deterministically by the output sink when it receives the first
//! output at or after a chosen simulated time (the coordinator delivers outputs and reads
//! the handle on one thread). Events from that time on sleep a little in their handler, so
//! that the run is still going when the request is read: the stop must then cut it short.

mod common;

use common::paced::{Outputs, lps, never, round_trip, whole};
use warpsim_core::{
    CheckpointLabel, Committed, Ending, Kernel, OutputSink, RunConfig, Sequential, Start,
    StopHandle, StopReason,
};
use warpsim_timewarp::{Cancellation, TimeWarp};

/// A sink that keeps every output and makes a request of `handle` when it first receives
/// an output at or after `at` (a stop, or a pause when `pause`).
struct Requesting {
    outputs: Outputs,
    handle: StopHandle,
    at: f64,
    pause: bool,
    asked: bool,
}

impl OutputSink<(u8, bool, u64)> for Requesting {
    fn deliver(&mut self, output: Committed<(u8, bool, u64)>) {
        if !self.asked && output.key.time.as_f64() >= self.at {
            self.asked = true;
            if self.pause {
                self.handle.pause();
            } else {
                self.handle.stop();
            }
        }
        self.outputs.push(output);
    }
}

/// The scenario's size: LPs and end time (smaller in debug builds).
fn size() -> (usize, f64) {
    if cfg!(debug_assertions) {
        (12, 12.0)
    } else {
        (24, 30.0)
    }
}

fn label() -> CheckpointLabel {
    CheckpointLabel::new("stop-test", "")
}

/// Runs the scenario on Time Warp with a request at `at`, checks the interrupted run and
/// its checkpoint, resumes it on `resume_on` (None: the sequential kernel) and compares the
/// whole with the uninterrupted run.
fn stop_and_resume(
    threads: usize,
    cancellation: Cancellation,
    at: f64,
    pause: bool,
    resume_on: Option<(usize, Cancellation)>,
) {
    let (n_lps, end) = size();
    let config = RunConfig::new(threads as u64 * 7 + at as u64)
        .end_time(end)
        .content_hash(true);
    let (expected, expected_outputs, expected_states) = whole(&config, size().0);
    let what = format!("{threads} threads, {cancellation:?}, request at {at}, pause {pause}");

    let handle = StopHandle::new();
    let mut sink = Requesting {
        outputs: Vec::new(),
        handle: handle.clone(),
        at,
        pause,
        asked: false,
    };
    // GVT rounds every 64 events at least: a stop takes effect at the next GVT, which on
    // one thread with the default interval may be the run's last. The optimism window
    // keeps workers from having run (slowly) most of the rest of the run before the
    // request: what remains is still to run when it comes.
    let kernel = TimeWarp::new(config.clone().stop_handle(handle))
        .threads(threads)
        .cancellation(cancellation)
        .gvt_interval(64)
        .window(Some(1.0));
    let (ending, stats) = kernel.run_from(Start::Init(lps(n_lps, at)), &mut sink);
    let ending = ending.unwrap_or_else(|error| panic!("{what}: {}", error.error));
    let Ending::Paused(checkpoint, report) = ending else {
        panic!("{what}: the run was not stopped");
    };
    assert!(sink.asked, "{what}: no output at {at}");
    let reason = if pause {
        StopReason::Paused
    } else {
        StopReason::Interrupted
    };
    assert_eq!(report.stop_reason, reason, "{what}");
    // The run stopped at the GVT after the request, well before its end: the rest of the
    // run is slow, and the request is read as soon as the sink has made it.
    assert!(
        report.events_committed < expected.events_committed,
        "{what}: the stop did not cut the run short"
    );
    assert!(report.end_time >= at && report.end_time < end, "{what}");
    assert_eq!(stats.committed, report.events_committed, "{what}");
    assert_eq!(checkpoint.events_committed(), report.events_committed);
    // Every committed output was delivered, and nothing beyond the checkpoint.
    assert_eq!(
        sink.outputs[..],
        expected_outputs[..sink.outputs.len()],
        "{what}: the delivered outputs are not the uninterrupted run's prefix"
    );
    let boundary = checkpoint.pending().first().map(|event| event.key);
    assert!(
        sink.outputs
            .iter()
            .all(|output| boundary.is_none_or(|boundary| output.key < boundary)),
        "{what}: an output at or after the checkpoint's first pending event was delivered"
    );
    assert_eq!(
        sink.outputs.len(),
        expected_outputs
            .iter()
            .filter(|output| boundary.is_none_or(|boundary| output.key < boundary))
            .count(),
        "{what}: an output before the checkpoint's boundary is missing"
    );

    let checkpoint = round_trip(checkpoint, &label());
    let mut outputs = sink.outputs;
    let config = RunConfig::new(config.seed).end_time(end).content_hash(true);
    let ending = match resume_on {
        None => Sequential::new(config).run_from(Start::Resume(checkpoint), &mut outputs),
        Some((threads, cancellation)) => {
            TimeWarp::new(config)
                .threads(threads)
                .cancellation(cancellation)
                .run_from(Start::Resume(checkpoint), &mut outputs)
                .0
        }
    };
    let Ok(Ending::Finished(done)) = ending else {
        panic!("{what}: the resumed run did not finish");
    };
    let resumed = format!("{what}, resumed on {resume_on:?}");
    assert_eq!(done.report.trace_hash, expected.trace_hash, "{resumed}");
    assert_eq!(done.report.content_hash, expected.content_hash, "{resumed}");
    assert_eq!(
        done.report.events_committed, expected.events_committed,
        "{resumed}"
    );
    assert_eq!(done.report.end_time, expected.end_time, "{resumed}");
    assert_eq!(done.report.stop_reason, expected.stop_reason, "{resumed}");
    assert!(outputs == expected_outputs, "{resumed}: outputs differ");
    assert!(
        format!("{:?}", done.states) == expected_states,
        "{resumed}: final states differ"
    );
}

#[test]
fn a_stopped_run_resumes_to_the_uninterrupted_result_on_any_kernel() {
    let (_, end) = size();
    let points = [end * 0.1, end * 0.45, end * 0.8];
    for threads in [1, 2, 4] {
        for cancellation in [Cancellation::Aggressive, Cancellation::Lazy] {
            for (index, &at) in points.iter().enumerate() {
                let resume_on = match index {
                    0 => None,
                    1 => Some((3, Cancellation::Lazy)),
                    _ => Some((2, Cancellation::Aggressive)),
                };
                stop_and_resume(threads, cancellation, at, false, resume_on);
            }
        }
    }
}

#[test]
fn a_pause_asked_while_running_hands_back_a_checkpoint_that_continues() {
    let (_, end) = size();
    for threads in [1, 2, 4] {
        for cancellation in [Cancellation::Aggressive, Cancellation::Lazy] {
            stop_and_resume(
                threads,
                cancellation,
                end * 0.3,
                true,
                Some((threads, cancellation)),
            );
        }
    }
}

/// A stop asked before the run starts ends it at the first GVT, as an interrupted run whose
/// report counts what committed (the events at the first event time at most), and
/// `Kernel::run` (which
/// finishes the LPs on the committed state) returns that report.
#[test]
fn a_stop_before_the_start_interrupts_at_once() {
    let handle = StopHandle::new();
    handle.stop();
    let (n_lps, end) = size();
    let kernel = TimeWarp::new(RunConfig::new(1).end_time(end).stop_handle(handle)).threads(2);
    let report = kernel
        .run(lps(n_lps, never()), &mut warpsim_core::Discard)
        .unwrap();
    assert_eq!(report.stop_reason, StopReason::Interrupted);
    assert!(
        report.events_committed <= n_lps as u64 && report.end_time < 1.0,
        "stopped at {} after {} events",
        report.end_time,
        report.events_committed
    );
}
