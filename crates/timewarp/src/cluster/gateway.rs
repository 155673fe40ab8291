//! A rank's communication thread: its main loop (message pumping and the GVT rounds of
//! ground rule 3), the coordinator's part (outputs, summaries), winding down, and the
//! verdict. Its side of a checkpoint taken in place is in `inplace.rs`.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crossbeam_channel::Receiver;
use serde::Serialize;
use serde::de::DeserializeOwned;
use warpsim_core::{EventKey, LogicalProcess, LpId, OutputSink, Report, RunError, SimError};

use super::gate::Gate;
use super::inplace::InPlace;
use super::wire::{KEY_WORDS, Packet, WireSummary, cluster_error, encode, key_words, words_key};
use super::{IDLE_WAIT, MAX_GAP, Reduction, Transport};
use crate::kernel::{Asked, assemble, deliver_below, deliver_finish};
use crate::message::{Msg, key_max, route_of};
use crate::progress::{Progress, ProgressHook};
use crate::shared::{Shared, StopInfo, Summary, ToCoordinator};
use crate::snapshot::{Copies, typed_part};
use crate::stats::TimeWarpStats;
use crate::watch::WATCH_EVERY;
use crate::watch::Watchdog;

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

/// The rank's communication thread (the caller of `run_cluster`).
pub(super) struct Gateway<'a, 't, M: LogicalProcess, T> {
    pub(super) transport: &'t mut T,
    pub(super) gate: Gate<'a, M::Event, M::Output>,
    pub(super) shared: &'a Shared<M::Output>,
    pub(super) inbox: Receiver<Vec<Msg<M::Event>>>,
    pub(super) from_workers: Receiver<ToCoordinator<M::Output>>,
    pub(super) ranks: usize,
    /// Per destination rank: messages to pack.
    pub(super) out: Vec<Vec<Msg<M::Event>>>,
    /// Packed, to send.
    pub(super) packets: Vec<(usize, Vec<u8>)>,
    /// Per local worker: the bound below which it has committed everything.
    pub(super) worker_bounds: Vec<EventKey>,
    /// Committed outputs not yet sent to rank 0 (other ranks).
    pub(super) local_outputs: Vec<(EventKey, LpId, M::Output)>,
    /// The bound last sent to rank 0.
    pub(super) sent_bound: EventKey,
    pub(super) summaries: Vec<Summary>,
    pub(super) end_time: f64,
    /// This rank stopped because another rank failed (its stop record is not the error).
    pub(super) placeholder: bool,
    /// Workers that started (and will each hand in a summary).
    pub(super) running: usize,
    pub(super) watchdog: Watchdog,
    /// The run's stop handle, when a stop or pause may be asked for (ground rule 7).
    pub(super) stop_handle: Option<warpsim_core::StopHandle>,
    /// What the stop handles of the ranks asked for, as decided at a GVT round.
    pub(super) asked: Asked,
    /// Rank 0: the progress hook, when it was last shown, and the events committed and
    /// processed on every rank (at the last round), plus those of the run resumed.
    pub(super) progress: Option<ProgressHook>,
    pub(super) shown: Instant,
    pub(super) totals: (u64, u64),
    pub(super) earlier: u64,
    /// The time word of the last round's smallest key, as its first all-reduce found it:
    /// the same on every rank, so every rank decides alike whether the next round needs the
    /// key's other levels (`Gateway::least_key`).
    pub(super) last_least_time: u64,
}

impl<M, T> Gateway<'_, '_, M, T>
where
    M: LogicalProcess,
    M::Event: Serialize + DeserializeOwned,
    M::Output: Serialize + DeserializeOwned,
    T: Transport,
{
    pub(super) fn run<S: OutputSink<M::Output>>(
        mut self,
        sink: &mut S,
        report: Report,
        mut stats: TimeWarpStats,
        started: Instant,
        mut in_place: Option<InPlace<'_, M, S>>,
    ) -> (Result<Report, RunError>, TimeWarpStats, Asked) {
        let asked = |(result, stats): (Result<Report, RunError>, TimeWarpStats), asked| {
            (result, stats, asked)
        };
        loop {
            let ending = self.main_loop(sink);
            let ending = match ending {
                Ok(ending) => ending,
                Err(error) => {
                    // Release the workers and give up: the other ranks see the same failure
                    // (a timeout) or are gone. Only what GVT had passed commits.
                    let gvt = self.shared.gvt.current();
                    self.halt_workers(gvt);
                    let outcome = self.local_verdict(report, stats, started, sink, Some(error));
                    return asked(outcome, self.asked);
                }
            };
            let stop_key = match ending {
                Ending::Stopped(key) => key,
                Ending::Finished => key_max(),
            };
            // `inplace.rs` ground rule 2: every rank decides alike (the ending, the end and
            // what was asked come from the rounds' all-reduces).
            let snapshot = in_place.is_some()
                && stop_key == key_max()
                && self.shared.end_time() < self.end_time
                && self.asked != Asked::Stop;
            if in_place.is_some() && !snapshot {
                self.shared.no_snapshot.store(true, Ordering::SeqCst);
            }
            let parts = match self.wind_down(stop_key, sink) {
                Ok(parts) => parts,
                Err(error) => {
                    let outcome = self.local_verdict(report, stats, started, sink, Some(error));
                    return asked(outcome, self.asked);
                }
            };
            if let (true, Some(in_place)) = (snapshot, in_place.as_mut()) {
                match self.take_in_place(parts, in_place, &report, started, sink) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(error) => {
                        let outcome = self.local_verdict(report, stats, started, sink, Some(error));
                        return asked(outcome, self.asked);
                    }
                }
            }
            break;
        }
        stats.ranks = self.ranks;
        let decided = self.asked;
        let outcome = if self.gate.rank == 0 {
            self.conclude(sink, report, stats, started)
        } else {
            self.await_verdict(report, stats, started, sink)
        };
        asked(outcome, decided)
    }

    /// Ground rule 7: this rank's stop and pause requests, for the round's all-reduce (a
    /// pause request is taken: it is decided at this round).
    fn requests(&self) -> (u64, u64) {
        match &self.stop_handle {
            Some(handle) => (
                u64::from(handle.stop_requested()),
                u64::from(handle.take_pause()),
            ),
            None => (0, 0),
        }
    }

    /// This rank's workers' events committed and processed, as each last published them.
    fn local_counts(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        self.shared.gauges.iter().fold((0, 0), |sum, gauge| {
            (
                sum.0 + gauge.committed.load(Relaxed),
                sum.1 + gauge.processed.load(Relaxed),
            )
        })
    }

    /// Ground rule 7: some rank asked for a stop (or a pause) at this round; every rank
    /// decides alike, from the same last published GVT and the same end so far.
    fn decide(&mut self, stop: bool) {
        let asked = if stop { Asked::Stop } else { Asked::Pause };
        if self.shared.lower_end(self.end_time).is_some() || self.shared.end_time() < self.end_time
        {
            self.asked = self.asked.max(asked);
        }
    }

    /// Rank 0: shows the progress hook the run's GVT and events (at most every
    /// [`WATCH_EVERY`]).
    fn show_progress(&mut self) {
        if self.gate.rank != 0 || self.shown.elapsed() < WATCH_EVERY {
            return;
        }
        if let Some(hook) = &self.progress {
            self.shown = Instant::now();
            let gvt = self.shared.gvt.current().time.as_f64().min(self.end_time);
            hook(&Progress::new(
                gvt,
                self.earlier + self.totals.0,
                self.earlier + self.totals.1,
            ));
        }
    }

    /// Everything a rank does until the run's end is decided.
    fn main_loop<S: OutputSink<M::Output>>(&mut self, sink: &mut S) -> Result<Ending, SimError> {
        let mut phase = Phase::Idle;
        let mut last_round = Instant::now();
        // Since when the loop has had nothing to do (see `Transport::idle_poll`).
        let mut idle_since: Option<Instant> = None;
        let idle_poll = self.transport.idle_poll();
        loop {
            let mut busy = self.pump(sink)?;
            self.show_progress();
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
                    let stopped = u64::from(self.local_stop() != key_max());
                    let (stop, pause) = self.requests();
                    let (committed, processed) = self.local_counts();
                    let mine = [white as u64, stopped, stop, pause, committed, processed];
                    let sums = self.reduce(&mine, Reduction::Sum)?;
                    if sums[1] > 0 {
                        return Ok(Ending::Stopped(self.smallest_stop()?));
                    }
                    self.totals = (sums[4], sums[5]);
                    if sums[2] > 0 || sums[3] > 0 {
                        self.decide(sums[2] > 0);
                    }
                    if sums[0] == 0 {
                        self.gate.balance.remove(&(self.gate.epoch - 1));
                        self.shared.gvt.start();
                        self.wake_workers();
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
                        let no_stop = u64::from(self.local_stop() == key_max());
                        let Some(least) = self.least_key(local, no_stop)? else {
                            return Ok(Ending::Stopped(self.smallest_stop()?));
                        };
                        // The scheduler bounds keys by their (time, age) prefix, so a round
                        // can find a smaller rest of the key than the last one did; the last
                        // GVT still holds.
                        let gvt = least.max(self.shared.gvt.current());
                        self.shared.gvt.publish(gvt);
                        self.wake_workers();
                        phase = Phase::Idle;
                        last_round = Instant::now();
                        let end = self.end_time.min(self.shared.end_time());
                        if gvt == key_max() || gvt.time.as_f64() >= end {
                            return Ok(Ending::Finished);
                        }
                        busy = true;
                    }
                }
            }
            if busy {
                idle_since = None;
            } else if idle_since.get_or_insert_with(Instant::now).elapsed() < idle_poll {
                // Poll again at once: another rank's packet is noticed only by polling.
                std::thread::yield_now();
            } else {
                crossbeam_channel::select! {
                    recv(self.inbox) -> batch => if let Ok(batch) = batch { self.route_out(batch) },
                    recv(self.from_workers) -> msg => if let Ok(msg) = msg { self.coordinate(msg, sink) },
                    default(IDLE_WAIT) => {}
                }
            }
        }
    }

    /// Wakes this rank's workers from their idle wait (an empty batch; see
    /// `Worker::wake_peers`), for a round to report in or a new GVT.
    fn wake_workers(&self) {
        for inbox in self.gate.peers.iter().take(self.gate.threads) {
            let _ = inbox.send(Vec::new());
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

    pub(super) fn check_fault(&mut self) -> Result<(), SimError> {
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

    /// An all-reduce of `mine` over the ranks (ground rule 3: a GVT round's payload does
    /// not grow with the number of ranks).
    pub(super) fn reduce(&mut self, mine: &[u64], op: Reduction) -> Result<Vec<u64>, SimError> {
        let gate = &mut self.gate;
        let all = self
            .transport
            .all_reduce(mine, op, &mut |source, bytes| gate.arrived(source, bytes))
            .map_err(cluster_error)?;
        self.check_fault()?;
        Ok(all)
    }

    /// Ground rule 3d: the smallest of every rank's `local` key, from all-reduces of minima
    /// (a key's order is not word by word, while MPI's built-in minimum is; a user-defined
    /// operation would need `unsafe` or libffi). First the time, with `no_stop` (`None` when
    /// some rank has stopped).
    ///
    /// When that time is past the last round's, the GVT is the smallest key at that time:
    /// a lower bound of the exact minimum, which is all a GVT must be, and it moves the run
    /// on, since everything before that time commits. That takes one collective, and it is
    /// the common case. Only when the time did not move (a failed event commits only once
    /// GVT reaches its exact key, so a lower bound could stall the run there) does the
    /// round find the exact key, level by level: `age` and `src` in one word (32 bits each,
    /// so their order is kept) from the ranks still tied, then `sent`, then `id`. Every
    /// rank sees the same first minimum and the same last one, so all make the same
    /// collectives. At most four of one or two words each: a round's traffic per rank does
    /// not grow with the number of ranks.
    fn least_key(&mut self, local: EventKey, no_stop: u64) -> Result<Option<EventKey>, SimError> {
        let words = key_words(local);
        let first = self.reduce(&[words[0], no_stop], Reduction::Min)?;
        if first[1] == 0 {
            return Ok(None);
        }
        let moved = first[0] > self.last_least_time && first[0] != key_words(key_max())[0];
        self.last_least_time = first[0];
        if moved {
            // The smallest key at that time: every other word zero.
            return Ok(Some(words_key(&[first[0], 0, 0, 0, 0])));
        }
        let levels = [words[0], (words[1] << 32) | words[2], words[3], words[4]];
        let mut least = [first[0], 0, 0, 0];
        let mut tied = levels[0] == least[0];
        for level in 1..levels.len() {
            let mine = if tied { levels[level] } else { u64::MAX };
            least[level] = self.reduce(&[mine], Reduction::Min)?[0];
            tied &= levels[level] == least[level];
        }
        let least = words_key(&[
            least[0],
            least[1] >> 32,
            least[1] & u64::from(u32::MAX),
            least[2],
            least[3],
        ]);
        if least > local {
            // Every rank takes part, so the minimum is at most this rank's own key. A
            // transport whose minimum is wrong (MPICH 4.0's on unsigned words was) would let
            // GVT pass events that can still roll back: fail loudly instead.
            return Err(cluster_error(format!(
                "the transport's all-reduce minimum (a key at time {}) is above this rank's own contribution (at time {}): its minimum is wrong, and GVT cannot be trusted",
                least.time, local.time
            )));
        }
        Ok(Some(least))
    }

    /// Once some rank has stopped (ground rule 4): the smallest stop key of all, exactly.
    /// An all-gather, made once per run, because a key's order is not word by word.
    fn smallest_stop(&mut self) -> Result<EventKey, SimError> {
        let mine = key_words(self.local_stop());
        let all = self.gather(&mine)?;
        Ok(all
            .chunks(KEY_WORDS)
            .map(words_key)
            .min()
            .unwrap_or_else(key_max))
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
    pub(super) fn send(&mut self) -> Result<(), SimError> {
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
            // Ranks never observe; the copies of a checkpoint taken in place come after
            // the end-of-run barriers (`wind_down`).
            ToCoordinator::Observed(_) | ToCoordinator::Snapshot { .. } => {}
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
    pub(super) fn queue_outputs(&mut self) -> bool {
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
                Ok(
                    ToCoordinator::Committed { .. }
                    | ToCoordinator::Observed(_)
                    | ToCoordinator::Snapshot { .. },
                ) => {}
                Err(_) => break,
            }
        }
    }

    /// Ground rules 4 and 5: stop every worker at the same point and land every packet.
    /// Returns the workers' copies at a checkpoint taken in place.
    fn wind_down<S: OutputSink<M::Output>>(
        &mut self,
        stop: EventKey,
        sink: &mut S,
    ) -> Result<Copies<M>, SimError> {
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
        // Each worker hands in its summary, or at a checkpoint taken in place its copy.
        let mut parts = Vec::new();
        let deadline = Instant::now() + self.transport.timeout();
        while self.summaries.len() + parts.len() < self.running {
            match self.from_workers.recv_deadline(deadline) {
                Ok(ToCoordinator::Snapshot { summary, part }) => {
                    parts.push((*summary, typed_part(part)));
                }
                Ok(msg) => self.coordinate(msg, sink),
                Err(_) => {
                    return Err(cluster_error("a worker thread did not finish"));
                }
            }
        }
        landed.map(|()| parts)
    }

    /// Ground rule 5: sends what the workers flushed and receives until every packet sent by
    /// any rank has arrived (and been forwarded).
    fn land_everything(&mut self) -> Result<(), SimError> {
        self.take_inbox();
        self.send()?;
        // The rank's workers published their last commits before the barrier; the run's
        // latest (the clock of `finish` without an end time) rides along.
        let last_commit = self.shared.last_commit.load(Ordering::SeqCst);
        loop {
            let mine = [self.gate.total_sent, self.gate.total_received];
            let sums = self.reduce(&mine, Reduction::Sum)?;
            if sums[0] == sums[1] {
                // The run's latest commit (the clock of `finish` without an end time): the
                // largest of the ranks', as the smallest of their complements.
                let latest = self.reduce(&[u64::MAX - last_commit], Reduction::Min)?;
                self.shared
                    .last_commit
                    .fetch_max(u64::MAX - latest[0], Ordering::SeqCst);
                return Ok(());
            }
        }
    }
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
    pub(super) fn receive_until(
        &mut self,
        what: &str,
        mut done: impl FnMut(&mut Gate<'_, M::Event, M::Output>) -> Result<bool, SimError>,
    ) -> Result<(), SimError> {
        let timeout = self.transport.timeout();
        let deadline = Instant::now() + timeout;
        while !done(&mut self.gate)? {
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
            Ok(gate.finals.iter().skip(1).all(Option::is_some))
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
        // Every rank's outputs are in, `finish`'s too.
        deliver_finish(
            &mut self.gate.outputs,
            stop.as_ref().map(|stop| stop.key),
            sink,
            self.shared,
        );
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
        if let Err(error) = self.receive_until("rank 0's verdict", |gate| Ok(gate.done.is_some())) {
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
