//! The part of a rank's gateway that arriving packets touch: routing messages to the
//! rank's workers, GVT colours and counts, outputs and final figures gathered on rank 0.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;

use crossbeam_channel::Sender;
use serde::de::DeserializeOwned;
use warpsim_core::{EventKey, LpId, SimError};

use super::inplace::{MORE, PART_TAG};
use super::wire::{FinalFigures, Packet, decode};
use crate::gvt::{GvtPort, GvtShared};
use crate::message::{Msg, key_max, route_of};

/// The gateway's state that arriving packets touch.
pub(super) struct Gate<'a, E, O> {
    pub(super) rank: usize,
    pub(super) threads: usize,
    pub(super) route: &'a [AtomicU64],
    pub(super) peers: &'a [Sender<Vec<Msg<E>>>],
    pub(super) gvt: &'a GvtShared<EventKey>,
    pub(super) port: GvtPort<EventKey>,
    /// This rank's GVT colour.
    pub(super) epoch: u64,
    /// The newest colour seen on an arriving packet.
    pub(super) newest_seen: u64,
    /// Per colour: event packets sent minus received, by this rank.
    pub(super) balance: BTreeMap<u64, i64>,
    pub(super) total_sent: u64,
    pub(super) total_received: u64,
    /// Smallest stamp sent since this rank changed colour.
    pub(super) red_min: EventKey,
    /// Per local worker: messages to forward.
    pub(super) split: Vec<Vec<Msg<E>>>,
    /// Rank 0: per rank, the bound below which its outputs are all here.
    pub(super) output_bounds: Vec<EventKey>,
    pub(super) outputs: Vec<(EventKey, LpId, O)>,
    pub(super) finals: Vec<Option<FinalFigures<O>>>,
    pub(super) done: Option<Option<SimError>>,
    /// Rank 0, at a checkpoint taken in place: the packets of copies received (raw, they
    /// need the model's type; `inplace.rs`), and per rank whether its last one came.
    pub(super) parts: Vec<(usize, Vec<u8>)>,
    pub(super) parts_done: Vec<bool>,
    /// A packet that could not be decoded (a bug, or ranks built from different code).
    pub(super) fault: Option<String>,
}

impl<E: DeserializeOwned, O: DeserializeOwned> Gate<'_, E, O> {
    pub(super) fn arrived(&mut self, source: usize, bytes: Vec<u8>) {
        if bytes.first() == Some(&PART_TAG) {
            if let Some(done) = self.parts_done.get_mut(source) {
                *done = bytes.get(1) != Some(&MORE);
            }
            self.parts.push((source, bytes));
            return;
        }
        match decode(source, &bytes) {
            Ok(packet) => self.handle(source, packet),
            Err(fault) => {
                self.fault.get_or_insert(fault);
            }
        }
    }

    /// Handles one packet from `source`.
    pub(super) fn handle(&mut self, source: usize, packet: Packet<E, O>) {
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
            Packet::Init { .. } | Packet::Started { .. } => {
                self.fault.get_or_insert_with(|| {
                    format!("rank {source} sent a start-up packet after the start")
                });
            }
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
