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
//
// One `u64` (the generation in the high half, the slot in the low half, as `into_raw` gives
// it) rather than two `u32` fields: a handle built from two 4-byte stores and read back as
// one 8-byte word (`into_raw`, or a copy) missed the store-to-load forward, a stall of a dozen
// cycles on every push of the sequential kernel (feeding pets, issue 16, `perf annotate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Handle {
    raw: u64,
}

impl Handle {
    #[inline(always)]
    pub(crate) fn new(slot: u32, generation: u32) -> Self {
        Handle {
            raw: (u64::from(generation) << 32) | u64::from(slot),
        }
    }

    /// The slab slot the handle names.
    #[inline(always)]
    pub(crate) fn slot(self) -> u32 {
        self.raw as u32
    }

    /// The slot's generation when the entry was pushed.
    #[inline(always)]
    pub(crate) fn generation(self) -> u32 {
        (self.raw >> 32) as u32
    }

    /// Packs the handle into 64 bits (for storing it inside another structure).
    #[inline(always)]
    pub fn into_raw(self) -> u64 {
        self.raw
    }

    /// Unpacks a handle made by [`Handle::into_raw`]. Any value is safe to pass: a value that
    /// names no pending entry is simply a stale handle.
    #[inline(always)]
    pub fn from_raw(raw: u64) -> Self {
        Handle { raw }
    }
}

/// Slot first, then generation.
impl Ord for Handle {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.slot(), self.generation()).cmp(&(other.slot(), other.generation()))
    }
}

impl PartialOrd for Handle {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
