//! Setting up a run, the same for threads and for the ranks of a distributed run: `init` on
//! the process's own LPs, the memory check, placing the LPs on workers (and ranks), the
//! shared state and the channels, and starting the workers.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use crossbeam_channel::{Receiver, Sender};
use warpsim_core::kernel_api::{Effect, LpMeta, deliver_guarded, panic_message};
use warpsim_core::{
    Committed, Ctx, EventKey, LogicalProcess, LpId, OutputSink, RunConfig, SimError,
};

use crate::config::TimeWarp;
use crate::gvt::GvtShared;
use crate::home::Home;
use crate::message::{Msg, Route, key_max, route_entry};
use crate::pending::Pending;
use crate::shared::{Settings, Shared, StopInfo, ToCoordinator, pending_bytes};
use crate::watch::default_hook;
use crate::worker::{FinalLp, LpState, Owned, Store, Transfer, Worker, WorkerParts};

/// Where a run's workers are: `ranks` processes of `threads` workers each, this process being
/// `rank`; with a `gateway` (a distributed run), the calling thread is one more participant
/// of the GVT protocol and the end-of-run barriers, and routes messages for other ranks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placement {
    pub(crate) rank: usize,
    pub(crate) ranks: usize,
    pub(crate) threads: usize,
    pub(crate) gateway: bool,
}

/// A run ready to start.
pub(crate) struct Prepared<M: LogicalProcess> {
    /// Where each LP lives: (worker, index there); another rank's LP routes to the gateway
    /// (worker `threads`, index = its rank).
    pub(crate) route: Vec<AtomicU64>,
    /// Each local worker's LPs, with their starting events.
    pub(crate) owned: Vec<Owned<M>>,
    pub(crate) settings: Settings,
    pub(crate) shared: Shared<M::Output>,
    /// One inbox per worker, and the gateway's last when there is one.
    pub(crate) senders: Vec<Sender<Vec<Msg<M::Event>>>>,
    pub(crate) receivers: Vec<Receiver<Vec<Msg<M::Event>>>>,
    pub(crate) transfer: Mutex<Vec<Transfer<M>>>,
    /// The LPs' final states, handed in by the workers of a run that finished.
    pub(crate) finals: Mutex<Vec<FinalLp<M>>>,
}

impl TimeWarp {
    /// The rank that owns LP `index` of `n_lps` (ground rule 1 of `cluster`: LP `i` goes to
    /// global worker `partition.owner(i, n, ranks × threads)`, which lives on rank
    /// `worker / threads`), and the worker there.
    pub(crate) fn place(&self, index: usize, n_lps: usize, placement: Placement) -> (usize, usize) {
        let global = self
            .partition
            .owner(index, n_lps, placement.threads * placement.ranks);
        (global / placement.threads, global % placement.threads)
    }

    /// Places this process's initialised LPs on its workers and builds the route table, the
    /// shared state and the channels.
    pub(crate) fn prepare<M>(
        &self,
        init: Initialised<M>,
        n_lps: u32,
        placement: Placement,
    ) -> Prepared<M>
    where
        M: LogicalProcess,
    {
        let Placement {
            rank,
            threads,
            gateway,
            ..
        } = placement;
        let Initialised {
            mut ids,
            mut states,
            mut pending,
            ..
        } = init;
        let mut route: Vec<AtomicU64> = Vec::with_capacity(n_lps as usize);
        // First where every LP goes, and how many LPs and events each worker gets.
        let mut lps_of = vec![0usize; threads];
        let mut events_of = vec![0usize; threads];
        let mut own = 0;
        for index in 0..n_lps as usize {
            let (owner, worker) = self.place(index, n_lps as usize, placement);
            if owner == rank {
                route.push(route_entry(worker as u32, lps_of[worker] as u32));
                lps_of[worker] += 1;
                events_of[worker] += pending[own].len();
                own += 1;
            } else {
                route.push(route_entry(threads as u32, owner as u32));
            }
        }
        debug_assert_eq!(own, ids.len());
        // Then each own LP, from the last, into its worker's LPs and its events into the
        // worker's store, while what `init` left is given back as it empties: the set-up
        // never holds every LP twice (at ten million LPs, each byte per LP is ten megabytes).
        let mut owned: Vec<Owned<M>> = (0..threads)
            .map(|worker| Owned {
                lps: Vec::with_capacity(lps_of[worker]),
                store: Store::with_capacity(events_of[worker], lps_of[worker]),
            })
            .collect();
        while let (Some(id), Some((model, meta)), Some(mut events)) =
            (ids.pop(), states.pop(), pending.pop())
        {
            let (_, worker) = self.place(id.index(), n_lps as usize, placement);
            lps_of[worker] -= 1;
            let l = lps_of[worker] as u32;
            let lp = LpState::new(id, model, meta);
            let part = &mut owned[worker];
            while let Some((key, event)) = events.pop_first() {
                // `init`'s sets refuse duplicate keys already.
                let _ = part.store.push(l, key, event);
            }
            part.lps.push(lp);
            // An eighth at a time: a large buffer shrinks in place (its pages are unmapped),
            // so what is left and what is built together stay near the larger of the two.
            if states.len() < states.capacity() - states.capacity() / 8 {
                ids.shrink_to_fit();
                states.shrink_to_fit();
                pending.shrink_to_fit();
            }
        }
        for part in &mut owned {
            part.lps.reverse();
        }
        let start = EventKey::init(LpId::new(0));
        let (gvt, participants) = if gateway {
            (
                GvtShared::external(threads + 1, start, key_max()),
                threads + 1,
            )
        } else {
            (GvtShared::new(threads, start, key_max()), threads)
        };
        let hook = self.warnings.hook.clone().unwrap_or_else(default_hook);
        let (senders, receivers) = (0..participants)
            .map(|_| crossbeam_channel::unbounded())
            .unzip();
        Prepared {
            route,
            owned,
            settings: self.settings(n_lps, threads, gateway),
            shared: Shared::new(gvt, threads, participants, hook),
            senders,
            receivers,
            transfer: Mutex::new(Vec::new()),
            finals: Mutex::new(Vec::new()),
        }
    }
}

/// What every worker of a run shares, to start them.
pub(crate) struct Crew<'env, M: LogicalProcess> {
    pub(crate) route: &'env Route,
    pub(crate) settings: &'env Settings,
    pub(crate) shared: &'env Shared<M::Output>,
    pub(crate) transfer: &'env Mutex<Vec<Transfer<M>>>,
    pub(crate) finals: &'env Mutex<Vec<FinalLp<M>>>,
    /// Where the workers' CPUs start (see [`Home`]): 0 on threads, a rank's first worker
    /// among all ranks' (ranks on one machine then start on different CPUs).
    pub(crate) first_cpu: usize,
}

impl<'env, M: LogicalProcess> Crew<'env, M> {
    /// Starts one worker thread per entry of `owned` (named `{name}-{index}`), each with its
    /// inbox, and lets go of the coordinator's sender so the coordinator sees when all end.
    /// Returns how many started: if the system refuses a thread, the run is aborted with an
    /// error and the ones already started wind down (each still reports).
    ///
    /// A worker's stack holds a few events, states and outputs by value at a time (a
    /// handler's argument, the copy kept for rollback, a message being built), so it grows
    /// with their sizes: a model whose events are a megabyte works as on the sequential
    /// kernel instead of overflowing a default 2 MiB stack. The size is only reserved;
    /// memory is used as the stack is.
    ///
    /// Worker `index` starts on the `first_cpu + index`-th CPU the process may use (see
    /// [`Home`]).
    pub(crate) fn spawn<'scope>(
        &self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        name: &str,
        owned: Vec<Owned<M>>,
        inboxes: Vec<Receiver<Vec<Msg<M::Event>>>>,
        peers: &[Sender<Vec<Msg<M::Event>>>],
        to_coordinator: Sender<ToCoordinator<M::Output>>,
    ) -> usize {
        // An unoptimised build keeps a copy of its own on the stack for every move of a value
        // (the large-event tests of `tests/hostile.rs` overflowed 48 copies in `cargo test`
        // without `--release`).
        const COPIES: usize = if cfg!(debug_assertions) { 8 * 48 } else { 48 };
        let values = size_of::<M::Event>() + size_of::<M>() + size_of::<M::Output>();
        let stack = (8usize << 20).saturating_add(values.saturating_mul(COPIES));
        let mut running = 0;
        let finals = self.finals;
        let first_cpu = self.first_cpu;
        for (index, (lps, inbox)) in owned.into_iter().zip(inboxes).enumerate() {
            let parts = WorkerParts {
                index,
                lps,
                route: self.route,
                settings: self.settings,
                shared: self.shared,
                inbox,
                peers: peers.to_vec(),
                to_coordinator: to_coordinator.clone(),
                transfer: self.transfer,
            };
            let spawned = std::thread::Builder::new()
                .name(format!("{name}-{index}"))
                .stack_size(stack)
                .spawn_scoped(scope, move || {
                    let home = Home::settle(first_cpu + index);
                    let mut states = Worker::new(parts, home).run();
                    let mut finals = finals
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    // The first worker's states are taken as they are, not copied.
                    if finals.is_empty() {
                        std::mem::swap(&mut *finals, &mut states);
                    } else {
                        finals.append(&mut states);
                    }
                });
            match spawned {
                Ok(_) => running += 1,
                Err(error) => {
                    self.shared.abort(StopInfo {
                        key: EventKey::init(LpId::new(0)),
                        lp: LpId::new(0),
                        error: SimError::Config(format!(
                            "the system refused to start worker thread {index}: {error}"
                        )),
                        outputs: None,
                    });
                    break;
                }
            }
        }
        running
    }
}

impl TimeWarp {
    /// Where this run ends: the end time, or an earlier pause time (`RunConfig::pause_at`),
    /// and whether it is a pause.
    pub(crate) fn run_end(&self) -> (f64, bool) {
        match self.config.pause_at {
            Some(pause) if pause < self.config.end_time => (pause, true),
            _ => (self.config.end_time, false),
        }
    }

    /// Refuses a memory budget smaller than the events pending at the start (see
    /// [`TimeWarp::memory`]). Later the budget only throttles, so the same run always ends
    /// the same way.
    pub(crate) fn check_memory<M: LogicalProcess>(&self, events: usize) -> Result<(), SimError> {
        let Some(budget) = self.memory else {
            return Ok(());
        };
        let needed = pending_bytes::<M::Event>(events);
        if needed > budget {
            return Err(SimError::MemoryBudget {
                budget,
                needed,
                events: events as u64,
            });
        }
        Ok(())
    }

    /// What every worker reads.
    pub(crate) fn settings(&self, n_lps: u32, threads: usize, gateway: bool) -> Settings {
        Settings {
            lazy: self.cancellation == crate::Cancellation::Lazy,
            checkpoint: self.checkpoint_interval,
            adaptive_checkpoint: self.adaptive_checkpoint,
            window: self.window,
            adaptive_window: self.adaptive_window && self.window.is_none(),
            memory: self.memory,
            gvt_interval: self.gvt_interval,
            balance: (self.load_balancing || self.give_way.is_some()) && threads > 1 && !gateway,
            load_balancing: self.load_balancing,
            give_way: self.give_way,
            end_time: self.run_end().0,
            n_lps,
            content_hash: self.config.content_hash,
            pause: self.run_end().1,
            observe: false,
            snapshots: false,
            // Over MPI the other ranks' reports are not split per worker (see `gvt.rs`).
            safe: self.safe_events && !gateway,
            lookahead: self.config.lookahead,
        }
    }
}

/// Where an `init`'s outputs go: straight to the run's sink (threads: every LP is local,
/// in LP order), or kept for rank 0 to merge with the other ranks' (a distributed run).
pub(crate) enum InitOutputs<'s, S, O> {
    Deliver(&'s mut S),
    Collect(Vec<(LpId, O)>),
}

/// Runs `init` on this process's own LPs (`own`, in ascending LP order), in LP order as on
/// the sequential kernel. Its effects are final: those on own LPs are applied straight to
/// their starting pending sets, those on other ranks' LPs are kept in order for the caller
/// to ship. Stops at the first failing `init` (or sink): LPs after it are not initialised,
/// since no kernel runs them.
pub(crate) fn initialise<M, S>(
    config: &RunConfig,
    n_lps: u32,
    own: Vec<(LpId, M)>,
    outputs_to: &mut InitOutputs<'_, S, M::Output>,
) -> Initialised<M>
where
    M: LogicalProcess,
    S: OutputSink<M::Output>,
{
    let ids: Vec<LpId> = own.iter().map(|(lp, _)| *lp).collect();
    let mut init = Initialised {
        states: Vec::with_capacity(own.len()),
        pending: (0..own.len()).map(|_| Pending::default()).collect(),
        remote: Vec::new(),
        nets: Vec::with_capacity(own.len()),
        failure: None,
        ids,
    };
    let mut effects = Vec::new();
    let mut outputs = Vec::new();
    let mut error = None;
    for (lp, mut model) in own {
        let key = EventKey::init(lp);
        let mut meta = LpMeta::new(config.seed, lp);
        let mut ctx = Ctx::<M>::buffered(
            lp,
            key,
            n_lps,
            &mut meta,
            &mut effects,
            &mut outputs,
            &mut error,
        );
        ctx.set_lookahead(config.lookahead);
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| model.init(&mut ctx))) {
            // A panicking init does not commit: its outputs are dropped, but (as on the
            // sequential kernel) the sends it made before panicking count as pending.
            let message = panic_message(payload.as_ref());
            outputs.clear();
            init.apply(&mut effects);
            init.failure = Some((
                lp,
                SimError::ModelPanic {
                    lp,
                    time: key.time,
                    message,
                },
            ));
            return init;
        }
        match outputs_to {
            InitOutputs::Deliver(sink) => {
                for output in outputs.drain(..) {
                    if let Err(sink_error) =
                        deliver_guarded(&mut **sink, Committed { key, lp, output })
                    {
                        error = Some(sink_error);
                        break;
                    }
                }
                outputs.clear();
            }
            InitOutputs::Collect(kept) => kept.extend(outputs.drain(..).map(|out| (lp, out))),
        }
        // Like the sequential kernel, which applies a failing init's sends up to the
        // failure: apply them before counting.
        init.apply(&mut effects);
        if let Some(error) = error.take() {
            init.failure = Some((lp, error));
            return init;
        }
        init.states.push((model, meta));
    }
    init
}

/// Own LPs after `init`, with their starting pending events, and what `init` did to other
/// ranks' LPs.
pub(crate) struct Initialised<M: LogicalProcess> {
    /// The own LPs, ascending.
    pub(crate) ids: Vec<LpId>,
    /// The own LPs' states, as far as `init` succeeded.
    pub(crate) states: Vec<(M, LpMeta)>,
    /// Per own LP, its starting pending set.
    pub(crate) pending: Vec<Pending<M::Event>>,
    /// Effects on other ranks' LPs, in the order `init` made them.
    pub(crate) remote: Vec<Effect<M::Event>>,
    /// Per own LP initialised (the failing one included), how many events its `init` left
    /// pending anywhere: sends less withdrawals (a withdrawal always finds its event, since
    /// `Ctx` withdraws only what this LP sent and nothing has run yet).
    pub(crate) nets: Vec<u64>,
    /// The first own LP whose `init` (or the sink it fed) failed, and why.
    pub(crate) failure: Option<(LpId, SimError)>,
}

impl<M: LogicalProcess> Initialised<M> {
    /// Every LP of a checkpoint, as `init` would have left them (threads: every LP local;
    /// `pending` in key order, so each LP's events go in at the end of its set).
    pub(crate) fn resumed(
        states: Vec<M>,
        metas: Vec<LpMeta>,
        pending: Vec<warpsim_core::PendingEvent<M::Event>>,
    ) -> Initialised<M> {
        let n_lps = states.len();
        let mut sets: Vec<Pending<M::Event>> = (0..n_lps).map(|_| Pending::default()).collect();
        for event in pending {
            let _ = sets[event.dest.index()].insert(event.key, event.event);
        }
        Initialised {
            ids: (0..n_lps).map(|index| LpId::new(index as u32)).collect(),
            states: states.into_iter().zip(metas).collect(),
            pending: sets,
            remote: Vec::new(),
            nets: Vec::new(),
            failure: None,
        }
    }

    /// Where own LP `lp` is in `ids`: by subtraction when they are a range (every LP on
    /// threads, a block partition on ranks), else by binary search.
    pub(crate) fn position(&self, lp: LpId) -> Option<usize> {
        let (Some(first), Some(last)) = (self.ids.first(), self.ids.last()) else {
            return None;
        };
        if last.index() - first.index() + 1 == self.ids.len() {
            let at = lp.index().checked_sub(first.index())?;
            return (at < self.ids.len()).then_some(at);
        }
        self.ids.binary_search(&lp).ok()
    }

    /// Applies one `init`'s effects: to own LPs' pending sets, or kept for their ranks.
    fn apply(&mut self, effects: &mut Vec<Effect<M::Event>>) {
        let mut net = 0u64;
        for effect in effects.drain(..) {
            match &effect {
                Effect::Send { .. } => net += 1,
                Effect::Withdraw { .. } => net = net.saturating_sub(1),
                Effect::Move { .. } => {}
            }
            let dest = match &effect {
                Effect::Send { dest, .. }
                | Effect::Withdraw { dest, .. }
                | Effect::Move { dest, .. } => *dest,
            };
            match self.position(dest) {
                Some(at) => apply_effect(&mut self.pending[at], effect),
                None => self.remote.push(effect),
            }
        }
        self.nets.push(net);
    }

    /// Events pending in this process's own pending sets.
    pub(crate) fn pending_here(&self) -> usize {
        self.pending.iter().map(Pending::len).sum()
    }
}

/// Applies one effect of an `init` to the pending set of the LP it concerns.
pub(crate) fn apply_effect<E>(pending: &mut Pending<E>, effect: Effect<E>) {
    match effect {
        Effect::Send { key, event, .. } => {
            // Two sends of one `init` never share a key (see `EventKey`, "Uniqueness"),
            // and sends of different LPs differ in their source.
            let _ = pending.insert(key, event);
        }
        Effect::Withdraw { key, .. } => {
            pending.remove(&key);
        }
        Effect::Move { from, to, .. } => {
            if let Some(event) = pending.remove(&from) {
                let _ = pending.insert(to, event);
            }
        }
    }
}
