//! Time Warp across processes: every rank runs the threaded kernel over its share of the
//! LPs, and a gateway (the thread that called [`TimeWarp::run_cluster`]) carries messages
//! between ranks through a [`Transport`]: MPI in `warpsim-mpi`, or threads in one process with
//! [`loopback`] (for tests, and to try a distributed set-up without MPI).
//!
//! # Ground rules
//!
//! 1. **Placement.** LP `i` goes to global worker `partition.owner(i, n, ranks × threads)`,
//!    which lives on rank `worker / threads`. Every rank runs `init` for every LP (so no
//!    state is shipped) and keeps its own; only rank 0 delivers `init`'s outputs.
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
//!    b. *Counting*: all-gather of `sent − received` packets of the previous epoch, repeated
//!    (while receiving) until the sum is zero. Every rank had changed colour before it
//!    contributed, so no packet of the old colour is sent any more: zero means none is in
//!    flight, and each has reached its workers' inboxes.
//!    c. *Local*: a shared-memory round on the rank (Fujimoto–Hybinette in external mode, the
//!    gateway one participant; it flushes everything it holds before reporting). Its
//!    minimum `m` covers every event and message on the rank, including what the gateway
//!    forwarded before reporting.
//!    d. *Minimum*: all-gather of `min(m, red_min)` (with `red_min` taken now). A packet in
//!    flight is of the new colour (b), so its stamp is at least its sender's `red_min`
//!    if it left before the sender contributed, and at least the sender's `m` after
//!    (it was caused by an event the local round covered). The minimum over ranks is the
//!    GVT, identical on every rank, and is published to the workers.
//! 4. **Stop.** Every all-gather also carries each rank's stop key (a handler error that GVT
//!    reached, or none). Once any rank reports one, every rank stops at the smallest, so all
//!    commit exactly the events below it. The rank with the error sends it to rank 0.
//! 5. **End.** When the GVT passes the end time (or nothing is left), every rank's workers
//!    flush to the gateway, which sends it all; all-gathers of total packets sent and
//!    received repeat until every packet has landed; then the workers take their inboxes,
//!    so the events left pending are counted exactly as on one process.
//! 6. **Outputs** leave the kernel only on rank 0, in key order: every rank sends its
//!    committed outputs with the bound below which its workers have committed everything;
//!    rank 0 delivers below the smallest bound.

mod loopback;
mod transport;

pub use loopback::{Loopback, loopback};
pub use transport::{Arrived, Transport, TransportError};

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use serde::Serialize;
use serde::de::DeserializeOwned;
use warpsim_core::{
    EventKey, LogicalProcess, LpId, OutputSink, Report, RunError, SimError, StopReason, Time,
    TraceHash,
};

use crate::config::TimeWarp;
use crate::gvt::{GvtPort, GvtShared};
use crate::kernel::{Crew, Initialised, assemble, deliver_below, initialise};
use crate::stats::TimeWarpStats;
use crate::watch::{Watchdog, default_hook};
use crate::worker::{
    Counters, LpState, Msg, Shared, StopInfo, Summary, ToCoordinator, key_max, route_entry,
    route_of,
};

/// The longest a rank waits between two GVT rounds when no worker asks for one.
pub const MAX_GAP: Duration = Duration::from_millis(5);

/// How long the gateway sleeps when nothing happened (it wakes at once for a worker's batch).
const IDLE_WAIT: Duration = Duration::from_micros(100);

/// Everything one rank sends another.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound(
    serialize = "E: Serialize, O: Serialize",
    deserialize = "E: DeserializeOwned, O: DeserializeOwned"
))]
enum Packet<E, O> {
    /// Messages between LPs, of GVT colour `epoch`.
    Events { epoch: u64, msgs: Vec<Msg<E>> },
    /// Committed outputs (to rank 0); the sender has committed everything below `bound`.
    Outputs {
        bound: EventKey,
        outputs: Vec<(EventKey, LpId, O)>,
    },
    /// A finished rank's figures, and its error if the run stopped on it (to rank 0).
    Final {
        summaries: Vec<WireSummary>,
        stop: Option<StopInfo<O>>,
    },
    /// Rank 0's verdict (to every other rank).
    Done { error: Option<SimError> },
}

/// A finished rank's workers' summaries and its own error, if any.
type FinalFigures<O> = (Vec<WireSummary>, Option<StopInfo<O>>);

/// A worker's [`Summary`] on the wire.
#[derive(serde::Serialize, serde::Deserialize)]
struct WireSummary {
    lps: usize,
    trace: (u64, u64),
    counters: Counters,
    pending_at_end: usize,
    last_commit: f64,
}

impl From<&Summary> for WireSummary {
    fn from(summary: &Summary) -> WireSummary {
        WireSummary {
            lps: summary.lps,
            trace: summary.trace.parts(),
            counters: summary.counters.clone(),
            pending_at_end: summary.pending_at_end,
            last_commit: summary.last_commit,
        }
    }
}

impl From<WireSummary> for Summary {
    fn from(wire: WireSummary) -> Summary {
        Summary {
            lps: wire.lps,
            trace: TraceHash::from_parts(wire.trace.0, wire.trace.1),
            counters: wire.counters,
            pending_at_end: wire.pending_at_end,
            last_commit: wire.last_commit,
        }
    }
}

/// An event key as four words whose lexicographic order is the key's order (times are never
/// negative, so their bit patterns order like the numbers).
fn key_words(key: EventKey) -> [u64; 4] {
    [
        key.time.as_f64().to_bits(),
        u64::from(key.age),
        u64::from(key.src.get()),
        key.seq,
    ]
}

fn words_key(words: &[u64]) -> EventKey {
    EventKey::new(
        Time::new(f64::from_bits(words[0])).unwrap_or(Time::ZERO),
        words[1] as u32,
        LpId::new(words[2] as u32),
        words[3],
    )
}

fn encode<E: Serialize, O: Serialize>(packet: &Packet<E, O>) -> Vec<u8> {
    // Serialising plain data into a Vec cannot fail.
    postcard::to_allocvec(packet).unwrap_or_default()
}

fn cluster_error(error: impl std::fmt::Display) -> SimError {
    SimError::Cluster(error.to_string())
}

/// The gateway's state that arriving packets touch.
struct Gate<'a, E, O> {
    rank: usize,
    threads: usize,
    route: &'a [AtomicU64],
    peers: &'a [Sender<Vec<Msg<E>>>],
    gvt: &'a GvtShared<EventKey>,
    port: GvtPort<EventKey>,
    /// This rank's GVT colour.
    epoch: u64,
    /// The newest colour seen on an arriving packet.
    newest_seen: u64,
    /// Per colour: event packets sent minus received, by this rank.
    balance: BTreeMap<u64, i64>,
    total_sent: u64,
    total_received: u64,
    /// Smallest stamp sent since this rank changed colour.
    red_min: EventKey,
    /// Per local worker: messages to forward.
    split: Vec<Vec<Msg<E>>>,
    /// Rank 0: per rank, the bound below which its outputs are all here.
    output_bounds: Vec<EventKey>,
    outputs: Vec<(EventKey, LpId, O)>,
    finals: Vec<Option<FinalFigures<O>>>,
    done: Option<Option<SimError>>,
    /// A packet that could not be decoded (a bug, or ranks built from different code).
    fault: Option<String>,
}

impl<E: DeserializeOwned, O: DeserializeOwned> Gate<'_, E, O> {
    fn arrived(&mut self, source: usize, bytes: Vec<u8>) {
        let packet: Packet<E, O> = match postcard::from_bytes(&bytes) {
            Ok(packet) => packet,
            Err(error) => {
                self.fault.get_or_insert_with(|| {
                    format!("rank {} sent a packet this rank cannot read ({error}); are all ranks the same build?", source)
                });
                return;
            }
        };
        match packet {
            Packet::Events { epoch, msgs } => {
                *self.balance.entry(epoch).or_insert(0) -= 1;
                self.total_received += 1;
                self.newest_seen = self.newest_seen.max(epoch);
                for msg in msgs {
                    let worker = if msg.dest().index() < self.route.len() {
                        route_of(self.route, msg.dest().index()).0 as usize
                    } else {
                        usize::MAX
                    };
                    if worker >= self.threads {
                        let dest = msg.dest();
                        self.fault.get_or_insert_with(|| {
                            format!("rank {source} sent a message for {dest}, which this rank does not own")
                        });
                        continue;
                    }
                    self.split[worker].push(msg);
                }
                self.forward();
            }
            Packet::Outputs { bound, outputs } => {
                self.output_bounds[source] = bound;
                self.outputs.extend(outputs);
            }
            Packet::Final { summaries, stop } => self.finals[source] = Some((summaries, stop)),
            Packet::Done { error } => self.done = Some(error),
        }
    }

    /// Hands the split messages to their workers, as a GVT sender (ground rule 3 of `gvt`).
    fn forward(&mut self) {
        for worker in 0..self.threads {
            if self.split[worker].is_empty() {
                continue;
            }
            let batch = std::mem::take(&mut self.split[worker]);
            let stamp = batch.iter().map(Msg::stamp).min().unwrap_or_else(key_max);
            let _ = self.peers[worker].send(batch);
            self.gvt.note_send(&mut self.port, stamp);
        }
    }
}

/// The stages of a GVT round (ground rule 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Counting,
    Local,
}

/// How the main loop ended.
enum Ending {
    /// GVT reached the end, or nothing is left anywhere.
    Finished,
    /// Some rank stopped on an error at this key.
    Stopped(EventKey),
}

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
        let started = Instant::now();
        let rank = transport.rank();
        let ranks = transport.ranks();
        // Never more workers in all than LPs (every rank computes the same).
        let threads = self
            .effective_threads(lps.len())
            .min((lps.len() / ranks.max(1)).max(1));
        let n_lps = u32::try_from(lps.len()).unwrap_or(u32::MAX);
        let stats = TimeWarpStats {
            threads,
            ranks,
            cancellation: self.cancellation,
            checkpoint_interval: self.checkpoint_interval,
            checkpoint_auto: self.adaptive_checkpoint,
            ..TimeWarpStats::default()
        };
        let report = Report::new("mpi", self.config.seed, n_lps);
        let fail = |error: SimError, mut report: Report| {
            report.stop_reason = StopReason::Error;
            report.wall_seconds = started.elapsed().as_secs_f64();
            Err(RunError {
                error,
                partial: Box::new(report),
            })
        };

        // Every rank checks the same things, so every rank reaches the same verdict.
        let mut whole = self.clone();
        whole.threads = threads.saturating_mul(ranks);
        let valid = whole.validate(lps.len()).and(match lps.len() {
            0 => Err(SimError::NoLps),
            n if n > u32::MAX as usize => Err(SimError::TooManyLps(n)),
            _ => Ok(()),
        });
        let mine = [
            fingerprint,
            lps.len() as u64,
            threads as u64,
            u64::from(valid.is_ok()),
        ];
        // A faster rank may already send events while this one waits here: keep them.
        let mut early = Vec::new();
        let all =
            match transport.all_gather(&mine, &mut |source, bytes| early.push((source, bytes))) {
                Ok(all) => all,
                Err(error) => return (fail(cluster_error(error), report), stats),
            };
        if let Err(error) = valid {
            return (fail(error, report), stats);
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
            return (fail(error, report), stats);
        }

        let Initialised { states, pending } =
            match initialise(&self.config, n_lps, lps, (rank == 0).then_some(&mut *sink)) {
                Ok(initialised) => initialised,
                Err((error, pending)) => {
                    let mut report = report;
                    report.pending_at_end = pending;
                    return (fail(error, report), stats);
                }
            };
        if let Err(error) = self.check_memory::<M>(&pending) {
            let mut report = report;
            report.pending_at_end = pending.iter().map(BTreeMap::len).sum();
            return (fail(error, report), stats);
        }

        // Ground rule 1: placement. Another rank's LP routes to the gateway, `threads`.
        let mut route: Vec<AtomicU64> = Vec::with_capacity(states.len());
        let mut owned: Vec<Vec<LpState<M>>> = (0..threads).map(|_| Vec::new()).collect();
        for (index, ((model, meta), pending)) in states.into_iter().zip(pending).enumerate() {
            let global = self.partition.owner(index, n_lps as usize, threads * ranks);
            let (owner, worker) = (global / threads, global % threads);
            if owner == rank {
                route.push(route_entry(worker as u32, owned[worker].len() as u32));
                owned[worker].push(LpState::new(LpId::new(index as u32), model, meta, pending));
            } else {
                route.push(route_entry(threads as u32, owner as u32));
            }
        }
        let settings = self.settings(n_lps, threads);
        let shared: Shared<M::Output> = Shared::new(
            GvtShared::external(threads + 1, EventKey::init(LpId::new(0)), key_max()),
            threads,
            threads + 1,
            self.warnings.hook.clone().unwrap_or_else(default_hook),
        );
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..=threads)
            .map(|_| crossbeam_channel::unbounded())
            .unzip();
        let transfer = Mutex::new(Vec::new());
        let (to_coordinator, from_workers) = crossbeam_channel::unbounded();

        let mut receivers = receivers;
        let gateway_inbox = receivers
            .pop()
            .expect("one channel per worker and the gateway");
        std::thread::scope(|scope| {
            let crew = Crew {
                route: &route,
                settings: &settings,
                shared: &shared,
                transfer: &transfer,
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
                    port: shared.gvt.port(),
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
                end_time: self.config.end_time,
                placeholder: false,
                running,
                watchdog: Watchdog::new(
                    threads,
                    self.warnings.slow_handler,
                    shared.warnings.clone(),
                ),
            };
            for (source, bytes) in early {
                gateway.gate.arrived(source, bytes);
            }
            gateway.run(sink, report, stats, started)
        })
    }
}

/// The rank's communication thread (the caller of `run_cluster`).
struct Gateway<'a, 't, M: LogicalProcess, T> {
    transport: &'t mut T,
    gate: Gate<'a, M::Event, M::Output>,
    shared: &'a Shared<M::Output>,
    inbox: Receiver<Vec<Msg<M::Event>>>,
    from_workers: Receiver<ToCoordinator<M::Output>>,
    ranks: usize,
    /// Per destination rank: messages to pack.
    out: Vec<Vec<Msg<M::Event>>>,
    /// Packed, to send.
    packets: Vec<(usize, Vec<u8>)>,
    /// Per local worker: the bound below which it has committed everything.
    worker_bounds: Vec<EventKey>,
    /// Committed outputs not yet sent to rank 0 (other ranks).
    local_outputs: Vec<(EventKey, LpId, M::Output)>,
    /// The bound last sent to rank 0.
    sent_bound: EventKey,
    summaries: Vec<Summary>,
    end_time: f64,
    /// This rank stopped because another rank failed (its stop record is not the error).
    placeholder: bool,
    /// Workers that started (and will each hand in a summary).
    running: usize,
    watchdog: Watchdog,
}

impl<M, T> Gateway<'_, '_, M, T>
where
    M: LogicalProcess,
    M::Event: Serialize + DeserializeOwned,
    M::Output: Serialize + DeserializeOwned,
    T: Transport,
{
    fn run<S: OutputSink<M::Output>>(
        mut self,
        sink: &mut S,
        report: Report,
        mut stats: TimeWarpStats,
        started: Instant,
    ) -> (Result<Report, RunError>, TimeWarpStats) {
        let ending = self.main_loop(sink);
        let ending = match ending {
            Ok(ending) => ending,
            Err(error) => {
                // Release the workers and give up: the other ranks see the same failure (a
                // timeout) or are gone. Only what GVT had passed commits.
                let gvt = self.shared.gvt.current();
                self.halt_workers(gvt);
                let (result, stats) = self.local_verdict(report, stats, started, sink, Some(error));
                return (result, stats);
            }
        };
        let stop_key = match ending {
            Ending::Stopped(key) => key,
            Ending::Finished => key_max(),
        };
        if let Err(error) = self.wind_down(stop_key, sink) {
            return self.local_verdict(report, stats, started, sink, Some(error));
        }
        stats.ranks = self.ranks;
        if self.gate.rank == 0 {
            self.conclude(sink, report, stats, started)
        } else {
            self.await_verdict(report, stats, started, sink)
        }
    }

    /// Everything a rank does until the run's end is decided.
    fn main_loop<S: OutputSink<M::Output>>(&mut self, sink: &mut S) -> Result<Ending, SimError> {
        let mut phase = Phase::Idle;
        let mut last_round = Instant::now();
        loop {
            let mut busy = self.pump(sink)?;
            self.watchdog
                .look(&self.shared.beats, self.shared.gvt.current().time);
            match phase {
                Phase::Idle => {
                    if self.shared.stop.load(Ordering::SeqCst)
                        || self.gate.gvt.take_request()
                        || self.gate.newest_seen > self.gate.epoch
                        || last_round.elapsed() >= MAX_GAP
                    {
                        // 3a: change colour.
                        self.gate.epoch += 1;
                        self.gate.red_min = key_max();
                        phase = Phase::Counting;
                        busy = true;
                    }
                }
                Phase::Counting => {
                    // 3b.
                    let white = self
                        .gate
                        .balance
                        .get(&(self.gate.epoch - 1))
                        .copied()
                        .unwrap_or(0);
                    let stop = self.local_stop();
                    let mut mine = vec![white as u64];
                    mine.extend(key_words(stop));
                    let all = self.gather(&mine)?;
                    if let Some(key) = smallest_stop(&all, 5, 1) {
                        return Ok(Ending::Stopped(key));
                    }
                    let in_flight: i64 = all.chunks(5).map(|words| words[0] as i64).sum();
                    if in_flight == 0 {
                        self.gate.balance.remove(&(self.gate.epoch - 1));
                        self.shared.gvt.start();
                        phase = Phase::Local;
                    }
                    busy = true;
                }
                Phase::Local => {
                    if let Some(round) = self.shared.gvt.must_report(&self.gate.port) {
                        // 3c: flush everything held before reporting.
                        self.take_inbox();
                        self.send()?;
                        self.shared
                            .gvt
                            .report(&mut self.gate.port, round, key_max());
                        busy = true;
                    }
                    let stopped = self.shared.stop.load(Ordering::SeqCst);
                    let result = self.shared.gvt.take_result();
                    if result.is_some() || stopped {
                        // 3d. (A rank whose workers stopped has no local result; its stop
                        // key ends the run anyway.)
                        let local = result.unwrap_or_else(key_max).min(self.gate.red_min);
                        let mut mine = key_words(local).to_vec();
                        mine.extend(key_words(self.local_stop()));
                        let all = self.gather(&mine)?;
                        if let Some(key) = smallest_stop(&all, 8, 4) {
                            return Ok(Ending::Stopped(key));
                        }
                        // The heap bounds keys by their (time, age, src) prefix, so a round can
                        // find a smaller `seq` than the last one did; the last GVT still holds.
                        let gvt = all
                            .chunks(8)
                            .map(|words| words_key(&words[..4]))
                            .min()
                            .unwrap_or_else(key_max)
                            .max(self.shared.gvt.current());
                        self.shared.gvt.publish(gvt);
                        phase = Phase::Idle;
                        last_round = Instant::now();
                        if gvt == key_max() || gvt.time.as_f64() >= self.end_time {
                            return Ok(Ending::Finished);
                        }
                        busy = true;
                    }
                }
            }
            if !busy {
                crossbeam_channel::select! {
                    recv(self.inbox) -> batch => if let Ok(batch) = batch { self.route_out(batch) },
                    recv(self.from_workers) -> msg => if let Ok(msg) = msg { self.coordinate(msg, sink) },
                    default(IDLE_WAIT) => {}
                }
            }
        }
    }

    /// One turn of message handling: workers' batches out, packets in, outputs along.
    /// Returns whether anything happened.
    fn pump<S: OutputSink<M::Output>>(&mut self, sink: &mut S) -> Result<bool, SimError> {
        let mut busy = self.take_inbox();
        while let Ok(msg) = self.from_workers.try_recv() {
            busy = true;
            self.coordinate(msg, sink);
        }
        let gate = &mut self.gate;
        let received = self
            .transport
            .receive(&mut |source, bytes| gate.arrived(source, bytes))
            .map_err(cluster_error)?;
        busy |= received > 0;
        self.check_fault()?;
        busy |= self.queue_outputs();
        busy |= !self.packets.is_empty() || self.out.iter().any(|out| !out.is_empty());
        self.send()?;
        if self.gate.rank == 0 {
            self.deliver(sink);
        }
        Ok(busy)
    }

    fn check_fault(&mut self) -> Result<(), SimError> {
        match self.gate.fault.take() {
            Some(fault) => Err(cluster_error(fault)),
            None => Ok(()),
        }
    }

    fn local_stop(&self) -> EventKey {
        if self.shared.stop.load(Ordering::SeqCst) {
            self.shared.stop_key().unwrap_or_else(key_max)
        } else {
            key_max()
        }
    }

    fn gather(&mut self, mine: &[u64]) -> Result<Vec<u64>, SimError> {
        let gate = &mut self.gate;
        let all = self
            .transport
            .all_gather(mine, &mut |source, bytes| gate.arrived(source, bytes))
            .map_err(cluster_error)?;
        self.check_fault()?;
        Ok(all)
    }

    /// Takes every batch the workers sent the gateway. Returns whether there was any.
    fn take_inbox(&mut self) -> bool {
        let mut any = false;
        while let Ok(batch) = self.inbox.try_recv() {
            any = true;
            self.route_out(batch);
        }
        any
    }

    fn route_out(&mut self, batch: Vec<Msg<M::Event>>) {
        for msg in batch {
            let (_, owner) = route_of(self.gate.route, msg.dest().index());
            self.out[owner as usize].push(msg);
        }
    }

    /// Packs and sends everything waiting, then forwards what arrived meanwhile.
    fn send(&mut self) -> Result<(), SimError> {
        for destination in 0..self.ranks {
            if self.out[destination].is_empty() {
                continue;
            }
            let msgs = std::mem::take(&mut self.out[destination]);
            let stamp = msgs.iter().map(Msg::stamp).min().unwrap_or_else(key_max);
            let epoch = self.gate.epoch;
            let packet: Packet<M::Event, M::Output> = Packet::Events { epoch, msgs };
            self.packets.push((destination, encode(&packet)));
            *self.gate.balance.entry(epoch).or_insert(0) += 1;
            self.gate.total_sent += 1;
            self.gate.red_min = self.gate.red_min.min(stamp);
        }
        if self.packets.is_empty() {
            return Ok(());
        }
        let gate = &mut self.gate;
        self.transport
            .send_all(&mut self.packets, &mut |source, bytes| {
                gate.arrived(source, bytes)
            })
            .map_err(cluster_error)?;
        self.check_fault()
    }

    /// The coordinator's part: outputs of committed events, and the workers' summaries.
    fn coordinate<S: OutputSink<M::Output>>(
        &mut self,
        msg: ToCoordinator<M::Output>,
        sink: &mut S,
    ) {
        match msg {
            ToCoordinator::Committed {
                worker,
                bound,
                outputs,
            } => {
                self.worker_bounds[worker] = bound;
                if self.gate.rank == 0 {
                    self.gate.outputs.extend(outputs);
                    self.gate.output_bounds[0] = self.local_bound();
                    self.deliver(sink);
                } else {
                    self.local_outputs.extend(outputs);
                }
            }
            ToCoordinator::Finished { summary, .. } => self.summaries.push(*summary),
        }
    }

    fn local_bound(&self) -> EventKey {
        self.worker_bounds
            .iter()
            .copied()
            .min()
            .unwrap_or_else(key_max)
    }

    /// Other ranks: queues committed outputs and the new bound for rank 0 (ground rule 6).
    /// Returns whether it queued anything.
    fn queue_outputs(&mut self) -> bool {
        if self.gate.rank == 0 {
            return false;
        }
        let bound = self.local_bound();
        if bound == self.sent_bound && self.local_outputs.is_empty() {
            return false;
        }
        self.sent_bound = bound;
        let outputs = std::mem::take(&mut self.local_outputs);
        let packet: Packet<M::Event, M::Output> = Packet::Outputs { bound, outputs };
        self.packets.push((0, encode(&packet)));
        true
    }

    /// Rank 0: delivers the outputs below every rank's bound, in key order.
    fn deliver<S: OutputSink<M::Output>>(&mut self, sink: &mut S) {
        if self.gate.outputs.is_empty() {
            return;
        }
        let safe = self
            .gate
            .output_bounds
            .iter()
            .copied()
            .min()
            .unwrap_or_else(key_max);
        deliver_below(&mut self.gate.outputs, safe, sink, self.shared);
    }

    /// Lets the workers finish at `stop` after a failure: no more messages will come.
    fn halt_workers(&mut self, stop: EventKey) {
        self.shared.stop_with(StopInfo {
            key: stop,
            lp: LpId::new(0),
            error: cluster_error("stopped"),
            outputs: None,
        });
        self.shared.barrier.wait();
        self.shared.landed.wait();
        while self.summaries.len() < self.running {
            match self.from_workers.recv() {
                Ok(ToCoordinator::Finished { summary, .. }) => self.summaries.push(*summary),
                Ok(ToCoordinator::Committed { .. }) => {}
                Err(_) => break,
            }
        }
    }

    /// Ground rules 4 and 5: stop every worker at the same point and land every packet.
    fn wind_down<S: OutputSink<M::Output>>(
        &mut self,
        stop: EventKey,
        sink: &mut S,
    ) -> Result<(), SimError> {
        if stop != key_max() && self.shared.stop_key() != Some(stop) {
            // Another rank's error: stop here too, at the same key. Rank 0 gets the error
            // itself from the rank that had it.
            self.shared.stop_with(StopInfo {
                key: stop,
                lp: LpId::new(0),
                error: cluster_error("stopped by another rank"),
                outputs: None,
            });
            self.placeholder = true;
        }
        // Workers commit and flush, then wait.
        self.shared.barrier.wait();
        let landed = self.land_everything();
        // The workers wait at `landed` whatever happened, or the rank would never return.
        self.shared.landed.wait();
        let deadline = Instant::now() + self.transport.timeout();
        while self.summaries.len() < self.running {
            match self.from_workers.recv_deadline(deadline) {
                Ok(msg) => self.coordinate(msg, sink),
                Err(_) => {
                    return Err(cluster_error("a worker thread did not finish"));
                }
            }
        }
        landed
    }

    /// Ground rule 5: sends what the workers flushed and receives until every packet sent by
    /// any rank has arrived (and been forwarded).
    fn land_everything(&mut self) -> Result<(), SimError> {
        self.take_inbox();
        self.send()?;
        loop {
            let mine = [self.gate.total_sent, self.gate.total_received];
            let all = self.gather(&mine)?;
            let sent: u64 = all.chunks(2).map(|words| words[0]).sum();
            let received: u64 = all.chunks(2).map(|words| words[1]).sum();
            if sent == received {
                return Ok(());
            }
        }
    }
}

/// The smallest stop key in an all-gather of `stride` words per rank with the key at
/// `offset`, if any rank has one.
fn smallest_stop(all: &[u64], stride: usize, offset: usize) -> Option<EventKey> {
    all.chunks(stride)
        .map(|words| words_key(&words[offset..offset + 4]))
        .min()
        .filter(|key| *key != key_max())
}

impl<M, T> Gateway<'_, '_, M, T>
where
    M: LogicalProcess,
    M::Event: Serialize + DeserializeOwned,
    M::Output: Serialize + DeserializeOwned,
    T: Transport,
{
    /// This rank's own stop record, unless it only stopped because another rank failed.
    fn own_stop(&self) -> Option<StopInfo<M::Output>> {
        if self.placeholder {
            return None;
        }
        self.shared
            .stop_info
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// Receives until `done` says so, or fails after the transport's timeout.
    fn receive_until(
        &mut self,
        what: &str,
        done: impl Fn(&Gate<'_, M::Event, M::Output>) -> bool,
    ) -> Result<(), SimError> {
        let timeout = self.transport.timeout();
        let deadline = Instant::now() + timeout;
        while !done(&self.gate) {
            let gate = &mut self.gate;
            let received = self
                .transport
                .receive(&mut |source, bytes| gate.arrived(source, bytes))
                .map_err(cluster_error)?;
            self.check_fault()?;
            if received == 0 {
                if Instant::now() > deadline {
                    return Err(cluster_error(format!(
                        "{what} did not come within {timeout:?} (did a rank die or hang?)"
                    )));
                }
                std::thread::sleep(IDLE_WAIT);
            }
        }
        Ok(())
    }

    /// Rank 0: gathers every rank's figures and outputs, reports, and tells the others.
    fn conclude<S: OutputSink<M::Output>>(
        mut self,
        sink: &mut S,
        report: Report,
        stats: TimeWarpStats,
        started: Instant,
    ) -> (Result<Report, RunError>, TimeWarpStats) {
        if let Err(error) = self.receive_until("every rank's final figures", |gate| {
            gate.finals.iter().skip(1).all(Option::is_some)
        }) {
            return self.local_verdict(report, stats, started, sink, Some(error));
        }
        // Each rank sent its last outputs before its figures, and packets keep their order.
        self.gate.output_bounds[0] = self.local_bound();
        self.deliver(sink);
        let mut summaries = std::mem::take(&mut self.summaries);
        let mut stop = self.own_stop();
        for slot in self.gate.finals.iter_mut().skip(1) {
            let Some((theirs, their_stop)) = slot.take() else {
                continue;
            };
            summaries.extend(theirs.into_iter().map(Summary::from));
            if let Some(their_stop) = their_stop
                && stop
                    .as_ref()
                    .is_none_or(|current| their_stop.key < current.key)
            {
                stop = Some(their_stop);
            }
        }
        if stop.is_none() && self.placeholder {
            stop = Some(StopInfo {
                key: key_max(),
                lp: LpId::new(0),
                error: cluster_error("a rank stopped without saying why"),
                outputs: None,
            });
        }
        let rounds = self.shared.gvt.rounds();
        let (result, stats) = assemble(
            report,
            stats,
            &summaries,
            rounds,
            stop,
            sink,
            self.end_time,
            started,
        );
        let error = result.as_ref().err().map(|failure| failure.error.clone());
        for other in 1..self.ranks {
            let packet: Packet<M::Event, M::Output> = Packet::Done {
                error: error.clone(),
            };
            self.packets.push((other, encode(&packet)));
        }
        // The report stands whether or not the others hear of it; they time out otherwise.
        let _ = self.send();
        (result, stats)
    }

    /// Other ranks: send figures and outputs to rank 0 and wait for its verdict.
    fn await_verdict<S: OutputSink<M::Output>>(
        mut self,
        report: Report,
        stats: TimeWarpStats,
        started: Instant,
        sink: &mut S,
    ) -> (Result<Report, RunError>, TimeWarpStats) {
        self.sent_bound = EventKey::init(LpId::new(0));
        self.queue_outputs();
        let summaries = self.summaries.iter().map(WireSummary::from).collect();
        let stop = self.own_stop();
        let packet: Packet<M::Event, M::Output> = Packet::Final { summaries, stop };
        self.packets.push((0, encode(&packet)));
        if let Err(error) = self.send() {
            return self.local_verdict(report, stats, started, sink, Some(error));
        }
        if let Err(error) = self.receive_until("rank 0's verdict", |gate| gate.done.is_some()) {
            return self.local_verdict(report, stats, started, sink, Some(error));
        }
        let error = self.gate.done.take().flatten();
        self.local_verdict(report, stats, started, sink, error)
    }

    /// A report of this rank's own share, failed with `error` if there is one.
    fn local_verdict<S: OutputSink<M::Output>>(
        &mut self,
        report: Report,
        stats: TimeWarpStats,
        started: Instant,
        sink: &mut S,
        error: Option<SimError>,
    ) -> (Result<Report, RunError>, TimeWarpStats) {
        let stop = error.map(|error| StopInfo {
            key: key_max(),
            lp: LpId::new(0),
            error,
            outputs: None,
        });
        let rounds = self.shared.gvt.rounds();
        assemble(
            report,
            stats,
            &self.summaries,
            rounds,
            stop,
            sink,
            self.end_time,
            started,
        )
    }
}
