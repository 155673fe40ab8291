//! Checkpoints taken in place ([`TimeWarp::run_from_checkpointing`]): the pause's key, and
//! the checkpoint the coordinator joins from the workers' copies.
//!
//! [`TimeWarp::run_from_checkpointing`]: crate::TimeWarp::run_from_checkpointing

use std::time::Instant;

use warpsim_core::kernel_api::LpMeta;
use warpsim_core::{
    Checkpoint, EventKey, LogicalProcess, LpId, PendingEvent, Report, StopReason, Time,
};

use crate::kernel::continued;
use crate::message::key_max;
use crate::shared::{Shared, StopInfo, Summary};
use crate::worker::SnapshotPart;
use warpsim_core::SimError;
use warpsim_core::kernel_api::panic_message;

/// The smallest key at the pause time `time`: everything below it has committed at a pause
/// there, nothing at or after it has run.
pub(crate) fn pause_key(time: f64) -> EventKey {
    Time::new(time).map_or_else(
        |_| key_max(),
        |time| EventKey::new(time, 0, LpId::new(0), Time::ZERO, 0),
    )
}

/// A worker's copy as the coordinator receives it (`ToCoordinator::Snapshot` does not name
/// the model's type).
pub(crate) fn typed_part<M: LogicalProcess>(
    part: Box<dyn std::any::Any + Send>,
) -> SnapshotPart<M> {
    *part
        .downcast::<SnapshotPart<M>>()
        .unwrap_or_else(|_| unreachable!("a worker's copy is of the run's model"))
}

/// The checkpoint of a pause taken in place from the workers' copies (`SnapshotPart`s, with
/// each worker's figures so far), and the report of the run up to it: the totals of
/// `template` (a fresh report of this run) and, for a resumed run, of `before`.
pub(crate) fn snapshot<M: LogicalProcess>(
    kernel: &'static str,
    template: &Report,
    parts: Copies<M>,
    before: Option<&Report>,
    started: Instant,
) -> (Box<Checkpoint<M>>, Report) {
    let mut report = template.clone();
    let mut last_commit = 0.0f64;
    let mut copies = Vec::with_capacity(parts.len());
    for (summary, part) in parts {
        report.trace_hash.merge(&summary.trace);
        if let Some(content) = &mut report.content_hash {
            content.merge(&summary.content);
        }
        report.events_committed += summary.counters.committed;
        report.events_processed += summary.counters.processed;
        report.peak_pending += summary.counters.peak_pending;
        last_commit = last_commit.max(summary.last_commit);
        report.pending_at_end += part.pending.len();
        copies.push(part);
    }
    report.end_time = last_commit;
    report.stop_reason = StopReason::Paused;
    report.wall_seconds = started.elapsed().as_secs_f64();
    if let Some(before) = before {
        report = continued(before, report);
    }
    // Workers usually own blocks of LPs in order (the default partition): their parts,
    // put in the order of their first LPs, are then joined by appending. The copies are
    // large (a million LPs: a hundred megabytes), and the coordinator shares the machine
    // with the workers, which go on meanwhile: each step below moves everything once.
    copies.sort_by_key(|part| part.ids.first().copied());
    let mut pendings = Vec::with_capacity(copies.len());
    let mut copies = copies.into_iter();
    let first = copies
        .next()
        .unwrap_or_else(|| unreachable!("a run has a worker"));
    let (mut ids, mut states, mut metas) = (first.ids, first.states, first.metas);
    pendings.push(first.pending);
    for mut part in copies {
        ids.append(&mut part.ids);
        states.append(&mut part.states);
        metas.append(&mut part.metas);
        pendings.push(part.pending);
    }
    if !ids.is_sorted() {
        // LPs moved by load balancing, or another partition: put them in order.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_unstable_by_key(|&index| ids[index]);
        let mut slots: Vec<Option<(M, LpMeta)>> = states.into_iter().zip(metas).map(Some).collect();
        (states, metas) = order
            .into_iter()
            .map(|index| {
                slots[index]
                    .take()
                    .unwrap_or_else(|| unreachable!("a permutation"))
            })
            .unzip();
    }
    let pending = merge_sorted(pendings);
    let checkpoint = Checkpoint::from_parts(kernel, states, metas, pending, &report);
    (Box::new(checkpoint), report)
}

/// Merges lists of pending events, each in key order, into one in key order: pairwise, so
/// each event moves about log₂(lists) times.
fn merge_sorted<E>(mut lists: Vec<Vec<PendingEvent<E>>>) -> Vec<PendingEvent<E>> {
    while lists.len() > 1 {
        let mut merged = Vec::with_capacity(lists.len().div_ceil(2));
        let mut pairs = lists.into_iter();
        while let Some(a) = pairs.next() {
            let Some(b) = pairs.next() else {
                merged.push(a);
                break;
            };
            let mut out = Vec::with_capacity(a.len() + b.len());
            let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
            loop {
                let take_a = match (a.peek(), b.peek()) {
                    (Some(x), Some(y)) => x.key <= y.key,
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (None, None) => break,
                };
                out.extend(if take_a { a.next() } else { b.next() });
            }
            merged.push(out);
        }
        lists = merged;
    }
    lists.pop().unwrap_or_default()
}

/// The caller's callback for checkpoints taken in place: the checkpoint, the report up to
/// it, and the run's sink.
pub(crate) type CheckpointHook<'h, M, S> = dyn FnMut(Box<Checkpoint<M>>, Report, &mut S) + 'h;

/// A worker's copy with its figures so far, as a coordinator joins them.
pub(crate) type Copies<M> = Vec<(Summary, SnapshotPart<M>)>;

/// Hands a checkpoint taken in place to the caller's callback. A panic there stops the run
/// as a panicking sink does, rather than leaving the workers to run to the end before it
/// surfaces.
pub(crate) fn hand_over<M: LogicalProcess, S>(
    hook: &mut CheckpointHook<'_, M, S>,
    checkpoint: Box<Checkpoint<M>>,
    report: Report,
    sink: &mut S,
    shared: &Shared<M::Output>,
) {
    let time = report.end_time;
    let called = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        hook(checkpoint, report, sink)
    }));
    if let Err(payload) = called {
        shared.fail_sink(StopInfo {
            key: shared.gvt.current(),
            lp: LpId::new(0),
            error: SimError::SinkPanic {
                lp: LpId::new(0),
                time: Time::new(time).unwrap_or(Time::ZERO),
                message: format!(
                    "in the checkpoint callback: {}",
                    panic_message(payload.as_ref())
                ),
            },
            outputs: None,
        });
    }
}
