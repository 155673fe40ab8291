//! The ladder queue.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

use prefetch_index::prefetch_index;

use crate::{Handle, Key, NONE};

mod find;
mod rungs;
mod set;
mod small;

use rungs::{ByKey, Entry, Ladder, Slim, geometry};

/// A bucket holding more than this many entries is split into a new rung rather than sorted
/// into Bottom (the paper's `THRES`).
const THRES: usize = 50;

/// Most rungs the ladder grows to; a bucket that would need one more is sorted into Bottom
/// as it is (the paper's cap of 8).
const MAX_RUNGS: usize = 8;

/// Entries per bucket aimed for when Top is spread over the first rung.
const TOP_FILL: usize = 4;

/// Entries per bucket aimed for when a crowded bucket (or Bottom) is spread over a new rung.
const CHILD_FILL: usize = 4;

/// Most buckets in one rung. Spreading entries over a rung writes to the end of every
/// bucket at random; with at most this many buckets the bucket headers (24 bytes each) and
/// the cache line each bucket is being filled at stay within the L2 cache (1024 × 88 bytes ≈
/// 90 KB), so the spread streams instead of missing the cache once per entry, whatever the
/// queue's size. A bucket that receives more entries than `THRES` is spread again over a
/// finer rung when it is reached: a multi-pass radix distribution, every pass in cache.
/// (Without the cap, a rung for 10⁶ entries had 250 000 buckets and every entry cost two
/// cache misses going in; measured in `BENCHMARKS.md`, *Pending-event queues*.)
const MAX_BUCKETS: usize = 1024;

/// How many entries ahead of the next pop the slab slot of a Bottom entry is prefetched. A pop
/// reads its entry's slab slot (stamp and value), which at 10⁵–10⁶ entries is a cache miss;
/// Bottom is sorted, so the slots of the next pops are known and can be fetched in advance.
const PREFETCH_AHEAD: usize = 4;

/// A queue holding at most this many entries keeps them in one tournament tree (the *small
/// mode*); one more moves them all into the ladder's tiers. Below `SMALL_MAX / 2`, a ladder
/// whose rungs are used up goes back to the small mode when it next refills. Both ends of the
/// hysteresis are far apart, so a set that hovers near the limit does not flip at every
/// operation, and each switch (O(entries)) is paid for by at least `SMALL_MAX / 2` operations.
const SMALL_MAX: usize = 64;

/// How many entries ahead the slab slots of a bucket being sorted into Bottom, or of the
/// entries a purge checks, are prefetched (32 measured no better for the purge).
const SORT_PREFETCH_AHEAD: usize = 8;

/// A child rung of at most this many entries has their slab slots prefetched as it is built
/// (4096 slots of 32–64 bytes fit in the 1–2 MB L2 cache until they pop).
const PREFETCH_RUNG_MAX: usize = 4096;

/// How many entries of the bucket two ahead have their slab slots prefetched as a bucket is
/// sorted into Bottom (a bucket sorted into Bottom holds at most `THRES`, usually about
/// `CHILD_FILL`).
const AHEAD_BUCKET_PREFETCH: usize = 16;

/// Up to this length an insertion into the middle of Bottom just shifts entries; a longer
/// Bottom is first turned into a new rung (or, if that cannot help, the entry goes to the
/// spill heap), so a degenerate Bottom never costs O(n) per insertion.
const BOTTOM_SHIFT_MAX: usize = 256;

/// A Top of at least this many entries gives its memory back as it is spread over a rung,
/// in `TOP_RELEASE_CHUNKS` steps (a shrinking reallocation each), rather than keeping its
/// buffer for the next epoch: at this size the buffer is its own `mmap`, which shrinks in
/// place, and keeping it would hold the same entries twice at the peak.
const TOP_RELEASE_FROM: usize = 1 << 16;

/// In how many chunks a large Top is spread and shrunk (see `TOP_RELEASE_FROM`).
const TOP_RELEASE_CHUNKS: usize = 16;

/// Stale entries are purged in one pass once they outnumber live entries by this much; this
/// bounds memory when entries are cancelled or rescheduled faster than time advances.
const PURGE_SLACK: usize = 1024;

/// A pending-event set with amortised O(1) operations: the ladder queue of Tang, Goh and
/// Thng, with cancel and reschedule by handle.
///
/// Bucketing uses [`Key::priority`]; the final order is [`Ord`], so keys with equal priority
/// still pop in key order.
///
/// It is the default pending-event set of the sequential kernel: for large sets it is much
/// faster than a heap, because it sorts only the few entries that are about to be popped.
///
/// ```
/// use warpsim_queue::{LadderQueue, PendingSet};
///
/// let mut queue = LadderQueue::new();
/// // Keys are (time, sequence number): equal times tie on priority and pop in sequence order.
/// for (seq, time) in [5u64, 1, 3, 1, 9].into_iter().enumerate() {
///     queue.push((time, seq as u32), seq).unwrap();
/// }
/// let extra = queue.push((2, 9), 99).unwrap();
/// assert_eq!(queue.cancel(extra), Some(((2, 9), 99)));
/// let order: Vec<usize> = std::iter::from_fn(|| queue.pop().map(|(_, seq)| seq)).collect();
/// assert_eq!(order, [1, 3, 2, 0, 4]);
/// ```
///
/// # Implementation
///
/// W. T. Tang, R. S. M. Goh and I. L.-J. Thng, "Ladder queue: An O(1) priority queue
/// structure for large-scale discrete event simulation", *ACM TOMACS* 15(3), 2005. Entries
/// live in one of three tiers, each holding keys later than the tier below:
///
/// - **Top**: an unsorted `Vec` of the entries whose [`Key::priority`] is above `TopStart`
///   (the largest priority of the previous Top), with its minimum and maximum priority.
/// - **Ladder**: up to 8 *rungs* of buckets. When the rest is exhausted, Top is spread over
///   a first rung (one bucket per 4 entries) in one pass. Buckets are emptied in order; a
///   bucket with more than `THRES = 50` entries is spread over a new, finer rung, one with
///   fewer is sorted into Bottom.
/// - **Bottom**: a short sorted `Vec` (descending, so entries pop from its end). A bucket
///   becomes Bottom by trading `Vec`s with it and sorting in place; nothing is copied.
///
/// A new entry goes to Top if its priority is above `TopStart`, else to the first rung (from
/// the coarsest) whose current bucket it does not precede, else into Bottom. Bucket indices
/// are computed by one monotone function per rung (`⌊(p − start) / width⌋`, clamped to the
/// rung), and the routing above only compares such indices, so floating-point rounding can
/// move an entry to a neighbouring bucket but never out of order: keys with equal priority
/// always land in the same bucket, where they are sorted by [`Ord`].
///
/// Each entry is touched O(1) times on average (once per tier, plus once per rung it passes
/// through; the rung count is bounded), so `push` and `pop` are amortised O(1) for the
/// distributions the paper studies; the worst case is a sort, O(n log n) once per sweep.
///
/// | operation | cost |
/// |---|---|
/// | `push`, `pop`, `peek` | amortised O(1) |
/// | `cancel`, `reschedule`, `get` | O(1) (amortised, see below) |
///
/// **Handles.** Keys and values live in a slab. Top, the rungs and the small mode hold 16-byte
/// `(priority, slot, stamp)` entries (the small mode reads keys from the slab only to order
/// equal priorities); Bottom and the spill heap hold `(key, slot, stamp)`, the keys read from
/// the slab when a bucket is sorted into Bottom (for the kernels' 32-byte key that is 16 bytes per pending event in the tiers
/// instead of 40: PHOLD with 2²⁰ LPs peaks 39 bytes per LP lower). A slot's *stamp* changes whenever its entry is cancelled, popped or rescheduled, so
/// [`cancel`](crate::PendingSet::cancel) just frees the slot, and
/// [`reschedule`](crate::PendingSet::reschedule) re-stamps it and inserts a new entry: the old
/// entries become stale and are dropped when their bucket is sorted into Bottom or when they
/// reach its end, or all at once when stale
/// entries outnumber live ones (an O(n) purge, amortised O(1)). [`len`](crate::PendingSet::len)
/// counts live entries only. Handles carry a 32-bit generation, as for the
/// [`IndexedHeap`](crate::IndexedHeap).
///
/// **Small sets.** A queue of at most 64 entries keeps them all as the leaves of one
/// tournament (winner) tree of 16, 32 or 64 leaves, each inner node recording the earliest
/// entry below it: a push or a pop replays one path from a leaf to the root, a compare and
/// two conditional moves a level, with no branch that depends on the data. For a handful of
/// pending events that is several times cheaper than Top, a sort per refill and Bottom (the
/// feeding-pets model keeps about 14 pending). The 65th entry moves the tree into Top; a
/// ladder whose rungs are used up and whose Top holds at most 32 entries goes back to the
/// tree. Handles are slab slots in both modes, so they
/// survive every switch.
///
/// **Degenerate inputs.** Entries whose priorities cannot be spread over buckets (all equal,
/// or too close together for an `f64` bucket width) are sorted instead of bucketed; when
/// the rung cap is reached a crowded bucket is sorted into Bottom. A long Bottom that would
/// need an insertion in its middle is turned into a new rung, or, when that cannot split it,
/// the entry goes into a binary heap beside Bottom, so no insertion shifts more than a few
/// hundred entries: the worst case degrades to O(log n), not O(n).
///
/// **Tie-break:** entries with equal keys pop in an unspecified order that depends only on
/// the sequence of operations.
///
/// Steady-state operation allocates nothing: buckets, rungs and the slab keep their
/// capacity and are reused.
pub struct LadderQueue<K, V> {
    /// Value slab, indexed by [`Handle::slot`].
    slots: Vec<Slot<K, V>>,
    /// Head of the free list through [`SlotData::Vacant`].
    free_head: u32,
    /// Live entries (what `len` reports).
    live: usize,
    /// Entries held in all tiers, live and stale.
    stored: usize,

    /// Top: unsorted entries with priority above `top_start`.
    top: Vec<Slim>,
    /// Smallest and largest priority pushed to Top since it was last emptied.
    top_min: f64,
    top_max: f64,
    /// Entries with priority above this go to Top (the paper's `TopStart`).
    top_start: f64,

    /// The rungs.
    ladder: Ladder,

    /// Bottom, sorted *descending* by key so the next entry to pop is at the end.
    bottom: Vec<Entry<K>>,
    /// Bottom-tier entries that would have needed an insertion into the middle of a long
    /// Bottom (a min-heap by key). Usually empty.
    spill: BinaryHeap<Reverse<ByKey<K>>>,

    /// Reused buffer for moving a tier's entries into a new rung.
    scratch: Vec<Slim>,

    /// In small mode, every stored entry (live or stale), in a tournament tree; Top, the
    /// rungs and Bottom are then empty. Empty in ladder mode.
    small: small::Small,
    /// Whether the queue is in small mode.
    small_mode: bool,
}

/// One slab slot.
struct Slot<K, V> {
    /// Bumped when the entry is popped or cancelled; checked against handles.
    generation: u32,
    /// Bumped whenever an entry stored in the tiers stops representing this slot (pop,
    /// cancel, reschedule); an entry is live only while its stamp matches.
    stamp: u32,
    /// Key and value while occupied; the next vacant slot while vacant (one field for both
    /// keeps a slot of `(u64, u64)` at 32 bytes, two to a cache line).
    data: SlotData<K, V>,
}

/// What a slab slot holds.
enum SlotData<K, V> {
    /// Vacant: the next vacant slot of the free list, or [`NONE`].
    Vacant(u32),
    /// Occupied by a pending entry.
    Occupied(K, V),
}

impl<K, V> SlotData<K, V> {
    #[inline]
    fn is_occupied(&self) -> bool {
        matches!(self, SlotData::Occupied(..))
    }

    #[inline]
    fn as_ref(&self) -> Option<(&K, &V)> {
        match self {
            SlotData::Occupied(key, value) => Some((key, value)),
            SlotData::Vacant(_) => None,
        }
    }

    #[inline]
    fn as_mut(&mut self) -> Option<(&mut K, &mut V)> {
        match self {
            SlotData::Occupied(key, value) => Some((key, value)),
            SlotData::Vacant(_) => None,
        }
    }

    /// The next vacant slot (only meaningful while vacant).
    #[inline]
    fn next_free(&self) -> u32 {
        match self {
            SlotData::Vacant(next) => *next,
            SlotData::Occupied(..) => NONE,
        }
    }
}

/// Whether a stored entry still represents its slot's pending entry. The stamp alone decides
/// in practice; comparing the key as well makes a 32-bit stamp wrap-around harmless (a stale
/// entry that matched both would sit exactly where the live entry belongs).
#[inline]
fn is_current<K: Key, V>(slots: &[Slot<K, V>], entry: &Entry<K>) -> bool {
    let slot = &slots[entry.slot as usize];
    slot.stamp == entry.stamp && slot.data.as_ref().is_some_and(|(key, _)| *key == entry.key)
}

/// Whether a Top, rung or small-mode entry still represents its slot's pending entry (as
/// [`is_current`]; the priority stands in for the key against stamp wrap-around).
#[inline(always)]
fn is_current_slim<K: Key, V>(slots: &[Slot<K, V>], entry: &Slim) -> bool {
    let slot = &slots[entry.slot as usize];
    slot.stamp == entry.stamp
        && slot
            .data
            .as_ref()
            .is_some_and(|(key, _)| key.priority() == entry.p)
}

/// The full entry behind a Top or rung entry, read from the slab, or `None` when it is stale
/// (as [`is_current`]; the priority stands in for the key against stamp wrap-around).
#[inline]
fn full_entry<K: Key, V>(slots: &[Slot<K, V>], entry: &Slim) -> Option<Entry<K>> {
    let slot = &slots[entry.slot as usize];
    match &slot.data {
        SlotData::Occupied(key, _) if slot.stamp == entry.stamp && key.priority() == entry.p => {
            Some(Entry {
                key: *key,
                slot: entry.slot,
                stamp: entry.stamp,
            })
        }
        _ => None,
    }
}

impl<K: Key, V> LadderQueue<K, V> {
    /// Creates an empty ladder queue.
    ///
    /// ```
    /// use warpsim_queue::{LadderQueue, PendingSet};
    /// let queue: LadderQueue<u64, ()> = LadderQueue::new();
    /// assert!(queue.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// Creates an empty ladder queue with room for `capacity` entries in its slab and Top
    /// before they reallocate.
    ///
    /// ```
    /// use warpsim_queue::{LadderQueue, PendingSet};
    /// let mut queue = LadderQueue::with_capacity(1 << 16);
    /// queue.push(3u64, "x").unwrap();
    /// assert_eq!(queue.len(), 1);
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        LadderQueue {
            slots: Vec::with_capacity(capacity),
            free_head: NONE,
            live: 0,
            stored: 0,
            top: Vec::with_capacity(capacity),
            top_min: f64::INFINITY,
            top_max: f64::NEG_INFINITY,
            top_start: f64::NEG_INFINITY,
            ladder: Ladder {
                rungs: Vec::new(),
                n_rungs: 0,
            },
            bottom: Vec::new(),
            spill: BinaryHeap::new(),
            scratch: Vec::new(),
            small: small::Small::new(),
            small_mode: true,
        }
    }

    /// The value that will most likely pop next, found without any check: a hint for
    /// prefetching what the caller will need for it (the optimistic kernel loads the next
    /// event's LP record while the current one runs). It may be `None` while entries are
    /// pending, or the value of an entry that turns out to be stale; the queue is unchanged.
    ///
    /// ```
    /// use warpsim_queue::{LadderQueue, PendingSet};
    /// let mut queue = LadderQueue::new();
    /// queue.push(2u64, 'b').unwrap();
    /// queue.push(1u64, 'a').unwrap();
    /// assert_eq!(queue.next_hint(), Some(&'a'));
    /// ```
    #[inline]
    pub fn next_hint(&self) -> Option<&V> {
        let slot = if self.small_mode {
            self.small.front_hint()?.slot
        } else {
            self.bottom.last()?.slot
        };
        match &self.slots.get(slot as usize)?.data {
            SlotData::Occupied(_, value) => Some(value),
            SlotData::Vacant(_) => None,
        }
    }

    /// The handle of the entry in slab slot `slot` (the low 32 bits of
    /// [`Handle::into_raw`]), if one is there. A structure that indexes the queue's entries
    /// can keep their slots alone, in half the space of handles, and get the handle back.
    ///
    /// ```
    /// use warpsim_queue::{LadderQueue, PendingSet};
    /// let mut queue = LadderQueue::new();
    /// let handle = queue.push(7u64, ()).unwrap();
    /// assert_eq!(queue.handle_at(handle.into_raw() as u32), Some(handle));
    /// queue.pop();
    /// assert_eq!(queue.handle_at(handle.into_raw() as u32), None);
    /// ```
    #[inline]
    pub fn handle_at(&self, slot: u32) -> Option<Handle> {
        let entry = self.slots.get(slot as usize)?;
        entry
            .data
            .is_occupied()
            .then_some(Handle::new(slot, entry.generation))
    }

    /// Every pending entry, in no particular order (slab order), without changing the
    /// queue: for a copy of what is pending (the optimistic kernel's checkpoints taken
    /// while the run goes on).
    ///
    /// ```
    /// use warpsim_queue::{LadderQueue, PendingSet};
    /// let mut queue = LadderQueue::new();
    /// for key in [3u64, 1, 2] {
    ///     queue.push(key, key * 10).unwrap();
    /// }
    /// queue.pop();
    /// let mut seen: Vec<(u64, u64)> = queue.iter().map(|(key, value)| (key, *value)).collect();
    /// seen.sort();
    /// assert_eq!(seen, [(2, 20), (3, 30)]);
    /// assert_eq!(queue.len(), 2);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (K, &V)> + '_ {
        self.slots
            .iter()
            .filter_map(|slot| slot.data.as_ref().map(|(key, value)| (*key, value)))
    }

    /// The handle of every pending entry, in no particular order (slab order): for a pass
    /// over what is pending that then changes some of it through
    /// [`get_mut`](crate::PendingSet::get_mut) (the optimistic kernel lists the events it queued
    /// without an index this way).
    ///
    /// ```
    /// use warpsim_queue::{LadderQueue, PendingSet};
    /// let mut queue = LadderQueue::new();
    /// for key in [3u64, 1, 2] {
    ///     queue.push(key, key * 10).unwrap();
    /// }
    /// queue.pop();
    /// let handles: Vec<_> = queue.handles().collect();
    /// let mut seen: Vec<u64> = handles.iter().map(|&h| queue.get(h).unwrap().0).collect();
    /// seen.sort();
    /// assert_eq!(seen, [2, 3]);
    /// ```
    pub fn handles(&self) -> impl Iterator<Item = Handle> + '_ {
        self.slots.iter().enumerate().filter_map(|(slot, entry)| {
            entry
                .data
                .is_occupied()
                .then_some(Handle::new(slot as u32, entry.generation))
        })
    }

    /// Slot index of a live handle.
    #[inline]
    fn live_slot(&self, handle: Handle) -> Option<usize> {
        let slot = self.slots.get(handle.slot() as usize)?;
        (slot.generation == handle.generation() && slot.data.is_occupied())
            .then_some(handle.slot() as usize)
    }

    /// Vacates the occupied `slot`, invalidating its handles and stored entries, and returns
    /// its key and value.
    #[inline]
    fn release(&mut self, slot: usize) -> Option<(K, V)> {
        let entry = &mut self.slots[slot];
        entry.generation = entry.generation.wrapping_add(1);
        entry.stamp = entry.stamp.wrapping_add(1);
        let data = std::mem::replace(&mut entry.data, SlotData::Vacant(self.free_head));
        self.free_head = slot as u32;
        self.live -= 1;
        match data {
            SlotData::Occupied(key, value) => Some((key, value)),
            SlotData::Vacant(_) => None,
        }
    }

    /// Puts an entry into the tier its priority `p` belongs to.
    ///
    /// The slot and stamp travel as separate scalars rather than in an `Entry`: built on the
    /// caller's stack by two 4-byte stores and read back by one 8-byte load, an `Entry` cost a
    /// failed store-to-load forward (a stall of a dozen cycles) on every insertion — over half
    /// of `insert_small`'s time in the feeding pets (`perf annotate`, issue 16).
    #[inline(always)]
    fn insert(&mut self, slot: u32, stamp: u32, p: f64) {
        self.stored += 1;
        if self.small_mode {
            self.insert_small(p, slot, stamp);
        } else {
            self.insert_tiers(p, slot, stamp);
        }
    }

    /// Puts an entry into Top, a rung or Bottom. Out of line, so that `push`, which is inlined
    /// into its callers for the sake of the small mode, stays small. Bottom, which orders by
    /// key, reads the key from the slab (the entry's slot holds it already).
    #[inline(never)]
    fn insert_tiers(&mut self, p: f64, slot: u32, stamp: u32) {
        let slim = Slim { p, slot, stamp };
        if p > self.top_start {
            self.top.push(slim);
            self.top_min = self.top_min.min(p);
            self.top_max = self.top_max.max(p);
            return;
        }
        for rung in self.ladder.active() {
            let bucket = rung.bucket_of(p);
            if bucket >= rung.cur {
                rung.buckets[bucket].push(slim);
                return;
            }
        }
        let entry = full_entry(&self.slots, &slim);
        debug_assert!(entry.is_some(), "an entry being inserted is current");
        if let Some(entry) = entry {
            self.insert_bottom(entry, p);
        }
    }

    /// Inserts into Bottom (or the spill heap beside it), keeping Bottom sorted. Kept out of
    /// line: it is the rare case, and inlining it would make `push` save more registers.
    #[inline(never)]
    fn insert_bottom(&mut self, entry: Entry<K>, p: f64) {
        let len = self.bottom.len();
        // Bottom is descending: the new entry goes after every larger key and, among equal
        // keys, after them too (it pops first; any order of equal keys is allowed).
        let pos = self.bottom.partition_point(|e| e.key > entry.key);
        if pos == len {
            self.bottom.push(entry);
        } else if len - pos <= BOTTOM_SHIFT_MAX {
            self.bottom.insert(pos, entry);
        } else if self.ladder.n_rungs < MAX_RUNGS && self.bottom_to_rung() {
            // Bottom is now a rung that starts at its current bucket: the entry lands in it.
            self.stored -= 1;
            self.insert(entry.slot, entry.stamp, p);
        } else {
            self.spill.push(Reverse(ByKey(entry)));
        }
    }

    /// Turns Bottom and the spill heap into a new, finest rung. Returns `false` (changing
    /// nothing) when their priorities cannot be spread over buckets.
    fn bottom_to_rung(&mut self) -> bool {
        let (Some(largest), Some(smallest)) = (self.bottom.first(), self.bottom.last()) else {
            return false;
        };
        let (mut min, mut max) = (smallest.key.priority(), largest.key.priority());
        for Reverse(ByKey(e)) in &self.spill {
            let p = e.key.priority();
            min = min.min(p);
            max = max.max(p);
        }
        let n = (self.bottom.len() + self.spill.len())
            .div_ceil(CHILD_FILL)
            .min(MAX_BUCKETS);
        let Some(geometry) = geometry(min, max, n) else {
            return false;
        };
        let entries = self.bottom.drain(..);
        let spilled = self.spill.drain().map(|Reverse(ByKey(e))| e);
        let slim = entries.chain(spilled).map(|e| e.slim(e.key.priority()));
        self.ladder.push_rung(geometry, n, slim);
        true
    }

    /// Makes the live ones of `entries` the new Bottom (which must be empty), sorted, with
    /// their keys read from the slab; returns how many stale entries were dropped. A large
    /// `entries` (an unspreadable Top or bucket) gives its buffer back.
    fn sort_into_bottom(
        slots: &[Slot<K, V>],
        bottom: &mut Vec<Entry<K>>,
        entries: &mut Vec<Slim>,
    ) -> usize {
        debug_assert!(bottom.is_empty());
        let before = entries.len();
        bottom.reserve(before);
        // Each entry's key is read from its slab slot, a random access; a bucket that did not
        // come through a prefetched child rung would wait for each in turn (at 10⁶ entries,
        // 42 % of a hold's samples sat on this read), so the slots are prefetched ahead.
        for (i, entry) in entries.iter().enumerate() {
            if let Some(ahead) = entries.get(i + SORT_PREFETCH_AHEAD) {
                prefetch_index(slots, ahead.slot as usize);
            }
            if let Some(full) = full_entry(slots, entry) {
                bottom.push(full);
            }
        }
        entries.clear();
        if entries.capacity() > BOTTOM_SHIFT_MAX {
            *entries = Vec::new();
        }
        bottom.sort_unstable_by_key(|e| Reverse(e.key));
        before - bottom.len()
    }

    /// Refills the empty Bottom from the ladder, or the ladder from Top. Returns `false` when
    /// no entries are left anywhere. Out of line so that `pop`, which calls it once per
    /// bucket, stays small.
    #[inline(never)]
    fn refill(&mut self) -> bool {
        debug_assert!(self.bottom.is_empty() && self.spill.is_empty());
        loop {
            let ladder = &mut self.ladder;
            if ladder.n_rungs == 0 {
                if self.top.is_empty() {
                    return false;
                }
                if self.top.len() <= SMALL_MAX / 2 {
                    // Few entries left: back to the small mode (the caller sees no Bottom
                    // and asks again, now in small mode).
                    self.enter_small_mode();
                    return false;
                }
                self.transfer_top();
                if !self.bottom.is_empty() {
                    return true;
                }
                continue;
            }
            let rung = &mut ladder.rungs[ladder.n_rungs - 1];
            while rung.cur < rung.n_buckets && rung.buckets[rung.cur].is_empty() {
                rung.cur += 1;
            }
            if rung.cur == rung.n_buckets {
                // The finest rung is used up; its buckets stay allocated for reuse.
                ladder.n_rungs -= 1;
                continue;
            }
            let bucket = &mut rung.buckets[rung.cur];
            rung.cur += 1;
            if bucket.len() > THRES && ladder.n_rungs < MAX_RUNGS {
                let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
                for e in bucket.iter() {
                    min = min.min(e.p);
                    max = max.max(e.p);
                }
                let n = bucket.len().div_ceil(CHILD_FILL).min(MAX_BUCKETS);
                if let Some(geometry) = geometry(min, max, n) {
                    // The new rung lives in the same `Vec` as the bucket: move the bucket's
                    // contents out through `scratch`. The used-up bucket keeps no memory
                    // (swapping would leave it the old scratch buffer until the rung is
                    // rebuilt, and a coarse rung's buckets grow as the run goes on, so a
                    // million-event run would hold hundreds of MB of such spare buffers).
                    self.scratch = std::mem::take(bucket);
                    // A child rung's entries pop soon: fetch their slab slots now, all at
                    // once (many misses in flight), while the rung is small enough for them
                    // to stay in cache until then.
                    let prefetch = self.scratch.len() <= PREFETCH_RUNG_MAX;
                    let slots = &self.slots;
                    ladder.push_rung(
                        geometry,
                        n,
                        self.scratch.drain(..).inspect(|entry| {
                            if prefetch {
                                prefetch_index(slots, entry.slot as usize);
                            }
                        }),
                    );
                    continue;
                }
            }
            // The bucket after the next one is sorted into Bottom after two Bottoms' worth of
            // pops: fetch its slab slots now, so that sorting it finds its keys in cache (its
            // reads were 28 % of a hold's samples at 10⁶, missing even after the child rung's
            // prefetch: 85 → 70 ns per hold, `hold_probe`). Two buckets ahead, not one: a
            // bucket holds about `CHILD_FILL` entries, a few pops, less than a miss's latency.
            if let Some(ahead) = rung.buckets[..rung.n_buckets].get(rung.cur + 1) {
                for entry in ahead.iter().take(AHEAD_BUCKET_PREFETCH) {
                    prefetch_index(&self.slots, entry.slot as usize);
                }
            }
            let bucket = &mut rung.buckets[rung.cur - 1];
            self.stored -= Self::sort_into_bottom(&self.slots, &mut self.bottom, bucket);
            if !self.bottom.is_empty() {
                return true;
            }
        }
    }

    /// Moves Top into the ladder (a first rung) or, if small or unspreadable, into Bottom.
    fn transfer_top(&mut self) {
        debug_assert!(self.ladder.n_rungs == 0);
        // Everything now pending is at most `top_max`; only later keys may go to Top.
        self.top_start = self.top_max;
        let (min, max) = (self.top_min, self.top_max);
        self.top_min = f64::INFINITY;
        self.top_max = f64::NEG_INFINITY;
        if self.top.len() > THRES {
            let n = self.top.len().div_ceil(TOP_FILL).min(MAX_BUCKETS);
            if let Some(geometry) = geometry(min, max, n) {
                if self.top.len() < TOP_RELEASE_FROM {
                    self.ladder.push_rung(geometry, n, self.top.drain(..));
                    return;
                }
                // A large Top is spread from its end, a chunk at a time, and gives back the
                // memory of each chunk as soon as the buckets hold it: Top and the buckets
                // then never hold the same entries at once, which was the queue's peak of
                // memory (a million events scheduled at start-up: 40 bytes per event).
                let chunk = self.top.len().div_ceil(TOP_RELEASE_CHUNKS);
                let rung = self.ladder.push_rung(geometry, n, std::iter::empty());
                while !self.top.is_empty() {
                    let from = self.top.len().saturating_sub(chunk);
                    rung.spread(self.top.drain(from..));
                    self.top.shrink_to(from);
                }
                return;
            }
        }
        self.stored -= Self::sort_into_bottom(&self.slots, &mut self.bottom, &mut self.top);
    }

    /// Empties every tier when nothing live is left, so the next push starts a fresh epoch
    /// (everything to Top) instead of routing through rungs built for old keys.
    fn reset_if_idle(&mut self) {
        debug_assert_eq!(self.live, 0);
        if self.stored != 0 {
            self.top.clear();
            for rung in self.ladder.active() {
                for bucket in &mut rung.buckets[rung.cur..rung.n_buckets] {
                    bucket.clear();
                }
            }
            self.bottom.clear();
            self.spill.clear();
            self.small.clear();
            self.stored = 0;
        }
        self.small_mode = true;
        self.ladder.n_rungs = 0;
        self.top_min = f64::INFINITY;
        self.top_max = f64::NEG_INFINITY;
        self.top_start = f64::NEG_INFINITY;
    }

    /// The smallest stored entry (live or stale) and whether it is in the spill heap.
    #[inline]
    fn front(&self) -> Option<(Entry<K>, bool)> {
        let bottom = self.bottom.last();
        match self.spill.peek() {
            None => bottom.map(|&e| (e, false)),
            Some(Reverse(ByKey(s))) => match bottom {
                Some(b) if b.key <= s.key => Some((*b, false)),
                _ => Some((*s, true)),
            },
        }
    }

    /// Removes the entry [`front`](Self::front) returned.
    #[inline]
    fn remove_front(&mut self, from_spill: bool) {
        if from_spill {
            self.spill.pop();
        } else {
            self.bottom.pop();
        }
        self.stored -= 1;
    }

    /// What `pop` does when neither fast path applies (stale entries to skip, the spill heap,
    /// a refill, a switch of mode, or an empty queue): takes the next live entry out of its
    /// tier and returns its slot, for `pop` to release. It returns a slot rather than the key
    /// and value: when both paths returned those, the results met in memory, and the fast
    /// path's fields, written by narrow stores, were read back by wide loads (a failed
    /// store-to-load forward per pop; feeding pets, issue 16, `perf annotate`).
    #[inline(never)]
    fn next_slot(&mut self) -> Option<u32> {
        loop {
            if self.small_mode {
                // In small mode the other tiers are empty.
                while let Some(entry) = self.small.take_front(&self.slots) {
                    self.stored -= 1;
                    if is_current_slim(&self.slots, &entry) {
                        return Some(entry.slot);
                    }
                }
                return None;
            }
            // Fast path: the spill heap is almost always empty.
            if self.spill.is_empty()
                && let Some(entry) = self.bottom.pop()
            {
                if let Some(ahead) = self.bottom.len().checked_sub(PREFETCH_AHEAD) {
                    prefetch_index(&self.slots, self.bottom[ahead].slot as usize);
                }
                self.stored -= 1;
                if is_current(&self.slots, &entry) {
                    return Some(entry.slot);
                }
                continue;
            }
            let Some((entry, from_spill)) = self.front() else {
                if self.refill() || self.small_mode {
                    continue;
                }
                return None;
            };
            self.remove_front(from_spill);
            if is_current(&self.slots, &entry) {
                return Some(entry.slot);
            }
        }
    }

    /// Drops every stale entry from every tier once they outnumber live entries.
    fn maybe_purge(&mut self) {
        if self.stored - self.live <= self.live + PURGE_SLACK {
            return;
        }
        let slots = &self.slots;
        let current = |e: &Entry<K>| is_current(slots, e);
        let current_slim = |e: &Slim| full_entry(slots, e).is_some();
        // Every entry's slab slot is read at random: prefetched ahead, the pass is bound by
        // bandwidth rather than by one miss per entry (at 10⁶ live entries it runs once per
        // 10⁶ cancels, and without the prefetch it was a large part of each cancel's cost).
        retain_prefetched(&mut self.top, slots, |e| e.slot, current_slim);
        for rung in &mut self.ladder.rungs[..self.ladder.n_rungs] {
            for bucket in &mut rung.buckets[rung.cur..rung.n_buckets] {
                retain_prefetched(bucket, slots, |e| e.slot, current_slim);
            }
        }
        retain_prefetched(&mut self.bottom, slots, |e| e.slot, current);
        self.spill.retain(|Reverse(ByKey(e))| current(e));
        self.small.retain_current(slots);
        self.stored = self.live;
    }
}

/// `entries.retain(keep)`, in order, prefetching the slab slot of the entry
/// [`SORT_PREFETCH_AHEAD`] places ahead (`keep` reads the slot of the entry it is given).
fn retain_prefetched<T: Copy, K, V>(
    entries: &mut Vec<T>,
    slots: &[Slot<K, V>],
    slot_of: impl Fn(&T) -> u32,
    keep: impl Fn(&T) -> bool,
) {
    let mut kept = 0;
    for i in 0..entries.len() {
        if let Some(ahead) = entries.get(i + SORT_PREFETCH_AHEAD) {
            prefetch_index(slots, slot_of(ahead) as usize);
        }
        let entry = entries[i];
        if keep(&entry) {
            entries[kept] = entry;
            kept += 1;
        }
    }
    entries.truncate(kept);
}

impl<K: Key, V> Default for LadderQueue<K, V> {
    /// Same as [`LadderQueue::new`].
    ///
    /// ```
    /// use warpsim_queue::{LadderQueue, PendingSet};
    /// let queue: LadderQueue<u64, ()> = Default::default();
    /// assert_eq!(queue.len(), 0);
    /// ```
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Key, V> fmt::Debug for LadderQueue<K, V> {
    /// Summarises the queue: live and stored entries and the size of each tier.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LadderQueue")
            .field("len", &self.live)
            .field("stored", &self.stored)
            .field("top", &self.top.len())
            .field("top_start", &self.top_start)
            .field("rungs", &self.ladder.n_rungs)
            .field("bottom", &(self.bottom.len() + self.spill.len()))
            .field("small", &self.small.len())
            .finish()
    }
}
