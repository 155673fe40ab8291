//! The FIFO ring for keys that never decrease.

use std::collections::VecDeque;
use std::fmt;

use crate::{Handle, Key, NONE, PendingSet, PushError, PushErrorKind, RescheduleError, check_key};

/// Compaction runs when tombstones outnumber live entries by this much, so that a workload that
/// reschedules without ever popping keeps bounded memory.
const COMPACT_SLACK: usize = 64;

/// A pending-event set for keys that never decrease: a ring buffer, O(1) for every operation.
///
/// Use it where every new event is scheduled at least as late as every earlier one — a
/// constant delay (the repair queue of the pets model), or a timer wheel's overflow list.
/// A key smaller than the last key pushed is refused with [`PushErrorKind::KeyDecreased`], so a
/// model that breaks the assumption fails loudly instead of running events out of order.
///
/// ```
/// use warpsim_queue::{FifoQueue, PendingSet, PushErrorKind};
///
/// let mut queue = FifoQueue::new();
/// queue.push(10u64, "repair A").unwrap();
/// let b = queue.push(12u64, "repair B").unwrap();
/// queue.push(12u64, "repair C").unwrap();              // equal keys are fine, FIFO among them
/// let refused = queue.push(11u64, "too early").unwrap_err();
/// assert_eq!(refused.kind, PushErrorKind::KeyDecreased);
/// assert_eq!(refused.value, "too early");              // handed back
/// queue.reschedule(b, 20).unwrap();                   // moved to the back
/// assert_eq!(queue.pop(), Some((10, "repair A")));
/// assert_eq!(queue.pop(), Some((12, "repair C")));
/// assert_eq!(queue.pop(), Some((20, "repair B")));
/// ```
///
/// # Implementation
///
/// The `RingQueue` of the pets-and-feeders simulation (seed document 001): because keys arrive
/// in order, the queue is sorted by construction and needs no comparisons beyond the one that
/// checks the arrival order. Entries live in a [`VecDeque`] in push order; entries with equal
/// keys therefore pop first-in first-out (the **tie-break** is push order).
///
/// Handles index a small slab that records, for each pending entry, its absolute sequence
/// number in the ring (the ring's front has a known sequence number, so the cell is found in
/// O(1)) and a 32-bit generation bumped whenever the entry leaves, so stale handles are
/// rejected.
///
/// - **cancel** takes the value out of its cell and leaves a tombstone that [`pop`] skips;
///   [`len`](PendingSet::len) counts live entries only.
/// - **reschedule** is allowed only to a key at least as large as the last key pushed (that
///   keeps the ring sorted); it tombstones the old cell and appends a new one.
/// - When tombstones outnumber live entries the ring is compacted in one O(n) pass, so memory
///   stays proportional to the live entries (amortised O(1) per operation).
///
/// | operation | cost |
/// |---|---|
/// | `push`, `cancel`, `reschedule`, `get` | O(1) (amortised) |
/// | `pop`, `peek` | O(1) amortised (each tombstone is skipped once) |
///
/// [`pop`]: PendingSet::pop
pub struct FifoQueue<K, V> {
    /// Cells in push order; a tombstone has `value == None`.
    ring: VecDeque<Cell<K, V>>,
    /// Sequence number of `ring[0]`; cell `i` has sequence number `front_seq + i`.
    front_seq: u64,
    /// The largest key pushed so far (the last one), which every new key must reach.
    last_key: Option<K>,
    /// Handle slab.
    slots: Vec<Slot>,
    /// Head of the free list through `Slot::next_free`.
    free_head: u32,
    /// Live entries.
    live: usize,
}

struct Cell<K, V> {
    key: K,
    slot: u32,
    value: Option<V>,
}

struct Slot {
    generation: u32,
    /// Next vacant slot while this one is vacant.
    next_free: u32,
    occupied: bool,
    /// Sequence number of the entry's cell while occupied.
    seq: u64,
}

impl<K: Key, V> FifoQueue<K, V> {
    /// Creates an empty queue.
    ///
    /// ```
    /// use warpsim_queue::{FifoQueue, PendingSet};
    /// let queue: FifoQueue<u64, ()> = FifoQueue::new();
    /// assert!(queue.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// Creates an empty queue with room for `capacity` entries before it reallocates.
    ///
    /// ```
    /// use warpsim_queue::{FifoQueue, PendingSet};
    /// let mut queue = FifoQueue::with_capacity(64);
    /// queue.push(5u64, ()).unwrap();
    /// assert_eq!(queue.len(), 1);
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        FifoQueue {
            ring: VecDeque::with_capacity(capacity),
            front_seq: 0,
            last_key: None,
            slots: Vec::with_capacity(capacity),
            free_head: NONE,
            live: 0,
        }
    }

    /// The largest key pushed so far; the next push must not be smaller.
    ///
    /// ```
    /// use warpsim_queue::{FifoQueue, PendingSet};
    /// let mut queue = FifoQueue::new();
    /// assert_eq!(queue.last_key(), None);
    /// queue.push(3u64, ()).unwrap();
    /// queue.pop();
    /// assert_eq!(queue.last_key(), Some(3));       // remembered after the pop
    /// ```
    pub fn last_key(&self) -> Option<K> {
        self.last_key
    }

    fn check_monotone(&self, key: &K) -> Result<(), PushErrorKind> {
        check_key(key)?;
        match self.last_key {
            Some(last) if *key < last => Err(PushErrorKind::KeyDecreased),
            _ => Ok(()),
        }
    }

    /// Ring index of a live handle's cell, or `None` when the handle is stale.
    #[inline]
    fn live_index(&self, handle: Handle) -> Option<usize> {
        let slot = self.slots.get(handle.slot() as usize)?;
        (slot.occupied && slot.generation == handle.generation())
            .then(|| (slot.seq - self.front_seq) as usize)
    }

    /// Appends a cell for `slot` and records its sequence number.
    #[inline]
    fn append(&mut self, key: K, slot: u32, value: V) {
        self.slots[slot as usize].seq = self.front_seq + self.ring.len() as u64;
        self.ring.push_back(Cell {
            key,
            slot,
            value: Some(value),
        });
        self.last_key = Some(key);
    }

    fn free_slot(&mut self, slot: u32) {
        let entry = &mut self.slots[slot as usize];
        entry.generation = entry.generation.wrapping_add(1);
        entry.occupied = false;
        entry.next_free = self.free_head;
        self.free_head = slot;
        self.live -= 1;
    }

    /// Drops tombstones from the front so that `ring.front()` is live (or the ring is empty).
    #[inline]
    fn skip_tombstones(&mut self) {
        while self.ring.front().is_some_and(|cell| cell.value.is_none()) {
            self.ring.pop_front();
            self.front_seq += 1;
        }
    }

    /// Rebuilds the ring without tombstones once they dominate (see [`COMPACT_SLACK`]).
    fn maybe_compact(&mut self) {
        let tombstones = self.ring.len() - self.live;
        if tombstones <= self.live + COMPACT_SLACK {
            return;
        }
        self.ring.retain(|cell| cell.value.is_some());
        for (i, cell) in self.ring.iter().enumerate() {
            self.slots[cell.slot as usize].seq = self.front_seq + i as u64;
        }
    }
}

impl<K: Key, V> Default for FifoQueue<K, V> {
    /// Same as [`FifoQueue::new`].
    ///
    /// ```
    /// use warpsim_queue::{FifoQueue, PendingSet};
    /// let queue: FifoQueue<u64, ()> = Default::default();
    /// assert_eq!(queue.len(), 0);
    /// ```
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Key, V> PendingSet<K, V> for FifoQueue<K, V> {
    fn push(&mut self, key: K, value: V) -> Result<Handle, PushError<K, V>> {
        if let Err(kind) = self.check_monotone(&key) {
            return Err(PushError { kind, key, value });
        }
        let slot = if self.free_head != NONE {
            let slot = self.free_head;
            self.free_head = self.slots[slot as usize].next_free;
            slot
        } else {
            if self.slots.len() >= NONE as usize {
                return Err(PushError {
                    kind: PushErrorKind::Full,
                    key,
                    value,
                });
            }
            self.slots.push(Slot {
                generation: 0,
                next_free: NONE,
                occupied: false,
                seq: 0,
            });
            (self.slots.len() - 1) as u32
        };
        self.slots[slot as usize].occupied = true;
        self.live += 1;
        self.append(key, slot, value);
        Ok(Handle::new(slot, self.slots[slot as usize].generation))
    }

    fn pop(&mut self) -> Option<(K, V)> {
        while let Some(cell) = self.ring.pop_front() {
            self.front_seq += 1;
            if let Some(value) = cell.value {
                self.free_slot(cell.slot);
                return Some((cell.key, value));
            }
        }
        None
    }

    fn peek(&mut self) -> Option<(K, &V)> {
        self.skip_tombstones();
        let cell = self.ring.front()?;
        cell.value.as_ref().map(|v| (cell.key, v))
    }

    fn cancel(&mut self, handle: Handle) -> Option<(K, V)> {
        let index = self.live_index(handle)?;
        let cell = &mut self.ring[index];
        let value = cell.value.take().expect("a live handle names a live cell");
        let key = cell.key;
        self.free_slot(handle.slot());
        self.maybe_compact();
        Some((key, value))
    }

    fn reschedule(&mut self, handle: Handle, new_key: K) -> Result<K, RescheduleError> {
        let index = self
            .live_index(handle)
            .ok_or(RescheduleError::StaleHandle)?;
        self.check_monotone(&new_key)
            .map_err(RescheduleError::KeyRejected)?;
        let cell = &mut self.ring[index];
        let old_key = cell.key;
        let value = cell.value.take().expect("a live handle names a live cell");
        self.append(new_key, handle.slot(), value);
        self.maybe_compact();
        Ok(old_key)
    }

    fn get(&self, handle: Handle) -> Option<(K, &V)> {
        let cell = &self.ring[self.live_index(handle)?];
        cell.value.as_ref().map(|v| (cell.key, v))
    }

    fn get_mut(&mut self, handle: Handle) -> Option<(K, &mut V)> {
        let index = self.live_index(handle)?;
        let cell = &mut self.ring[index];
        cell.value.as_mut().map(|v| (cell.key, v))
    }

    fn len(&self) -> usize {
        self.live
    }
}

impl<K: Key, V> fmt::Debug for FifoQueue<K, V> {
    /// Summarises the queue: live entries, ring length (including tombstones), last key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FifoQueue")
            .field("len", &self.live)
            .field("ring_len", &self.ring.len())
            .field("last_key", &self.last_key)
            .finish()
    }
}
