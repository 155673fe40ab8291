//! Starting a rank (ground rule 1): `init` on its own LPs only, the exchange of what those
//! `init`s did to other ranks' LPs, and one verdict on every rank.
//!
//! # Ground rules
//!
//! 1. **Same events, same keys.** An `init`'s sends get their keys from the LP's id and the
//!    run's seed alone, so an LP initialised on its own rank sends exactly what it would
//!    send on one process. Its effects on other ranks' LPs (sends, and the withdrawals and
//!    moves of those sends) travel in one `Init` packet per destination rank, in order.
//!    Effects of different LPs' `init`s touch different events (an LP can withdraw or move
//!    only what it sent), so applying each rank's list in order gives every pending set what
//!    the sequential kernel gives it.
//! 2. **Every rank hears from every rank**, even with nothing to say, so a rank knows when
//!    start-up is complete; packets from one rank keep their order, so its `Init` comes
//!    before anything it sends once running (kept in `early` for the gateway).
//! 3. **One verdict.** Each `Init` carries its sender's first failing `init`. Rank 0 merges
//!    the ranks' `init` outputs, delivers them in LP order up to the first failure (a
//!    panicking `init` delivers nothing, a failing one what it emitted), and tells every
//!    rank where the run stops (its sink may fail first). Then one all-reduce sums the
//!    events pending up to that point (the partial report's `pending_at_end`, as
//!    sequentially) and in all (the memory check), so every rank reaches the same verdict.

use std::time::Instant;

use serde::Serialize;
use serde::de::DeserializeOwned;
use warpsim_core::kernel_api::{Effect, deliver_guarded};
use warpsim_core::{Committed, EventKey, LogicalProcess, LpId, OutputSink, SimError};

use super::wire::{InitEffect, Packet, cluster_error, decode, encode};
use super::{IDLE_WAIT, Reduction, Transport};
use crate::config::TimeWarp;
use crate::setup::{InitOutputs, Initialised, Placement, apply_effect, initialise};

/// One rank's `Init` packet, as received.
type InitFrom<E, O> = (Vec<InitEffect<E>>, Vec<(LpId, O)>, Option<(LpId, SimError)>);

/// What arrives while a rank starts.
pub(super) struct Arrivals<E, O> {
    inits: Vec<Option<InitFrom<E, O>>>,
    started: Option<Option<(LpId, SimError)>>,
    /// Packets of ranks that already run, for the gateway.
    pub(super) early: Vec<(usize, Packet<E, O>)>,
    fault: Option<String>,
}

impl<E: DeserializeOwned, O: DeserializeOwned> Arrivals<E, O> {
    pub(super) fn new(ranks: usize) -> Arrivals<E, O> {
        Arrivals {
            inits: (0..ranks).map(|_| None).collect(),
            started: None,
            early: Vec::new(),
            fault: None,
        }
    }

    pub(super) fn arrived(&mut self, source: usize, bytes: Vec<u8>) {
        match decode(source, &bytes) {
            Ok(Packet::Init {
                effects,
                outputs,
                failure,
            }) => self.inits[source] = Some((effects, outputs, failure)),
            Ok(Packet::Started { stop }) => self.started = Some(stop),
            Ok(packet) => self.early.push((source, packet)),
            Err(fault) => {
                self.fault.get_or_insert(fault);
            }
        }
    }
}

impl TimeWarp {
    /// Initialises this rank's own LPs of `lps` (the others are dropped unbuilt into any
    /// state), exchanges `init` effects and outputs with the other ranks and reaches the
    /// start-up verdict (see the module's ground rules). On an error, also says how many
    /// events were pending (the partial report's `pending_at_end`).
    pub(super) fn start_rank<M, S, T>(
        &self,
        lps: Vec<M>,
        sink: &mut S,
        transport: &mut T,
        placement: Placement,
        arrivals: &mut Arrivals<M::Event, M::Output>,
    ) -> Result<Initialised<M>, (SimError, usize)>
    where
        M: LogicalProcess,
        M::Event: Serialize + DeserializeOwned,
        M::Output: Serialize + DeserializeOwned,
        S: OutputSink<M::Output>,
        T: Transport,
    {
        let Placement { rank, ranks, .. } = placement;
        let n_lps = lps.len();
        let mut own: Vec<(LpId, M)> = lps
            .into_iter()
            .enumerate()
            .filter(|(index, _)| self.place(*index, n_lps, placement).0 == rank)
            .map(|(index, model)| (LpId::new(index as u32), model))
            .collect();
        // Never keep the whole model's allocation (should `collect` have reused it).
        own.shrink_to_fit();
        let mut collected = InitOutputs::<S, M::Output>::Collect(Vec::new());
        let mut init = initialise(&self.config, n_lps as u32, own, &mut collected);
        let InitOutputs::Collect(mut outputs) = collected else {
            unreachable!("collected above")
        };

        // Ground rule 2: one packet to every other rank.
        let mut effects: Vec<Vec<InitEffect<M::Event>>> = (0..ranks).map(|_| Vec::new()).collect();
        for effect in init.remote.drain(..) {
            let dest = match &effect {
                Effect::Send { dest, .. }
                | Effect::Withdraw { dest, .. }
                | Effect::Move { dest, .. } => dest.index(),
            };
            effects[self.place(dest, n_lps, placement).0].push(effect.into());
        }
        let mut packets = Vec::with_capacity(ranks);
        for (other, effects) in effects.into_iter().enumerate() {
            if other == rank {
                continue;
            }
            let packet: Packet<M::Event, M::Output> = Packet::Init {
                effects,
                outputs: if other == 0 {
                    std::mem::take(&mut outputs)
                } else {
                    Vec::new()
                },
                failure: init.failure.clone(),
            };
            packets.push((other, encode(&packet)));
        }
        let unreadable = |arrivals: &mut Arrivals<M::Event, M::Output>| {
            arrivals.fault.take().map(|fault| (cluster_error(fault), 0))
        };
        transport
            .send_all(&mut packets, &mut |source, bytes| {
                arrivals.arrived(source, bytes);
            })
            .map_err(|error| (cluster_error(error), 0))?;
        wait(transport, arrivals, "every rank's init", |arrivals| {
            arrivals
                .inits
                .iter()
                .enumerate()
                .all(|(other, init)| other == rank || init.is_some())
        })?;
        if let Some(error) = unreadable(arrivals) {
            return Err(error);
        }

        // Ground rule 1: apply what the others' inits did here; find the first failure.
        let mut failure = init.failure.take();
        let mut their_outputs = Vec::new();
        for (source, slot) in arrivals.inits.iter_mut().enumerate() {
            let Some((effects, outputs, their_failure)) = slot.take() else {
                continue;
            };
            for effect in effects {
                let Some(at) = init.position(effect.dest()) else {
                    let error = format!(
                        "rank {source} sent an init event for {}, which this rank does not own",
                        effect.dest()
                    );
                    return Err((cluster_error(error), 0));
                };
                apply_effect(&mut init.pending[at], effect.into());
            }
            their_outputs.extend(outputs);
            if let Some(theirs) = their_failure
                && failure.as_ref().is_none_or(|ours| theirs.0 < ours.0)
            {
                failure = Some(theirs);
            }
        }

        // Ground rule 3: rank 0 delivers and decides; the others hear its verdict.
        let stop = if rank == 0 {
            outputs.extend(their_outputs);
            // One LP's outputs all come from one rank, in order: a stable sort keeps it.
            outputs.sort_by_key(|(lp, _)| *lp);
            let mut stop = failure;
            for (lp, output) in outputs {
                if stop.as_ref().is_some_and(|(at, _)| lp > *at) {
                    break;
                }
                let key = EventKey::init(lp);
                if let Err(error) = deliver_guarded(&mut *sink, Committed { key, lp, output }) {
                    stop = Some((lp, error));
                    break;
                }
            }
            let mut packets: Vec<(usize, Vec<u8>)> = (1..ranks)
                .map(|other| {
                    let packet: Packet<M::Event, M::Output> =
                        Packet::Started { stop: stop.clone() };
                    (other, encode(&packet))
                })
                .collect();
            transport
                .send_all(&mut packets, &mut |source, bytes| {
                    arrivals.arrived(source, bytes);
                })
                .map_err(|error| (cluster_error(error), 0))?;
            stop
        } else {
            wait(
                transport,
                arrivals,
                "rank 0's start-up verdict",
                |arrivals| arrivals.started.is_some(),
            )?;
            arrivals.started.take().flatten()
        };
        if let Some(error) = unreadable(arrivals) {
            return Err(error);
        }

        let before_stop: u64 = match &stop {
            Some((at, _)) => init
                .ids
                .iter()
                .zip(&init.nets)
                .take_while(|(lp, _)| *lp <= at)
                .map(|(_, net)| net)
                .sum(),
            None => 0,
        };
        let mine = [before_stop, init.pending_here() as u64];
        let sums = transport
            .all_reduce(&mine, Reduction::Sum, &mut |source, bytes| {
                arrivals.arrived(source, bytes);
            })
            .map_err(|error| (cluster_error(error), 0))?;
        if let Some(error) = unreadable(arrivals) {
            return Err(error);
        }
        if let Some((_, error)) = stop {
            return Err((error, sums[0] as usize));
        }
        if let Err(error) = self.check_memory::<M>(sums[1] as usize) {
            return Err((error, sums[1] as usize));
        }
        Ok(init)
    }
}

/// Checks once, before any event runs, that the transport's all-reduce minimum is unsigned
/// (MPICH 4.0's `MPI_MIN` on `MPI_UINT64_T` compared words as signed). GVT rounds rely on
/// it: `u64::MAX` means "not taking part", and a signed minimum would pick it over every
/// real key and let GVT pass events that can still roll back. A round also checks its
/// result against its own contribution, but only its exact rounds can see the fault, and a
/// run may finish without one; this probe sees it in every run of two ranks or more.
pub(super) fn probe_minimum<E, O, T>(
    transport: &mut T,
    arrivals: &mut Arrivals<E, O>,
    placement: Placement,
) -> Result<(), SimError>
where
    E: DeserializeOwned,
    O: DeserializeOwned,
    T: Transport,
{
    let (rank, ranks) = (placement.rank, placement.ranks);
    // Rank 0 offers 1 in the first word and the top value in the second, every other rank
    // the reverse: a right minimum is 1 in both (with one rank, the top value in the
    // second); a signed one is the top value, read as -1.
    let mine = if rank == 0 {
        [1, u64::MAX]
    } else {
        [u64::MAX, 1]
    };
    let expected = [1, if ranks > 1 { 1 } else { u64::MAX }];
    let least = transport
        .all_reduce(&mine, Reduction::Min, &mut |source, bytes| {
            arrivals.arrived(source, bytes);
        })
        .map_err(cluster_error)?;
    if let Some(fault) = arrivals.fault.take() {
        return Err(cluster_error(fault));
    }
    if least[..] != expected[..] {
        return Err(cluster_error(format!(
            "the transport's all-reduce minimum of unsigned words is wrong (got {least:?}, expected {expected:?}; MPICH 4.0 compared them as signed), and GVT cannot be trusted with it"
        )));
    }
    Ok(())
}

/// Receives until `done` says so, or fails once the other ranks have been silent for the
/// transport's timeout.
fn wait<E, O, T>(
    transport: &mut T,
    arrivals: &mut Arrivals<E, O>,
    what: &str,
    done: impl Fn(&Arrivals<E, O>) -> bool,
) -> Result<(), (SimError, usize)>
where
    E: DeserializeOwned,
    O: DeserializeOwned,
    T: Transport,
{
    let timeout = transport.timeout();
    let mut last_answer = Instant::now();
    while !done(arrivals) && arrivals.fault.is_none() {
        let received = transport
            .receive(&mut |source, bytes| arrivals.arrived(source, bytes))
            .map_err(|error| (cluster_error(error), 0))?;
        if received > 0 {
            last_answer = Instant::now();
        } else if last_answer.elapsed() > timeout {
            let error = format!("{what} did not come within {timeout:?} (did a rank die or hang?)");
            return Err((cluster_error(error), 0));
        } else {
            std::thread::sleep(IDLE_WAIT);
        }
    }
    Ok(())
}
