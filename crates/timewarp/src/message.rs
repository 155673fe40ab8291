//! Messages between LPs on different workers (and ranks), and where each LP lives.

use std::sync::atomic::{AtomicU64, Ordering};

use warpsim_core::{EventKey, LpId, Time};

/// The key above every real event: "no event".
pub(crate) fn key_max() -> EventKey {
    EventKey::new(
        Time::new(f64::MAX).unwrap_or(Time::ZERO),
        u32::MAX,
        LpId::new(u32::MAX),
        u64::MAX,
    )
}

/// A message between LPs. Each carries the exact key of the event it concerns.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum Msg<E> {
    /// A new event.
    Event { key: EventKey, dest: LpId, event: E },
    /// Cancels an `Event` (the sender undid the event that sent it).
    Anti { key: EventKey, dest: LpId },
    /// Model `cancel`: the event leaves `pending` for `withdrawn`, until GVT passes `cause`.
    Withdraw {
        key: EventKey,
        dest: LpId,
        cause: EventKey,
    },
    /// Undoes a `Withdraw`.
    Restore { key: EventKey, dest: LpId },
    /// Model `reschedule` (and its undoing, with `from` and `to` swapped).
    Move {
        dest: LpId,
        from: EventKey,
        to: EventKey,
    },
}

impl<E> Msg<E> {
    pub(crate) fn dest(&self) -> LpId {
        match self {
            Msg::Event { dest, .. }
            | Msg::Anti { dest, .. }
            | Msg::Withdraw { dest, .. }
            | Msg::Restore { dest, .. }
            | Msg::Move { dest, .. } => *dest,
        }
    }

    /// The smallest key the message touches: its timestamp for GVT.
    pub(crate) fn stamp(&self) -> EventKey {
        match self {
            Msg::Event { key, .. }
            | Msg::Anti { key, .. }
            | Msg::Withdraw { key, .. }
            | Msg::Restore { key, .. } => *key,
            Msg::Move { from, to, .. } => (*from).min(*to),
        }
    }
}

/// Where each LP lives: (worker, index in that worker's LPs).
/// Where each LP lives: (worker, index in that worker's LPs), packed in one atomic because
/// load balancing moves LPs (only while every worker is stopped in a migration, between
/// barriers, which order the stores before anyone reads again).
pub(crate) type Route = [AtomicU64];

/// A route entry.
pub(crate) fn route_entry(worker: u32, index: u32) -> AtomicU64 {
    AtomicU64::new((u64::from(worker) << 32) | u64::from(index))
}

/// Reads LP `lp`'s route entry.
#[inline]
pub(crate) fn route_of(route: &Route, lp: usize) -> (u32, u32) {
    let packed = route[lp].load(Ordering::Relaxed);
    ((packed >> 32) as u32, packed as u32)
}
