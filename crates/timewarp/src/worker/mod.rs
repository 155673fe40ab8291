//! A worker thread: its LPs, one pending set for all of them ([`Store`]), one log of the
//! records, state saves and effects of the events they ran ([`Logs`]), and the loop that
//! executes, rolls back and commits.
//!
//! # Ground rules
//!
//! These invariants hold between any two steps of a worker's loop; the code below keeps them.
//!
//! 1. **An LP's live state is the state after its last processed event.** `model` and `meta`
//!    (random stream, send counter, retraction log) always change together: they are saved
//!    together, restored together, and a failed handler's partial changes are undone at once.
//! 2. **Every live record can be rebuilt.** Each record names its `base`, the latest record
//!    of its LP at or before it with a state save; the base and the LP's records after it
//!    stay in the log while the record is live (forgetting stops at the smallest base of a
//!    live record), so every rollback target is a save run forward. An LP whose base is
//!    gone (all its records committed and forgotten) saves before its next event.
//! 3. **Every event an LP sent, cancelled or moved is in its effect log** (or, lazily, its
//!    deferred list) until GVT passes the cause, in causal order; undoing an event undoes its
//!    log records newest first, so the receiver sees every change to one key in the order the
//!    sender made it (channels are FIFO per worker pair, the local queue is FIFO).
//! 4. **A message touching key `k` at or below the LP's last processed key first rolls the LP
//!    back to `k`.** So an LP has processed exactly the events below its pending minimum
//!    that it would have processed sequentially, once all messages are in.
//! 5. **Nothing that can still change reaches the coordinator.** Events are committed only
//!    below the published GVT ([`crate::gvt`]); their outputs are sent to the coordinator,
//!    which delivers them in key order once every worker has committed past them.
//! 6. **The worker's GVT report covers everything it owns**: its store's minimum, the
//!    events parked by failed and held LPs, deferred lazy sends, the messages it absorbed (inbox and local queue are drained
//!    first) and the messages it sent since the round began (`send_min`).
//! 7. **Errors are final only at GVT.** A handler error marks the LP failed at that key (it
//!    runs nothing further); anything that rolls it back to or before that key clears it.
//!    When GVT reaches the key, no earlier event can change it, so it is the sequential
//!    kernel's error too, and the run stops.

mod balance;
use balance::Look;
mod commit;
mod end;
mod execute;
mod log;
mod lp;
mod mailbox;
mod promise;
mod rollback;
mod safe;
mod schedule;
mod store;

pub(crate) use end::{FinalLp, SnapshotPart};

use std::collections::{BTreeSet, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use warpsim_core::kernel_api::{Effect, encode_event, panic_message};
use warpsim_core::{EventKey, LogicalProcess, LpId, SimError, TraceHash};

use crate::control::{CheckpointControl, MemoryControl, WindowControl};
use crate::gvt::GvtPort;
use crate::home::Home;
use crate::message::{Msg, Route};
use crate::shared::{Counters, Settings, Shared, StopInfo, Summary, ToCoordinator};
use crate::watch::quiet_panics_on_this_thread;

use log::{Logs, Seq};
pub(crate) use lp::{LpState, Transfer};
pub(crate) use store::Store;

/// How the end-of-run steps came out.
enum Finish {
    /// The run is over: whether it finished and `finish` ran on every LP (the final states
    /// are then taken).
    Done(bool),
    /// A checkpoint was taken in place; the run goes on.
    Resume,
}

/// A worker's LPs as the set-up hands them over, and their events at the start.
pub(crate) struct Owned<M: LogicalProcess> {
    pub(crate) lps: Vec<LpState<M>>,
    pub(crate) store: Store<M::Event>,
}

/// Raises `max` to `value` if it is larger. Event times are never NaN, and `f64::max`'s care
/// for NaN cost five more instructions at each of a safe event's two updates (PHOLD).
#[inline(always)]
fn raise(max: &mut f64, value: f64) {
    if value > *max {
        *max = value;
    }
}

/// Messages sent to another worker are batched up to this many before they are flushed
/// (they are also flushed after every slice of events and whenever the worker waits).
const BATCH: usize = 64;

/// Events executed between two looks at the inbox, the GVT flag and the memory gauge.
const SLICE: u32 = 32;

/// How long an idle worker first waits for a message before it looks around again; each
/// idle turn in a row doubles the wait, up to [`IDLE_WAIT_MAX`]. A worker waits on its inbox,
/// so a message wakes it at once, and so does a GVT round starting or a new GVT (see
/// [`Worker::wake_peers`]): the long waits cost no latency, and leave the core to whoever
/// can use it — on a shared machine, the descheduled peer this worker waits for.
const IDLE_WAIT: Duration = Duration::from_micros(50);
const IDLE_WAIT_MAX: Duration = Duration::from_millis(2);

/// One worker thread: its LPs and their scheduler, its mailbox, the GVT protocol's port,
/// its controllers, and the bookkeeping of commit and memory. The methods live beside the
/// concern they serve: `schedule.rs` (which LP runs next), `execute.rs` (an event and lazy
/// cancellation), `rollback.rs`, `mailbox.rs` (messages between workers), `commit.rs`
/// (GVT, fossils, the memory account) and `balance.rs` (load balancing).
pub(crate) struct Worker<'a, M: LogicalProcess> {
    index: usize,
    /// The CPU this worker's thread goes back to after a wait (`home.rs`).
    home: Home,
    lps: Vec<LpState<M>>,
    /// Events each LP ran since the last migration (what load balancing moves), by LP
    /// index: beside the records rather than in them, where 8 bytes an LP pushed PHOLD's
    /// record past two cache lines (issue 13).
    loads: Vec<u32>,
    route: &'a Route,
    settings: &'a Settings,
    shared: &'a Shared<M::Output>,
    /// The pending events of its LPs, in one queue.
    store: Store<M::Event>,
    mail: Mailbox<M::Event>,
    to_coordinator: Sender<ToCoordinator<M::Output>>,
    port: GvtPort<EventKey>,
    gvt: EventKey,
    /// Events run since this worker last started a GVT round.
    since_gvt_start: u64,
    window: WindowControl,
    checkpoint: CheckpointControl,
    /// The memory budget's controller, when there is a budget.
    memory: Option<MemoryControl>,
    /// What it keeps of the events it ran (see `log.rs`).
    logs: Logs<M>,
    sizes: Sizes,
    scratch: Scratch<M>,
    lists: LpLists,
    /// Antimessages that arrived before their event: (LP index, key).
    early_antis: BTreeSet<(u32, EventKey)>,
    /// The LP (and event) whose state a rollback is rebuilding, to name it if the model's
    /// `Clone` panics there (see [`Worker::abandon`]).
    busy: Option<(LpId, EventKey)>,
    summary_sent: bool,
    trace: TraceHash,
    /// The committed events with their contents (when the run asked for it).
    content: TraceHash,
    last_commit: f64,
    counters: Counters,
    balance: Balance<'a, M>,
    /// The most uncommitted records it holds before it waits for GVT (see
    /// [`RECORDS_MAX`](crate::control::RECORDS_MAX)).
    records_max: u64,
    /// Where this worker's run ends: the settings' end (or pause) time, lowered when a stop
    /// or a periodic checkpoint asks the run to pause (see `end.rs`).
    end_time: f64,
    /// Events no rollback can reach, run without optimism's costs (see `safe.rs`).
    safe: safe::Safe<M>,
    /// At least every LP's `newest` (the time of its newest live record): a message for a
    /// later time rolls no LP back (see [`Worker::deliver`]).
    newest_max: f64,
}

/// A worker's channels: its inbox, the other workers' inboxes, what waits to go to each,
/// spare batches, and the queue of messages between its own LPs.
struct Mailbox<E> {
    inbox: Receiver<Vec<Msg<E>>>,
    peers: Vec<Sender<Vec<Msg<E>>>>,
    outboxes: Vec<Vec<Msg<E>>>,
    spare: Vec<Vec<Msg<E>>>,
    local: VecDeque<Msg<E>>,
}

/// How many pending events, state saves and other records the worker holds, for the memory
/// estimate (the logs count their own entries), and the heap its state saves own as the
/// model reports it (counted only under a memory budget).
#[derive(Debug, Default)]
struct Sizes {
    pending: usize,
    deferred: usize,
    withdrawn: usize,
    outputs: usize,
    /// State saves held in the save log.
    saves: usize,
    save_heap: u64,
}

/// Buffers reused from event to event, so the hot path does not allocate.
struct Scratch<M: LogicalProcess> {
    effects: Vec<Effect<M::Event>>,
    outputs: Vec<M::Output>,
    kept: Vec<bool>,
    matched: Vec<usize>,
    /// Encodings of a re-sent event and of the deferred one it is compared with.
    encoded: (Vec<u8>, Vec<u8>),
    /// Records a rollback undoes, and a chain to coast through.
    undone: Vec<Seq>,
    chain: Vec<Seq>,
}

impl<M: LogicalProcess> Default for Scratch<M> {
    fn default() -> Scratch<M> {
        Scratch {
            effects: Vec::new(),
            outputs: Vec::new(),
            kept: Vec::new(),
            matched: Vec::new(),
            encoded: (Vec::new(), Vec::new()),
            undone: Vec::new(),
            chain: Vec::new(),
        }
    }
}

/// The worker's LPs (by index) with deferred sends, with withdrawn events, failed, and held
/// back after a secondary rollback.
#[derive(Debug, Default)]
struct LpLists {
    deferred: Vec<u32>,
    withdrawn: Vec<u32>,
    failed: Vec<u32>,
    held: Vec<u32>,
}

/// Load balancing's state: migrations done, the early antimessages kept by the source of a
/// migration for its remaining LPs, the GVTs seen since the last decision and each worker's
/// committed count then (worker 0), and the LPs in transit.
struct Balance<'a, M: LogicalProcess> {
    migrations_done: u64,
    pending_antis: Vec<(LpId, EventKey)>,
    /// Pending events between `extract` (or their arrival) and `rebuild`, by LP id.
    limbo: Vec<(LpId, EventKey, M::Event)>,
    gvts_since_balance: u32,
    load_marks: Vec<u64>,
    /// When this worker last read how long it waited for a core (`give_way`).
    noted_at: Option<std::time::Instant>,
    /// Worker 0: the workers' waits for a core at its last looks, with what the machine's
    /// other processes had run by then, and the workers it has emptied (`give_way`).
    looks: std::collections::VecDeque<Look>,
    emptied: Vec<usize>,
    /// Worker 0: LPs given away or taken back so far (`give_way`).
    moves: u32,
    transfer: &'a Mutex<Vec<Transfer<M>>>,
}

/// What a worker starts with.
pub(crate) struct WorkerParts<'a, M: LogicalProcess> {
    pub(crate) index: usize,
    pub(crate) lps: Owned<M>,
    pub(crate) route: &'a Route,
    pub(crate) settings: &'a Settings,
    pub(crate) shared: &'a Shared<M::Output>,
    pub(crate) inbox: Receiver<Vec<Msg<M::Event>>>,
    pub(crate) peers: Vec<Sender<Vec<Msg<M::Event>>>>,
    pub(crate) to_coordinator: Sender<ToCoordinator<M::Output>>,
    pub(crate) transfer: &'a Mutex<Vec<Transfer<M>>>,
}

impl<'a, M: LogicalProcess> Worker<'a, M> {
    pub(crate) fn new(parts: WorkerParts<'a, M>, home: Home) -> Worker<'a, M> {
        let n_workers = parts.peers.len();
        let Owned { lps, store } = parts.lps;
        let n_pending = store.len();
        let settings = parts.settings;
        let mut worker = Worker {
            index: parts.index,
            home,
            store,
            loads: vec![0; lps.len()],
            lps,
            route: parts.route,
            settings,
            shared: parts.shared,
            mail: Mailbox {
                inbox: parts.inbox,
                peers: parts.peers,
                outboxes: (0..n_workers).map(|_| Vec::new()).collect(),
                spare: Vec::new(),
                local: VecDeque::new(),
            },
            to_coordinator: parts.to_coordinator,
            port: parts.shared.gvt.port(parts.index),
            gvt: EventKey::init(LpId::new(0)),
            // A round at once: its result gives the first bound for safe events (see
            // `safe.rs`), which on one thread lets nearly every event run safely.
            since_gvt_start: settings.gvt_interval,
            window: WindowControl::new(settings.window),
            checkpoint: CheckpointControl::new(settings.checkpoint, settings.adaptive_checkpoint),
            memory: settings.memory.map(MemoryControl::new),
            sizes: Sizes {
                pending: n_pending,
                ..Sizes::default()
            },
            logs: Logs::default(),
            scratch: Scratch::default(),
            lists: LpLists::default(),
            early_antis: BTreeSet::new(),
            busy: None,
            summary_sent: false,
            trace: TraceHash::default(),
            content: TraceHash::default(),
            last_commit: 0.0,
            counters: Counters::default(),
            balance: Balance {
                migrations_done: 0,
                pending_antis: Vec::new(),
                limbo: Vec::new(),
                gvts_since_balance: 0,
                load_marks: Vec::new(),
                noted_at: None,
                looks: std::collections::VecDeque::new(),
                emptied: Vec::new(),
                moves: 0,
                transfer: parts.transfer,
            },
            records_max: crate::control::RECORDS_MAX.max(4 * settings.gvt_interval),
            end_time: settings.end_time,
            safe: safe::Safe::new(
                promise::Promises::new(
                    parts.index,
                    parts.shared.promises.len(),
                    settings.safe,
                    settings.lookahead,
                    parts.shared.gvt.is_external(),
                ),
                // (`safe.rs`, ground rule 6.)
                settings.safe && settings.lookahead > 0.0 && n_workers > 1,
            ),
            newest_max: f64::INFINITY,
        };
        worker.counters.peak_pending = n_pending;
        worker.recount_newest();
        worker
    }

    /// Sets [`newest_max`](Self::newest_max) from every LP (when LPs come or go).
    fn recount_newest(&mut self) {
        self.newest_max = self.lps.iter().map(|lp| lp.newest).fold(-1.0, f64::max);
    }

    /// The worker's life: the loop, then the end-of-run steps. A panic anywhere outside a
    /// handler (handlers have their own guard) aborts the run with a typed error instead of
    /// killing the thread and leaving its peers waiting (see [`Worker::abandon`]).
    /// Returns the final states of its LPs when the run finished (and `finish` ran on them).
    pub(crate) fn run(mut self) -> Vec<FinalLp<M>> {
        quiet_panics_on_this_thread();
        let ended = catch_unwind(AssertUnwindSafe(|| {
            loop {
                self.main_loop();
                match self.finish() {
                    // A checkpoint was taken in place and the run goes on.
                    Finish::Resume => {}
                    Finish::Done(finished) => break finished,
                }
            }
        }));
        match ended {
            Ok(true) => self.take_states(),
            Ok(false) => Vec::new(),
            Err(payload) => {
                self.abandon(payload.as_ref());
                Vec::new()
            }
        }
    }

    /// The worker's loop; returns when the run is over (end time, drained, or stopped).
    fn main_loop(&mut self) {
        let mut idle_wait = IDLE_WAIT;
        // (Again after a checkpoint taken in place: GVT restarted below the last bound.)
        self.void_safe();
        // A lone worker hears from nobody: its bound is the end from the start — the end
        // as it is now (a pause set before the run or after a checkpoint taken in place is
        // stored before any worker starts, and safe events cannot be rolled back past it).
        self.refresh_end();
        self.take_heard();
        loop {
            if self.shared.stop.load(Ordering::SeqCst) {
                break;
            }
            self.absorb_inbox();
            self.drain_local();
            if let Some(round) = self.shared.gvt.must_report(&self.port) {
                self.report(round);
            }
            if let Some(published) = self.shared.gvt.poll(&mut self.port) {
                let migrations = published.migrations;
                if self.new_gvt(published.gvt, published.safe) {
                    // `finish` still takes part in a migration published with this GVT.
                    break;
                }
                // The new safe bound counts on every message another worker sent before it
                // reported being here (`safe.rs`, ground rule 1). The absorb above may have
                // come before some of them were enqueued, while the round was completing.
                self.absorb_inbox();
                self.heard_gvt(published.gvt);
                if migrations != self.balance.migrations_done {
                    self.migrate();
                }
            }
            let safe_before = self.counters.safe;
            let executed = self.execute_slice();
            if self.store.collided() {
                self.report_collisions();
            }
            let all_safe = self.counters.safe - safe_before == u64::from(executed);
            self.flush_due(all_safe && executed > 0);
            if self.safe.promises.on && self.mail.local.is_empty() {
                // Before this worker waits, or while it runs on: what the others may be
                // waiting for (`promise.rs`).
                let next = self
                    .store
                    .peek()
                    .map_or(f64::INFINITY, |(key, _)| key.time.as_f64());
                self.promise(next, true);
            }
            if self.since_gvt_start >= self.settings.gvt_interval {
                self.since_gvt_start = 0;
                self.start_round();
            }
            if executed == 0
                && self.safe.promises.on
                && let Some((key, _)) = self.store.peek()
                && key >= self.safe.bound
                && key.time.as_f64() < self.end_time
            {
                // Held back (at the window, the budget or the cap): the others may soon
                // promise enough for the next event to run safely, and may be waiting for this
                // worker's promise meanwhile (`promise.rs`).
                self.wait_for_promises(key.time.as_f64(), None);
                if key < self.safe.bound {
                    continue;
                }
            }
            if executed == 0 {
                // Idle or throttled: a GVT round is what can unblock us. (A worker without
                // LPs, which gave way, waits for the others' rounds: it has nothing to
                // unblock, and its rounds would only interrupt the worker doing the work.)
                if !self.lps.is_empty() {
                    self.start_round();
                }
                if self.shared.gvt.must_report(&self.port).is_some() {
                    // Report first (nobody would wake us for a round we have not reported
                    // in: we might be the last).
                    continue;
                }
                let woken = self.mail.inbox.recv_timeout(idle_wait);
                self.home.return_home();
                if let Ok(batch) = woken {
                    self.absorb(batch);
                }
                idle_wait = (idle_wait * 2).min(IDLE_WAIT_MAX);
            } else {
                idle_wait = IDLE_WAIT;
            }
        }
    }

    /// Starts a GVT round unless one is in progress, and wakes the other workers so that
    /// they report in it at once rather than after their idle wait.
    fn start_round(&mut self) {
        if self.shared.gvt.try_start() {
            self.wake_peers();
        }
    }

    /// Sends every other worker an empty batch: it wakes a worker waiting on its inbox and
    /// means nothing else (absorbing it applies no message). Cheap — once per GVT round —
    /// and the batch is dropped if its receiver has finished.
    pub(super) fn wake_peers(&mut self) {
        for (peer, inbox) in self.mail.peers.iter().enumerate() {
            // A worker that left the GVT protocol has no round to report in; it looks for
            // news (the end, a migration) at its idle timeout.
            if peer != self.index && !self.shared.gvt.has_left(peer) {
                let _ = inbox.send(Vec::new());
            }
        }
    }

    /// After a panic outside a handler: stops every thread at the last GVT (everything
    /// below it is committed already or commits on the other workers), names the LP when a
    /// rollback of one was under way, and hands the coordinator this worker's figures.
    fn abandon(&mut self, payload: &(dyn std::any::Any + Send)) {
        let message = panic_message(payload);
        let error = match self.busy {
            Some((lp, key)) => SimError::ModelPanic {
                lp,
                time: key.time,
                message: format!(
                    "outside its handler, while the kernel rebuilt its state after a rollback (in the model's Clone?): {message}"
                ),
            },
            None => SimError::Internal(format!(
                "a Time Warp worker panicked outside any handler (in the model's Clone, PartialEq or Drop, or in the kernel): {message}"
            )),
        };
        self.shared.abort(StopInfo {
            key: self.gvt,
            lp: self.busy.map_or(LpId::new(0), |(lp, _)| lp),
            error,
            outputs: None,
        });
        self.settle_safe(Some(self.gvt));
        self.send_summary();
    }

    /// The last steps: commit what is final, let every message land, count what is left.
    /// After an abort the barriers are broken and pass at once: the count of what is left
    /// may then miss messages in flight, but no thread waits for one that failed.
    /// Returns whether the run finished and `finish` ran on every LP, or, at a checkpoint
    /// taken in place (`Settings::snapshots`), that the run goes on.
    fn finish(&mut self) -> Finish {
        if self.settings.balance {
            // A migration may be published with the GVT this worker stopped at, or with a
            // round it reported in before it stopped: every worker must take part, so wait
            // here, migrating when asked, until every worker is finishing. Once all are, no
            // round can complete, so no migration can be published any more.
            self.shared.finishing.fetch_add(1, Ordering::SeqCst);
            loop {
                if self.shared.is_aborted() {
                    break;
                }
                if self.shared.gvt.migrations() != self.balance.migrations_done {
                    self.migrate();
                    continue;
                }
                if self.shared.finishing.load(Ordering::SeqCst) == self.shared.gauges.len() {
                    break;
                }
                std::thread::sleep(IDLE_WAIT);
                self.home.return_home();
            }
        }
        self.settle_pause();
        // Nothing at or after the end commits: after a pause asked for mid-run, the
        // retractions there that `settle_pause` undid must find their events again.
        let end = self.end_bound();
        let bound = self.shared.stop_key().map_or(end, |stop| stop.min(end));
        self.commit_below(bound);
        self.settle_safe(self.shared.stop_key());
        self.publish_last_commit();
        if self.settings.content_hash {
            self.add_failed_content(bound);
        }
        if self.settings.observe {
            self.observe_failed(bound);
        }
        self.flush_all();
        self.shared.barrier.wait();
        // Every worker has flushed; what is in transit now is all that is left to land.
        self.shared.landed.wait();
        self.absorb_inbox();
        self.drain_local();
        if self.snapshot_due() {
            if self.snapshot() {
                return Finish::Resume;
            }
            // A stop: the coordinator has the copies for its checkpoint.
            self.send_summary();
            return Finish::Done(false);
        }
        let finished = self.finish_lps();
        self.send_summary();
        Finish::Done(finished)
    }

    /// Stops the run for the collisions the store met (see [`Store::collision`]).
    #[cold]
    fn report_collisions(&mut self) {
        while let Some((l, key)) = self.store.collision() {
            self.collided(l as usize, key);
        }
    }

    /// Two events for LP `l` have one key (see [`EventKey`], "Uniqueness"): stops the run
    /// with [`SimError::DuplicateKey`] rather than run them in an arbitrary order.
    #[cold]
    fn collided(&mut self, l: usize, key: EventKey) {
        let dest = self.lps[l].id;
        self.shared.abort(StopInfo {
            key: self.gvt,
            lp: dest,
            error: SimError::DuplicateKey { dest, key },
            outputs: None,
        });
    }

    /// A run stopped by an error that commits its event (a bad delay or destination): if the
    /// event is this worker's, its contents join the content hash (its key joins the trace in
    /// `assemble`, with its outputs).
    fn add_failed_content(&mut self, bound: EventKey) {
        for &l in &self.lists.failed {
            let lp = &self.lps[l as usize];
            if let Some(failure) = lp.failed()
                && failure.key == bound
                && failure.commits
                && let Some(event) = lp.parked(&bound)
            {
                if !encode_event(event, &mut self.scratch.encoded.0) {
                    self.scratch.encoded.0.clear();
                }
                self.content
                    .add_content(&bound, lp.id, &self.scratch.encoded.0);
            }
        }
    }

    /// A run stopped by a handler's error: if the failed event is this worker's, the
    /// observer sees it too, as on the sequential kernel (which shows every event before its
    /// handler runs).
    fn observe_failed(&mut self, bound: EventKey) {
        for &l in &self.lists.failed {
            let lp = &self.lps[l as usize];
            if let Some(failure) = lp.failed()
                && failure.key == bound
                && let Some(event) = lp.parked(&bound)
            {
                let seen = vec![(bound, lp.id, event.clone())];
                let _ = self
                    .to_coordinator
                    .send(ToCoordinator::Observed(Box::new(seen)));
            }
        }
    }

    /// This worker's figures so far.
    fn summary(&self) -> Summary {
        Summary {
            lps: self.lps.len(),
            trace: self.trace,
            content: self.content,
            counters: self.counters.clone(),
            pending_at_end: self.sizes.pending,
            last_commit: self.last_commit,
        }
    }

    /// Hands the coordinator this worker's figures (once, whatever happened).
    fn send_summary(&mut self) {
        if self.summary_sent {
            return;
        }
        self.summary_sent = true;
        let summary = self.summary();
        let _ = self.to_coordinator.send(ToCoordinator::Finished {
            worker: self.index,
            summary: Box::new(summary),
        });
    }
}
