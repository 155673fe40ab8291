//! Errors under optimism: a handler error is reported only when it is real (reached by GVT),
//! with the same error, committed events and outputs as on the sequential kernel; a phantom
//! error of a wrong optimistic state is rolled back silently; bad settings are refused.

mod common;

use common::{Misbehave, sequential, timewarp};
use warpsim_core::{Breach, Ctx, Discard, Kernel, LogicalProcess, LpId, RunConfig, SimError};
use warpsim_timewarp::{Cancellation, TimeWarp};

#[test]
fn real_errors_match_the_sequential_kernel() {
    for panic in [false, true] {
        let lps = || vec![Misbehave { bad: 2, panic }; 6];
        let config = RunConfig::new(1).content_hash(true);
        let (expected, expected_outputs) = sequential(config.clone(), lps());
        let expected = expected.unwrap_err();
        for threads in 1..=4 {
            for cancellation in [Cancellation::Aggressive, Cancellation::Lazy] {
                let kernel = TimeWarp::new(config.clone())
                    .threads(threads)
                    .cancellation(cancellation);
                let (result, outputs, _) = timewarp(&kernel, lps());
                let error = result.unwrap_err();
                assert_eq!(error.to_string(), expected.to_string(), "{threads} threads");
                assert_eq!(
                    error.partial.events_committed, expected.partial.events_committed,
                    "{threads} threads, panic {panic}"
                );
                assert_eq!(error.partial.trace_hash, expected.partial.trace_hash);
                // The failing event commits (a bad delay) or not (a panic) with its contents.
                assert_eq!(error.partial.content_hash, expected.partial.content_hash);
                assert_eq!(
                    outputs, expected_outputs,
                    "{threads} threads, panic {panic}"
                );
            }
        }
        match &expected.error {
            SimError::ModelPanic { lp, message, .. } => {
                assert!(panic);
                assert_eq!(*lp, LpId::new(2));
                assert_eq!(message, "model bug at 3");
            }
            SimError::BadDelay { lp, .. } => {
                assert!(!panic);
                assert_eq!(*lp, LpId::new(2));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// LP 1 panics if it handles a `Late` event before an `Early` one. Sequentially `Early`
/// (time 1, sent by LP 0 after a long chain) always comes first, but an optimistic LP 1 may
/// see `Late` (time 2) first: a phantom error that the straggler `Early` must undo.
#[derive(Clone, Default)]
struct Phantom {
    seen_early: bool,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
enum Ph {
    Chain(u32),
    Early,
    Late,
}

impl LogicalProcess for Phantom {
    type Event = Ph;
    type Output = &'static str;
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        match ctx.me().get() {
            0 => {
                ctx.schedule(0.001, Ph::Chain(400));
            }
            2 => {
                ctx.send(LpId::new(1), 2.0, Ph::Late);
            }
            _ => {}
        }
    }
    fn on_event(&mut self, event: Ph, ctx: &mut Ctx<Self>) {
        match event {
            Ph::Chain(0) => {
                ctx.send(LpId::new(1), 1.0 - ctx.now().as_f64(), Ph::Early);
            }
            Ph::Chain(n) => {
                ctx.schedule(0.001, Ph::Chain(n - 1));
            }
            Ph::Early => {
                self.seen_early = true;
                ctx.emit("early");
            }
            Ph::Late => {
                assert!(self.seen_early, "late before early");
                ctx.emit("late");
            }
        }
    }
}

#[test]
fn phantom_errors_are_rolled_back() {
    let (expected, expected_outputs) = sequential(RunConfig::new(1), vec![Phantom::default(); 3]);
    let expected = expected.unwrap();
    for threads in 1..=4 {
        for _ in 0..10 {
            let kernel = TimeWarp::new(RunConfig::new(1))
                .threads(threads)
                .partition(warpsim_timewarp::Partition::RoundRobin);
            let (result, outputs, _) = timewarp(&kernel, vec![Phantom::default(); 3]);
            let report = result.unwrap_or_else(|error| panic!("{threads} threads: {error}"));
            assert_eq!(report.trace_hash, expected.trace_hash);
            assert_eq!(outputs, expected_outputs);
        }
    }
}

#[test]
fn bad_settings_are_refused() {
    let lps = || vec![Phantom::default(); 3];
    let refused = |kernel: TimeWarp| {
        let error = kernel.run(lps(), &mut Discard).unwrap_err();
        assert!(matches!(error.error, SimError::Config(_)), "{error}");
        error.to_string()
    };
    // Library errors name the setting, not a command-line flag.
    assert!(refused(TimeWarp::new(RunConfig::new(1)).threads(0)).contains("thread count"));
    assert!(refused(TimeWarp::new(RunConfig::new(1).max_events(5))).contains("end time"));
    assert!(
        refused(TimeWarp::new(RunConfig::new(1)).checkpoint_interval(0)).contains("checkpoint")
    );
    let window = refused(TimeWarp::new(RunConfig::new(1)).window(Some(f64::NAN)));
    assert!(
        window.contains("optimism window") && !window.contains("--"),
        "{window}"
    );
    for lookahead in [f64::NAN, -0.5, f64::INFINITY] {
        let message = refused(TimeWarp::new(RunConfig::new(1).lookahead(lookahead)));
        assert!(message.contains("lookahead"), "{message}");
    }
    let error = TimeWarp::new(RunConfig::new(1))
        .run(Vec::<Phantom>::new(), &mut Discard)
        .unwrap_err();
    assert_eq!(error.error, SimError::NoLps);
}

/// Ticks every time unit and pings its neighbour half a unit ahead, which is the run's
/// lookahead; LP 2 breaks it at time 3 in one of three ways (`how`): a ping a tenth of a
/// unit ahead, a cancel of a ping at 3.5 from time 3.2, or a move of it to 3.55 from 3.2.
#[derive(Clone)]
struct Hasty {
    how: u8,
    ping: Option<warpsim_core::EventHandle>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
enum Ha {
    Tick,
    Ping,
    Regret,
}

impl LogicalProcess for Hasty {
    type Event = Ha;
    type Output = (u32, f64);
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        ctx.schedule(1.0, Ha::Tick);
    }
    fn on_event(&mut self, event: Ha, ctx: &mut Ctx<Self>) {
        let me = ctx.me().get();
        let next = LpId::new((me + 1) % ctx.n_lps());
        ctx.emit((me, ctx.now().as_f64()));
        match event {
            Ha::Tick if me == 2 && ctx.now().as_f64() == 3.0 => {
                ctx.schedule(1.0, Ha::Tick);
                if self.how == 0 {
                    ctx.send(next, 0.1, Ha::Ping);
                } else {
                    // Allowed here (half a unit ahead); the regret at 3.2 is not.
                    self.ping = Some(ctx.send(next, 0.5, Ha::Ping));
                    ctx.schedule(0.2, Ha::Regret);
                }
            }
            Ha::Tick => {
                ctx.schedule(1.0, Ha::Tick);
                ctx.send(next, 0.5, Ha::Ping);
            }
            Ha::Ping => {
                // Its own events are free of the lookahead.
                ctx.schedule(0.0, Ha::Regret);
            }
            Ha::Regret => {
                if let Some(mut ping) = self.ping.take() {
                    if self.how == 1 {
                        ctx.cancel(ping);
                    } else {
                        ctx.reschedule(&mut ping, 0.35);
                    }
                }
            }
        }
    }
}

#[test]
fn a_broken_lookahead_stops_every_kernel_alike() {
    for how in 0..3 {
        let lps = || vec![Hasty { how, ping: None }; 5];
        let config = RunConfig::new(1).end_time(8.0).content_hash(true);
        // Without the promise, the same model runs to its end.
        let (fine, _) = sequential(config.clone(), lps());
        let fine = fine.unwrap_or_else(|error| panic!("how {how}: {error}"));
        assert_eq!(fine.stop_reason, warpsim_core::StopReason::EndTime);
        let config = config.lookahead(0.5);
        let (expected, expected_outputs) = sequential(config.clone(), lps());
        let expected = expected.unwrap_err();
        match &expected.error {
            SimError::Lookahead {
                lp,
                time,
                what,
                dest,
                at,
                earliest,
            } => {
                assert_eq!((*lp, *dest), (LpId::new(2), LpId::new(3)));
                let (when, did, reached) = [
                    (3.0, Breach::Sent, 3.1),
                    (3.2, Breach::Cancelled, 3.5),
                    (3.2, Breach::Moved, 3.5),
                ][how as usize];
                assert_eq!((time.as_f64(), *what, *at), (when, did, reached));
                assert_eq!(*earliest, when + 0.5);
            }
            other => panic!("how {how}: unexpected {other:?}"),
        }
        for threads in 1..=4 {
            for safe in [true, false] {
                let kernel = TimeWarp::new(config.clone())
                    .threads(threads)
                    .safe_events(safe);
                let (result, outputs, _) = timewarp(&kernel, lps());
                let error = result.unwrap_err();
                let what = format!("how {how}, {threads} threads, safe events {safe}");
                assert_eq!(error.to_string(), expected.to_string(), "{what}");
                assert_eq!(
                    error.partial.events_committed, expected.partial.events_committed,
                    "{what}"
                );
                assert_eq!(
                    error.partial.trace_hash, expected.partial.trace_hash,
                    "{what}"
                );
                assert_eq!(
                    error.partial.content_hash, expected.partial.content_hash,
                    "{what}"
                );
                assert_eq!(outputs, expected_outputs, "{what}");
            }
        }
    }
}

#[test]
fn a_budget_below_the_pending_events_at_the_start_is_refused_before_the_run() {
    let params = warpsim_models::phold::PholdParams {
        lps: 64,
        population: 8,
        end: 50.0,
        ..Default::default()
    };
    let kernel = TimeWarp::new(RunConfig::new(1).end_time(params.end))
        .threads(2)
        .memory(Some(1024));
    let error = kernel
        .run(params.build().unwrap(), &mut Discard)
        .unwrap_err();
    match error.error {
        SimError::MemoryBudget {
            budget,
            needed,
            events,
        } => {
            assert_eq!(budget, 1024);
            assert_eq!(events, 64 * 8);
            assert!(needed > budget);
        }
        other => panic!("{other:?}"),
    }
    // Nothing ran, and the partial report says what was pending, as after a failed init.
    assert_eq!(error.partial.events_committed, 0);
    assert_eq!(error.partial.pending_at_end, 64 * 8);
}

#[test]
fn a_tight_budget_gives_the_same_outcome_every_time_and_warns_when_it_cannot_be_kept() {
    // A budget just above what the pending events need: the run is throttled hard, never
    // fails, commits what the sequential kernel commits, and says (once) that it could not
    // keep the budget.
    let params = warpsim_models::phold::PholdParams {
        lps: 256,
        population: 2,
        end: 30.0,
        ..Default::default()
    };
    let config = RunConfig::new(1).end_time(params.end);
    let (expected, _) = common::sequential(config.clone(), params.build().unwrap());
    let expected = expected.unwrap();
    let tight = 256 * 2 * 64;
    for _ in 0..6 {
        let warnings = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = warnings.clone();
        let report = TimeWarp::new(config.clone())
            .threads(2)
            .memory(Some(tight))
            .on_warning(std::sync::Arc::new(
                move |warning: &warpsim_timewarp::Warning| {
                    seen.lock().unwrap().push(warning.clone())
                },
            ))
            .run(params.build().unwrap(), &mut Discard)
            .unwrap();
        assert_eq!(report.trace_hash, expected.trace_hash);
        let warnings = warnings.lock().unwrap();
        assert!(warnings.len() <= 1, "{warnings:?}");
        assert!(
            warnings
                .iter()
                .all(|w| matches!(w, warpsim_timewarp::Warning::MemoryBudgetExceeded { .. }))
        );
    }
}
