//! Checkpoints across kernels: a run paused on one kernel (sequential, or Time Warp on 1–3
//! threads in both cancellation modes), written to bytes and read back, continued on
//! another and paused again, then finished on a third, commits exactly what the
//! uninterrupted sequential run commits — trace and content hashes, counts, outputs (and,
//! for the cancel/reschedule-heavy `Chaos`, the final states).

mod common;

use common::Chaos;
use rand::RngExt;
use serde::Serialize;
use serde::de::DeserializeOwned;
use warpsim_core::{
    Checkpoint, CheckpointLabel, Committed, Ending, Kernel, LogicalProcess, Report, RunConfig,
    Sequential, Start,
};
use warpsim_models::pets::{PetsParams, Style};
use warpsim_models::phold::{Phold, PholdParams};
use warpsim_models::sharks::{CancelStyle, RandomPopulation, SharksParams};
use warpsim_timewarp::{Cancellation, TimeWarp};

/// A kernel of the interchange: sequential, or Time Warp with `threads` and `cancellation`.
#[derive(Debug, Clone, Copy)]
enum On {
    Sequential,
    TimeWarp(usize, Cancellation),
}

fn label() -> CheckpointLabel {
    CheckpointLabel::new("test", "")
}

/// One stretch on `on` from `start`, pausing at `pause` when given.
fn stretch<M>(
    on: On,
    config: &RunConfig,
    pause: Option<f64>,
    start: Start<M>,
    outputs: &mut Vec<Committed<M::Output>>,
) -> Ending<M>
where
    M: LogicalProcess + Serialize + DeserializeOwned,
{
    let mut config = config.clone();
    if let Some(at) = pause {
        config = config.pause_at(at);
    }
    let ending = match on {
        On::Sequential => Sequential::new(config).run_from(start, outputs),
        On::TimeWarp(threads, cancellation) => {
            TimeWarp::new(config)
                .threads(threads)
                .cancellation(cancellation)
                .run_from(start, outputs)
                .0
        }
    };
    ending.unwrap_or_else(|error| panic!("{on:?}: {}", error.error))
}

/// Through the file format and back.
fn round_trip<M: LogicalProcess + Serialize + DeserializeOwned>(
    mut checkpoint: Box<Checkpoint<M>>,
) -> Box<Checkpoint<M>> {
    checkpoint.set_label(label());
    let mut bytes = Vec::new();
    checkpoint.write_to(&mut bytes).unwrap();
    Box::new(Checkpoint::read_from(&bytes[..], &label()).unwrap())
}

/// Runs `make()` paused at each of `pauses` on the kernels of `chain` in turn (one more
/// kernel than pauses) and returns the final report, outputs and states.
fn chained<M>(
    config: &RunConfig,
    make: &impl Fn() -> Vec<M>,
    pauses: &[f64],
    chain: &[On],
) -> (Report, Vec<Committed<M::Output>>, Vec<M>)
where
    M: LogicalProcess + Serialize + DeserializeOwned,
{
    assert_eq!(chain.len(), pauses.len() + 1);
    let mut outputs = Vec::new();
    let mut start = Start::Init(make());
    for (index, on) in chain.iter().enumerate() {
        match stretch(*on, config, pauses.get(index).copied(), start, &mut outputs) {
            Ending::Finished(finished) => {
                assert_eq!(index, chain.len() - 1, "finished before the last pause");
                return (finished.report, outputs, finished.states);
            }
            Ending::Paused(checkpoint, report) => {
                assert!(report.events_committed <= checkpoint.events_committed());
                start = Start::Resume(round_trip(checkpoint));
            }
        }
    }
    panic!("the last stretch paused")
}

const CHAINS: &[[On; 3]] = &[
    [
        On::Sequential,
        On::TimeWarp(2, Cancellation::Lazy),
        On::Sequential,
    ],
    [
        On::TimeWarp(3, Cancellation::Aggressive),
        On::Sequential,
        On::TimeWarp(2, Cancellation::Lazy),
    ],
    [
        On::TimeWarp(1, Cancellation::Lazy),
        On::TimeWarp(2, Cancellation::Aggressive),
        On::TimeWarp(3, Cancellation::Lazy),
    ],
];

/// What a continued run must report as the uninterrupted `whole` did: the trace and content
/// hashes, the count, the end time and why it ended.
fn assert_same_report(what: &str, report: &Report, whole: &Report) {
    assert_eq!(report.trace_hash, whole.trace_hash, "{what}");
    assert_eq!(report.content_hash, whole.content_hash, "{what}");
    assert_eq!(report.events_committed, whole.events_committed, "{what}");
    assert_eq!(report.end_time, whole.end_time, "{what}");
    assert_eq!(report.stop_reason, whole.stop_reason, "{what}");
}

/// Checks every chain against the uninterrupted sequential run.
fn check<M, F>(name: &str, config: RunConfig, pauses: [f64; 2], make: F)
where
    M: LogicalProcess + Serialize + DeserializeOwned + std::fmt::Debug,
    M::Output: PartialEq + std::fmt::Debug,
    F: Fn() -> Vec<M>,
{
    let config = config.content_hash(true);
    let mut outputs = Vec::new();
    let whole = Sequential::new(config.clone())
        .run_final(make(), &mut outputs)
        .unwrap();
    assert!(whole.report.events_committed > 100, "{name}: too small");
    for chain in CHAINS {
        let (report, resumed_outputs, states) = chained(&config, &make, &pauses, chain);
        let what = format!("{name} via {chain:?}");
        assert_same_report(&what, &report, &whole.report);
        assert_eq!(resumed_outputs, outputs, "{what}");
        // The final states, compared by their `Debug` forms (the models need no
        // `PartialEq`; an `EventHandle` shows its event, not the kernel's locator for it).
        let shown = |states: &[M]| format!("{states:?}");
        assert!(
            shown(&states) == shown(&whole.states),
            "{what}: final states differ"
        );
    }
}

#[test]
fn chaos_moves_between_kernels_and_ends_as_the_uninterrupted_run() {
    for seed in 0..4 {
        check(
            "chaos",
            RunConfig::new(seed).end_time(30.0),
            [4.25, 17.0],
            || vec![Chaos::default(); 24],
        );
    }
}

/// Keeps every handle it ever had, stale copies included (after a cancel, after a move),
/// and keeps cancelling and moving them: whether an old handle still names a pending event
/// must be answered the same after a checkpoint moved the run to another kernel (the
/// sequential kernel keeps the record a buffered kernel keeps, see `RetractionLog`).
#[derive(Clone, Default, Debug, serde::Serialize, serde::Deserialize)]
struct Hoarder {
    held: Vec<warpsim_core::EventHandle>,
}

impl LogicalProcess for Hoarder {
    type Event = u8;
    type Output = (u8, bool);
    fn init(&mut self, ctx: &mut warpsim_core::Ctx<Self>) {
        for _ in 0..4 {
            let delay = ctx.rng().random::<f64>() * 3.0;
            self.held.push(ctx.schedule(delay, 0));
        }
    }
    fn on_event(&mut self, _: u8, ctx: &mut warpsim_core::Ctx<Self>) {
        let roll: f64 = ctx.rng().random();
        // One send per event, two after a successful cancel: the population stays level.
        let mut sends = 1;
        if !self.held.is_empty() {
            // Mostly the newest handles: those that still name pending (or just cancelled)
            // events, so that old copies are tried again while their events would be due.
            let newest = self.held.len().min(4);
            let index = self.held.len() - 1 - ctx.rng().random_range(0..newest);
            if roll < 0.3 {
                let handle = self.held[index];
                let cancelled = ctx.cancel(handle);
                ctx.emit((0, cancelled));
                // Kept, and tried again soon.
                self.held.push(handle);
                if cancelled {
                    sends = 2;
                }
            } else if roll < 0.6 {
                let mut copy = self.held[index];
                let delay = ctx.rng().random::<f64>() * 2.0;
                let moved = ctx.reschedule(&mut copy, delay);
                ctx.emit((1, moved));
                self.held.push(copy);
                // The stale copy stays too, at the newest end.
                let stale = self.held.swap_remove(index);
                self.held.push(stale);
            }
        }
        let n_lps = ctx.n_lps();
        for _ in 0..sends {
            let to = warpsim_core::LpId::new(ctx.rng().random_range(0..n_lps));
            let delay = ctx.rng().random::<f64>() * 4.0;
            let handle = ctx.send(to, delay, 1);
            self.held.push(handle);
        }
        if self.held.len() > 24 {
            let drop = ctx.rng().random_range(0..self.held.len());
            self.held.swap_remove(drop);
        }
    }
}

#[test]
fn stale_handles_answer_the_same_after_moving_between_kernels() {
    for seed in 0..4 {
        check(
            "hoarder",
            RunConfig::new(seed).end_time(25.0),
            [3.5, 12.25],
            || vec![Hoarder::default(); 16],
        );
    }
}

#[test]
fn phold_moves_between_kernels_and_ends_as_the_uninterrupted_run() {
    let params = PholdParams {
        lps: 48,
        end: 40.0,
        remote: 0.5,
        ..PholdParams::default()
    };
    check(
        "phold",
        RunConfig::new(3).end_time(params.end),
        [0.0, 21.5],
        || params.build().unwrap(),
    );
}

#[test]
fn pets_moves_between_kernels_and_ends_as_the_uninterrupted_run() {
    let params = PetsParams {
        tasks: 400,
        gates: 4,
        style: Style::Events,
        ..PetsParams::default()
    };
    check("pets", RunConfig::new(5), [2.0, 30.0], || {
        params.build().unwrap()
    });
}

/// A small Sharks World (16 sectors, 96 creatures) with `cancel`, and its creatures.
fn small_sharks_world(
    cancel: CancelStyle,
) -> (SharksParams, Vec<warpsim_models::sharks::Creature>) {
    let params = SharksParams {
        width: 4096.0,
        height: 4096.0,
        sectors_x: 4,
        sectors_y: 4,
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
    let creatures = population.generate(&params, 2).unwrap();
    (params, creatures)
}

#[test]
fn sharks_world_moves_between_kernels_in_both_cancel_styles() {
    for cancel in [CancelStyle::App, CancelStyle::Kernel] {
        let (params, creatures) = small_sharks_world(cancel);
        check(
            &format!("sharks {cancel:?}"),
            RunConfig::new(2).end_time(params.kernel_end_time()),
            [10.0, 33.3],
            || params.build(&creatures).unwrap(),
        );
    }
}

/// A Time Warp run from `start` (with `outputs` delivered before it) that takes checkpoints
/// in place (`run_from_checkpointing`): each one is
/// asked for as soon as the one before it is in (`every` checkpoints in all), so they fall
/// at whatever GVTs the run reaches; with `stop`, the last request is a stop instead. Returns
/// the run's ending, its outputs, and each checkpoint (through the file format) with the
/// number of outputs delivered when it was taken.
#[allow(clippy::type_complexity)]
fn in_place<M>(
    kernel: &TimeWarp,
    handle: &warpsim_core::StopHandle,
    start: Start<M>,
    mut outputs: Vec<Committed<M::Output>>,
    every: usize,
    stop: bool,
) -> (
    Ending<M>,
    Vec<Committed<M::Output>>,
    Vec<(Box<Checkpoint<M>>, usize)>,
)
where
    M: LogicalProcess + Serialize + DeserializeOwned,
{
    let mut taken = Vec::new();
    handle.pause();
    let (ending, _) = kernel.run_from_checkpointing(
        start,
        &mut outputs,
        |checkpoint, report, sink: &mut Vec<Committed<M::Output>>| {
            assert_eq!(report.events_committed, checkpoint.events_committed());
            taken.push((round_trip(checkpoint), sink.len()));
            if taken.len() + 1 < every {
                handle.pause();
            } else if taken.len() + 1 == every {
                if stop {
                    handle.stop();
                } else {
                    handle.pause();
                }
            }
        },
    );
    let ending = ending.unwrap_or_else(|error| panic!("{}", error.error));
    (ending, outputs, taken)
}

/// Checks checkpoints taken in place against the uninterrupted sequential run: the run that
/// took them ends as that run did, each of them continues on the sequential kernel to the
/// same end (its outputs then complete those delivered before it), and a run stopped at its
/// last one continues from it to the same end too.
fn check_in_place<M, F>(name: &str, config: RunConfig, make: F)
where
    M: LogicalProcess + Serialize + DeserializeOwned + std::fmt::Debug,
    M::Output: PartialEq + std::fmt::Debug + Clone,
    F: Fn() -> Vec<M>,
{
    let config = config.content_hash(true);
    let mut outputs = Vec::new();
    let whole = Sequential::new(config.clone())
        .run_final(make(), &mut outputs)
        .unwrap();
    assert!(whole.report.events_committed > 100, "{name}: too small");
    let same_end = |what: &str, report: &Report, delivered: &[Committed<M::Output>]| {
        assert_same_report(what, report, &whole.report);
        assert!(delivered == outputs.as_slice(), "{what}: outputs differ");
    };
    let resume = |what: &str, checkpoint: Box<Checkpoint<M>>, before: usize| {
        let mut delivered = outputs[..before].to_vec();
        let ending = Sequential::new(config.clone())
            .run_from(Start::Resume(checkpoint), &mut delivered)
            .unwrap();
        let Ending::Finished(done) = ending else {
            panic!("{what}: paused again")
        };
        same_end(what, &done.report, &delivered);
    };
    let kernels = [
        (1, Cancellation::Aggressive, false),
        (2, Cancellation::Lazy, false),
        (3, Cancellation::Aggressive, true),
    ];
    for (threads, cancellation, balance) in kernels {
        for stop in [false, true] {
            let what = format!("{name} on {threads} threads, {cancellation:?}, stop {stop}");
            let kernel = |handle: &warpsim_core::StopHandle| {
                TimeWarp::new(config.clone().stop_handle(handle.clone()))
                    .threads(threads)
                    .cancellation(cancellation)
                    .load_balancing(balance)
                    .gvt_interval(16)
            };
            let handle = warpsim_core::StopHandle::new();
            let (ending, delivered, taken) = in_place(
                &kernel(&handle),
                &handle,
                Start::Init(make()),
                Vec::new(),
                6,
                stop,
            );
            match ending {
                Ending::Finished(finished) => {
                    same_end(&what, &finished.report, &delivered);
                    let shown = |states: &[M]| format!("{states:?}");
                    assert!(
                        shown(&finished.states) == shown(&whole.states),
                        "{what}: final states differ"
                    );
                }
                Ending::Paused(checkpoint, report) => {
                    assert!(stop, "{what}: paused without a stop");
                    assert_eq!(report.stop_reason, warpsim_core::StopReason::Interrupted);
                    assert_eq!(report.events_committed, checkpoint.events_committed());
                    assert!(
                        outputs.starts_with(&delivered),
                        "{what}: outputs before the stop"
                    );
                    resume(
                        &format!("{what}, from the stop"),
                        checkpoint,
                        delivered.len(),
                    );
                }
            }
            for (index, (checkpoint, before)) in taken.into_iter().enumerate() {
                if index == 1 {
                    // Resumed on Time Warp, taking checkpoints in place again: the counts
                    // and hashes carried from the first stretch join the second's.
                    let what = format!("{what}, resumed from checkpoint 1 in place");
                    let handle = warpsim_core::StopHandle::new();
                    let (ending, delivered, again) = in_place(
                        &kernel(&handle),
                        &handle,
                        Start::Resume(checkpoint.clone()),
                        outputs[..before].to_vec(),
                        3,
                        false,
                    );
                    let Ending::Finished(done) = ending else {
                        panic!("{what}: paused")
                    };
                    same_end(&what, &done.report, &delivered);
                    for (later, (checkpoint, before)) in again.into_iter().enumerate() {
                        resume(&format!("{what}, then {later}"), checkpoint, before);
                    }
                }
                resume(
                    &format!("{what}, from checkpoint {index}"),
                    checkpoint,
                    before,
                );
            }
        }
    }
}

#[test]
fn checkpoints_taken_in_place_continue_every_model_to_the_uninterrupted_end() {
    for seed in 0..2 {
        check_in_place("chaos", RunConfig::new(seed).end_time(30.0), || {
            vec![Chaos::default(); 24]
        });
        check_in_place("hoarder", RunConfig::new(seed).end_time(25.0), || {
            vec![Hoarder::default(); 16]
        });
    }
    let phold = PholdParams {
        lps: 48,
        end: 40.0,
        remote: 0.5,
        ..PholdParams::default()
    };
    check_in_place("phold", RunConfig::new(3).end_time(phold.end), || {
        phold.build().unwrap()
    });
    let pets = PetsParams {
        tasks: 400,
        gates: 4,
        style: Style::Events,
        ..PetsParams::default()
    };
    check_in_place("pets", RunConfig::new(5), || pets.build().unwrap());
    for cancel in [CancelStyle::App, CancelStyle::Kernel] {
        let (params, creatures) = small_sharks_world(cancel);
        check_in_place(
            &format!("sharks {cancel:?}"),
            RunConfig::new(2).end_time(params.kernel_end_time()),
            || params.build(&creatures).unwrap(),
        );
    }
}

#[test]
fn a_panicking_checkpoint_callback_stops_the_run_with_one_error() {
    let params = PholdParams {
        lps: 32,
        end: 200.0,
        ..PholdParams::default()
    };
    let handle = warpsim_core::StopHandle::new();
    handle.pause();
    let config = RunConfig::new(1).end_time(params.end).stop_handle(handle);
    let kernel = TimeWarp::new(config).threads(2);
    let (ending, _) = kernel.run_from_checkpointing(
        Start::Init(params.build().unwrap()),
        &mut warpsim_core::Discard,
        |_, _, _| panic!("no room for it"),
    );
    let error = ending.expect_err("the callback panicked").error;
    assert!(
        matches!(&error, warpsim_core::SimError::SinkPanic { message, .. }
            if message.contains("checkpoint callback") && message.contains("no room for it")),
        "{error}"
    );
}

#[test]
fn a_pause_time_is_a_checkpoint_taken_in_place_even_after_earlier_ones() {
    let params = PholdParams {
        lps: 48,
        end: 40.0,
        remote: 0.5,
        ..PholdParams::default()
    };
    let config = RunConfig::new(3).end_time(params.end).content_hash(true);
    let whole = Sequential::new(config.clone())
        .run(params.build().unwrap(), &mut warpsim_core::Discard)
        .unwrap();
    let Ending::Paused(at_time, _) = Sequential::new(config.clone().pause_at(21.5))
        .run_from(
            Start::Init(params.build().unwrap()),
            &mut warpsim_core::Discard,
        )
        .unwrap()
    else {
        panic!("the sequential run did not pause")
    };
    for (threads, cancellation) in [(1, Cancellation::Lazy), (2, Cancellation::Aggressive)] {
        let what = format!("{threads} threads, {cancellation:?}");
        let handle = warpsim_core::StopHandle::new();
        // Two checkpoints asked for at once, before the one at 21.5 set before the run.
        handle.pause();
        let kernel = TimeWarp::new(config.clone().pause_at(21.5).stop_handle(handle.clone()))
            .threads(threads)
            .cancellation(cancellation);
        let mut taken: Vec<Box<Checkpoint<Phold>>> = Vec::new();
        let (ending, _) = kernel.run_from_checkpointing(
            Start::Init(params.build().unwrap()),
            &mut warpsim_core::Discard,
            |checkpoint, _, _| {
                if taken.is_empty() {
                    handle.pause();
                }
                taken.push(checkpoint);
            },
        );
        let Ok(Ending::Finished(done)) = ending else {
            panic!("{what}: the run did not finish")
        };
        assert_eq!(done.report.trace_hash, whole.trace_hash, "{what}");
        assert_eq!(
            done.report.events_committed, whole.events_committed,
            "{what}"
        );
        let matching: Vec<_> = taken
            .iter()
            .filter(|checkpoint| checkpoint.events_committed() == at_time.events_committed())
            .collect();
        assert!(
            taken.len() >= 2 && !matching.is_empty(),
            "{what}: no checkpoint at 21.5 among {} taken",
            taken.len()
        );
        for checkpoint in matching {
            assert_eq!(checkpoint.trace_hash(), at_time.trace_hash(), "{what}");
            assert_eq!(
                format!("{:?}", checkpoint.pending()),
                format!("{:?}", at_time.pending()),
                "{what}"
            );
        }
    }
}
