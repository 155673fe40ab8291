//! The indexed d-ary heap.

use std::fmt;

use crate::{Handle, Key, NONE, PendingSet, PushError, PushErrorKind, RescheduleError, check_key};

/// Arity of the heap. Four children per node halves the depth of a binary heap and keeps the
/// children of one node in one or two cache lines; measured against 2 and 8 in
/// `benches/benches/queue_hold.rs` (see `BENCHMARKS.md`).
const ARITY: usize = 4;

// `sift_down` picks the smallest of four children with a hand-written tournament.
const _: () = assert!(ARITY == 4);

/// A pending-event set kept as an indexed d-ary min-heap, with cancel and reschedule by handle.
///
/// ```
/// use warpsim_queue::{IndexedHeap, PendingSet};
///
/// let mut queue = IndexedHeap::with_capacity(16);
/// let late = queue.push(30u64, "late").unwrap();
/// queue.push(20u64, "middle").unwrap();
/// assert_eq!(queue.reschedule(late, 10), Ok(30));
/// assert_eq!(queue.get(late), Some((10, &"late")));
/// assert_eq!(queue.pop(), Some((10, "late")));
/// assert_eq!(queue.pop(), Some((20, "middle")));
/// assert_eq!(queue.pop(), None);
/// ```
///
/// # Implementation
///
/// A 4-ary min-heap (the arity was chosen by measurement) over an array of `(key, slot)`
/// pairs, so that sifting compares keys without following a pointer. The values live in a
/// slab: a `Vec` of slots plus an intrusive free list. Each occupied slot records its entry's
/// current position in the heap array, which every sift step keeps up to date; that position is
/// what makes [`cancel`](PendingSet::cancel) and [`reschedule`](PendingSet::reschedule)
/// O(log n): the entry is found in O(1) and then sifted up or down from where it is.
///
/// | operation | cost |
/// |---|---|
/// | `push`, `pop`, `cancel`, `reschedule` | O(log n) |
/// | `peek`, `get`, `len` | O(1) |
///
/// Each slot carries a 32-bit generation that is bumped when its entry is popped or cancelled.
/// A [`Handle`] stores the generation it was issued with, so a stale handle is recognised and
/// rejected; it could only be confused with a new entry after the same slot has been reused
/// 2³² times while the stale handle was kept.
///
/// **Tie-break:** entries with equal keys pop in an unspecified order that depends only on the
/// sequence of operations (the structure is deterministic). Callers that need a particular
/// order for equal times put the tie-break into the key.
///
/// Steady-state operation allocates nothing: popped slots are reused and the heap array keeps
/// its capacity.
pub struct IndexedHeap<K, V> {
    /// The heap array: `(key, slot index)`, a 4-ary min-heap on `key`.
    heap: Vec<(K, u32)>,
    /// The slab of values.
    slots: Vec<Slot<V>>,
    /// Head of the free list threaded through vacant slots, or [`NONE`].
    free_head: u32,
}

/// One slab slot.
struct Slot<V> {
    /// Bumped each time the slot's entry leaves the heap.
    generation: u32,
    /// Heap position of the entry while occupied; next free slot (or [`NONE`]) while vacant.
    pos_or_next: u32,
    /// The entry's value; `None` while the slot is vacant.
    value: Option<V>,
}

impl<K: Key, V> IndexedHeap<K, V> {
    /// Creates an empty heap.
    ///
    /// ```
    /// use warpsim_queue::{IndexedHeap, PendingSet};
    /// let queue: IndexedHeap<u64, ()> = IndexedHeap::new();
    /// assert!(queue.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// Creates an empty heap with room for `capacity` entries before it reallocates.
    ///
    /// ```
    /// use warpsim_queue::{IndexedHeap, PendingSet};
    /// let mut queue = IndexedHeap::with_capacity(1000);
    /// queue.push(1u64, 'x').unwrap();
    /// assert_eq!(queue.len(), 1);
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        IndexedHeap {
            heap: Vec::with_capacity(capacity),
            slots: Vec::with_capacity(capacity),
            free_head: NONE,
        }
    }

    /// Removes every entry. All outstanding handles become stale; allocations are kept.
    ///
    /// ```
    /// use warpsim_queue::{IndexedHeap, PendingSet};
    /// let mut queue = IndexedHeap::new();
    /// let handle = queue.push(1u64, 'x').unwrap();
    /// queue.clear();
    /// assert!(queue.is_empty());
    /// assert_eq!(queue.get(handle), None);
    /// ```
    pub fn clear(&mut self) {
        while let Some((_, slot)) = self.heap.pop() {
            self.free_slot(slot);
        }
    }

    /// The slot index of a live handle, or `None` when the handle is stale.
    #[inline]
    fn live_slot(&self, handle: Handle) -> Option<usize> {
        let slot = self.slots.get(handle.slot() as usize)?;
        (slot.generation == handle.generation() && slot.value.is_some())
            .then_some(handle.slot() as usize)
    }

    /// Takes the value out of `slot`, bumps its generation and puts it on the free list.
    #[inline]
    fn free_slot(&mut self, slot: u32) -> V {
        let entry = &mut self.slots[slot as usize];
        entry.generation = entry.generation.wrapping_add(1);
        entry.pos_or_next = self.free_head;
        self.free_head = slot;
        entry
            .value
            .take()
            .expect("a slot in the heap array is occupied")
    }

    /// Moves the entry at `pos` towards the root until its parent is not larger.
    #[inline]
    fn sift_up(&mut self, mut pos: usize) {
        let moving = self.heap[pos];
        while pos > 0 {
            let parent = (pos - 1) / ARITY;
            if self.heap[parent].0 <= moving.0 {
                break;
            }
            // Move the parent down into the hole instead of swapping: one write per level.
            self.heap[pos] = self.heap[parent];
            self.slots[self.heap[pos].1 as usize].pos_or_next = pos as u32;
            pos = parent;
        }
        self.heap[pos] = moving;
        self.slots[moving.1 as usize].pos_or_next = pos as u32;
    }

    /// Moves the entry at `pos` towards the leaves until no child is smaller.
    #[inline]
    fn sift_down(&mut self, mut pos: usize) {
        let len = self.heap.len();
        let moving = self.heap[pos];
        loop {
            let first = pos * ARITY + 1;
            if first >= len {
                break;
            }
            let (best, child) = if first + ARITY <= len {
                // A full node: a two-round tournament whose selects compile to conditional
                // moves. Which child is smallest is unpredictable, so branches here would
                // mispredict about once per level. Indices are relative to `h`, whose length
                // the compiler knows, so they need no bounds checks.
                let h = &self.heap[first..first + ARITY];
                let a = usize::from(h[1].0 < h[0].0);
                let b = 2 + usize::from(h[3].0 < h[2].0);
                let i = if h[b].0 < h[a].0 { b } else { a };
                (first + i, h[i])
            } else {
                let mut best = first;
                for child in first + 1..len {
                    if self.heap[child].0 < self.heap[best].0 {
                        best = child;
                    }
                }
                (best, self.heap[best])
            };
            if child.0 >= moving.0 {
                break;
            }
            self.heap[pos] = child;
            self.slots[child.1 as usize].pos_or_next = pos as u32;
            pos = best;
        }
        self.heap[pos] = moving;
        self.slots[moving.1 as usize].pos_or_next = pos as u32;
    }

    /// Removes the heap entry at `pos`, restoring the heap property, and returns it.
    #[inline]
    fn remove_at(&mut self, pos: usize) -> (K, u32) {
        let removed = self.heap[pos];
        let last = self.heap.pop().expect("remove_at on a non-empty heap");
        if pos < self.heap.len() {
            // The last leaf fills the hole; it may belong above or below that position.
            self.heap[pos] = last;
            if last.0 < removed.0 {
                self.sift_up(pos);
            } else {
                self.sift_down(pos);
            }
        }
        removed
    }
}

impl<K: Key, V> Default for IndexedHeap<K, V> {
    /// Same as [`IndexedHeap::new`].
    ///
    /// ```
    /// use warpsim_queue::{IndexedHeap, PendingSet};
    /// let queue: IndexedHeap<u64, ()> = Default::default();
    /// assert_eq!(queue.len(), 0);
    /// ```
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Key, V> PendingSet<K, V> for IndexedHeap<K, V> {
    fn push(&mut self, key: K, value: V) -> Result<Handle, PushError<K, V>> {
        if let Err(kind) = check_key(&key) {
            return Err(PushError { kind, key, value });
        }
        let pos = self.heap.len() as u32;
        let slot = if self.free_head != NONE {
            let slot = self.free_head;
            let entry = &mut self.slots[slot as usize];
            self.free_head = entry.pos_or_next;
            entry.pos_or_next = pos;
            entry.value = Some(value);
            slot
        } else {
            // Slot indices must fit in a u32 below the NONE sentinel.
            if self.slots.len() >= NONE as usize {
                return Err(PushError {
                    kind: PushErrorKind::Full,
                    key,
                    value,
                });
            }
            self.slots.push(Slot {
                generation: 0,
                pos_or_next: pos,
                value: Some(value),
            });
            (self.slots.len() - 1) as u32
        };
        self.heap.push((key, slot));
        self.sift_up(pos as usize);
        Ok(Handle::new(slot, self.slots[slot as usize].generation))
    }

    fn pop(&mut self) -> Option<(K, V)> {
        if self.heap.is_empty() {
            return None;
        }
        let (key, slot) = self.remove_at(0);
        Some((key, self.free_slot(slot)))
    }

    fn peek(&mut self) -> Option<(K, &V)> {
        let &(key, slot) = self.heap.first()?;
        self.slots[slot as usize].value.as_ref().map(|v| (key, v))
    }

    fn cancel(&mut self, handle: Handle) -> Option<(K, V)> {
        let slot = self.live_slot(handle)?;
        let pos = self.slots[slot].pos_or_next as usize;
        let (key, slot) = self.remove_at(pos);
        Some((key, self.free_slot(slot)))
    }

    fn reschedule(&mut self, handle: Handle, new_key: K) -> Result<K, RescheduleError> {
        let slot = self.live_slot(handle).ok_or(RescheduleError::StaleHandle)?;
        check_key(&new_key).map_err(RescheduleError::KeyRejected)?;
        let pos = self.slots[slot].pos_or_next as usize;
        let old_key = std::mem::replace(&mut self.heap[pos].0, new_key);
        if new_key < old_key {
            self.sift_up(pos);
        } else if new_key > old_key {
            self.sift_down(pos);
        }
        Ok(old_key)
    }

    #[inline]
    fn prefetch(&self, handle: Handle) {
        prefetch_index::prefetch_index(&self.slots, handle.slot() as usize);
    }

    fn get(&self, handle: Handle) -> Option<(K, &V)> {
        let slot = self.live_slot(handle)?;
        let entry = &self.slots[slot];
        let key = self.heap[entry.pos_or_next as usize].0;
        entry.value.as_ref().map(|v| (key, v))
    }

    fn get_mut(&mut self, handle: Handle) -> Option<(K, &mut V)> {
        let slot = self.live_slot(handle)?;
        let entry = &mut self.slots[slot];
        let key = self.heap[entry.pos_or_next as usize].0;
        entry.value.as_mut().map(|v| (key, v))
    }

    fn len(&self) -> usize {
        self.heap.len()
    }
}

impl<K: Key, V> fmt::Debug for IndexedHeap<K, V> {
    /// Summarises the heap: its length, slab size and smallest key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IndexedHeap")
            .field("len", &self.heap.len())
            .field("slots", &self.slots.len())
            .field("min_key", &self.heap.first().map(|e| e.0))
            .finish()
    }
}
