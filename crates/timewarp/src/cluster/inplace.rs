//! Checkpoints taken in place on ranks ([`TimeWarp::run_cluster_from_checkpointing`]): the
//! distributed form of [`TimeWarp::run_from_checkpointing`].
//!
//! # Ground rules
//!
//! 1. **The same pause.** A periodic request or a pause time ends a stretch of the run on
//!    every rank at one GVT exactly as a pause does (ground rule 7 of the module): every
//!    rank's workers roll back what they ran at or after it, every packet lands. Then each
//!    worker copies its LPs' states, metas and pending events, hands the copy to its
//!    gateway and waits (`Worker::snapshot`), as on threads.
//! 2. **One verdict.** The gateways agree (an all-reduce) that every worker of every rank
//!    handed in a copy; only then does any rank go on. Otherwise (a worker failed
//!    meanwhile) every rank's workers end there, and the run ends with the failure as any
//!    failed run does. A stop decided at a round is not taken in place: the gateways say so
//!    before the end-of-run barriers (`Shared::no_snapshot`), and the workers hand back
//!    their LPs, which rank 0 gathers as at any pause (`pause.rs`).
//! 3. **Going on.** Each rank undoes the pause (`Shared::go_on_after_snapshot`: the end is
//!    the run's own again, GVT restarts at the pause's key on every rank alike) and
//!    releases its workers, which go back to their loop in the same threads. The gateways
//!    re-enter their main loop at the same GVT colour; every packet of earlier colours has
//!    landed (ground rule 5), so the next round's count starts from zero.
//! 4. **One checkpoint.** The ranks other than 0 send their committed outputs and then their
//!    copies to rank 0 while their workers run, each packet of at most [`CHUNK`] bytes
//!    ([`PART_TAG`] first, so that they are told from the run's packets) as soon as it is
//!    encoded. Rank 0 releases its workers first and then reads each packet as it comes
//!    (handling the run's packets that arrive meanwhile), delivers every output below the
//!    pause, joins the copies into the checkpoint of the whole model — the one a sequential
//!    run paused there holds — and hands it to the caller's callback. No GVT round
//!    completes meanwhile (rank 0 takes part in none), so nothing past the pause commits
//!    on any rank before the checkpoint is handed over. A rank that cannot encode its
//!    copies says so in its last packet; it and rank 0 then stop the run with that error
//!    (at the next round, as any failure outside a handler), and no checkpoint is handed
//!    over. A callback that panics stops the run with that error.

use std::sync::atomic::Ordering;
use std::time::Instant;

use serde::Serialize;
use serde::de::DeserializeOwned;
use warpsim_core::kernel_api::LpMeta;
use warpsim_core::{
    Checkpoint, LogicalProcess, LpId, OutputSink, PendingEvent, Report, RunError, SimError,
};

use super::gateway::Gateway;
use super::wire::{WireSummary, cluster_error};
use super::{RankEnding, RankStart, Reduction, Transport};
use crate::config::TimeWarp;
use crate::kernel::{Asked, deliver_below};
use crate::shared::{StopInfo, Summary, ToCoordinator};
use crate::snapshot::{CheckpointHook, Copies, hand_over, pause_key, snapshot};
use crate::stats::TimeWarpStats;
use crate::worker::SnapshotPart;

/// The first byte of a packet of copies (ground rule 4); the second is [`MORE`], [`LAST`]
/// on a rank's last one, or [`FAILED`] (then the rest is the error). A packet of the run
/// starts with a postcard variant index below 128 (its first byte has no continuation bit),
/// so it never starts with this one.
pub(super) const PART_TAG: u8 = 0xC5;
pub(super) const MORE: u8 = 0;
pub(super) const LAST: u8 = 1;
pub(super) const FAILED: u8 = 2;

/// The most bytes of encoded states a rank puts in one packet before it starts another:
/// MPI counts a message's bytes in an `int`. (Also `pause.rs`'s.) Small enough that rank 0
/// reads one packet while the sender encodes the next.
pub(super) const CHUNK: usize = 4 << 20;

/// A worker's copy, one record at a time, as the ranks other than 0 send it.
#[derive(Serialize)]
#[serde(bound(serialize = "M: Serialize, E: Serialize"))]
enum Record<'a, M, E> {
    /// A new worker's copy starts: its figures so far.
    Worker(WireSummary),
    /// One LP of it.
    Lp(LpId, &'a M, &'a LpMeta),
    /// One pending event of it (in key order).
    Event(&'a PendingEvent<E>),
}

/// [`Record`] as rank 0 reads it (the same encoding).
#[derive(serde::Deserialize)]
#[serde(bound(deserialize = "M: DeserializeOwned, E: DeserializeOwned"))]
enum OwnedRecord<M, E> {
    Worker(WireSummary),
    Lp(LpId, M, LpMeta),
    Event(PendingEvent<E>),
}

/// Encodes a rank's copies, handing each packet to the callback (`encode_parts`).
type Encode<M> = fn(&Copies<M>, &mut dyn FnMut(Vec<u8>)) -> Result<(), String>;

/// Reads one packet of copies from a rank into that rank's list (`decode_parts`).
type Decode<M> = fn(usize, &[u8], &mut Copies<M>) -> Result<(), String>;

/// What a rank needs to take checkpoints in place: the model-typed encoding of copies
/// (the gateway does not require a serialisable model), rank 0's callback, and what the
/// checkpoints' reports continue.
pub(crate) struct InPlace<'h, M: LogicalProcess, S> {
    pub(super) encode: Encode<M>,
    pub(super) decode: Decode<M>,
    pub(super) hook: &'h mut CheckpointHook<'h, M, S>,
    /// The pause time set before the run: one more checkpoint taken in place, asked for
    /// again after any earlier one (filled in by `run_rank`).
    pub(super) checkpoint_at: Option<f64>,
    /// The run this one resumes (rank 0's reports cover the whole run).
    pub(super) before: Option<Report>,
}

/// Ground rule 4, the ranks other than 0: this rank's copies as packets for rank 0, each
/// handed to `send` as soon as it is full (the last one marked).
fn encode_parts<M>(parts: &Copies<M>, send: &mut dyn FnMut(Vec<u8>)) -> Result<(), String>
where
    M: LogicalProcess + Serialize,
    M::Event: Serialize,
{
    let mut chunk = vec![PART_TAG, MORE];
    let mut put = |record: Record<'_, M, M::Event>, chunk: &mut Vec<u8>| {
        let bytes = std::mem::take(chunk);
        *chunk = postcard::to_extend(&record, bytes)
            .map_err(|error| format!("cannot encode an LP's state: {error}"))?;
        if chunk.len() >= CHUNK {
            send(std::mem::replace(chunk, vec![PART_TAG, MORE]));
        }
        Ok::<(), String>(())
    };
    for (summary, part) in parts {
        put(Record::Worker(WireSummary::from(summary)), &mut chunk)?;
        for ((id, model), meta) in part.ids.iter().zip(&part.states).zip(&part.metas) {
            put(Record::Lp(*id, model, meta), &mut chunk)?;
        }
        for event in &part.pending {
            put(Record::Event(event), &mut chunk)?;
        }
    }
    chunk[1] = LAST;
    send(chunk);
    Ok(())
}

/// The last packet of copies from a rank that could not encode them: rank 0 then takes no
/// checkpoint, and the run stops with `error`.
fn failed_part(error: &str) -> Vec<u8> {
    let mut packet = vec![PART_TAG, FAILED];
    packet.extend_from_slice(error.as_bytes());
    packet
}

/// Ground rule 4, rank 0: appends the copies in one packet from `source` to `parts` (a
/// worker's copy may span packets; a source's packets come in order).
fn decode_parts<M>(source: usize, bytes: &[u8], parts: &mut Copies<M>) -> Result<(), String>
where
    M: LogicalProcess + DeserializeOwned,
    M::Event: DeserializeOwned,
{
    let unreadable = |error: postcard::Error| {
        format!(
            "rank {source} sent LP states this rank cannot read ({error}); are all ranks the same build?"
        )
    };
    if bytes.get(1) == Some(&FAILED) {
        return Err(format!(
            "rank {source} could not send its LP states: {}",
            String::from_utf8_lossy(bytes.get(2..).unwrap_or_default())
        ));
    }
    let mut rest = bytes.get(2..).unwrap_or_default();
    while !rest.is_empty() {
        let (record, tail) =
            postcard::take_from_bytes::<OwnedRecord<M, M::Event>>(rest).map_err(unreadable)?;
        rest = tail;
        if let OwnedRecord::Worker(summary) = record {
            let part = SnapshotPart {
                ids: Vec::new(),
                states: Vec::new(),
                metas: Vec::new(),
                pending: Vec::new(),
            };
            parts.push((Summary::from(summary), part));
            continue;
        }
        let Some((_, part)) = parts.last_mut() else {
            return Err(format!("rank {source} sent an LP state before its worker"));
        };
        match record {
            OwnedRecord::Lp(id, model, meta) => {
                part.ids.push(id);
                part.states.push(model);
                part.metas.push(meta);
            }
            OwnedRecord::Event(event) => part.pending.push(event),
            OwnedRecord::Worker(_) => unreachable!("handled above"),
        }
    }
    Ok(())
}

impl TimeWarp {
    /// [`TimeWarp::run_cluster_from`] that takes each pause asked for while the run runs
    /// (a [`StopHandle::pause`](warpsim_core::StopHandle::pause) on any rank) and a pause
    /// time ([`RunConfig::pause_at`](warpsim_core::RunConfig::pause_at)) as a checkpoint
    /// **in place**: every rank's workers stop at one GVT, copy their LPs' committed state,
    /// and go on in the same threads, while rank 0 joins the copies into one
    /// [`Checkpoint`] of the whole model and hands it to `on_checkpoint` with the report so
    /// far and the sink (on rank 0 only; the other ranks never call it). Each checkpoint
    /// resumes on any kernel and any number of ranks, as one taken by
    /// [`TimeWarp::run_cluster_from`].
    ///
    /// A stop ([`StopHandle::stop`](warpsim_core::StopHandle::stop)) ends the run as it
    /// does there: [`RankEnding::Paused`], rank 0 holding the checkpoint of the whole model.
    /// Otherwise the run finishes. Module `cluster`'s `inplace.rs` has the ground rules.
    ///
    /// ```
    /// use std::time::Duration;
    /// use warpsim_core::{Discard, Ending, Kernel, RunConfig, Sequential, Start};
    /// use warpsim_models::phold::PholdParams;
    /// use warpsim_timewarp::TimeWarp;
    /// use warpsim_timewarp::cluster::{self, RankEnding, RankStart};
    ///
    /// let params = PholdParams { lps: 48, end: 20.0, ..PholdParams::default() };
    /// let config = RunConfig::new(7).end_time(params.end);
    /// let whole = Sequential::new(config.clone()).run(params.build().unwrap(), &mut Discard).unwrap();
    /// // A checkpoint at 8, taken in place on two ranks; the run goes on to its end.
    /// let kernel = TimeWarp::new(config.clone().pause_at(8.0)).threads(1);
    /// let mut taken = Vec::new();
    /// std::thread::scope(|scope| {
    ///     let mut transports = cluster::loopback(2, Duration::from_secs(60));
    ///     let mut other = transports.pop().unwrap();
    ///     let mut first = transports.pop().unwrap();
    ///     let (kernel, params) = (&kernel, &params);
    ///     let rank1 = scope.spawn(move || {
    ///         let start = RankStart::Init(params.build().unwrap());
    ///         kernel.run_cluster_from_checkpointing(start, &mut Discard, &mut other, 1, |_, _, _| {}).0
    ///     });
    ///     let start = RankStart::Init(params.build().unwrap());
    ///     let (ending, _) = kernel.run_cluster_from_checkpointing(
    ///         start, &mut Discard, &mut first, 1,
    ///         |checkpoint, _report, _sink| taken.push(checkpoint),
    ///     );
    ///     let RankEnding::Finished(done) = ending.unwrap() else { panic!("paused") };
    ///     assert_eq!(done.report.trace_hash, whole.trace_hash);
    ///     assert!(matches!(rank1.join().unwrap().unwrap(), RankEnding::Finished(_)));
    /// });
    /// // The checkpoint continues on the sequential kernel to the same end.
    /// let Ending::Finished(resumed) = Sequential::new(config)
    ///     .run_from(Start::Resume(taken.pop().unwrap()), &mut Discard)
    ///     .unwrap() else { panic!("paused again") };
    /// assert_eq!(resumed.report.trace_hash, whole.trace_hash);
    /// ```
    pub fn run_cluster_from_checkpointing<M, S, T, F>(
        &self,
        start: RankStart<M>,
        sink: &mut S,
        transport: &mut T,
        fingerprint: u64,
        mut on_checkpoint: F,
    ) -> (Result<RankEnding<M>, RunError>, TimeWarpStats)
    where
        M: LogicalProcess + Serialize + DeserializeOwned,
        M::Event: Serialize + DeserializeOwned,
        M::Output: Serialize + DeserializeOwned,
        S: OutputSink<M::Output>,
        T: Transport,
        F: FnMut(Box<Checkpoint<M>>, Report, &mut S),
    {
        let in_place = InPlace {
            encode: encode_parts::<M>,
            decode: decode_parts::<M>,
            hook: &mut on_checkpoint,
            checkpoint_at: None,
            before: None,
        };
        self.run_cluster_pausing(start, sink, transport, fingerprint, Some(in_place))
    }
}

/// The gateway's side (ground rules 2–4).
impl<M, T> Gateway<'_, '_, M, T>
where
    M: LogicalProcess,
    M::Event: Serialize + DeserializeOwned,
    M::Output: Serialize + DeserializeOwned,
    T: Transport,
{
    /// A checkpoint taken in place (`inplace.rs`): every worker of this rank has handed in
    /// its copy (`parts`) and waits. Returns whether the run goes on (rank 0 has handed the
    /// checkpoint to the caller), or ends here because some worker could not (its failure
    /// is the run's verdict).
    pub(super) fn take_in_place<S: OutputSink<M::Output>>(
        &mut self,
        parts: Copies<M>,
        in_place: &mut InPlace<'_, M, S>,
        template: &Report,
        started: Instant,
        sink: &mut S,
    ) -> Result<bool, SimError> {
        let ok = parts.len() == self.running && !self.shared.is_aborted();
        let everywhere = self.reduce(&[u64::from(ok)], Reduction::Min)?[0] == 1;
        if !everywhere {
            // The workers that copied end here (a broken rendezvous); none waits for one
            // that did not.
            self.shared.resuming.store(false, Ordering::SeqCst);
            self.shared.resume.break_all();
            self.await_summaries()?;
            return Ok(false);
        }
        let bound = pause_key(self.shared.end_time());
        // Ground rule 3.
        self.shared.go_on_after_snapshot(bound);
        if let Some(at) = in_place
            .checkpoint_at
            .filter(|at| *at > bound.time.as_f64())
        {
            // A checkpoint asked for earlier came first: the one at the time set before the
            // run is still to come.
            self.shared.ask_pause_at(at);
        }
        self.asked = Asked::Nothing;
        // Broken when a worker failed meanwhile: the main loop then ends the run on it.
        self.shared.resume.wait();
        if self.gate.rank != 0 {
            // Ground rule 4, while the workers run: the outputs below the pause first (rank
            // 0 delivers them before the checkpoint), then each packet of copies as soon as
            // it is made, so that rank 0 reads one while this rank encodes the next.
            self.queue_outputs();
            self.send()?;
            let mut sent = Ok(());
            let encoded = (in_place.encode)(&parts, &mut |chunk| {
                if sent.is_ok() {
                    self.packets.push((0, chunk));
                    sent = self.send();
                }
            });
            sent?;
            if let Err(error) = encoded {
                // Rank 0 learns that no checkpoint comes; both stop the run with the error.
                self.packets.push((0, failed_part(&error)));
                self.send()?;
                self.fail_here(cluster_error(error));
            }
            return Ok(true);
        }
        let checkpoint = self.receive_parts(parts, in_place);
        self.gate.parts_done.fill(false);
        let all = match checkpoint {
            Ok(all) => all,
            Err(error) => {
                // Every rank learns of it at the next GVT round.
                self.fail_here(error);
                return Ok(true);
            }
        };
        deliver_below(&mut self.gate.outputs, bound, sink, self.shared);
        let (checkpoint, report) =
            snapshot("mpi", template, all, in_place.before.as_ref(), started);
        hand_over(&mut *in_place.hook, checkpoint, report, sink, self.shared);
        Ok(true)
    }

    /// Rank 0, ground rule 4: receives every other rank's copies, reading each packet as
    /// it comes (the run's packets that arrive meanwhile are handled as in the main loop),
    /// and returns them after `own`, rank by rank.
    fn receive_parts<S>(
        &mut self,
        own: Copies<M>,
        in_place: &InPlace<'_, M, S>,
    ) -> Result<Copies<M>, SimError> {
        // Per rank: a worker's copy may span packets, and ranks' packets interleave.
        let mut by_rank: Vec<Copies<M>> = (0..self.ranks).map(|_| Vec::new()).collect();
        by_rank[0] = own;
        self.receive_until("every rank's LP states", |gate| {
            for (source, bytes) in std::mem::take(&mut gate.parts) {
                (in_place.decode)(source, &bytes, &mut by_rank[source]).map_err(cluster_error)?;
            }
            Ok(gate.parts_done.iter().skip(1).all(|&done| done))
        })?;
        Ok(by_rank.into_iter().flatten().collect())
    }

    /// Stops this rank's run with `error`, as a failure outside a handler: every rank learns
    /// of it at the next GVT round (ground rule 4 of the module).
    fn fail_here(&self, error: SimError) {
        self.shared.abort(StopInfo {
            key: self.shared.gvt.current(),
            lp: LpId::new(0),
            error,
            outputs: None,
        });
    }

    /// Waits until every worker that started has handed in its summary.
    fn await_summaries(&mut self) -> Result<(), SimError> {
        let deadline = Instant::now() + self.transport.timeout();
        while self.summaries.len() < self.running {
            match self.from_workers.recv_deadline(deadline) {
                Ok(ToCoordinator::Finished { summary, .. }) => self.summaries.push(*summary),
                Ok(_) => {}
                Err(_) => return Err(cluster_error("a worker thread did not finish")),
            }
        }
        Ok(())
    }
}
