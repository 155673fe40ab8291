//! What ranks send each other: packets, their encoding, and the words of an event key in
//! the transport's all-gathers.

use serde::Serialize;
use serde::de::DeserializeOwned;
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

pub(super) fn cluster_error(error: impl std::fmt::Display) -> SimError {
    SimError::Cluster(error.to_string())
}
