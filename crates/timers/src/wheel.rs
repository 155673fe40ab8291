//! A hierarchical timing wheel keyed by game time: the manager's default pending set.
//!
//! # Why not a general pending set
//!
//! A game frame fires the timers of one short stretch of time, and at 10⁶ timers every
//! structure that keeps its entries apart from the timers' own records pays cache misses per
//! firing: the ladder queue reads each entry's key from its slab when it sorts a bucket and
//! again when it pops it, and the heap sifts through a miss per level. The wheel keeps the
//! entry itself — `(time, insertion sequence, timer slot, epoch)`, 24 bytes — in the bucket of
//! its time, so a frame reads its buckets sequentially and, from the sorted bucket, knows
//! the next timers to fire far enough ahead to prefetch their records.
//!
//! # Layout
//!
//! Time is cut into ticks of 2⁻¹⁰ units (≈ 1 ms when the unit is the second); a tick's
//! number is exactly `floor(t · 2¹⁰)` (a multiplication by a power of two rounds nothing).
//! Eight levels of 256 buckets each cover 2⁶⁰ ticks, as in the hashed hierarchical wheels of
//! Varghese and Lauck (1987) and of Linux and Tokio: level `k` holds the entries whose tick
//! first differs from the wheel's position (`elapsed`) in bits `8k .. 8k + 8`, in the bucket
//! named by those bits, and each level has a 256-bit occupancy mask. Lower levels always come
//! before higher ones, so the next bucket is found with a few `trailing_zeros`. When the
//! wheel reaches a bucket of level `k > 0` its entries are spread over the lower levels
//! (each entry moves down at most seven times; a timer due within 64 s once); a bucket of
//! level 0 holds the entries of a single tick and becomes `current`, sorted by `(time,
//! sequence)` — the exact order the heap gives, by the counting sort of [`Sorter`] — and
//! popped from its end. Entries due at or before the
//! wheel's position (a time in the past) go straight into `current`, in order.
//!
//! # Cancel and change in one miss
//!
//! A cancel does not look for the entry. Each timer slot has a 4-byte tag here (`tags`: odd
//! while the slot has a pending entry, and then equal to that entry's tag), and a cancel or
//! change of slot `i` bumps `tags[i]`: the entry still in its bucket is now stale, and is
//! dropped when it reaches the front or when the wheel is compacted. The wheel is addressed
//! by slot index, with no handle to read first; `tags` is dense (4 MB at 10⁶ timers), the
//! manager prefetches `tags[i]` while it reads the timer's own slot, and the wheel touches
//! nothing else, so a cancel costs what the manager's own timer slot costs: one miss. Moving a bucket down a level does not look at tags at all (that would be
//! a random access per entry); only the front of the sorted bucket does, prefetched
//! [`AHEAD`] entries in advance. Stale entries cannot pile up: once they outnumber the live
//! ones (and number at least 2¹⁴), every bucket is compacted in one pass, which is O(1)
//! amortised over the cancels that made them — a pass over 2 × 10⁶ entries takes tens of
//! milliseconds, so a game that cancels millions of far-off timers pays it in one call now
//! and then. When a slot's tag wraps (after 2³¹ changes of that slot) every stale entry is
//! dropped the same way before the tag is reused.
//!
//! # Cursor never passes the clock
//!
//! The wheel only moves its position when asked for the timers due by a time the manager has
//! reached ([`Wheel::pop_due`]), never past it: otherwise timers added later for times before
//! the position would all land in `current` and be inserted into its sorted order one by one.
//! [`Wheel::peek_time`] therefore looks into the first bucket instead of moving to it.

use prefetch_index::prefetch_index;

use crate::time::{QueueKey, TimeKey};

/// log2 of the number of buckets per level. 256 rather than the usual 64: a timer due within
/// 64 s of now is then moved down once (level 1 to 0) instead of twice, and moving entries
/// is most of a frame's work after the firing itself.
const BITS: u32 = 8;
/// Buckets per level.
const SLOTS: usize = 1 << BITS;
/// 64-bit words of a level's occupancy mask.
const WORDS: usize = SLOTS / 64;
/// Levels: 8 × 8 bits cover the 2⁶⁰ ticks used (about 35,000 years of seconds); later times
/// share the last tick and are still ordered exactly within it.
const LEVELS: usize = 8;
const MAX_TICK: u64 = (1 << 60) - 1;
/// Ticks per unit of game time: a power of two, so that `t · TICKS` is exact.
const TICKS: f64 = 1024.0;
/// How far ahead of the entry being popped the wheel prefetches the epoch record, and the
/// manager the timer slot. About the number of misses this machine keeps in flight.
pub(crate) const AHEAD: usize = 8;
/// The wheel is compacted once its stale entries outnumber its live ones by this many.
const COMPACT_SLACK: usize = 1 << 14;

/// One pending entry: 24 bytes.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The due time as order-preserving bits (see [`ordered_bits`]).
    time: u64,
    /// The timer's insertion sequence number: the tie-break between equal times.
    seq: u64,
    slot: u32,
    /// The slot's tag when the entry was filed; the entry is live while they agree.
    tag: u32,
}

/// A placeholder for buffers about to be overwritten.
const EMPTY: Entry = Entry {
    time: 0,
    seq: 0,
    slot: 0,
    tag: 0,
};

impl Entry {
    #[inline]
    fn order(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.seq)
    }

    #[inline]
    fn due(&self) -> f64 {
        from_ordered_bits(self.time)
    }
}

/// Maps a finite time to bits whose unsigned order is the time's total order (`-0.0` has
/// been normalised away by [`TimeKey`]).
#[inline]
fn ordered_bits(time: f64) -> u64 {
    let bits = time.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

#[inline]
fn from_ordered_bits(bits: u64) -> f64 {
    if bits >> 63 == 1 {
        f64::from_bits(bits & !(1 << 63))
    } else {
        f64::from_bits(!bits)
    }
}

/// The tick of a time: `floor(t · 2¹⁰)`, exact; negative times are tick 0, very late ones the
/// last tick (`as` saturates).
#[inline]
fn tick(time: f64) -> u64 {
    ((time * TICKS) as u64).min(MAX_TICK)
}

/// Which buckets of a level hold entries.
#[derive(Debug, Clone, Copy, Default)]
struct Occupancy([u64; WORDS]);

impl Occupancy {
    #[inline]
    fn set(&mut self, slot: usize) {
        self.0[slot / 64] |= 1 << (slot % 64);
    }

    #[inline]
    fn clear(&mut self, slot: usize) {
        self.0[slot / 64] &= !(1 << (slot % 64));
    }

    /// The first occupied bucket at or after `from`.
    #[inline]
    fn first_from(&self, from: usize) -> Option<usize> {
        let mut word = from / 64;
        if word >= WORDS {
            return None;
        }
        let mut bits = self.0[word] & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                return Some(word * 64 + bits.trailing_zeros() as usize);
            }
            word += 1;
            if word == WORDS {
                return None;
            }
            bits = self.0[word];
        }
    }
}

/// Sorts entries by `(time, seq)`, descending, by comparisons. By time alone first — one
/// 64-bit comparison instead of two — and then each run of equal times by sequence (equal
/// times are rare except where a game schedules on a grid, and runs are short).
fn sort_by_comparison(entries: &mut [Entry]) {
    entries.sort_unstable_by_key(|e| std::cmp::Reverse(e.time));
    let mut start = 0;
    while start < entries.len() {
        let time = entries[start].time;
        let mut end = start + 1;
        while end < entries.len() && entries[end].time == time {
            end += 1;
        }
        if end - start > 1 {
            entries[start..end].sort_unstable_by_key(|e| std::cmp::Reverse(e.seq));
        }
        start = end;
    }
}

/// Sorts a few entries by `(time, seq)`, descending, by insertion.
#[inline]
fn insertion_descending(entries: &mut [Entry]) {
    for i in 1..entries.len() {
        let entry = entries[i];
        let order = entry.order();
        let mut j = i;
        while j > 0 && entries[j - 1].order() < order {
            entries[j] = entries[j - 1];
            j -= 1;
        }
        entries[j] = entry;
    }
}

/// Up to this many entries are sorted by insertion.
const INSERTION_MAX: usize = 16;
/// The most key bits of one counting pass: 2¹¹ counters, 8 KB, stay in the L1 cache.
const RADIX_MAX_BITS: u32 = 11;

/// Sorts the tick the wheel has reached, and keeps the buffers for it.
///
/// A comparison sort of a tick's entries was a quarter of a frame's instructions (≈ 100 per
/// entry for the torches' ≈ 100 entries per tick). The entries of one tick have times within
/// 2⁻¹⁰ units of each other, so one counting pass on the top bits of their time differences
/// (as many bits as the tick has entries, at most [`RADIX_MAX_BITS`]) leaves groups of one
/// or two, finished by insertion: ≈ 25 instructions per entry. The key is the order-preserving
/// bits of the time (not the float), so any times — negative, saturated at the last tick,
/// across a power of two — are ordered exactly; a group the keys could not split (equal or
/// crowded times) falls back to the comparison sort.
#[derive(Default)]
struct Sorter {
    buffer: Vec<Entry>,
    /// Per key, where its group starts (then, after the scatter, ends).
    starts: Vec<u32>,
}

impl Sorter {
    fn sort_descending(&mut self, entries: &mut Vec<Entry>) {
        let n = entries.len();
        if n <= INSERTION_MAX {
            insertion_descending(entries);
            return;
        }
        let (mut lo, mut hi) = (u64::MAX, 0);
        for entry in entries.iter() {
            lo = lo.min(entry.time);
            hi = hi.max(entry.time);
        }
        let range = hi - lo;
        if range == 0 {
            entries.sort_unstable_by_key(|e| std::cmp::Reverse(e.seq));
            return;
        }
        // Key `(hi - time) >> shift`: 0 for the latest time, so ascending keys are descending
        // times; at most 2^bits keys for about as many entries.
        let bits = (usize::BITS - (n - 1).leading_zeros()).min(RADIX_MAX_BITS);
        let shift = (u64::BITS - range.leading_zeros()).saturating_sub(bits);
        let n_keys = (range >> shift) as usize + 1;
        let key = |entry: &Entry| ((hi - entry.time) >> shift) as usize;
        let starts = &mut self.starts;
        starts.clear();
        starts.resize(n_keys + 1, 0);
        for entry in entries.iter() {
            starts[key(entry) + 1] += 1;
        }
        let mut sum = 0;
        for start in starts.iter_mut() {
            sum += *start;
            *start = sum;
        }
        let buffer = &mut self.buffer;
        buffer.clear();
        buffer.resize(n, EMPTY);
        for entry in entries.iter() {
            let at = &mut starts[key(entry)];
            buffer[*at as usize] = *entry;
            *at += 1;
        }
        std::mem::swap(entries, buffer);
        // `starts[k]` is now the end of key k's group.
        let mut begin = 0;
        for &end in &starts[..n_keys] {
            let group = &mut entries[begin..end as usize];
            if group.len() > INSERTION_MAX {
                sort_by_comparison(group);
            } else if group.len() > 1 {
                insertion_descending(group);
            }
            begin = end as usize;
        }
    }
}

/// The hierarchical timing wheel (see the module docs).
pub(crate) struct Wheel {
    /// The tick the wheel stands at: every entry outside `current` has a later tick.
    elapsed: u64,
    /// The entries of tick `elapsed` and earlier, sorted by `(time, seq)` descending: the next
    /// one to fire is last.
    current: Vec<Entry>,
    /// `LEVELS × SLOTS` buckets, unsorted.
    buckets: Vec<Vec<Entry>>,
    /// Per level, which buckets are not empty.
    occupied: [Occupancy; LEVELS],
    /// Per timer slot: odd while it has a pending entry, bumped by every removal.
    tags: Vec<u32>,
    /// Live and stale entries held.
    live: usize,
    stale: usize,
    /// A spare buffer for the bucket being spread, kept for its capacity.
    scratch: Vec<Entry>,
    sorter: Sorter,
}

impl Wheel {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Wheel {
            elapsed: 0,
            current: Vec::new(),
            buckets: vec![Vec::new(); LEVELS * SLOTS],
            occupied: [Occupancy::default(); LEVELS],
            tags: Vec::with_capacity(capacity),
            live: 0,
            stale: 0,
            scratch: Vec::new(),
            sorter: Sorter::default(),
        }
    }

    /// Whether `entry` is its slot's pending entry.
    #[inline]
    fn is_live(&self, entry: &Entry) -> bool {
        self.tags[entry.slot as usize] == entry.tag
    }

    /// Adds slot `idx` under `key`. The slot has no pending entry (the manager's ground rule 2).
    #[inline]
    pub(crate) fn push(&mut self, key: QueueKey, idx: u32) {
        let i = idx as usize;
        if self.tags.len() <= i {
            self.tags.resize(i + 1, 0);
        }
        debug_assert!(self.tags[i].is_multiple_of(2), "one pending entry per slot");
        let tag = self.tags[i].wrapping_add(1);
        self.tags[i] = tag;
        self.live += 1;
        let entry = Entry {
            time: ordered_bits(key.0.get()),
            seq: key.1,
            slot: idx,
            tag,
        };
        self.insert(entry, tick(key.0.get()));
    }

    /// Files an entry of tick `t`: into `current`, in order, when `t` is not after the
    /// wheel's position, else into the bucket of its level.
    #[inline]
    fn insert(&mut self, entry: Entry, t: u64) {
        if t <= self.elapsed {
            let order = entry.order();
            let at = self.current.partition_point(|e| e.order() > order);
            self.current.insert(at, entry);
        } else {
            self.file(entry, t);
        }
    }

    /// Files an entry of tick `t > elapsed` into the bucket of its level.
    #[inline]
    fn file(&mut self, entry: Entry, t: u64) {
        let level = (63 - ((self.elapsed ^ t) | (SLOTS as u64 - 1)).leading_zeros()) / BITS;
        let slot = ((t >> (level * BITS)) as usize) & (SLOTS - 1);
        self.occupied[level as usize].set(slot);
        self.buckets[level as usize * SLOTS + slot].push(entry);
    }

    /// Makes slot `slot`'s pending entry stale (it stays where it is until it reaches the
    /// front or the wheel is compacted).
    #[inline]
    fn retire(&mut self, slot: usize) {
        let tag = self.tags[slot].wrapping_add(1);
        self.tags[slot] = tag;
        self.live -= 1;
        self.stale += 1;
        if tag == 0 {
            // Tags restart: no stale entry may survive to meet a reused one.
            self.compact();
        }
    }

    /// Drops every stale entry, prefetching the tags a few entries ahead (the pass is
    /// bound by memory bandwidth rather than by one miss per entry).
    #[cold]
    fn compact(&mut self) {
        let tags = &self.tags;
        // `retain`, with the prefetch; keeps the order (`current` is sorted).
        let keep = |entries: &mut Vec<Entry>| {
            let mut kept = 0;
            for i in 0..entries.len() {
                if let Some(ahead) = entries.get(i + AHEAD) {
                    prefetch_index(tags, ahead.slot as usize);
                }
                let entry = entries[i];
                if tags[entry.slot as usize] == entry.tag {
                    entries[kept] = entry;
                    kept += 1;
                }
            }
            entries.truncate(kept);
        };
        keep(&mut self.current);
        for (bucket, entries) in self.buckets.iter_mut().enumerate() {
            if entries.is_empty() {
                continue;
            }
            keep(entries);
            if entries.is_empty() {
                self.occupied[bucket / SLOTS].clear(bucket % SLOTS);
                *entries = Vec::new();
            }
        }
        self.stale = 0;
    }

    /// Removes slot `idx`'s pending entry; `false` if it has none.
    #[inline]
    pub(crate) fn cancel(&mut self, idx: u32) -> bool {
        let slot = idx as usize;
        if self.tags.get(slot).is_none_or(|tag| tag.is_multiple_of(2)) {
            return false;
        }
        self.retire(slot);
        if self.stale >= self.live + COMPACT_SLACK {
            self.compact();
        }
        true
    }

    /// Moves slot `idx`'s pending entry to `key`; `false` if it has none.
    #[inline]
    pub(crate) fn reschedule(&mut self, idx: u32, key: QueueKey) -> bool {
        if !self.cancel(idx) {
            return false;
        }
        self.push(key, idx);
        true
    }

    /// Starts loading the tag a cancel or change of slot `idx` reads (a hint).
    #[inline]
    pub(crate) fn prefetch(&self, idx: u32) {
        if (idx as usize) < self.tags.len() {
            prefetch_index(&self.tags, idx as usize);
        }
    }

    /// Drops stale entries from the end of `current`; `true` if a live one is left there.
    #[inline]
    fn settle_current(&mut self) -> bool {
        while let Some(last) = self.current.last() {
            if self.is_live(last) {
                return true;
            }
            self.current.pop();
            self.stale -= 1;
        }
        false
    }

    /// The next non-empty bucket: `(level, slot, first tick)`.
    #[inline]
    fn next_bucket(&self) -> Option<(usize, usize, u64)> {
        for level in 0..LEVELS {
            let shift = level as u32 * BITS;
            let pos = (self.elapsed >> shift) as usize & (SLOTS - 1);
            if let Some(slot) = self.occupied[level].first_from(pos) {
                let block = match 1u64.checked_shl(shift + BITS) {
                    Some(span) => self.elapsed & !(span - 1),
                    None => 0,
                };
                let start = (block | ((slot as u64) << shift)).max(self.elapsed);
                return Some((level, slot, start));
            }
        }
        None
    }

    /// Moves the wheel forward, no further than tick `limit`, until `current` has a live
    /// entry; `false` when every pending entry lies beyond `limit` (or none is left).
    fn reach(&mut self, limit: u64) -> bool {
        loop {
            if self.settle_current() {
                return true;
            }
            let Some((level, slot, start)) = self.next_bucket() else {
                return false;
            };
            if start > limit {
                return false;
            }
            self.elapsed = start;
            let bucket = level * SLOTS + slot;
            self.occupied[level].clear(slot);
            if level == 0 {
                // One tick: the bucket becomes `current` (empty here) as it is.
                std::mem::swap(&mut self.current, &mut self.buckets[bucket]);
            } else {
                // Entries of tick `start` join `current`, the rest move down a level or more;
                // stale ones move too (checking would cost a random access each).
                let mut spread = std::mem::take(&mut self.scratch);
                std::mem::swap(&mut spread, &mut self.buckets[bucket]);
                if level == 1 {
                    // The common move (a timer due within 64 s): every entry shares the
                    // wheel's position above bit 8, so it goes to level 0 at its tick's low
                    // byte. Written out, this loop is half the instructions of `file`'s.
                    let (occupied, buckets) = (&mut self.occupied[0], &mut self.buckets[..SLOTS]);
                    for entry in spread.drain(..) {
                        let t = tick(entry.due());
                        if t <= start {
                            self.current.push(entry);
                        } else {
                            let slot = t as usize & (SLOTS - 1);
                            occupied.set(slot);
                            buckets[slot].push(entry);
                        }
                    }
                } else {
                    for entry in spread.drain(..) {
                        let t = tick(entry.due());
                        if t <= start {
                            self.current.push(entry);
                        } else {
                            self.file(entry, t);
                        }
                    }
                }
                self.scratch = spread;
            }
            self.sorter.sort_descending(&mut self.current);
            for entry in self.current.iter().rev().take(AHEAD) {
                prefetch_index(&self.tags, entry.slot as usize);
            }
        }
    }

    /// The earliest entry if it is due at or before `target`, moving the wheel no further
    /// than `target`'s tick.
    #[inline]
    pub(crate) fn peek_due(&mut self, target: f64) -> Option<(f64, u32)> {
        if !self.settle_current() && !self.reach(tick(target)) {
            return None;
        }
        let last = self.current.last()?;
        let due = last.due();
        (due <= target).then_some((due, last.slot))
    }

    /// Removes and returns the earliest entry if it is due at or before `target`.
    #[inline]
    pub(crate) fn pop_due(&mut self, target: f64) -> Option<(QueueKey, u32)> {
        self.peek_due(target)?;
        let entry = self.current.pop()?;
        let tag = self.tags[entry.slot as usize].wrapping_add(1);
        self.tags[entry.slot as usize] = tag;
        self.live -= 1;
        if tag == 0 {
            self.compact();
        }
        if let Some(ahead) = self.upcoming_entry(AHEAD) {
            prefetch_index(&self.tags, ahead.slot as usize);
        }
        Some(((TimeKey::new(entry.due()), entry.seq), entry.slot))
    }

    #[inline]
    fn upcoming_entry(&self, ahead: usize) -> Option<&Entry> {
        let len = self.current.len();
        len.checked_sub(ahead + 1).map(|i| &self.current[i])
    }

    /// The slot of the entry `ahead` places after the next one to fire, if `current` holds it
    /// (a hint for prefetching: it may be stale).
    #[inline]
    pub(crate) fn upcoming_slot(&self, ahead: usize) -> Option<u32> {
        self.upcoming_entry(ahead).map(|e| e.slot)
    }

    /// A lower bound of the earliest pending time (`+∞` when nothing is pending): exact when
    /// `current` holds a live entry, else the first time of the next non-empty bucket.
    #[inline]
    pub(crate) fn lower_bound(&mut self) -> f64 {
        if self.settle_current() {
            return self.current.last().map_or(f64::INFINITY, Entry::due);
        }
        match self.next_bucket() {
            Some((_, _, start)) => start as f64 / TICKS,
            None => f64::INFINITY,
        }
    }

    /// The earliest pending time, exactly, without moving the wheel: the minimum of the first
    /// bucket with a live entry. O(size of that bucket); the game loop itself never needs it.
    pub(crate) fn peek_time(&mut self) -> Option<f64> {
        if self.settle_current() {
            return self.current.last().map(Entry::due);
        }
        if self.live == 0 {
            return None;
        }
        // Buckets in the order the wheel will reach them: the lower levels first, each from
        // the wheel's position on.
        for level in 0..LEVELS {
            let shift = level as u32 * BITS;
            let pos = (self.elapsed >> shift) as usize & (SLOTS - 1);
            let mut from = pos;
            while let Some(slot) = self.occupied[level].first_from(from) {
                from = slot + 1;
                let earliest = self.buckets[level * SLOTS + slot]
                    .iter()
                    .filter(|e| self.is_live(e))
                    .map(Entry::order)
                    .min();
                if let Some(order) = earliest {
                    return Some(from_ordered_bits((order >> 64) as u64));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    use super::*;

    /// The wheel against a `BTreeMap` over a random mix of pushes, cancels, reschedules and
    /// pops with a clock that moves forward by steps from a thousandth of a tick to days:
    /// every pop, every exact peek, every lower bound and every cancel's answer must agree.
    /// `tag_start` starts the slots' tags just short of wrapping.
    fn shadow(seed: u64, n_ops: usize, n_slots: u32, tag_start: u32) -> usize {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut wheel = Wheel::with_capacity(0);
        wheel.tags = vec![tag_start; n_slots as usize];
        let mut shadow: BTreeMap<(u64, u64), u32> = BTreeMap::new();
        let mut pending: Vec<Option<(u64, u64)>> = vec![None; n_slots as usize];
        let mut now = 0.0f64;
        let mut seq = 0u64;
        let mut n_popped = 0;
        let time = |rng: &mut Xoshiro256PlusPlus, now: f64| -> f64 {
            match rng.random_range(0..10) {
                0 => now - rng.random_range(0.0..5.0),
                1 => now,
                2..=5 => now + rng.random_range(0.0..0.05),
                6..=8 => now + rng.random_range(0.0..100.0),
                _ => now + rng.random_range(0.0..1e7),
            }
        };
        for _ in 0..n_ops {
            let slot = rng.random_range(0..n_slots);
            let s = slot as usize;
            match rng.random_range(0..10) {
                0..=3 => match pending[s] {
                    None => {
                        let t = time(&mut rng, now) + 0.0;
                        seq += 1;
                        wheel.push((TimeKey::new(t), seq), slot);
                        let key = (ordered_bits(t), seq);
                        shadow.insert(key, slot);
                        pending[s] = Some(key);
                    }
                    Some(key) => {
                        let t = time(&mut rng, now) + 0.0;
                        let moved = wheel.reschedule(slot, (TimeKey::new(t), key.1));
                        assert!(moved, "a scheduled slot reschedules");
                        shadow.remove(&key);
                        let key = (ordered_bits(t), key.1);
                        shadow.insert(key, slot);
                        pending[s] = Some(key);
                    }
                },
                4..=5 => {
                    let expected = pending[s].is_some();
                    assert_eq!(wheel.cancel(slot), expected);
                    if let Some(key) = pending[s].take() {
                        shadow.remove(&key);
                        // A slot with nothing pending is refused, and so is a reschedule.
                        assert!(!wheel.cancel(slot));
                        assert!(!wheel.reschedule(slot, (TimeKey::new(now), 0)));
                    }
                }
                6..=8 => {
                    now += match rng.random_range(0..4) {
                        0 => 0.0,
                        1 => rng.random_range(0.0..0.01),
                        2 => rng.random_range(0.0..2.0),
                        _ => rng.random_range(0.0..1e5),
                    };
                    loop {
                        let expected = shadow
                            .first_key_value()
                            .filter(|(k, _)| from_ordered_bits(k.0) <= now)
                            .map(|(&k, &v)| (k, v));
                        let got = wheel.pop_due(now);
                        match (got, expected) {
                            (None, None) => break,
                            (Some(((t, q), slot)), Some((key, v))) => {
                                assert_eq!((ordered_bits(t.get()), q, slot), (key.0, key.1, v));
                                shadow.remove(&key);
                                pending[slot as usize] = None;
                                n_popped += 1;
                            }
                            (got, expected) => panic!("popped {got:?}, expected {expected:?}"),
                        }
                    }
                }
                _ => {
                    let min = shadow.keys().next().map(|k| from_ordered_bits(k.0));
                    assert!(wheel.lower_bound() <= min.unwrap_or(f64::INFINITY));
                    assert_eq!(wheel.peek_time(), min);
                }
            }
            assert_eq!(wheel.live, shadow.len());
        }
        n_popped
    }

    #[test]
    fn matches_a_btreemap() {
        let n_ops = if cfg!(debug_assertions) {
            20_000
        } else {
            1_000_000
        };
        for (seed, n_slots) in [(1, 8), (2, 200), (3, 5_000)] {
            assert!(shadow(seed, n_ops, n_slots, 0) > n_ops / 20);
        }
    }

    #[test]
    fn matches_a_btreemap_across_tag_wraps() {
        let n_ops = if cfg!(debug_assertions) {
            20_000
        } else {
            300_000
        };
        shadow(4, n_ops, 16, u32::MAX - 1_001); // even: no entry pending
    }

    #[test]
    fn stale_entries_are_compacted() {
        let mut wheel = Wheel::with_capacity(4);
        wheel.push((TimeKey::new(50.0), 0), 0);
        for k in 0..1_000_000u64 {
            let at = 10.0 + (k % 1000) as f64;
            assert!(wheel.reschedule(0, (TimeKey::new(at), 0)));
        }
        let held: usize = wheel.buckets.iter().map(Vec::len).sum::<usize>() + wheel.current.len();
        assert!(
            held <= COMPACT_SLACK + 2,
            "{held} entries held for one timer"
        );
        assert_eq!(
            wheel.pop_due(1e9).map(|(k, s)| (k.0.get(), s)),
            Some((10.0 + 999.0, 0))
        );
        assert_eq!(wheel.pop_due(1e9), None);
    }

    #[test]
    fn ordered_bits_keep_the_order_of_times() {
        let times = [
            -1e300,
            -2.5,
            -1e-300,
            0.0,
            1e-300,
            1.0 / 1024.0,
            0.5,
            1.0,
            7e15,
            1e300,
        ];
        for pair in times.windows(2) {
            assert!(ordered_bits(pair[0]) < ordered_bits(pair[1]), "{pair:?}");
        }
        for t in times {
            assert_eq!(from_ordered_bits(ordered_bits(t)), t);
        }
    }

    /// The counting sort of a tick against the comparison sort, on entries whose times are
    /// spread, crowded into a few values, equal, negative, saturated or straddle a power of
    /// two, and at every size around the insertion cut-off.
    #[test]
    fn the_counting_sort_matches_the_comparison_sort() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut sorter = Sorter::default();
        let cases: [fn(&mut Xoshiro256PlusPlus) -> f64; 6] = [
            |rng| 7.0 + rng.random_range(0.0..1.0 / 1024.0),
            |rng| 3.0 + f64::from(rng.random_range(0..4u32)) / 4096.0,
            |_| 5.5,
            |rng| -rng.random_range(0.0..1e6),
            |rng| if rng.random() { 1e300 } else { f64::MAX },
            |rng| 2.0 - 1e-4 + rng.random_range(0.0..2e-4),
        ];
        for case in cases {
            for n in [0, 1, 2, 15, 16, 17, 40, 100, 1_000, 5_000] {
                let mut entries: Vec<Entry> = (0..n)
                    .map(|i| Entry {
                        time: ordered_bits(case(&mut rng) + 0.0),
                        seq: rng.random_range(0..u64::MAX / 2),
                        slot: i,
                        tag: 1,
                    })
                    .collect();
                let mut expected = entries.clone();
                sort_by_comparison(&mut expected);
                sorter.sort_descending(&mut entries);
                let key = |e: &Entry| (e.time, e.seq, e.slot);
                assert_eq!(
                    entries.iter().map(key).collect::<Vec<_>>(),
                    expected.iter().map(key).collect::<Vec<_>>(),
                    "{n} entries"
                );
            }
        }
    }

    #[test]
    fn ticks_are_exact_and_saturate() {
        assert_eq!(tick(-3.0), 0);
        assert_eq!(tick(1.0), 1024);
        assert_eq!(tick(1.0 - f64::EPSILON), 1023);
        assert_eq!(tick(1e300), MAX_TICK);
    }
}
