//! Time Warp across processes: every rank runs the threaded kernel over its share of the
//! LPs, and a gateway (the thread that called [`TimeWarp::run_cluster`]) carries messages
//! between ranks through a [`Transport`]: MPI in `warpsim-mpi`, or threads in one process with
//! [`loopback`] (for tests, and to try a distributed set-up without MPI).
//!
//! # Ground rules
//!
//! 1. **Placement.** LP `i` goes to global worker `partition.owner(i, n, ranks × threads)`,
//!    which lives on rank `worker / threads`. Every rank runs `init` for its own LPs only;
//!    what those do to other ranks' LPs travels in one packet per rank, and rank 0 delivers
//!    every `init`'s outputs in LP order (the ground rules of `start.rs`).
//! 2. **Routing.** A worker sends a message for another rank's LP to the gateway as if it
//!    were one more worker (index `threads`), so the worker code is unchanged. The gateway
//!    packs what it has per destination rank into one packet per loop turn and forwards what
//!    arrives to the owning workers. Packets between two ranks keep their order (the
//!    transport's contract); an antimessage that overtakes its event anyway is remembered by
//!    the worker until the event comes.
//! 3. **GVT** (Mattern's two-colour idea with counters; all steps are collectives that every
//!    rank makes in the same sequence, so they never mismatch):
//!    a. A round starts when a worker asks, when a packet of a newer round arrives, or after
//!    [`MAX_GAP`]. The rank's colour (epoch) goes up by one; packets carry their epoch.
//!    `red_min` restarts: the smallest stamp of any packet sent from now on.
//!    b. *Counting*: all-reduce (sum) of `sent − received` packets of the previous epoch,
//!    repeated (while receiving) until the sum is zero. Every rank had changed colour before
//!    it contributed, so no packet of the old colour is sent any more: zero means none is in
//!    flight, and each has reached its workers' inboxes.
//!    c. *Local*: a shared-memory round on the rank (Fujimoto–Hybinette in external mode, the
//!    gateway one participant; it flushes everything it holds before reporting). Its
//!    minimum `m` covers every event and message on the rank, including what the gateway
//!    forwarded before reporting.
//!    d. *Minimum*: the smallest `min(m, red_min)` over the ranks (with `red_min` taken
//!    now), by an all-reduce of the times' minimum. When that time is past the last
//!    round's, the GVT is the smallest key at that time (a lower bound, one collective);
//!    otherwise the exact key, by further all-reduces level by level (`age` and `src`,
//!    then `sent`, then `id`, each from the ranks still tied; `Gateway::least_key`). A
//!    packet in flight is of the new colour (b), so its stamp is at least its sender's
//!    `red_min` if it left before the sender contributed, and at least the sender's `m`
//!    after (it was caused by an event the local round covered). The minimum over ranks is
//!    (or its lower bound) the GVT, identical on every rank, and is published to the
//!    workers; a worker's request for a round, and its report, wake the gateway. No step
//!    of a round moves more than two words per rank, so rounds cost O(log ranks), not
//!    O(ranks).
//! 4. **Stop.** Every round's all-reduces also say whether any rank has a stop key (a
//!    handler error that GVT reached). Once one has, an all-gather of the stop keys (once
//!    per run) finds the smallest, and every rank stops there, so all commit exactly the
//!    events below it. The rank with the error sends it to rank 0.
//! 5. **End.** When the GVT passes the end time (or nothing is left), every rank's workers
//!    flush to the gateway, which sends it all; all-reduces (sums) of total packets sent
//!    and received repeat until every packet has landed; then the workers take their inboxes,
//!    so the events left pending are counted exactly as on one process.
//! 6. **Outputs** leave the kernel only on rank 0, in key order: every rank sends its
//!    committed outputs with the bound below which its workers have committed everything;
//!    rank 0 delivers below the smallest bound.
//! 7. **Stop and pause** (`pause.rs`). A stop or pause request on any rank (its
//!    [`StopHandle`](warpsim_core::StopHandle): a signal, a periodic checkpoint's clock)
//!    rides in the counting all-reduce of the next round (3b), so every rank learns of it at
//!    the same round, before that round's GVT is published, and lowers the run's end alike
//!    to just past the last published GVT `g` (`g.time.next_up()`, the same on every rank;
//!    `Shared::lower_end`, as on threads). The run then ends as at a pause time: every
//!    rank's workers roll back what they ran at or after it, every packet lands, and each
//!    worker hands back its LPs' committed states and pending events. The ranks send theirs
//!    to rank 0, which assembles one [`Checkpoint`](warpsim_core::Checkpoint) of the whole
//!    model — the same a sequential or threaded run paused there holds — so it resumes on
//!    any kernel and any number of ranks. With [`TimeWarp::run_cluster_from_checkpointing`]
//!    a pause other than a stop is taken in place instead, and the run goes on
//!    (`inplace.rs`).

mod gate;
mod gateway;
mod inplace;
mod loopback;
mod pause;
mod start;
mod transport;
mod wire;

pub use loopback::{Loopback, loopback};
pub use pause::{RankEnding, RankPart, RankPause, RankStart};
pub use transport::{Arrived, Reduction, Transport, TransportError};

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;
use warpsim_core::{
    EventKey, Finished, LogicalProcess, LpId, OutputSink, Report, RunError, SimError, StopReason,
};

use crate::config::TimeWarp;
use crate::kernel::{Asked, continued};
use crate::message::key_max;
use crate::setup::{Crew, Placement, Prepared};
use crate::stats::TimeWarpStats;
use crate::watch::Watchdog;
use crate::worker::FinalLp;
use gate::Gate;
use gateway::Gateway;
use inplace::InPlace;
use start::Arrivals;
use wire::cluster_error;

/// The longest a rank waits between two GVT rounds when no worker asks for one.
pub const MAX_GAP: Duration = Duration::from_millis(5);

/// How long the gateway sleeps when nothing happened, once it has polled for
/// [`Transport::idle_poll`] (it wakes at once for a worker's batch).
const IDLE_WAIT: Duration = Duration::from_micros(100);

impl TimeWarp {
    /// Runs the model as one rank of a distributed run: call it on every rank with the same
    /// model, kernel settings and `fingerprint` (a hash of everything that defines the run,
    /// checked at the start so mismatched ranks fail at once instead of computing nonsense).
    /// Each rank runs [`TimeWarp::threads`] workers; the calling thread is the rank's
    /// gateway and is the only one that uses `transport`.
    ///
    /// Rank 0's sink receives every committed output in key order, and rank 0's report and
    /// statistics cover the whole run (its `per_thread` lists every rank's workers, rank by
    /// rank). The other ranks return the same verdict (the same error, if any) with a report
    /// of their own share.
    ///
    /// ```
    /// use std::time::Duration;
    /// use warpsim_core::{Discard, Kernel, RunConfig, Sequential};
    /// use warpsim_models::phold::PholdParams;
    /// use warpsim_timewarp::{TimeWarp, cluster};
    ///
    /// let params = PholdParams { lps: 64, end: 20.0, ..PholdParams::default() };
    /// let config = RunConfig::new(7).end_time(params.end);
    /// let expected = Sequential::new(config.clone()).run(params.build().unwrap(), &mut Discard).unwrap();
    /// let kernel = TimeWarp::new(config).threads(2);
    /// let reports: Vec<_> = std::thread::scope(|scope| {
    ///     let ranks: Vec<_> = cluster::loopback(3, Duration::from_secs(60))
    ///         .into_iter()
    ///         .map(|mut transport| {
    ///             let (kernel, params) = (&kernel, &params);
    ///             scope.spawn(move || {
    ///                 kernel.run_cluster(params.build().unwrap(), &mut Discard, &mut transport, 1).0
    ///             })
    ///         })
    ///         .collect();
    ///     ranks.into_iter().map(|rank| rank.join().unwrap().unwrap()).collect()
    /// });
    /// assert_eq!(reports[0].trace_hash, expected.trace_hash);
    /// assert_eq!(reports[0].events_committed, expected.events_committed);
    /// ```
    pub fn run_cluster<M, S, T>(
        &self,
        lps: Vec<M>,
        sink: &mut S,
        transport: &mut T,
        fingerprint: u64,
    ) -> (Result<Report, RunError>, TimeWarpStats)
    where
        M: LogicalProcess,
        M::Event: Serialize + DeserializeOwned,
        M::Output: Serialize + DeserializeOwned,
        S: OutputSink<M::Output>,
        T: Transport,
    {
        let (result, stats) = self.run_cluster_final(lps, sink, transport, fingerprint);
        (result.map(|finished| finished.report), stats)
    }

    /// [`TimeWarp::run_cluster`] that also hands back final states. States are not shipped
    /// between ranks (a model need not be serialisable), so each rank gets those of **the
    /// LPs it held**, as `(id, state)` pairs in id order; together the ranks hold every LP
    /// exactly once. `finish` runs on every rank's own LPs, and its outputs reach rank 0's
    /// sink like any other output.
    ///
    /// A stop handle in the configuration is not read here and a pause time is refused:
    /// pausing a distributed run gathers the states on rank 0, which needs a serialisable
    /// model ([`TimeWarp::run_cluster_from`]).
    pub fn run_cluster_final<M, S, T>(
        &self,
        lps: Vec<M>,
        sink: &mut S,
        transport: &mut T,
        fingerprint: u64,
    ) -> (Result<Finished<(LpId, M)>, RunError>, TimeWarpStats)
    where
        M: LogicalProcess,
        M::Event: Serialize + DeserializeOwned,
        M::Output: Serialize + DeserializeOwned,
        S: OutputSink<M::Output>,
        T: Transport,
    {
        let run = self.run_rank(
            RankStart::Init(lps),
            sink,
            transport,
            fingerprint,
            false,
            None,
        );
        let RankRun {
            result,
            stats,
            finals,
            ..
        } = run;
        (result.map(|report| owned_states(report, finals)), stats)
    }

    /// One rank's run from `start` (see [`RankStart`]): everything but what a pause does
    /// with the states (`pause.rs`). `stoppable`: the configuration's stop handle and pause
    /// time are honoured (else a pause time is refused and the handle is not read).
    /// `in_place`: pauses other than a stop are checkpoints taken in place (`inplace.rs`).
    pub(super) fn run_rank<M, S, T>(
        &self,
        start: RankStart<M>,
        sink: &mut S,
        transport: &mut T,
        fingerprint: u64,
        stoppable: bool,
        mut in_place: Option<InPlace<'_, M, S>>,
    ) -> RankRun<M>
    where
        M: LogicalProcess,
        M::Event: Serialize + DeserializeOwned,
        M::Output: Serialize + DeserializeOwned,
        S: OutputSink<M::Output>,
        T: Transport,
    {
        let started = Instant::now();
        let rank = transport.rank();
        let ranks = transport.ranks();
        let n_given = start.lps();
        // Never more workers in all than LPs (every rank computes the same).
        let threads = self
            .effective_threads(n_given)
            .min((n_given / ranks.max(1)).max(1));
        let n_lps = u32::try_from(n_given).unwrap_or(u32::MAX);
        let (mut run_end, pausing) = self.run_end();
        // With checkpoints taken in place, a pause time is one of them: the run goes on
        // past it to its end.
        let checkpoint_at = (in_place.is_some() && pausing).then(|| {
            let at = run_end;
            run_end = self.config.end_time;
            at
        });
        let stats = TimeWarpStats {
            threads,
            ranks,
            cancellation: self.cancellation,
            checkpoint_interval: self.checkpoint_interval,
            checkpoint_auto: self.adaptive_checkpoint,
            ..TimeWarpStats::default()
        };
        let mut report = Report::new("mpi", self.config.seed, n_lps);
        report.content_hash = self
            .config
            .content_hash
            .then(warpsim_core::TraceHash::default);
        let fail = |error: SimError, mut report: Report, stats: TimeWarpStats| {
            report.stop_reason = StopReason::Error;
            report.wall_seconds = started.elapsed().as_secs_f64();
            RankRun::failed(
                RunError {
                    error,
                    partial: Box::new(report),
                },
                stats,
            )
        };

        // Every rank checks the same things, so every rank reaches the same verdict.
        let mut whole = self.clone();
        whole.threads = threads.saturating_mul(ranks);
        let valid = whole
            .validate(n_given)
            .and(match n_given {
                0 => Err(SimError::NoLps),
                n if n > u32::MAX as usize => Err(SimError::TooManyLps(n)),
                _ => Ok(()),
            })
            .and(self.check_pausing(stoppable))
            .and(start.check(&self.config, rank, ranks, threads));
        let mine = [
            fingerprint,
            n_given as u64,
            threads as u64,
            u64::from(valid.is_ok()),
        ];
        // A faster rank may already send while this one waits here: keep it.
        let mut arrivals = Arrivals::new(ranks);
        let all = match transport.all_gather(&mine, &mut |source, bytes| {
            arrivals.arrived(source, bytes);
        }) {
            Ok(all) => all,
            Err(error) => return fail(cluster_error(error), report, stats),
        };
        if let Err(error) = valid {
            return fail(error, report, stats);
        }
        for (other, words) in all.chunks(mine.len()).enumerate() {
            let what = if words[0] != fingerprint {
                "model parameters"
            } else if words[1] != mine[1] {
                "numbers of LPs"
            } else if words[2] != mine[2] {
                "thread counts"
            } else if words[3] == 0 {
                "settings (that rank refused them)"
            } else {
                continue;
            };
            let error = SimError::Config(format!(
                "ranks {rank} and {other} were started with different {what}; every rank must run the same command"
            ));
            return fail(error, report, stats);
        }

        // Ground rule 1: placement. Another rank's LP routes to the gateway, `threads`.
        let placement = Placement {
            rank,
            ranks,
            threads,
            gateway: true,
        };
        if let Err(error) = start::probe_minimum(transport, &mut arrivals, placement) {
            return fail(error, report, stats);
        }
        // What a resumed run continues (rank 0 reports for the whole run).
        let mut before = None;
        let init = match start {
            RankStart::Init(lps) => {
                match self.start_rank(lps, sink, transport, placement, &mut arrivals) {
                    Ok(init) => init,
                    Err((error, pending)) => {
                        let mut report = report;
                        report.pending_at_end = pending;
                        return fail(error, report, stats);
                    }
                }
            }
            RankStart::Resume(checkpoint) => {
                if rank == 0 {
                    before = Some(checkpoint.resumed_report("mpi"));
                }
                self.own_part(*checkpoint, placement)
            }
            RankStart::Continue(part) => part.into_initialised(),
        };
        let Prepared {
            route,
            owned,
            mut settings,
            shared,
            senders,
            receivers,
            transfer,
            finals,
        } = self.prepare(init, n_lps, placement);
        if let Some(in_place) = &mut in_place {
            settings.snapshots = true;
            settings.end_time = run_end;
            settings.pause = false;
            if let Some(at) = checkpoint_at {
                // Before any worker starts: each reads it at its first GVT, as a request.
                shared.ask_pause_at(at);
            }
            in_place.checkpoint_at = checkpoint_at;
            in_place.before.clone_from(&before);
        }
        if let Some(before) = &before {
            // `finish`'s clock when this stretch commits nothing: the checkpoint's last commit.
            shared
                .last_commit
                .fetch_max(before.end_time.to_bits(), Ordering::SeqCst);
        }
        let (to_coordinator, from_workers) = crossbeam_channel::unbounded();

        let mut receivers = receivers;
        let gateway_inbox = receivers
            .pop()
            .expect("one channel per worker and the gateway");
        let (result, stats, asked) = std::thread::scope(|scope| {
            let crew = Crew {
                route: &route,
                settings: &settings,
                shared: &shared,
                transfer: &transfer,
                finals: &finals,
                first_cpu: rank * threads,
            };
            let running = crew.spawn(
                scope,
                &format!("timewarp-{rank}"),
                owned,
                receivers,
                &senders,
                to_coordinator,
            );
            let mut gateway: Gateway<'_, '_, M, T> = Gateway {
                transport,
                gate: Gate {
                    rank,
                    threads,
                    route: &route,
                    peers: &senders,
                    gvt: &shared.gvt,
                    port: shared.gvt.port(threads),
                    epoch: 0,
                    newest_seen: 0,
                    balance: BTreeMap::new(),
                    total_sent: 0,
                    total_received: 0,
                    red_min: key_max(),
                    split: (0..threads).map(|_| Vec::new()).collect(),
                    output_bounds: vec![EventKey::init(LpId::new(0)); ranks],
                    outputs: Vec::new(),
                    finals: (0..ranks).map(|_| None).collect(),
                    parts: Vec::new(),
                    parts_done: vec![false; ranks],
                    done: None,
                    fault: None,
                },
                shared: &shared,
                inbox: gateway_inbox,
                from_workers,
                ranks,
                out: (0..ranks).map(|_| Vec::new()).collect(),
                packets: Vec::new(),
                worker_bounds: vec![EventKey::init(LpId::new(0)); threads],
                local_outputs: Vec::new(),
                sent_bound: EventKey::init(LpId::new(0)),
                summaries: Vec::new(),
                end_time: run_end,
                placeholder: false,
                running,
                watchdog: Watchdog::new(
                    threads,
                    self.warnings.slow_handler,
                    shared.warnings.clone(),
                ),
                stop_handle: if stoppable {
                    self.config.stop.clone()
                } else {
                    None
                },
                asked: Asked::Nothing,
                progress: self.progress.0.clone(),
                shown: Instant::now(),
                totals: (0, 0),
                earlier: before.as_ref().map_or(0, |report| report.events_committed),
                last_least_time: 0,
            };
            for (source, packet) in arrivals.early {
                gateway.gate.handle(source, packet);
            }
            gateway.run(sink, report, stats, started, in_place)
        });
        let result = match &before {
            Some(before) => result
                .map(|report| continued(before, report))
                .map_err(|mut error| {
                    *error.partial = continued(before, (*error.partial).clone());
                    error
                }),
            None => result,
        };
        let finals = finals
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        RankRun {
            result,
            stats,
            finals,
            paused: shared.paused.load(Ordering::SeqCst),
            asked,
            last_commit: f64::from_bits(shared.last_commit.load(Ordering::SeqCst)),
            boundary: run_end.min(shared.end_time()),
            placement: Some(placement),
        }
    }
}

/// The states a rank held, in id order, with the report.
fn owned_states<M: LogicalProcess>(
    report: Report,
    mut finals: Vec<FinalLp<M>>,
) -> Finished<(LpId, M)> {
    finals.sort_by_key(|lp| lp.id);
    let states = finals.into_iter().map(|lp| (lp.id, lp.model)).collect();
    Finished::new(report, states)
}

/// What one rank's run leaves: its verdict and statistics, and after a run that ended, its
/// workers' LPs (with their pending events after a pause) and how it ended.
pub(super) struct RankRun<M: LogicalProcess> {
    pub(super) result: Result<Report, RunError>,
    pub(super) stats: TimeWarpStats,
    pub(super) finals: Vec<FinalLp<M>>,
    /// The workers ended at a pause (the same on every rank).
    pub(super) paused: bool,
    /// What the ranks' stop handles asked for (the same on every rank).
    pub(super) asked: Asked,
    /// The latest commit of the whole run (the bits were the largest of every rank's).
    pub(super) last_commit: f64,
    /// The time the run ended at: its end or pause time, or the one a request set.
    pub(super) boundary: f64,
    /// Where this rank's LPs were (none when the run failed before placing them).
    pub(super) placement: Option<Placement>,
}

impl<M: LogicalProcess> RankRun<M> {
    fn failed(error: RunError, stats: TimeWarpStats) -> RankRun<M> {
        RankRun {
            result: Err(error),
            stats,
            finals: Vec::new(),
            paused: false,
            asked: Asked::Nothing,
            last_commit: 0.0,
            boundary: f64::INFINITY,
            placement: None,
        }
    }
}
