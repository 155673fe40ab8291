//! The end of a run: `LogicalProcess::finish` runs once per LP on its committed state, its
//! outputs come after every event's in LP order, the final states come back, and events due
//! at exactly the end time are counted — identically on the sequential kernel, Time Warp on
//! 1 and 2 threads, and a loopback cluster; checked against the closed form of a model whose
//! counts are known.

mod common;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use warpsim_core::{
    Committed, Ctx, FinishCtx, Kernel, LogicalProcess, LpId, RunConfig, Sequential, StopReason,
};
use warpsim_timewarp::{Cancellation, TimeWarp};

/// LP `i` ticks every `i + 1` time units, `ticks_max` times at most; every tick sends a
/// message to a random LP (so Time Warp rolls back), which counts it.
#[derive(Clone, Debug, PartialEq)]
struct Clock {
    period: f64,
    ticks: u64,
    ticks_max: u64,
    received: u64,
    finished: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
enum Ev {
    Tick,
    Note,
}

/// What `finish` reports: (ticks, messages received, the finish time, a draw from the
/// LP's stream).
type Summary = (u64, u64, f64, u64);

impl LogicalProcess for Clock {
    type Event = Ev;
    type Output = Summary;
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        ctx.schedule(self.period, Ev::Tick);
    }
    fn on_event(&mut self, event: Ev, ctx: &mut Ctx<Self>) {
        match event {
            Ev::Tick => {
                self.ticks += 1;
                let n = ctx.n_lps();
                let to = LpId::new(ctx.rng().random_range(0..n));
                let delay = ctx.rng().random_range(0.1..3.0);
                ctx.send(to, delay, Ev::Note);
                if self.ticks < self.ticks_max {
                    ctx.schedule(self.period, Ev::Tick);
                }
            }
            Ev::Note => self.received += 1,
        }
    }
    fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
        assert!(!self.finished, "finish runs once");
        self.finished = true;
        let draw = ctx.rng().random::<u64>();
        ctx.emit((self.ticks, self.received, ctx.now().as_f64(), draw));
    }
}

fn clocks(n: usize, ticks_max: u64) -> Vec<Clock> {
    (0..n)
        .map(|i| Clock {
            period: (i + 1) as f64,
            ticks: 0,
            ticks_max,
            received: 0,
            finished: false,
        })
        .collect()
}

type Run = (Vec<Committed<Summary>>, Vec<Clock>, warpsim_core::Report);

fn sequential(config: &RunConfig, lps: Vec<Clock>) -> Run {
    let mut outputs = Vec::new();
    let finished = Sequential::new(config.clone())
        .run_final(lps, &mut outputs)
        .unwrap();
    (outputs, finished.states, finished.report)
}

fn timewarp(config: &RunConfig, lps: Vec<Clock>, threads: usize, lazy: bool) -> Run {
    let mut outputs = Vec::new();
    let kernel = TimeWarp::new(config.clone())
        .threads(threads)
        .cancellation(if lazy {
            Cancellation::Lazy
        } else {
            Cancellation::Aggressive
        })
        .checkpoint_interval(2);
    let finished = kernel.run_final(lps, &mut outputs).unwrap();
    (outputs, finished.states, finished.report)
}

fn cluster(config: &RunConfig, make: &(dyn Fn() -> Vec<Clock> + Sync), ranks: usize) -> Run {
    use std::time::Duration;
    use warpsim_timewarp::cluster::loopback;
    let kernel = TimeWarp::new(config.clone()).threads(2);
    let mut results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = loopback(ranks, Duration::from_secs(120))
            .into_iter()
            .map(|mut transport| {
                let kernel = &kernel;
                scope.spawn(move || {
                    let mut outputs = Vec::new();
                    let (result, _) =
                        kernel.run_cluster_final(make(), &mut outputs, &mut transport, 1);
                    (result.unwrap(), outputs)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Every rank holds its own LPs; together, each exactly once.
    let mut states: Vec<(LpId, Clock)> = Vec::new();
    for (finished, _) in &results {
        states.extend(finished.states.iter().cloned());
    }
    states.sort_by_key(|(lp, _)| *lp);
    assert!(
        states
            .iter()
            .enumerate()
            .all(|(i, (lp, _))| lp.index() == i)
    );
    let (first, outputs) = results.remove(0);
    assert!(results.iter().all(|(_, outputs)| outputs.is_empty()));
    let states = states.into_iter().map(|(_, clock)| clock).collect();
    (outputs, states, first.report)
}

fn check_same(what: &str, expected: &Run, got: &Run) {
    assert_eq!(got.0, expected.0, "{what}: outputs");
    assert_eq!(got.1, expected.1, "{what}: final states");
    assert_eq!(got.2.trace_hash, expected.2.trace_hash, "{what}: trace");
    assert_eq!(
        got.2.pending_at_end_time, expected.2.pending_at_end_time,
        "{what}: events at the end time"
    );
    assert_eq!(got.2.pending_at_end, expected.2.pending_at_end, "{what}");
}

#[test]
fn finish_and_final_states_match_the_closed_form_and_every_kernel() {
    let n = 12;
    let end = 20.0;
    for seed in 0..if cfg!(debug_assertions) { 2 } else { 8 } {
        let config = RunConfig::new(seed).end_time(end).content_hash(true);
        let make = || clocks(n, u64::MAX);
        let expected = sequential(&config, make());

        // Closed form: LP i ticks at k(i+1) < 20, so ceil(20/(i+1)) - 1 times; the LPs whose
        // period divides 20 have a tick due at exactly 20, which does not run.
        let (outputs, states, report) = &expected;
        assert_eq!(report.stop_reason, StopReason::EndTime);
        let dividing = (1..=n).filter(|p| 20 % p == 0).count();
        assert_eq!(report.pending_at_end_time, dividing);
        assert_eq!(outputs.len(), n, "one output per LP, from finish");
        let total_ticks: u64 = states.iter().map(|clock| clock.ticks).sum();
        let delivered: u64 = states.iter().map(|clock| clock.received).sum();
        assert_eq!(report.events_committed, total_ticks + delivered);
        for (i, (output, state)) in outputs.iter().zip(states).enumerate() {
            let ticks = (end / (i + 1) as f64).ceil() as u64 - 1;
            assert_eq!(state.ticks, ticks, "LP {i}");
            assert!(state.finished);
            assert_eq!(output.lp, LpId::new(i as u32), "finish outputs in LP order");
            assert_eq!(output.time().as_f64(), end, "finish runs at the end time");
            assert_eq!(output.output.0, ticks);
            assert_eq!(output.output.1, state.received);
        }

        for threads in [1, 2] {
            for lazy in [false, true] {
                let got = timewarp(&config, make(), threads, lazy);
                check_same(&format!("seed {seed}, {threads} threads"), &expected, &got);
            }
        }
        check_same(
            &format!("seed {seed}, 2 ranks"),
            &expected,
            &cluster(&config, &make, 2),
        );
    }
}

#[test]
fn without_an_end_time_finish_runs_at_the_last_committed_event() {
    let n = 6;
    for seed in 0..if cfg!(debug_assertions) { 2 } else { 6 } {
        let config = RunConfig::new(seed);
        let make = || clocks(n, 5);
        let expected = sequential(&config, make());
        let (outputs, _, report) = &expected;
        assert_eq!(report.stop_reason, StopReason::Drained);
        assert_eq!(report.pending_at_end_time, 0);
        // Every LP ticks 5 times; the last tick of LP 5 is at 30, and its note lands later.
        assert!(report.end_time > 30.0);
        for output in outputs {
            assert_eq!(output.output.0, 5);
            assert_eq!(output.output.2, report.end_time);
        }
        for threads in [1, 2] {
            check_same(
                &format!("seed {seed}, {threads} threads"),
                &expected,
                &timewarp(&config, make(), threads, seed % 2 == 0),
            );
        }
        check_same(
            &format!("seed {seed}, 3 ranks"),
            &expected,
            &cluster(&config, &make, 3),
        );
    }
}

/// Stops after `ticks` ticks: the event limit (sequential only; Time Warp refuses it).
#[test]
fn the_event_limit_finishes_at_the_last_committed_event() {
    let mut outputs = Vec::new();
    let finished = Sequential::new(RunConfig::new(3).end_time(100.0).max_events(10))
        .run_final(clocks(3, u64::MAX), &mut outputs)
        .unwrap();
    assert_eq!(finished.report.stop_reason, StopReason::EventLimit);
    assert_eq!(outputs.len(), 3);
    for output in &outputs {
        assert_eq!(output.output.2, finished.report.end_time);
    }
}

/// A panic in `finish` stops the run with the LP named, on every kernel, and the outputs of
/// the LPs before it are delivered.
#[test]
fn a_panic_in_finish_is_a_typed_error_naming_the_first_lp() {
    #[derive(Clone)]
    struct Fragile;
    impl LogicalProcess for Fragile {
        type Event = ();
        type Output = u32;
        fn init(&mut self, ctx: &mut Ctx<Self>) {
            ctx.schedule(1.0, ());
        }
        fn on_event(&mut self, _: (), _: &mut Ctx<Self>) {}
        fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
            assert!(ctx.me().get() < 3, "broken at the end");
            ctx.emit(ctx.me().get());
        }
    }
    let config = RunConfig::new(1).end_time(5.0);
    let mut outputs = Vec::new();
    let error = Sequential::new(config.clone())
        .run(vec![Fragile; 6], &mut outputs)
        .unwrap_err();
    assert!(error.error.to_string().contains("LP 3"), "{error}");
    assert!(error.error.to_string().contains("in finish"), "{error}");
    let expected: Vec<u32> = outputs.iter().map(|c| c.output).collect();
    assert_eq!(expected, [0, 1, 2]);
    for threads in [1, 2, 3] {
        let mut outputs = Vec::new();
        let error = TimeWarp::new(config.clone())
            .threads(threads)
            .run(vec![Fragile; 6], &mut outputs)
            .unwrap_err();
        assert!(error.error.to_string().contains("LP 3"), "{error}");
        let got: Vec<u32> = outputs.iter().map(|c| c.output).collect();
        assert_eq!(got, expected, "{threads} threads");
    }
}
