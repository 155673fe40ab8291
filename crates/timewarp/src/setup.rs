//! Setting up a run, the same for threads and for the ranks of a distributed run: `init` on
//! every LP, the memory check, placing the LPs on workers (and ranks), the shared state and
//! the channels, and starting the workers.

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
use crate::message::{Msg, Route, key_max, route_entry};
use crate::pending::Pending;
use crate::shared::{Settings, Shared, StopInfo, ToCoordinator, pending_bytes};
use crate::watch::default_hook;
use crate::worker::{LpState, Transfer, Worker, WorkerParts};

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
    /// Each local worker's LPs.
    pub(crate) owned: Vec<Vec<LpState<M>>>,
    pub(crate) settings: Settings,
    pub(crate) shared: Shared<M::Output>,
    /// One inbox per worker, and the gateway's last when there is one.
    pub(crate) senders: Vec<Sender<Vec<Msg<M::Event>>>>,
    pub(crate) receivers: Vec<Receiver<Vec<Msg<M::Event>>>>,
    pub(crate) transfer: Mutex<Vec<Transfer<M>>>,
}

impl TimeWarp {
    /// Runs `init`, checks the memory budget and places the LPs (ground rule 1 of
    /// `cluster`: LP `i` goes to global worker `partition.owner(i, n, ranks × threads)`,
    /// which lives on rank `worker / threads`). On an error, also says how many events were
    /// pending (the partial report's `pending_at_end`).
    pub(crate) fn prepare<M, S>(
        &self,
        lps: Vec<M>,
        sink: Option<&mut S>,
        placement: Placement,
    ) -> Result<Prepared<M>, (SimError, usize)>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        let Placement {
            rank,
            ranks,
            threads,
            gateway,
        } = placement;
        let n_lps = u32::try_from(lps.len()).unwrap_or(u32::MAX);
        let Initialised { states, pending } = initialise(&self.config, n_lps, lps, sink)?;
        if let Err(error) = self.check_memory::<M>(&pending) {
            return Err((error, pending.iter().map(Pending::len).sum()));
        }
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
        Ok(Prepared {
            route,
            owned,
            settings: self.settings(n_lps, threads),
            shared: Shared::new(gvt, threads, participants, hook),
            senders,
            receivers,
            transfer: Mutex::new(Vec::new()),
        })
    }
}

/// What every worker of a run shares, to start them.
pub(crate) struct Crew<'env, M: LogicalProcess> {
    pub(crate) route: &'env Route,
    pub(crate) settings: &'env Settings,
    pub(crate) shared: &'env Shared<M::Output>,
    pub(crate) transfer: &'env Mutex<Vec<Transfer<M>>>,
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
    pub(crate) fn spawn<'scope>(
        &self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        name: &str,
        owned: Vec<Vec<LpState<M>>>,
        inboxes: Vec<Receiver<Vec<Msg<M::Event>>>>,
        peers: &[Sender<Vec<Msg<M::Event>>>],
        to_coordinator: Sender<ToCoordinator<M::Output>>,
    ) -> usize {
        let values = size_of::<M::Event>() + size_of::<M>() + size_of::<M::Output>();
        let stack = (8usize << 20).saturating_add(values.saturating_mul(48));
        let mut running = 0;
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
                .spawn_scoped(scope, move || Worker::new(parts).run());
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
    /// Refuses a memory budget smaller than the events pending at the start (see
    /// [`TimeWarp::memory`]). Later the budget only throttles, so the same run always ends
    /// the same way.
    pub(crate) fn check_memory<M: LogicalProcess>(
        &self,
        pending: &[Pending<M::Event>],
    ) -> Result<(), SimError> {
        let Some(budget) = self.memory else {
            return Ok(());
        };
        let events: usize = pending.iter().map(Pending::len).sum();
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
    pub(crate) fn settings(&self, n_lps: u32, threads: usize) -> Settings {
        Settings {
            lazy: self.cancellation == crate::Cancellation::Lazy,
            checkpoint: self.checkpoint_interval,
            adaptive_checkpoint: self.adaptive_checkpoint,
            window: self.window,
            adaptive_window: self.adaptive_window && self.window.is_none(),
            memory: self.memory,
            gvt_interval: self.gvt_interval,
            balance: self.load_balancing && threads > 1,
            end_time: self.config.end_time,
            n_lps,
            content_hash: self.config.content_hash,
        }
    }
}

/// Runs `init` on every LP, in LP order as on the sequential kernel. Its effects are final:
/// they are applied straight to the LPs' starting pending sets. Outputs go to `sink` (a
/// distributed run passes it on one rank only). On an error, also says how many events
/// were pending when it happened (the partial report's `pending_at_end`, as sequentially).
pub(crate) fn initialise<M, S>(
    config: &RunConfig,
    n_lps: u32,
    lps: Vec<M>,
    mut sink: Option<&mut S>,
) -> Result<Initialised<M>, (SimError, usize)>
where
    M: LogicalProcess,
    S: OutputSink<M::Output>,
{
    let mut states: Vec<(M, LpMeta)> = Vec::with_capacity(lps.len());
    // `Pending` keeps an LP's first event inline: a map per LP would allocate a node for
    // each, hundreds of bytes per LP at the peak of the set-up.
    let mut pending: Vec<Pending<M::Event>> = (0..lps.len()).map(|_| Pending::default()).collect();
    let mut effects = Vec::new();
    let mut outputs = Vec::new();
    let mut error = None;
    for (index, mut model) in lps.into_iter().enumerate() {
        let lp = LpId::new(index as u32);
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
        let pending_now =
            |pending: &[Pending<M::Event>]| pending.iter().map(Pending::len).sum::<usize>();
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| model.init(&mut ctx))) {
            let message = panic_message(payload.as_ref());
            let error = SimError::ModelPanic {
                lp,
                time: key.time,
                message,
            };
            apply_init_effects(&mut pending, &mut effects);
            return Err((error, pending_now(&pending)));
        }
        for output in outputs.drain(..) {
            if let Some(sink) = sink.as_mut()
                && let Err(sink_error) = deliver_guarded(&mut **sink, Committed { key, lp, output })
            {
                error = Some(sink_error);
                break;
            }
        }
        if let Some(error) = error.take() {
            // Like the sequential kernel, which applies a failing init's sends up to the
            // failure: apply them before counting.
            apply_init_effects(&mut pending, &mut effects);
            return Err((error, pending_now(&pending)));
        }
        apply_init_effects(&mut pending, &mut effects);
        states.push((model, meta));
    }
    Ok(Initialised { states, pending })
}

/// Applies what an `init` did to the starting pending sets.
fn apply_init_effects<E>(pending: &mut [Pending<E>], effects: &mut Vec<Effect<E>>) {
    for effect in effects.drain(..) {
        match effect {
            Effect::Send { key, dest, event } => {
                // Two sends of one `init` never share a key (see `EventKey`, "Uniqueness"),
                // and sends of different LPs differ in their source.
                let _ = pending[dest.index()].insert(key, event);
            }
            Effect::Withdraw { dest, key } => {
                pending[dest.index()].remove(&key);
            }
            Effect::Move { dest, from, to } => {
                if let Some(event) = pending[dest.index()].remove(&from) {
                    let _ = pending[dest.index()].insert(to, event);
                }
            }
        }
    }
}

/// The LPs after `init`, with their starting pending events.
pub(crate) struct Initialised<M: LogicalProcess> {
    pub(crate) states: Vec<(M, LpMeta)>,
    pub(crate) pending: Vec<Pending<M::Event>>,
}
