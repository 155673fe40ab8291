//! Messages between LPs on different workers (and ranks), and where each LP lives.

use std::sync::atomic::{AtomicU64, Ordering};

use warpsim_core::{EventKey, LpId, Time};

/// The key above every real event: "no event".
pub(crate) fn key_max() -> EventKey {
    let max = Time::new(f64::MAX).unwrap_or(Time::ZERO);
    EventKey::new(max, u32::MAX, LpId::new(u32::MAX), max, u64::MAX)
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
    /// Undoes a `Withdraw` made by the event `cause`.
    Restore {
        key: EventKey,
        dest: LpId,
        cause: EventKey,
    },
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

    /// The smallest key of an event the message touches: what it can roll back, and what a
    /// promise must cover (`worker/promise.rs`).
    pub(crate) fn touches(&self) -> EventKey {
        match self {
            Msg::Event { key, .. }
            | Msg::Anti { key, .. }
            | Msg::Withdraw { key, .. }
            | Msg::Restore { key, .. } => *key,
            Msg::Move { from, to, .. } => (*from).min(*to),
        }
    }

    /// Its timestamp for GVT: what it touches, and for a `Restore` the withdrawal's cause
    /// too. The receiver keeps a withdrawn event only until GVT passes the cause (the cancel
    /// is then final), so a restore in flight must hold GVT at or below it: stamped with
    /// the event's key alone, it let GVT pass the cause of a cancel whose cause an
    /// antimessage had just annihilated, the receiver dropped the event as cancelled for
    /// good, and the restore found nothing (one run of the chaos model in 3,000–20,000 lost an
    /// event and its descendants; `tests/equivalence.rs`, "chaos").
    pub(crate) fn stamp(&self) -> EventKey {
        match self {
            Msg::Restore { key, cause, .. } => (*key).min(*cause),
            other => other.touches(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(time: f64, id: u64) -> EventKey {
        let time = Time::new(time).unwrap();
        EventKey::new(time, 0, LpId::new(0), Time::ZERO, id)
    }

    /// A restore in flight holds GVT at its cancel's cause, below the event it restores:
    /// the receiver drops a withdrawn event once GVT passes the cause.
    #[test]
    fn a_restore_is_stamped_with_its_cause_and_touches_its_event() {
        let restore: Msg<u32> = Msg::Restore {
            key: key(2.6, 1),
            dest: LpId::new(8),
            cause: key(2.5, 2),
        };
        assert_eq!(restore.stamp(), key(2.5, 2));
        assert_eq!(restore.touches(), key(2.6, 1));
        let moved: Msg<u32> = Msg::Move {
            dest: LpId::new(8),
            from: key(3.0, 1),
            to: key(1.0, 1),
        };
        assert_eq!(moved.stamp(), key(1.0, 1));
        assert_eq!(moved.touches(), key(1.0, 1));
    }
}
