//! Pausing and stopping a distributed run (loopback transport, threads standing in for
//! ranks): every rank ends at the same GVT, rank 0 holds one checkpoint of the whole model,
//! and that checkpoint — resumed on the sequential kernel, on threads, or on another number
//! of ranks — ends exactly as the uninterrupted run: trace and content hashes, counts,
//! outputs, final states. A pause time, a stop or pause asked on rank 0, and a stop asked on
//! another rank only, on 1–3 ranks × both cancellations.
//!
//! A request is made deterministically by rank 0's sink when it receives the first output at
//! or after a chosen simulated time. Events from that time on sleep a little in their
//! handler, so that the run is still going when the request is read.

mod common;

use std::time::Duration;

use common::paced::{Outputs, Paced, lps, never, round_trip, whole};
use warpsim_core::{
    CheckpointLabel, Committed, Ending, OutputSink, Report, RunConfig, Sequential, Start,
    StopHandle, StopReason,
};
use warpsim_timewarp::cluster::{self, RankEnding, RankPause, RankStart};
use warpsim_timewarp::{Cancellation, TimeWarp};

type Output = (u8, bool, u64);

/// Rank 0's sink: keeps every output, and asks `handle` for a stop (or a pause) when it
/// first receives an output at or after `at`.
struct Requesting {
    outputs: Outputs,
    handle: Option<StopHandle>,
    at: f64,
    pause: bool,
    asked: bool,
}

impl OutputSink<Output> for Requesting {
    fn deliver(&mut self, output: Committed<Output>) {
        if !self.asked
            && output.key.time.as_f64() >= self.at
            && let Some(handle) = &self.handle
        {
            self.asked = true;
            if self.pause {
                handle.pause();
            } else {
                handle.stop();
            }
        }
        self.outputs.push(output);
    }
}

fn size() -> (usize, f64) {
    if cfg!(debug_assertions) {
        (12, 10.0)
    } else {
        (24, 24.0)
    }
}

fn label() -> CheckpointLabel {
    CheckpointLabel::new("cluster-stop-test", "")
}

/// Runs one stretch on `kernels.len()` ranks (rank `r` with `kernels[r]` and `starts[r]`),
/// rank 0 delivering into `sink`.
fn on_ranks(
    kernels: &[TimeWarp],
    starts: Vec<RankStart<Paced>>,
    sink: &mut Requesting,
) -> Vec<RankEnding<Paced>> {
    let transports = cluster::loopback(kernels.len(), Duration::from_secs(120));
    std::thread::scope(|scope| {
        let mut sink = Some(sink);
        let ranks: Vec<_> = transports
            .into_iter()
            .zip(starts)
            .zip(kernels)
            .map(|((mut transport, start), kernel)| {
                let sink = sink.take();
                scope.spawn(move || {
                    let mut nothing = Vec::new();
                    let (ending, _) = match sink {
                        Some(sink) => kernel.run_cluster_from(start, sink, &mut transport, 9),
                        None => kernel.run_cluster_from(start, &mut nothing, &mut transport, 9),
                    };
                    assert!(nothing.is_empty(), "a rank other than 0 delivered outputs");
                    ending.unwrap_or_else(|error| panic!("a rank failed: {}", error.error))
                })
            })
            .collect();
        ranks.into_iter().map(|rank| rank.join().unwrap()).collect()
    })
}

/// How a rank's run is asked to end early.
#[derive(Debug, Clone, Copy)]
enum Request {
    /// `RunConfig::pause_at`.
    PauseAt,
    /// Rank 0's sink asks a pause of rank 0's handle.
    Pause,
    /// Rank 0's sink asks a stop of this rank's handle (every rank has its own).
    StopOn(usize),
}

/// Runs the scenario on `ranks` ranks with the request at `at`, checks every rank's ending
/// and rank 0's checkpoint, resumes it on `resume_ranks` ranks (0: the sequential kernel;
/// also continues the pause in memory on the same ranks when it was not a stop) and
/// compares both with the uninterrupted run.
fn pause_and_resume(
    ranks: usize,
    cancellation: Cancellation,
    at: f64,
    request: Request,
    resume_ranks: usize,
) {
    let (n_lps, end) = size();
    let config = RunConfig::new(ranks as u64 * 11 + at as u64)
        .end_time(end)
        .content_hash(true);
    let (expected, expected_outputs, expected_states) = whole(&config, size().0);
    let what = format!("{ranks} ranks, {cancellation:?}, {request:?} at {at}");
    let handles: Vec<StopHandle> = (0..ranks).map(|_| StopHandle::new()).collect();
    let kernels: Vec<TimeWarp> = handles
        .iter()
        .map(|handle| {
            let mut config = config.clone().stop_handle(handle.clone());
            if let Request::PauseAt = request {
                config = config.pause_at(at);
            }
            TimeWarp::new(config)
                .threads(1)
                .cancellation(cancellation)
                .gvt_interval(64)
                .window(Some(1.0))
        })
        .collect();
    let (asking, pause) = match request {
        Request::PauseAt => (None, true),
        Request::Pause => (Some(handles[0].clone()), true),
        Request::StopOn(rank) => (Some(handles[rank].clone()), false),
    };
    let mut sink = Requesting {
        outputs: Vec::new(),
        handle: asking,
        at,
        pause,
        asked: false,
    };
    let slow_from = if let Request::PauseAt = request {
        never()
    } else {
        at
    };
    let starts = (0..ranks)
        .map(|_| RankStart::Init(lps(n_lps, slow_from)))
        .collect();
    let mut endings = on_ranks(&kernels, starts, &mut sink);
    let reason = if pause {
        StopReason::Paused
    } else {
        StopReason::Interrupted
    };
    let mut boundary = None;
    for (rank, ending) in endings.iter().enumerate() {
        let RankEnding::Paused {
            report,
            at: paused_at,
            ..
        } = ending
        else {
            panic!("{what}: rank {rank} did not pause");
        };
        assert_eq!(report.stop_reason, reason, "{what}: rank {rank}");
        assert!(
            boundary.is_none_or(|boundary| boundary == *paused_at),
            "{what}: the ranks paused at different times"
        );
        boundary = Some(*paused_at);
    }
    let boundary = boundary.unwrap();
    let rest: Vec<RankEnding<Paced>> = endings.split_off(1);
    let RankEnding::Paused {
        state: RankPause::Whole(checkpoint),
        report,
        ..
    } = endings.pop().unwrap()
    else {
        panic!("{what}: rank 0 holds no checkpoint");
    };
    if let Request::PauseAt = request {
        assert_eq!(boundary, at, "{what}");
    } else {
        assert!(sink.asked, "{what}: no output at {at}");
        assert!(
            report.events_committed < expected.events_committed,
            "{what}: the request did not cut the run short"
        );
    }
    assert_eq!(checkpoint.lps() as usize, n_lps, "{what}");
    assert_eq!(checkpoint.events_committed(), report.events_committed);
    // Exactly the events before the boundary committed, and their outputs were delivered.
    assert_eq!(
        sink.outputs[..],
        expected_outputs[..sink.outputs.len()],
        "{what}: the delivered outputs are not the uninterrupted run's prefix"
    );
    assert_eq!(
        sink.outputs.len(),
        expected_outputs
            .iter()
            .filter(|output| output.key.time.as_f64() < boundary)
            .count(),
        "{what}: the outputs delivered are not those before the pause"
    );
    assert!(
        checkpoint
            .pending()
            .iter()
            .all(|event| event.key.time.as_f64() >= boundary),
        "{what}"
    );

    let clean = RunConfig::new(config.seed).end_time(end).content_hash(true);
    let compare = |done: &Report, outputs: &Outputs, states: String, how: &str| {
        let resumed = format!("{what}, {how}");
        assert_eq!(done.trace_hash, expected.trace_hash, "{resumed}");
        assert_eq!(done.content_hash, expected.content_hash, "{resumed}");
        assert_eq!(
            done.events_committed, expected.events_committed,
            "{resumed}"
        );
        assert_eq!(done.end_time, expected.end_time, "{resumed}");
        assert_eq!(done.stop_reason, expected.stop_reason, "{resumed}");
        assert_eq!(done.pending_at_end, expected.pending_at_end, "{resumed}");
        assert!(*outputs == expected_outputs, "{resumed}: outputs differ");
        assert!(states == expected_states, "{resumed}: final states differ");
    };

    // In memory, on the same ranks (rank 0 from the checkpoint, the others from their part).
    if pause {
        let kernels: Vec<TimeWarp> = (0..ranks)
            .map(|_| {
                TimeWarp::new(clean.clone())
                    .threads(1)
                    .cancellation(cancellation)
            })
            .collect();
        let mut starts = vec![RankStart::Resume(checkpoint.clone())];
        starts.extend(rest.into_iter().map(|ending| match ending {
            RankEnding::Paused { state, .. } => state.into_start(),
            RankEnding::Finished(_) => panic!("{what}: a rank finished"),
        }));
        let mut continued = Requesting {
            outputs: sink.outputs.clone(),
            handle: None,
            at,
            pause,
            asked: false,
        };
        let endings = on_ranks(&kernels, starts, &mut continued);
        let mut states = Vec::new();
        let mut done = None;
        for ending in endings {
            let RankEnding::Finished(finished) = ending else {
                panic!("{what}: a continued rank paused again");
            };
            done.get_or_insert(finished.report);
            states.extend(finished.states);
        }
        states.sort_by_key(|(id, _)| *id);
        let states: Vec<Paced> = states.into_iter().map(|(_, state)| state).collect();
        compare(
            &done.unwrap(),
            &continued.outputs,
            format!("{states:?}"),
            "continued in memory",
        );
    }

    // From the file, on another number of ranks or the sequential kernel.
    let checkpoint = round_trip(checkpoint, &label());
    let mut outputs = sink.outputs;
    if resume_ranks == 0 {
        let Ok(Ending::Finished(done)) =
            Sequential::new(clean).run_from(Start::Resume(checkpoint), &mut outputs)
        else {
            panic!("{what}: the sequential resume did not finish");
        };
        compare(
            &done.report,
            &outputs,
            format!("{:?}", done.states),
            "resumed on the sequential kernel",
        );
    } else {
        let kernels: Vec<TimeWarp> = (0..resume_ranks)
            .map(|_| TimeWarp::new(clean.clone()).threads(2))
            .collect();
        let starts = (0..resume_ranks)
            .map(|_| RankStart::Resume(checkpoint.clone()))
            .collect();
        let mut resumed = Requesting {
            outputs,
            handle: None,
            at,
            pause,
            asked: false,
        };
        let endings = on_ranks(&kernels, starts, &mut resumed);
        let mut states = Vec::new();
        let mut done = None;
        for ending in endings {
            let RankEnding::Finished(finished) = ending else {
                panic!("{what}: a resumed rank paused again");
            };
            done.get_or_insert(finished.report);
            states.extend(finished.states);
        }
        states.sort_by_key(|(id, _)| *id);
        let states: Vec<Paced> = states.into_iter().map(|(_, state)| state).collect();
        compare(
            &done.unwrap(),
            &resumed.outputs,
            format!("{states:?}"),
            &format!("resumed on {resume_ranks} ranks"),
        );
    }
}

#[test]
fn a_pause_time_on_ranks_resumes_on_any_kernel_and_rank_count() {
    let (_, end) = size();
    for ranks in 1..=3 {
        for cancellation in [Cancellation::Aggressive, Cancellation::Lazy] {
            for (index, at) in [end * 0.15, end * 0.6].into_iter().enumerate() {
                let resume_ranks = if index == 0 { 0 } else { ranks % 3 + 1 };
                pause_and_resume(ranks, cancellation, at, Request::PauseAt, resume_ranks);
            }
        }
    }
}

#[test]
fn a_stop_asked_on_any_rank_stops_every_rank_at_one_gvt() {
    let (_, end) = size();
    for ranks in 1..=3 {
        for cancellation in [Cancellation::Aggressive, Cancellation::Lazy] {
            for (index, at) in [end * 0.1, end * 0.5].into_iter().enumerate() {
                // Asked of rank 0's handle, then of the last rank's only.
                let asker = if index == 0 { 0 } else { ranks - 1 };
                let resume_ranks = if index == 0 { 0 } else { 3 - ranks % 2 };
                pause_and_resume(
                    ranks,
                    cancellation,
                    at,
                    Request::StopOn(asker),
                    resume_ranks,
                );
            }
        }
    }
}

#[test]
fn a_pause_asked_while_running_on_ranks_continues_in_memory() {
    let (_, end) = size();
    for ranks in [2, 3] {
        for cancellation in [Cancellation::Aggressive, Cancellation::Lazy] {
            pause_and_resume(ranks, cancellation, end * 0.35, Request::Pause, 1);
        }
    }
}

/// Without `run_cluster_from` (a model that need not serialise) a pause time is refused on
/// every rank alike.
#[test]
fn a_pause_time_needs_run_cluster_from() {
    let (n_lps, end) = size();
    let kernel = TimeWarp::new(RunConfig::new(1).end_time(end).pause_at(end / 2.0)).threads(1);
    let transports = cluster::loopback(2, Duration::from_secs(60));
    let errors: Vec<String> = std::thread::scope(|scope| {
        let ranks: Vec<_> = transports
            .into_iter()
            .map(|mut transport| {
                let kernel = &kernel;
                scope.spawn(move || {
                    let (result, _) =
                        kernel.run_cluster(lps(n_lps, never()), &mut Vec::new(), &mut transport, 1);
                    result.unwrap_err().error.to_string()
                })
            })
            .collect();
        ranks.into_iter().map(|rank| rank.join().unwrap()).collect()
    });
    for error in errors {
        assert!(error.contains("run_cluster_from"), "{error}");
    }
}

/// A checkpoint of a sequential run resumes on ranks (the other direction of the above).
#[test]
fn a_sequential_checkpoint_resumes_on_ranks() {
    let (n_lps, end) = size();
    let config = RunConfig::new(5).end_time(end).content_hash(true);
    let (expected, expected_outputs, _) = whole(&config, size().0);
    let mut outputs = Vec::new();
    let Ending::Paused(checkpoint, _) = Sequential::new(config.clone().pause_at(end / 3.0))
        .run_from(Start::Init(lps(n_lps, never())), &mut outputs)
        .unwrap()
    else {
        panic!("no pause");
    };
    let checkpoint = round_trip(checkpoint, &label());
    for ranks in 1..=3 {
        let kernels: Vec<TimeWarp> = (0..ranks)
            .map(|_| TimeWarp::new(config.clone()).threads(2))
            .collect();
        let starts = (0..ranks)
            .map(|_| RankStart::Resume(checkpoint.clone()))
            .collect();
        let mut sink = Requesting {
            outputs: outputs.clone(),
            handle: None,
            at: f64::INFINITY,
            pause: false,
            asked: false,
        };
        let endings = on_ranks(&kernels, starts, &mut sink);
        let RankEnding::Finished(done) = &endings[0] else {
            panic!("paused");
        };
        assert_eq!(done.report.trace_hash, expected.trace_hash, "{ranks} ranks");
        assert_eq!(
            done.report.content_hash, expected.content_hash,
            "{ranks} ranks"
        );
        assert_eq!(
            done.report.events_committed, expected.events_committed,
            "{ranks} ranks"
        );
        assert!(
            sink.outputs == expected_outputs,
            "{ranks} ranks: outputs differ"
        );
    }
}
