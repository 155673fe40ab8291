//! Generation-checked handles.

/// Names one entry of a [`PendingSet`](crate::PendingSet) while it is pending.
///
/// A handle is a slot index plus the slot's generation when the entry was pushed. Popping or
/// cancelling the entry bumps the generation, so an old handle can never reach the next entry
/// that reuses the slot. Handles are only meaningful for the set that issued them.
///
/// ```
/// use warpsim_queue::{Handle, IndexedHeap, PendingSet};
/// let mut queue = IndexedHeap::new();
/// let handle = queue.push(1u64, ()).unwrap();
/// assert_eq!(Handle::from_raw(handle.into_raw()), handle);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

impl Handle {
    /// Packs the handle into 64 bits (for storing it inside another structure).
    pub fn into_raw(self) -> u64 {
        (u64::from(self.generation) << 32) | u64::from(self.slot)
    }

    /// Unpacks a handle made by [`Handle::into_raw`]. Any value is safe to pass: a value that
    /// names no pending entry is simply a stale handle.
    pub fn from_raw(raw: u64) -> Self {
        Handle {
            slot: raw as u32,
            generation: (raw >> 32) as u32,
        }
    }
}
