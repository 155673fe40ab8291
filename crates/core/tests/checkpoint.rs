//! Checkpoints on the sequential kernel: a run paused anywhere (by event count, by time, by
//! a stop handle), written to bytes, read back and continued, commits exactly what the
//! uninterrupted run commits — same trace and content hashes, counts, outputs and final
//! states — and bad files are refused with the right error.

use warpsim_core::rand::RngExt;
use warpsim_core::serde::{Deserialize, Serialize};
use warpsim_core::{
    Checkpoint, CheckpointError, CheckpointLabel, Committed, Ctx, Ending, EventHandle, Kernel,
    LogicalProcess, LpId, QueueKind, Report, RunConfig, Sequential, Start, StopHandle, StopReason,
};

/// Random sends, cancels and reschedules of handles kept in the state (the timewarp tests'
/// `Chaos`, with serde): the handles of a checkpointed run must still cancel and move their
/// events after the resume.
#[derive(Clone, Default, PartialEq, Debug, Serialize, Deserialize)]
#[serde(crate = "warpsim_core::serde")]
struct Chaos {
    pending: Vec<EventHandle>,
    handled: u64,
}

impl LogicalProcess for Chaos {
    type Event = u32;
    type Output = (u8, bool, u64);
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        for _ in 0..3 {
            let delay = ctx.rng().random::<f64>();
            let handle = ctx.schedule(delay, 0);
            self.pending.push(handle);
        }
    }
    fn on_event(&mut self, tag: u32, ctx: &mut Ctx<Self>) {
        self.handled += 1;
        let n = ctx.n_lps();
        let roll: f64 = ctx.rng().random();
        let mut sends = 1;
        if roll < 0.25 && !self.pending.is_empty() {
            let index = ctx.rng().random_range(0..self.pending.len());
            let handle = self.pending.swap_remove(index);
            let cancelled = ctx.cancel(handle);
            ctx.emit((0, cancelled, handle.key().id));
            if cancelled {
                sends = 2;
            }
        } else if roll < 0.5 && !self.pending.is_empty() {
            let index = ctx.rng().random_range(0..self.pending.len());
            let delay = ctx.rng().random::<f64>() * 2.0;
            // A stale copy of the handle too: it must still find the event after a resume.
            let stale = self.pending[index];
            let moved = ctx.reschedule(&mut self.pending[index], delay);
            ctx.emit((1, moved, self.pending[index].key().id));
            if tag.is_multiple_of(3) {
                let mut copy = stale;
                let again = ctx.reschedule(&mut copy, delay * 0.5);
                ctx.emit((2, again, u64::from(tag)));
                self.pending[index] = copy;
            }
        }
        if roll > 0.9 {
            ctx.emit((3, true, self.handled));
        }
        for _ in 0..sends {
            let to = LpId::new(ctx.rng().random_range(0..n));
            let delay = if ctx.rng().random::<f64>() < 0.15 {
                0.0
            } else {
                ctx.rng().random::<f64>()
            };
            let handle = ctx.send(to, delay, tag.wrapping_add(1));
            if self.pending.len() < 8 {
                self.pending.push(handle);
            } else if ctx.rng().random::<f64>() < 0.3 {
                let cancelled = ctx.cancel(handle);
                ctx.emit((4, cancelled, handle.key().id));
                let _ = ctx.send(to, 0.5, tag);
            }
        }
    }
    fn finish(&mut self, ctx: &mut warpsim_core::FinishCtx<Self>) {
        ctx.emit((5, true, self.handled));
    }
}

type Outputs = Vec<Committed<(u8, bool, u64)>>;

const LPS: usize = 12;
const END: f64 = 40.0;

fn config(seed: u64) -> RunConfig {
    RunConfig::new(seed).end_time(END).content_hash(true)
}

fn whole(seed: u64, queue: QueueKind) -> (Report, Outputs, Vec<Chaos>) {
    let mut outputs = Vec::new();
    let finished = Sequential::new(config(seed))
        .queue(queue)
        .run_final(vec![Chaos::default(); LPS], &mut outputs)
        .unwrap();
    (finished.report, outputs, finished.states)
}

fn label() -> CheckpointLabel {
    CheckpointLabel::new("chaos", "lps=12")
}

/// Through the file format and back.
fn round_trip(checkpoint: &Checkpoint<Chaos>) -> Box<Checkpoint<Chaos>> {
    let mut bytes = Vec::new();
    checkpoint.write_to(&mut bytes).unwrap();
    Box::new(Checkpoint::read_from(&bytes[..], &label()).unwrap())
}

/// Runs in segments, each paused by `pause` (given the segment's index), with a round trip
/// through bytes at every pause.
fn in_segments(
    seed: u64,
    queue: QueueKind,
    pause: impl Fn(usize, RunConfig) -> RunConfig,
) -> (Report, Outputs, Vec<Chaos>, usize) {
    let mut outputs = Vec::new();
    let mut start = Start::Init(vec![Chaos::default(); LPS]);
    for segment in 0.. {
        let kernel = Sequential::new(pause(segment, config(seed))).queue(queue);
        match kernel.run_from(start, &mut outputs).unwrap() {
            Ending::Finished(finished) => {
                return (finished.report, outputs, finished.states, segment);
            }
            Ending::Paused(mut checkpoint, report) => {
                assert_eq!(report.stop_reason, StopReason::Paused);
                assert_eq!(checkpoint.events_committed(), report.events_committed);
                checkpoint.set_label(label());
                start = Start::Resume(round_trip(&checkpoint));
            }
        }
    }
    unreachable!()
}

fn assert_same(
    what: &str,
    (a_report, a_out, a_states): &(Report, Outputs, Vec<Chaos>),
    b: (Report, Outputs, Vec<Chaos>, usize),
) {
    let (b_report, b_out, b_states, segments) = b;
    assert!(segments > 1, "{what}: never paused");
    assert_eq!(a_report.trace_hash, b_report.trace_hash, "{what}");
    assert_eq!(a_report.content_hash, b_report.content_hash, "{what}");
    assert_eq!(
        a_report.events_committed, b_report.events_committed,
        "{what}"
    );
    assert_eq!(a_report.stop_reason, b_report.stop_reason, "{what}");
    assert_eq!(a_report.end_time, b_report.end_time, "{what}");
    assert_eq!(a_report.pending_at_end, b_report.pending_at_end, "{what}");
    assert_eq!(a_out, &b_out, "{what}");
    assert_eq!(a_states, &b_states, "{what}");
}

#[test]
fn paused_by_event_count_and_resumed_commits_the_same() {
    for seed in 1..4 {
        for queue in [QueueKind::Heap, QueueKind::Ladder] {
            let reference = whole(seed, queue);
            let total = reference.0.events_committed;
            // Three pauses at uneven counts, including one right at the start.
            let at = [0, total / 7, total / 2 + 3];
            let resumed = in_segments(seed, queue, |segment, config| match at.get(segment) {
                Some(&count) => config.pause_after(count),
                None => config,
            });
            assert_eq!(resumed.3, at.len());
            assert_same(
                &format!("seed {seed} {queue} by count"),
                &reference,
                resumed,
            );
        }
    }
}

#[test]
fn paused_by_time_and_resumed_commits_the_same() {
    for seed in 1..4 {
        let reference = whole(seed, QueueKind::Ladder);
        // Every 3.5 time units: pauses inside runs of zero-delay events too.
        let resumed = in_segments(seed, QueueKind::Ladder, |segment, config| {
            config.pause_at(3.5 * (segment + 1) as f64)
        });
        assert_same(&format!("seed {seed} by time"), &reference, resumed);
    }
}

#[test]
fn a_stop_ends_the_run_with_a_checkpoint_that_continues_it() {
    let reference = whole(5, QueueKind::Ladder);
    let stop = StopHandle::new();
    let mut outputs = Vec::new();
    // The sink stops the run from inside, as a signal would between two events.
    let mut delivered = 0;
    let trigger = stop.clone();
    let mut sink = |output: Committed<(u8, bool, u64)>| {
        delivered += 1;
        if delivered == 100 {
            trigger.stop();
        }
        outputs.push(output);
    };
    let kernel = Sequential::new(config(5).stop_handle(stop));
    let Ending::Paused(checkpoint, report) = kernel
        .run_from(Start::Init(vec![Chaos::default(); LPS]), &mut sink)
        .unwrap()
    else {
        panic!("not stopped");
    };
    assert_eq!(report.stop_reason, StopReason::Interrupted);
    assert!(report.events_committed < reference.0.events_committed);
    let mut checkpoint = *checkpoint;
    checkpoint.set_label(label());
    let resumed = Sequential::new(config(5))
        .run_from(Start::Resume(round_trip(&checkpoint)), &mut outputs)
        .unwrap();
    let Ending::Finished(finished) = resumed else {
        panic!("paused again")
    };
    assert_same(
        "stopped",
        &reference,
        (finished.report, outputs, finished.states, 2),
    );
}

#[test]
fn an_interrupted_plain_run_reports_and_finishes_what_it_did() {
    let stop = StopHandle::new();
    stop.stop();
    let mut outputs = Vec::new();
    let finished = Sequential::new(config(2).stop_handle(stop))
        .run_final(vec![Chaos::default(); LPS], &mut outputs)
        .unwrap();
    assert_eq!(finished.report.stop_reason, StopReason::Interrupted);
    // Stopped at once: nothing ran, and every LP's `finish` reported that.
    assert_eq!(finished.report.events_committed, 0);
    assert_eq!(outputs.len(), LPS);
    assert!(outputs.iter().all(|output| output.output == (5, true, 0)));
}

fn checkpoint_bytes() -> Vec<u8> {
    let kernel = Sequential::new(config(3).pause_at(10.0));
    let Ending::Paused(mut checkpoint, _) = kernel
        .run_from(
            Start::Init(vec![Chaos::default(); LPS]),
            &mut warpsim_core::Discard,
        )
        .unwrap()
    else {
        panic!("no pause")
    };
    checkpoint.set_label(label());
    let mut bytes = Vec::new();
    checkpoint.write_to(&mut bytes).unwrap();
    bytes
}

#[test]
fn bad_files_are_refused_with_what_is_wrong() {
    let bytes = checkpoint_bytes();
    let read = |bytes: &[u8], label: &CheckpointLabel| {
        Checkpoint::<Chaos>::read_from(bytes, label).map(|_| ())
    };
    assert!(read(&bytes, &label()).is_ok());
    // Truncated anywhere.
    for cut in [0, 5, 11, 19, 30, bytes.len() / 2, bytes.len() - 1] {
        let error = read(&bytes[..cut], &label()).unwrap_err();
        assert!(
            matches!(
                error,
                CheckpointError::Truncated { .. } | CheckpointError::Foreign
            ),
            "cut at {cut}: {error}"
        );
    }
    // Any flipped bit past the magic and version is caught by the checksum or the lengths.
    for at in (12..bytes.len()).step_by(7) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x10;
        let error = read(&damaged, &label()).unwrap_err();
        assert!(
            matches!(
                error,
                CheckpointError::Corrupted | CheckpointError::Truncated { .. }
            ),
            "byte {at}: {error}"
        );
    }
    let mut foreign = bytes.clone();
    foreign[0] = b'X';
    assert!(matches!(
        read(&foreign, &label()),
        Err(CheckpointError::Foreign)
    ));
    let mut future = bytes.clone();
    future[8] = 99;
    assert!(matches!(
        read(&future, &label()),
        Err(CheckpointError::Version { found: 99, .. })
    ));
    let error = read(&bytes, &CheckpointLabel::new("phold", "lps=12")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "checkpoint of model `chaos`, not `phold`"
    );
    let error = read(&bytes, &CheckpointLabel::new("chaos", "lps=13")).unwrap_err();
    assert!(matches!(error, CheckpointError::OtherParameters { .. }));
    // A file of the right model whose body is another type's: a decode error, not a panic.
    let other = Checkpoint::<Chaos>::read_from(&bytes[..], &label()).unwrap();
    let _ = other;
    assert!(warpsim_core::read_checkpoint_header(&bytes).is_ok());
}

#[test]
fn resuming_with_another_seed_is_refused() {
    let bytes = checkpoint_bytes();
    let checkpoint = Checkpoint::<Chaos>::read_from(&bytes[..], &label()).unwrap();
    let error = Sequential::new(config(4))
        .run_from(
            Start::Resume(Box::new(checkpoint)),
            &mut warpsim_core::Discard,
        )
        .unwrap_err();
    assert!(
        error.error.to_string().contains("seed 3"),
        "{}",
        error.error
    );
}
