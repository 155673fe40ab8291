//! Checkpoints taken in place on ranks (`TimeWarp::run_cluster_from_checkpointing`,
//! loopback transport, threads standing in for ranks): a run that takes several — asked
//! for by rank 0's sink, by another rank's, and at a pause time set before the run — ends
//! exactly as the uninterrupted sequential run (trace and content hashes, counts, outputs,
//! final states); each checkpoint holds exactly the outputs before it and, through the file
//! format, resumes on the sequential kernel (or on ranks) to that same end; and a stop after
//! them still ends every rank at one GVT with the whole checkpoint on rank 0. On 1–3 ranks
//! with 1 or 2 threads each and both cancellations.

mod common;

use std::time::Duration;

use common::paced::{Outputs, Paced, lps, round_trip, whole};
use warpsim_core::{
    Checkpoint, CheckpointLabel, Committed, Ending, OutputSink, Report, RunConfig, Sequential,
    Start, StopHandle, StopReason,
};
use warpsim_timewarp::cluster::{self, RankEnding, RankPause, RankStart};
use warpsim_timewarp::{Cancellation, TimeWarp};

type Output = (u8, bool, u64);

/// Rank 0's sink: keeps every output, and at the first output at or after each of `asks`'
/// times asks that rank's handle for a pause (or a stop).
struct Asking {
    outputs: Outputs,
    asks: Vec<(f64, StopHandle, bool)>,
}

impl OutputSink<Output> for Asking {
    fn deliver(&mut self, output: Committed<Output>) {
        while let Some((at, handle, pause)) = self.asks.first() {
            if output.key.time.as_f64() < *at {
                break;
            }
            if *pause {
                handle.pause();
            } else {
                handle.stop();
            }
            self.asks.remove(0);
        }
        self.outputs.push(output);
    }
}

fn size() -> (usize, f64) {
    if cfg!(debug_assertions) {
        (12, 12.0)
    } else {
        (24, 30.0)
    }
}

fn label() -> CheckpointLabel {
    CheckpointLabel::new("cluster-inplace-test", "")
}

/// What rank 0's callback was handed: the checkpoint, its report, and how many outputs the
/// sink held then.
type Taken = (Box<Checkpoint<Paced>>, Report, usize);

/// One run on `kernels.len()` ranks taking checkpoints in place; rank 0 delivers into
/// `sink` and keeps what its callback is handed.
fn on_ranks(
    kernels: &[TimeWarp],
    n_lps: usize,
    slow_from: f64,
    sink: &mut Asking,
) -> (Vec<RankEnding<Paced>>, Vec<Taken>) {
    let transports = cluster::loopback(kernels.len(), Duration::from_secs(120));
    let mut taken = Vec::new();
    let endings = std::thread::scope(|scope| {
        let mut first = Some((sink, &mut taken));
        let ranks: Vec<_> = transports
            .into_iter()
            .zip(kernels)
            .map(|(mut transport, kernel)| {
                let first = first.take();
                scope.spawn(move || {
                    let start = RankStart::Init(lps(n_lps, slow_from));
                    let (ending, _) = match first {
                        Some((sink, taken)) => kernel.run_cluster_from_checkpointing(
                            start,
                            sink,
                            &mut transport,
                            3,
                            |checkpoint, report, sink: &mut Asking| {
                                taken.push((checkpoint, report, sink.outputs.len()));
                            },
                        ),
                        None => {
                            let mut nothing: Outputs = Vec::new();
                            let ran = kernel.run_cluster_from_checkpointing(
                                start,
                                &mut nothing,
                                &mut transport,
                                3,
                                |_, _, _| panic!("a rank other than 0 was handed a checkpoint"),
                            );
                            assert!(nothing.is_empty(), "a rank other than 0 delivered outputs");
                            ran
                        }
                    };
                    ending.unwrap_or_else(|error| panic!("a rank failed: {}", error.error))
                })
            })
            .collect();
        ranks.into_iter().map(|rank| rank.join().unwrap()).collect()
    });
    (endings, taken)
}

/// Runs on `ranks` ranks × `threads`, with pauses asked at a quarter of the run (rank 0)
/// and at half of it (the last rank), a pause time at 0.7 of it, and when `stop`, a stop
/// (of rank 0) at 0.85; checks as the module says.
fn scenario(ranks: usize, threads: usize, cancellation: Cancellation, stop: bool) {
    let (n_lps, end) = size();
    let config = RunConfig::new(ranks as u64 * 7 + threads as u64)
        .end_time(end)
        .content_hash(true);
    let (expected, expected_outputs, expected_states) = whole(&config, n_lps);
    let what = format!("{ranks} ranks × {threads}, {cancellation:?}, stop {stop}");
    let handles: Vec<StopHandle> = (0..ranks).map(|_| StopHandle::new()).collect();
    let pause_at = end * 0.7;
    let kernels: Vec<TimeWarp> = handles
        .iter()
        .map(|handle| {
            let config = config
                .clone()
                .stop_handle(handle.clone())
                .pause_at(pause_at);
            TimeWarp::new(config)
                .threads(threads)
                .cancellation(cancellation)
                .gvt_interval(64)
                .window(Some(1.0))
        })
        .collect();
    let mut asks = vec![
        (end * 0.25, handles[0].clone(), true),
        (end * 0.5, handles[ranks - 1].clone(), true),
    ];
    if stop {
        asks.push((end * 0.85, handles[0].clone(), false));
    }
    let mut sink = Asking {
        outputs: Vec::new(),
        asks,
    };
    let (mut endings, taken) = on_ranks(&kernels, n_lps, end * 0.25, &mut sink);
    assert!(sink.asks.is_empty(), "{what}: a request was not made");
    assert_eq!(taken.len(), 3, "{what}: checkpoints taken in place");
    let mut last_time = 0.0;
    for (index, (checkpoint, report, delivered)) in taken.iter().enumerate() {
        let first = checkpoint.pending().first().map(|event| event.key);
        // Exactly the outputs of the events before the checkpoint were delivered by then.
        let before = expected_outputs
            .iter()
            .filter(|output| first.is_none_or(|key| output.key < key))
            .count();
        assert_eq!(*delivered, before, "{what}: checkpoint {index}'s outputs");
        assert_eq!(report.stop_reason, StopReason::Paused, "{what}");
        assert_eq!(checkpoint.events_committed(), report.events_committed);
        assert_eq!(checkpoint.lps() as usize, n_lps, "{what}");
        assert!(
            report.end_time >= last_time,
            "{what}: checkpoints out of order"
        );
        last_time = report.end_time;
    }
    // The pause time set before the run is the last one.
    let pending_at = |taken: &Taken| taken.0.pending().first().map(|event| event.key.time);
    assert!(
        pending_at(&taken[2]).is_none_or(|time| time.as_f64() >= pause_at),
        "{what}"
    );
    assert!(
        taken[1].1.end_time < pause_at,
        "{what}: the requested checkpoints came after the pause time"
    );

    let clean = RunConfig::new(config.seed).end_time(end).content_hash(true);
    let compare = |done: &Report, outputs: &Outputs, states: String, how: &str| {
        let how = format!("{what}, {how}");
        assert_eq!(done.trace_hash, expected.trace_hash, "{how}");
        assert_eq!(done.content_hash, expected.content_hash, "{how}");
        assert_eq!(done.events_committed, expected.events_committed, "{how}");
        assert_eq!(done.end_time, expected.end_time, "{how}");
        assert_eq!(done.pending_at_end, expected.pending_at_end, "{how}");
        assert!(*outputs == expected_outputs, "{how}: outputs differ");
        assert!(states == expected_states, "{how}: final states differ");
    };
    let rest = endings.split_off(1);
    match endings.pop().unwrap() {
        RankEnding::Finished(done) => {
            assert!(!stop, "{what}: the stop did not stop the run");
            let mut states = done.states;
            for ending in rest {
                let RankEnding::Finished(finished) = ending else {
                    panic!("{what}: a rank paused while rank 0 finished");
                };
                states.extend(finished.states);
            }
            states.sort_by_key(|(id, _)| *id);
            let states: Vec<Paced> = states.into_iter().map(|(_, state)| state).collect();
            compare(
                &done.report,
                &sink.outputs,
                format!("{states:?}"),
                "taking them",
            );
        }
        RankEnding::Paused {
            state: RankPause::Whole(checkpoint),
            report,
            at,
        } => {
            assert!(stop, "{what}: paused without a stop");
            assert_eq!(report.stop_reason, StopReason::Interrupted, "{what}");
            assert!(at > pause_at, "{what}: stopped before the last checkpoint");
            for ending in rest {
                assert!(
                    matches!(ending, RankEnding::Paused { at: theirs, .. } if theirs == at),
                    "{what}: the ranks did not stop at one time"
                );
            }
            let mut outputs = sink.outputs.clone();
            let Ok(Ending::Finished(done)) = Sequential::new(clean.clone()).run_from(
                Start::Resume(round_trip(checkpoint, &label())),
                &mut outputs,
            ) else {
                panic!("{what}: the stop's checkpoint did not resume");
            };
            compare(
                &done.report,
                &outputs,
                format!("{:?}", done.states),
                "resumed from the stop",
            );
        }
        RankEnding::Paused { .. } => panic!("{what}: rank 0 holds no checkpoint"),
    }

    // Each checkpoint, through the file format: on the sequential kernel, the last one also
    // on two ranks.
    for (index, (checkpoint, _, delivered)) in taken.into_iter().enumerate() {
        let checkpoint = round_trip(checkpoint, &label());
        let mut outputs = expected_outputs[..delivered].to_vec();
        let how = format!("checkpoint {index} resumed");
        if index == 2 {
            let kernels: Vec<TimeWarp> = (0..2)
                .map(|_| TimeWarp::new(clean.clone()).threads(1))
                .collect();
            let mut resumed = Asking {
                outputs,
                asks: Vec::new(),
            };
            let transports = cluster::loopback(2, Duration::from_secs(120));
            let endings: Vec<_> = std::thread::scope(|scope| {
                let mut first = Some(&mut resumed);
                let ranks: Vec<_> = transports
                    .into_iter()
                    .zip(&kernels)
                    .map(|(mut transport, kernel)| {
                        let sink = first.take();
                        let checkpoint = checkpoint.clone();
                        scope.spawn(move || {
                            let start = RankStart::Resume(checkpoint);
                            let mut nothing: Outputs = Vec::new();
                            let (ending, _) = match sink {
                                Some(sink) => {
                                    kernel.run_cluster_from(start, sink, &mut transport, 3)
                                }
                                None => {
                                    kernel.run_cluster_from(start, &mut nothing, &mut transport, 3)
                                }
                            };
                            ending.unwrap_or_else(|error| panic!("{}", error.error))
                        })
                    })
                    .collect();
                ranks.into_iter().map(|rank| rank.join().unwrap()).collect()
            });
            let mut states = Vec::new();
            let mut report = None;
            for ending in endings {
                let RankEnding::Finished(finished) = ending else {
                    panic!("{what}: {how} paused again");
                };
                report.get_or_insert(finished.report);
                states.extend(finished.states);
            }
            states.sort_by_key(|(id, _)| *id);
            let states: Vec<Paced> = states.into_iter().map(|(_, state)| state).collect();
            compare(
                &report.unwrap(),
                &resumed.outputs,
                format!("{states:?}"),
                &format!("{how} on 2 ranks"),
            );
        } else {
            let Ok(Ending::Finished(done)) =
                Sequential::new(clean.clone()).run_from(Start::Resume(checkpoint), &mut outputs)
            else {
                panic!("{what}: {how} did not finish");
            };
            compare(&done.report, &outputs, format!("{:?}", done.states), &how);
        }
    }
}

#[test]
fn checkpoints_taken_in_place_on_ranks_continue_to_the_uninterrupted_end() {
    for ranks in 1..=3 {
        for cancellation in [Cancellation::Aggressive, Cancellation::Lazy] {
            scenario(ranks, 1 + ranks % 2, cancellation, false);
        }
    }
}

#[test]
fn a_stop_after_checkpoints_taken_in_place_ends_every_rank_with_the_whole_checkpoint() {
    for ranks in [2, 3] {
        scenario(ranks, 1, Cancellation::Lazy, true);
    }
}

/// Copies larger than one packet (PHOLD with 300,000 LPs: about 8 MB per rank on 3 ranks,
/// packets of 4 MB), whose packets from two ranks interleave at rank 0: the checkpoint is
/// joined rank by rank and resumes on the sequential kernel to the uninterrupted end.
#[test]
fn copies_larger_than_a_packet_are_joined_rank_by_rank() {
    use warpsim_core::{Discard, Kernel};
    use warpsim_models::phold::{Phold, PholdParams};
    let params = PholdParams {
        lps: 300_000,
        end: 1.0,
        ..PholdParams::default()
    };
    let config = RunConfig::new(21).end_time(params.end);
    let whole = Sequential::new(config.clone())
        .run(params.build().unwrap(), &mut Discard)
        .unwrap();
    let kernel = TimeWarp::new(config.clone().pause_at(0.5)).threads(1);
    let mut taken: Vec<(Box<Checkpoint<Phold>>, Report)> = Vec::new();
    let mut transports = cluster::loopback(3, Duration::from_secs(120));
    let mut first = transports.remove(0);
    std::thread::scope(|scope| {
        let others: Vec<_> = transports
            .into_iter()
            .map(|mut transport| {
                let (kernel, params) = (&kernel, &params);
                scope.spawn(move || {
                    let start = RankStart::Init(params.build().unwrap());
                    kernel
                        .run_cluster_from_checkpointing(
                            start,
                            &mut Discard,
                            &mut transport,
                            5,
                            |_, _, _| panic!("a rank other than 0 was handed a checkpoint"),
                        )
                        .0
                })
            })
            .collect();
        let start = RankStart::Init(params.build().unwrap());
        let (ending, _) = kernel.run_cluster_from_checkpointing(
            start,
            &mut Discard,
            &mut first,
            5,
            |checkpoint, report, _| taken.push((checkpoint, report)),
        );
        let Ok(RankEnding::Finished(done)) = ending else {
            panic!("rank 0 did not finish");
        };
        assert_eq!(done.report.trace_hash, whole.trace_hash);
        for rank in others {
            assert!(matches!(rank.join().unwrap(), Ok(RankEnding::Finished(_))));
        }
    });
    let (checkpoint, report) = taken.pop().expect("a checkpoint at 0.5");
    assert!(taken.is_empty());
    assert_eq!(checkpoint.lps(), 300_000);
    assert!(report.events_committed > 0 && report.events_committed < whole.events_committed);
    let Ok(Ending::Finished(done)) =
        Sequential::new(config).run_from(Start::Resume(checkpoint), &mut Discard)
    else {
        panic!("the checkpoint did not resume");
    };
    assert_eq!(done.report.trace_hash, whole.trace_hash);
    assert_eq!(done.report.events_committed, whole.events_committed);
}

/// A callback that panics on rank 0 stops every rank with one error naming it, rather than
/// leaving the ranks to run to the end (or wait for one another) first.
#[test]
fn a_panicking_checkpoint_callback_stops_every_rank() {
    let (n_lps, end) = size();
    let config = RunConfig::new(4).end_time(end).pause_at(end * 0.3);
    let kernel = TimeWarp::new(config).threads(1);
    let mut transports = cluster::loopback(2, Duration::from_secs(120));
    let mut first = transports.remove(0);
    let mut other = transports.remove(0);
    std::thread::scope(|scope| {
        let kernel = &kernel;
        let rank1 = scope.spawn(move || {
            let mut nothing: Outputs = Vec::new();
            let start = RankStart::Init(lps(n_lps, common::paced::never()));
            kernel
                .run_cluster_from_checkpointing(start, &mut nothing, &mut other, 7, |_, _, _| {})
                .0
        });
        let mut outputs: Outputs = Vec::new();
        let start = RankStart::Init(lps(n_lps, common::paced::never()));
        let (ending, _) =
            kernel.run_cluster_from_checkpointing(start, &mut outputs, &mut first, 7, |_, _, _| {
                panic!("the disk is full")
            });
        let error = ending.expect_err("rank 0 went on after its callback panicked");
        assert!(
            error.error.to_string().contains("checkpoint callback")
                && error.error.to_string().contains("the disk is full"),
            "{}",
            error.error
        );
        assert!(
            rank1.join().unwrap().is_err(),
            "rank 1 did not stop with it"
        );
        assert!(outputs.iter().all(|output| output.key.time.as_f64() < end));
    });
}
