//! Pausing and stopping a distributed run (ground rule 7 of the module), and starting one
//! from a checkpoint: [`TimeWarp::run_cluster_from`].
//!
//! # Ground rules
//!
//! 1. **One decision.** A rank's stop or pause request travels in the counting all-reduce
//!    of a GVT round (`Gateway::decide`), so every rank lowers the run's end at the same
//!    round to the same time; the pause is then taken exactly as a pause time is.
//! 2. **One checkpoint.** After a pause every rank holds its own LPs' committed states,
//!    metas and pending events. The ranks other than 0 send theirs to rank 0 (in packets of
//!    at most [`CHUNK`] bytes plus one LP, the last one marked), which assembles the
//!    [`Checkpoint`] of the whole model: the same one a sequential or threaded run paused
//!    there would hold, so it resumes on any kernel and any number of ranks. The other
//!    ranks keep their LPs ([`RankPart`]), so the run continues in memory without
//!    scattering the checkpoint back.
//! 3. **Any checkpoint, any ranks.** A rank resumes from a whole checkpoint by keeping the
//!    LPs the placement gives it (for this number of ranks and threads) and the pending
//!    events addressed to them; nothing is exchanged, as a checkpoint holds no event in
//!    flight.

use std::time::Instant;

use serde::Serialize;
use serde::de::DeserializeOwned;
use warpsim_core::kernel_api::LpMeta;
use warpsim_core::{
    Checkpoint, Ending, Finished, LogicalProcess, LpId, OutputSink, PendingEvent, Report,
    RunConfig, RunError, SimError, StopReason,
};

use super::inplace::{CHUNK, InPlace};
use super::wire::cluster_error;
use super::{IDLE_WAIT, RankRun, Transport, owned_states};
use crate::config::TimeWarp;
use crate::kernel::{Asked, paused};
use crate::pending::Pending;
use crate::setup::{Initialised, Placement};
use crate::stats::TimeWarpStats;
use crate::worker::FinalLp;

/// Where a rank's run starts ([`TimeWarp::run_cluster_from`]).
pub enum RankStart<M: LogicalProcess> {
    /// A fresh run of the whole model: every rank passes every LP (each initialises its own).
    Init(Vec<M>),
    /// A checkpoint written by any kernel, any number of ranks: every rank passes the whole
    /// checkpoint (and keeps its own LPs of it).
    Resume(Box<Checkpoint<M>>),
    /// The continuation of this rank's share of a paused run on the same ranks and threads
    /// (what [`RankPause::into_start`] gives the ranks other than 0).
    Continue(RankPart<M>),
}

impl<M: LogicalProcess> std::fmt::Debug for RankStart<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RankStart::Init(lps) => write!(f, "Init({} LPs)", lps.len()),
            RankStart::Resume(checkpoint) => write!(f, "Resume({checkpoint:?})"),
            RankStart::Continue(part) => write!(f, "Continue({part:?})"),
        }
    }
}

impl<M: LogicalProcess> RankStart<M> {
    /// How many LPs the model has.
    pub fn lps(&self) -> usize {
        match self {
            RankStart::Init(lps) => lps.len(),
            RankStart::Resume(checkpoint) => checkpoint.states().len(),
            RankStart::Continue(part) => part.n_lps,
        }
    }

    /// Checks that this rank can start from here (every rank reaches the same verdict:
    /// they hold the same checkpoint, or parts of one pause).
    pub(super) fn check(
        &self,
        config: &RunConfig,
        rank: usize,
        ranks: usize,
        threads: usize,
    ) -> Result<(), SimError> {
        match self {
            RankStart::Init(_) => Ok(()),
            RankStart::Resume(checkpoint) => checkpoint.check_config(config),
            RankStart::Continue(part) => {
                if (part.rank, part.ranks, part.threads) == (rank, ranks, threads) {
                    Ok(())
                } else {
                    Err(SimError::Config(format!(
                        "a rank's part of a paused run continues only on the same rank, ranks \
                         and threads (it was rank {} of {} with {} threads); resume from the \
                         checkpoint instead",
                        part.rank, part.ranks, part.threads
                    )))
                }
            }
        }
    }
}

/// A rank's own LPs at a pause, to continue the run on the same ranks
/// ([`RankStart::Continue`]); rank 0 holds the whole [`Checkpoint`] instead.
pub struct RankPart<M: LogicalProcess> {
    rank: usize,
    ranks: usize,
    threads: usize,
    n_lps: usize,
    lps: Vec<FinalLp<M>>,
}

impl<M: LogicalProcess> std::fmt::Debug for RankPart<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankPart")
            .field("rank", &self.rank)
            .field("ranks", &self.ranks)
            .field("lps", &self.lps.len())
            .finish_non_exhaustive()
    }
}

impl<M: LogicalProcess> RankPart<M> {
    /// This rank's LPs as they start again (ground rule 3's shape, without the filtering).
    pub(super) fn into_initialised(self) -> Initialised<M> {
        let mut lps = self.lps;
        lps.sort_by_key(|lp| lp.id);
        let mut ids = Vec::with_capacity(lps.len());
        let mut states = Vec::with_capacity(lps.len());
        let mut sets = Vec::with_capacity(lps.len());
        for lp in lps {
            ids.push(lp.id);
            states.push((lp.model, lp.meta));
            let mut set = Pending::default();
            for event in lp.pending {
                let _ = set.insert(event.key, event.event);
            }
            sets.push(set);
        }
        Initialised {
            ids,
            states,
            pending: sets,
            remote: Vec::new(),
            nets: Vec::new(),
            failure: None,
        }
    }
}

/// What a paused rank holds: the whole checkpoint on rank 0, its own LPs elsewhere.
#[derive(Debug)]
pub enum RankPause<M: LogicalProcess> {
    /// Rank 0: the checkpoint of the whole model.
    Whole(Box<Checkpoint<M>>),
    /// Another rank: its own LPs.
    Part(RankPart<M>),
}

impl<M: LogicalProcess> RankPause<M> {
    /// Where the next stretch of the run starts on this rank (the same ranks and threads).
    pub fn into_start(self) -> RankStart<M> {
        match self {
            RankPause::Whole(checkpoint) => RankStart::Resume(checkpoint),
            RankPause::Part(part) => RankStart::Continue(part),
        }
    }

    /// The checkpoint of the whole model (rank 0), if this rank holds it.
    pub fn checkpoint(&mut self) -> Option<&mut Checkpoint<M>> {
        match self {
            RankPause::Whole(checkpoint) => Some(checkpoint),
            RankPause::Part(_) => None,
        }
    }
}

/// How a rank's run started with [`TimeWarp::run_cluster_from`] ended.
#[derive(Debug)]
pub enum RankEnding<M: LogicalProcess> {
    /// It ran to its end: the states of the LPs this rank held (see
    /// [`TimeWarp::run_cluster_final`]).
    Finished(Finished<(LpId, M)>),
    /// It paused (a pause time, [`StopHandle::pause`](warpsim_core::StopHandle::pause)) or
    /// was stopped ([`StopHandle::stop`](warpsim_core::StopHandle::stop)) on every rank at
    /// one GVT, with `finish` not run; the report says which
    /// ([`StopReason::Paused`], [`StopReason::Interrupted`]) and, on rank 0, covers the
    /// whole run.
    Paused {
        /// The whole checkpoint (rank 0) or this rank's LPs.
        state: RankPause<M>,
        /// The report up to the pause.
        report: Report,
        /// The time the run paused at, the same on every rank: every event before it
        /// committed, none at or after it.
        at: f64,
    },
}

impl TimeWarp {
    /// [`TimeWarp::run_cluster_final`] from `start` — the model's `init`s, a checkpoint
    /// written by any kernel on any number of ranks, or this rank's share of a pause — that
    /// can pause: at [`RunConfig::pause_at`], or at the next GVT after any rank's
    /// [`StopHandle`](warpsim_core::StopHandle) asks (every rank stops at the same GVT,
    /// whichever rank asked). A pause gathers every LP's committed state on rank 0 into one
    /// [`Checkpoint`] (so the model must be serialisable), which continues the run exactly
    /// on any kernel; the other ranks keep their own LPs to continue in memory
    /// ([`RankPause::into_start`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use warpsim_core::{Discard, Ending, Kernel, RunConfig, Sequential, Start};
    /// use warpsim_models::phold::PholdParams;
    /// use warpsim_timewarp::TimeWarp;
    /// use warpsim_timewarp::cluster::{self, RankEnding, RankPause, RankStart};
    ///
    /// let params = PholdParams { lps: 48, end: 20.0, ..PholdParams::default() };
    /// let config = RunConfig::new(7).end_time(params.end);
    /// let whole = Sequential::new(config.clone()).run(params.build().unwrap(), &mut Discard).unwrap();
    /// // Paused at 8 on two ranks; rank 0 holds the checkpoint of every LP.
    /// let kernel = TimeWarp::new(config.clone().pause_at(8.0)).threads(1);
    /// let mut endings: Vec<_> = std::thread::scope(|scope| {
    ///     let ranks: Vec<_> = cluster::loopback(2, Duration::from_secs(60))
    ///         .into_iter()
    ///         .map(|mut transport| {
    ///             let (kernel, params) = (&kernel, &params);
    ///             scope.spawn(move || {
    ///                 let start = RankStart::Init(params.build().unwrap());
    ///                 kernel.run_cluster_from(start, &mut Discard, &mut transport, 1).0
    ///             })
    ///         })
    ///         .collect();
    ///     ranks.into_iter().map(|rank| rank.join().unwrap().unwrap()).collect()
    /// });
    /// let RankEnding::Paused { state: RankPause::Whole(checkpoint), .. } = endings.swap_remove(0) else {
    ///     panic!("rank 0 did not pause")
    /// };
    /// // Continued on the sequential kernel.
    /// let Ending::Finished(done) = Sequential::new(config)
    ///     .run_from(Start::Resume(checkpoint), &mut Discard)
    ///     .unwrap() else { panic!("paused again") };
    /// assert_eq!(done.report.trace_hash, whole.trace_hash);
    /// assert_eq!(done.report.events_committed, whole.events_committed);
    /// ```
    pub fn run_cluster_from<M, S, T>(
        &self,
        start: RankStart<M>,
        sink: &mut S,
        transport: &mut T,
        fingerprint: u64,
    ) -> (Result<RankEnding<M>, RunError>, TimeWarpStats)
    where
        M: LogicalProcess + Serialize + DeserializeOwned,
        M::Event: Serialize + DeserializeOwned,
        M::Output: Serialize + DeserializeOwned,
        S: OutputSink<M::Output>,
        T: Transport,
    {
        self.run_cluster_pausing(start, sink, transport, fingerprint, None)
    }

    /// [`TimeWarp::run_cluster_from`], and with `in_place`
    /// [`TimeWarp::run_cluster_from_checkpointing`].
    pub(super) fn run_cluster_pausing<M, S, T>(
        &self,
        start: RankStart<M>,
        sink: &mut S,
        transport: &mut T,
        fingerprint: u64,
        in_place: Option<InPlace<'_, M, S>>,
    ) -> (Result<RankEnding<M>, RunError>, TimeWarpStats)
    where
        M: LogicalProcess + Serialize + DeserializeOwned,
        M::Event: Serialize + DeserializeOwned,
        M::Output: Serialize + DeserializeOwned,
        S: OutputSink<M::Output>,
        T: Transport,
    {
        let rank = transport.rank();
        let run = self.run_rank(start, sink, transport, fingerprint, true, in_place);
        let RankRun {
            result,
            stats,
            finals,
            paused: was_paused,
            asked,
            last_commit,
            placement,
            boundary: at,
        } = run;
        let report = match result {
            Err(error) => return (Err(error), stats),
            Ok(report) if !was_paused => {
                return (
                    Ok(RankEnding::Finished(owned_states(report, finals))),
                    stats,
                );
            }
            Ok(report) => report,
        };
        let reason = match asked {
            Asked::Stop => StopReason::Interrupted,
            Asked::Nothing | Asked::Pause => StopReason::Paused,
        };
        let Some(placement) = placement else {
            // A run that paused has placed its LPs.
            return (
                Ok(RankEnding::Finished(owned_states(report, finals))),
                stats,
            );
        };
        let failed = |error: SimError, mut report: Report| {
            report.stop_reason = StopReason::Error;
            Err(RunError {
                error,
                partial: Box::new(report),
            })
        };
        if rank == 0 {
            let mut all = finals;
            if let Err(error) = receive_states(transport, &mut all) {
                return (failed(error, report), stats);
            }
            // Every LP exactly once, or the checkpoint would pair states with wrong ids.
            all.sort_by_key(|lp| lp.id);
            if all.len() != report.lps as usize
                || all
                    .iter()
                    .enumerate()
                    .any(|(index, lp)| lp.id.index() != index)
            {
                let error = cluster_error(format!(
                    "the ranks handed in {} LP states for {} LPs at the pause",
                    all.len(),
                    report.lps
                ));
                return (failed(error, report), stats);
            }
            let Ending::Paused(checkpoint, report) =
                paused("mpi", report, all, last_commit, reason)
            else {
                unreachable!("`paused` always pauses")
            };
            let state = RankPause::Whole(checkpoint);
            (Ok(RankEnding::Paused { state, report, at }), stats)
        } else {
            if let Err(error) = send_states(transport, &finals) {
                return (failed(error, report), stats);
            }
            let mut report = report;
            report.stop_reason = reason;
            report.pending_at_end_time = 0;
            report.end_time = last_commit;
            let part = RankPart {
                rank,
                ranks: placement.ranks,
                threads: placement.threads,
                n_lps: report.lps as usize,
                lps: finals,
            };
            let state = RankPause::Part(part);
            (Ok(RankEnding::Paused { state, report, at }), stats)
        }
    }

    /// Ground rule 3: this rank's LPs of a whole checkpoint, with their pending events.
    pub(super) fn own_part<M: LogicalProcess>(
        &self,
        checkpoint: Checkpoint<M>,
        placement: Placement,
    ) -> Initialised<M> {
        let n_lps = checkpoint.states().len();
        let (states, metas, pending) = checkpoint.into_parts();
        let mut ids = Vec::new();
        let mut own = Vec::new();
        for (index, state) in states.into_iter().zip(metas).enumerate() {
            if self.place(index, n_lps, placement).0 == placement.rank {
                ids.push(LpId::new(index as u32));
                own.push(state);
            }
        }
        let mut init = Initialised {
            pending: (0..ids.len()).map(|_| Pending::default()).collect(),
            ids,
            states: own,
            remote: Vec::new(),
            nets: Vec::new(),
            failure: None,
        };
        // In key order, so each LP's events go in at the end of its set.
        for event in pending {
            if let Some(at) = init.position(event.dest) {
                let _ = init.pending[at].insert(event.key, event.event);
            }
        }
        init
    }

    /// Refuses what a distributed run cannot pause at: an event count (as on threads), and
    /// any pause when the states cannot be gathered (`!stoppable`).
    pub(super) fn check_pausing(&self, stoppable: bool) -> Result<(), SimError> {
        if self.config.pause_after.is_some() {
            return Err(SimError::Config(
                "the mpi kernel pauses at a time (`pause_at`) or by a stop handle, not by \
                 event count"
                    .into(),
            ));
        }
        if !stoppable && self.run_end().1 {
            return Err(SimError::Config(
                "a distributed run pauses only through `TimeWarp::run_cluster_from`, which \
                 gathers the (serialisable) states on rank 0"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// One LP of a rank's share on the wire (ground rule 2).
type WireLp<M> = (
    LpId,
    M,
    LpMeta,
    Vec<PendingEvent<<M as LogicalProcess>::Event>>,
);

/// Ground rule 2, the ranks other than 0: their LPs to rank 0, in packets of about
/// [`CHUNK`] bytes, the first byte of each 1 on the last one.
fn send_states<M, T>(transport: &mut T, finals: &[FinalLp<M>]) -> Result<(), SimError>
where
    M: LogicalProcess + Serialize,
    M::Event: Serialize,
    T: Transport,
{
    let encode_error =
        |error: postcard::Error| cluster_error(format!("cannot encode an LP's state: {error}"));
    let mut chunk = vec![0u8];
    let mut lps = finals.iter().peekable();
    while let Some(lp) = lps.next() {
        chunk = postcard::to_extend(&(lp.id, &lp.model, &lp.meta, &lp.pending), chunk)
            .map_err(encode_error)?;
        let last = lps.peek().is_none();
        if chunk.len() >= CHUNK || last {
            chunk[0] = u8::from(last);
            let mut packets = vec![(0, std::mem::replace(&mut chunk, vec![0u8]))];
            transport
                .send_all(&mut packets, &mut |_, _| {})
                .map_err(cluster_error)?;
        }
    }
    if finals.is_empty() {
        let mut packets = vec![(0, vec![1u8])];
        transport
            .send_all(&mut packets, &mut |_, _| {})
            .map_err(cluster_error)?;
    }
    Ok(())
}

/// Ground rule 2, rank 0: receives every other rank's LPs into `all` (after its own).
fn receive_states<M, T>(transport: &mut T, all: &mut Vec<FinalLp<M>>) -> Result<(), SimError>
where
    M: LogicalProcess + DeserializeOwned,
    M::Event: DeserializeOwned,
    T: Transport,
{
    let ranks = transport.ranks();
    let mut done = vec![false; ranks];
    done[0] = true;
    let mut fault: Option<String> = None;
    let timeout = transport.timeout();
    let mut last_answer = Instant::now();
    while !done.iter().all(|&done| done) {
        let received = transport
            .receive(&mut |source, bytes| {
                let Some((&last, mut rest)) = bytes.split_first() else {
                    fault.get_or_insert_with(|| format!("rank {source} sent an empty packet"));
                    return;
                };
                while !rest.is_empty() {
                    match postcard::take_from_bytes::<WireLp<M>>(rest) {
                        Ok(((id, model, meta, pending), tail)) => {
                            all.push(FinalLp {
                                id,
                                model,
                                meta,
                                pending,
                            });
                            rest = tail;
                        }
                        Err(error) => {
                            fault.get_or_insert_with(|| {
                                format!("rank {source} sent states this rank cannot read ({error}); are all ranks the same build?")
                            });
                            return;
                        }
                    }
                }
                if last == 1 {
                    done[source] = true;
                }
            })
            .map_err(cluster_error)?;
        if let Some(fault) = fault.take() {
            return Err(cluster_error(fault));
        }
        if received > 0 {
            last_answer = Instant::now();
        } else if last_answer.elapsed() > timeout {
            return Err(cluster_error(format!(
                "every rank's states did not come within {timeout:?} (did a rank die or hang?)"
            )));
        } else {
            std::thread::sleep(IDLE_WAIT);
        }
    }
    Ok(())
}
