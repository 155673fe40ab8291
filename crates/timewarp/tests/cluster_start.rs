//! Starting a distributed run: each rank runs `init` for its own LPs only, what those `init`s
//! do to other ranks' LPs (sends, cancels, reschedules) reaches them, and a failing `init`
//! or sink ends the run on every rank as it ends on the sequential kernel (same error, same
//! outputs, same events pending).

mod common;

use std::cell::Cell;
use std::time::Duration;

use rand::RngExt;
use warpsim_core::{
    Committed, Ctx, EventHandle, Kernel, LogicalProcess, LpId, OutputSink, Report, RunConfig,
    RunError, Sequential,
};
use warpsim_timewarp::cluster::loopback;
use warpsim_timewarp::{Partition, TimeWarp};

thread_local! {
    /// `init` calls on this thread (a loopback rank runs `init` on its own thread).
    static INITS: Cell<usize> = const { Cell::new(0) };
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fail {
    Panic,
    BadDelay,
}

/// An LP whose `init` sends to random LPs (most on other ranks), cancels and reschedules
/// some of those sends, and emits; `fail` makes one LP's `init` fail after it did so.
#[derive(Debug, Clone, Default)]
struct Starter {
    fail: Option<(u32, Fail)>,
    handles: Vec<EventHandle>,
}

impl LogicalProcess for Starter {
    type Event = u32;
    type Output = (u32, u32);
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        INITS.with(|inits| inits.set(inits.get() + 1));
        let n = ctx.n_lps();
        let me = ctx.me().get();
        ctx.emit((me, u32::MAX));
        for tag in 0..3 {
            let to = LpId::new(ctx.rng().random_range(0..n));
            let delay = ctx.rng().random::<f64>() * 4.0;
            let handle = ctx.send(to, delay, tag);
            self.handles.push(handle);
        }
        if ctx.rng().random::<f64>() < 0.4 {
            let handle = self.handles.remove(0);
            assert!(ctx.cancel(handle));
        }
        if ctx.rng().random::<f64>() < 0.5 {
            let delay = ctx.rng().random::<f64>() * 4.0;
            let handle = self.handles.last_mut().unwrap();
            assert!(ctx.reschedule(handle, delay));
        }
        match self.fail {
            Some((lp, Fail::Panic)) if lp == me => panic!("init of LP {me} gives up"),
            Some((lp, Fail::BadDelay)) if lp == me => {
                ctx.emit((me, u32::MAX - 1));
                ctx.send(LpId::new(0), -1.0, 9);
            }
            _ => {}
        }
    }
    fn on_event(&mut self, tag: u32, ctx: &mut Ctx<Self>) {
        ctx.emit((ctx.me().get(), tag));
        if tag < 40 {
            let n = ctx.n_lps();
            let to = LpId::new(ctx.rng().random_range(0..n));
            let delay = ctx.rng().random::<f64>();
            ctx.send(to, delay, tag + 3);
        }
    }
}

/// A sink that panics on the output of LP `lp`'s `init`.
#[derive(Default)]
struct Fussy {
    lp: Option<u32>,
    got: Vec<Committed<(u32, u32)>>,
}

impl OutputSink<(u32, u32)> for Fussy {
    fn deliver(&mut self, output: Committed<(u32, u32)>) {
        if Some(output.output.0) == self.lp && output.output.1 == u32::MAX {
            panic!("the sink refuses LP {}", output.output.0);
        }
        self.got.push(output);
    }
}

struct Rank {
    result: Result<Report, RunError>,
    outputs: Vec<Committed<(u32, u32)>>,
    inits: usize,
}

fn on_ranks(
    kernel: &TimeWarp,
    ranks: usize,
    lps: &[Starter],
    sink_fails: Option<u32>,
) -> Vec<Rank> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = loopback(ranks, Duration::from_secs(120))
            .into_iter()
            .map(|mut transport| {
                scope.spawn(move || {
                    INITS.with(|inits| inits.set(0));
                    let mut sink = Fussy {
                        lp: sink_fails,
                        got: Vec::new(),
                    };
                    let (result, _) =
                        kernel.run_cluster(lps.to_vec(), &mut sink, &mut transport, 3);
                    Rank {
                        result,
                        outputs: sink.got,
                        inits: INITS.with(Cell::get),
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn each_rank_initialises_only_its_own_lps_and_commits_what_the_sequential_kernel_does() {
    let n = 30;
    let lps = vec![Starter::default(); n];
    for seed in 0..if cfg!(debug_assertions) { 4 } else { 24 } {
        let config = RunConfig::new(seed).end_time(6.0).content_hash(true);
        let mut expected_outputs = Fussy::default();
        let expected = Sequential::new(config.clone())
            .run(lps.clone(), &mut expected_outputs)
            .unwrap();
        for ranks in 1..=3 {
            for threads in 1..=2 {
                for partition in [Partition::Block, Partition::RoundRobin] {
                    let kernel = TimeWarp::new(config.clone())
                        .threads(threads)
                        .partition(partition.clone());
                    let got = on_ranks(&kernel, ranks, &lps, None);
                    let what = format!("seed {seed}, {ranks} ranks × {threads}, {partition:?}");
                    let workers = ranks * threads;
                    for (rank, got) in got.iter().enumerate() {
                        let own = (0..n)
                            .filter(|&lp| partition.owner(lp, n, workers) / threads == rank)
                            .count();
                        assert_eq!(got.inits, own, "{what}: inits on rank {rank}");
                    }
                    assert_eq!(got.iter().map(|rank| rank.inits).sum::<usize>(), n);
                    let report = got[0].result.as_ref().unwrap();
                    assert_eq!(report.trace_hash, expected.trace_hash, "{what}");
                    assert_eq!(report.content_hash, expected.content_hash, "{what}");
                    assert_eq!(report.events_committed, expected.events_committed, "{what}");
                    assert_eq!(report.pending_at_end, expected.pending_at_end, "{what}");
                    assert!(got[0].outputs == expected_outputs.got, "{what}: outputs");
                    for other in &got[1..] {
                        assert!(other.result.is_ok() && other.outputs.is_empty(), "{what}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_failing_init_or_sink_stops_every_rank_as_sequentially() {
    let n = 12;
    let cases = [
        (Some((7, Fail::Panic)), None),
        (Some((5, Fail::BadDelay)), None),
        (Some((9, Fail::Panic)), Some(4)),
        (Some((2, Fail::Panic)), Some(4)),
        (None, Some(10)),
        (Some((6, Fail::BadDelay)), Some(6)),
    ];
    for (fail, sink_fails) in cases {
        let lps = vec![
            Starter {
                fail,
                handles: Vec::new(),
            };
            n
        ];
        let config = RunConfig::new(11).end_time(6.0);
        let mut expected_outputs = Fussy {
            lp: sink_fails,
            got: Vec::new(),
        };
        let expected = Sequential::new(config.clone())
            .run(lps.clone(), &mut expected_outputs)
            .unwrap_err();
        for ranks in 1..=3 {
            let kernel = TimeWarp::new(config.clone())
                .threads(2)
                .partition(Partition::RoundRobin);
            let got = on_ranks(&kernel, ranks, &lps, sink_fails);
            let what = format!("{fail:?}, sink fails at {sink_fails:?}, {ranks} ranks");
            for (rank, got) in got.iter().enumerate() {
                let error = got.result.as_ref().unwrap_err();
                assert_eq!(
                    error.to_string(),
                    expected.to_string(),
                    "{what}: rank {rank}"
                );
                if rank == 0 {
                    assert_eq!(
                        error.partial.pending_at_end, expected.partial.pending_at_end,
                        "{what}"
                    );
                    assert!(got.outputs == expected_outputs.got, "{what}: outputs");
                }
            }
        }
    }
}
