//! What ranks send each other: packets, their encoding, and the words of an event key in
//! the transport's all-gathers.

use serde::Serialize;
use serde::de::DeserializeOwned;
use warpsim_core::kernel_api::Effect;
use warpsim_core::{EventKey, LpId, SimError, Time, TraceHash};

use crate::message::Msg;
use crate::shared::{Counters, StopInfo, Summary};

/// Everything one rank sends another.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound(
    serialize = "E: Serialize, O: Serialize",
    deserialize = "E: DeserializeOwned, O: DeserializeOwned"
))]
pub(super) enum Packet<E, O> {
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
    /// Start-up (ground rule 1): what the sender's `init`s did to the receiver's LPs, in
    /// order; to rank 0 also their outputs, in LP order; and the sender's first failing
    /// `init`, if any (to every rank, so all know where the run stops).
    Init {
        effects: Vec<InitEffect<E>>,
        outputs: Vec<(LpId, O)>,
        failure: Option<(LpId, SimError)>,
    },
    /// Start-up: rank 0's verdict on the `init`s (after delivering their outputs): the run
    /// stops at this LP's `init`, or starts.
    Started { stop: Option<(LpId, SimError)> },
}

/// An `init`'s effect on another rank's LP (`Effect` on the wire).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound(serialize = "E: Serialize", deserialize = "E: DeserializeOwned"))]
pub(super) enum InitEffect<E> {
    Send {
        key: EventKey,
        dest: LpId,
        event: E,
    },
    Withdraw {
        dest: LpId,
        key: EventKey,
    },
    Move {
        dest: LpId,
        from: EventKey,
        to: EventKey,
    },
}

impl<E> From<Effect<E>> for InitEffect<E> {
    fn from(effect: Effect<E>) -> InitEffect<E> {
        match effect {
            Effect::Send { key, dest, event } => InitEffect::Send { key, dest, event },
            Effect::Withdraw { dest, key } => InitEffect::Withdraw { dest, key },
            Effect::Move { dest, from, to } => InitEffect::Move { dest, from, to },
        }
    }
}

impl<E> From<InitEffect<E>> for Effect<E> {
    fn from(effect: InitEffect<E>) -> Effect<E> {
        match effect {
            InitEffect::Send { key, dest, event } => Effect::Send { key, dest, event },
            InitEffect::Withdraw { dest, key } => Effect::Withdraw { dest, key },
            InitEffect::Move { dest, from, to } => Effect::Move { dest, from, to },
        }
    }
}

impl<E> InitEffect<E> {
    pub(super) fn dest(&self) -> LpId {
        match self {
            InitEffect::Send { dest, .. }
            | InitEffect::Withdraw { dest, .. }
            | InitEffect::Move { dest, .. } => *dest,
        }
    }
}

/// A finished rank's workers' summaries and its own error, if any.
pub(super) type FinalFigures<O> = (Vec<WireSummary>, Option<StopInfo<O>>);

/// A worker's [`Summary`] on the wire.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct WireSummary {
    lps: usize,
    trace: (u64, u64),
    content: (u64, u64),
    counters: Counters,
    pending_at_end: usize,
    last_commit: f64,
}

impl From<&Summary> for WireSummary {
    fn from(summary: &Summary) -> WireSummary {
        WireSummary {
            lps: summary.lps,
            trace: summary.trace.parts(),
            content: summary.content.parts(),
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
            content: TraceHash::from_parts(wire.content.0, wire.content.1),
            counters: wire.counters,
            pending_at_end: wire.pending_at_end,
            last_commit: wire.last_commit,
        }
    }
}

/// The words of an event key in an all-gather.
pub(super) const KEY_WORDS: usize = 5;

/// An event key as [`KEY_WORDS`] words whose lexicographic order is the key's order (times
/// are never negative, so their bit patterns order like the numbers).
pub(super) fn key_words(key: EventKey) -> [u64; KEY_WORDS] {
    [
        key.time.as_f64().to_bits(),
        u64::from(key.age),
        u64::from(key.src.get()),
        key.sent.as_f64().to_bits(),
        key.id,
    ]
}

pub(super) fn words_key(words: &[u64]) -> EventKey {
    EventKey::new(
        Time::new(f64::from_bits(words[0])).unwrap_or(Time::ZERO),
        words[1] as u32,
        LpId::new(words[2] as u32),
        Time::new(f64::from_bits(words[3])).unwrap_or(Time::ZERO),
        words[4],
    )
}

pub(super) fn encode<E: Serialize, O: Serialize>(packet: &Packet<E, O>) -> Vec<u8> {
    // Serialising plain data into a Vec cannot fail.
    postcard::to_allocvec(packet).unwrap_or_default()
}

/// Decodes a packet from `source`, or says why it cannot (a bug, or ranks built from
/// different code).
pub(super) fn decode<E: DeserializeOwned, O: DeserializeOwned>(
    source: usize,
    bytes: &[u8],
) -> Result<Packet<E, O>, String> {
    postcard::from_bytes(bytes).map_err(|error| {
        format!(
            "rank {source} sent a packet this rank cannot read ({error}); are all ranks the same build?"
        )
    })
}

pub(super) fn cluster_error(error: impl std::fmt::Display) -> SimError {
    SimError::Cluster(error.to_string())
}
