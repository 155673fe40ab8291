//! The worker's scheduler: its LPs with an executable event, by their smallest event.
//!
//! # Implementation
//!
//! A *lazy ladder queue* (after Tang, Goh & Thng, "Ladder queue: an O(1) priority queue
//! structure for large-scale discrete event simulation", 2005) of 16-byte entries
//! `(time, age, LP)`. Entries carry no handle and no position: an LP whose smallest event
//! moves earlier is pushed again, the worker keeps in the LP record the one key its entry is
//! valid for, and entries that no longer match are dropped when they surface (they surface no
//! later than the LP's valid entry, since a valid key only ever replaces a larger one). An LP
//! whose smallest event moves later keeps its entry, which surfaces early and is re-pushed
//! with the real key.
//!
//! Hand-written rather than [`warpsim_queue::LadderQueue`] because the general queue keeps a
//! handle slot per entry (for cancel and reschedule), which this lazy use never needs, and
//! rather than a heap because a heap's pop sifts through every level: at 1,024 LPs a 4-ary
//! heap's pop was ≈280 instructions per event, more than the model's own handler (measured
//! with cachegrind, see BENCHMARKS.md).
//!
//! The ladder has three tiers, each holding entries later than the one before:
//!
//! - **bottom**: a small `Vec` sorted latest-first, popped from its end;
//! - **rungs**: up to [`MAX_RUNGS`] arrays of unsorted buckets, each rung splitting one bucket
//!   of the rung above into as many buckets as it held entries;
//! - **top**: an unsorted `Vec` of entries at or after `top_start`.
//!
//! An entry goes to the first tier whose range holds its time; a time below every rung goes
//! into the bottom in order. When the bottom is empty, the next non-empty bucket of the finest
//! rung is sorted into it, or split into a new rung when it holds more than [`THRESHOLD`]
//! entries of different times; when the rungs are empty, the top becomes a new rung. Every
//! entry is moved a bounded number of times, so push and pop take amortised O(1) for the
//! event-time distributions of simulation (Tang et al.). Buckets are found with
//! `⌊(t − start) / width⌋`, which is monotone in `t`: that, not exact arithmetic, is what keeps
//! the order (a time on a rounded boundary lands in one bucket or its neighbour, and both
//! orders of the two are then right).
//!
//! Ties: entries order by `(time, age, LP)`. The age keeps zero-delay cascades in the order
//! the sequential kernel runs them; the LP index only makes the order total. The exact order
//! among LPs is not needed for correctness (each LP runs its own events in key order and
//! rollback repairs the rest); it keeps rollbacks rare.

/// A bucket with more entries than this (of different times) becomes a rung of its own
/// instead of being sorted into the bottom (Tang et al. use 50).
const THRESHOLD: usize = 48;

/// The most rungs; past it, a crowded bucket is sorted into the bottom whatever its size.
const MAX_RUNGS: usize = 8;

/// One entry: `time` (the bits of a non-negative `f64`, which order like the number), then
/// `tie` = (age, LP index).
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    tie: u64,
}

impl Entry {
    /// The entry as one number in its order: compares in two instructions, without branches.
    #[inline]
    fn order(self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.tie)
    }

    #[inline]
    fn at(self) -> f64 {
        f64::from_bits(self.time)
    }
}

/// A rung: `buckets[b]` holds the entries with `⌊(t − start) / width⌋ = b` (the last also the
/// later ones of its range); buckets before `cur` are used up. Below the coarsest rung, rung
/// `j` was split from bucket `parent` of rung `j − 1`.
#[derive(Debug, Default)]
struct Rung {
    start: f64,
    width: f64,
    cur: usize,
    parent: usize,
    buckets: Vec<Vec<Entry>>,
}

impl Rung {
    /// The bucket index of time `t` as a float (negative below the rung).
    #[inline]
    fn position(&self, t: f64) -> f64 {
        (t - self.start) / self.width
    }
}

/// A lazy ladder queue of LP indices keyed by (time, age), possibly with stale entries.
#[derive(Debug, Default)]
pub(crate) struct LpQueue {
    bottom: Vec<Entry>,
    /// `rungs[..active]` are in use, the rest kept for their buckets' memory.
    rungs: Vec<Rung>,
    active: usize,
    top: Vec<Entry>,
    top_start: f64,
    top_min: f64,
    top_max: f64,
    len: usize,
}

impl LpQueue {
    /// An empty queue for about `lps` LPs.
    pub(crate) fn new(lps: usize) -> LpQueue {
        LpQueue {
            top: Vec::with_capacity(lps),
            top_start: 0.0,
            top_min: f64::INFINITY,
            top_max: f64::NEG_INFINITY,
            ..LpQueue::default()
        }
    }

    /// Adds an entry for LP `lp` at (`time`, `age`).
    #[inline]
    pub(crate) fn push(&mut self, lp: u32, time: u64, age: u32) {
        let entry = Entry {
            time,
            tie: (u64::from(age) << 32) | u64::from(lp),
        };
        self.len += 1;
        let t = entry.at();
        if t >= self.top_start {
            self.top_min = self.top_min.min(t);
            self.top_max = self.top_max.max(t);
            self.top.push(entry);
            return;
        }
        for j in 0..self.active {
            let rung = &mut self.rungs[j];
            let x = rung.position(t);
            if x < 0.0 {
                break;
            }
            // The same bucket the entry would have been put in had it come with the others
            // (times past the rung's range belong to its last bucket).
            let b = (x as usize).min(rung.buckets.len() - 1);
            if b >= rung.cur {
                rung.buckets[b].push(entry);
                return;
            }
            // That bucket is used up: the entry belongs to the finer rung split from it, or
            // else it is below every rung.
            if !(j + 1 < self.active && b == self.rungs[j + 1].parent) {
                break;
            }
        }
        self.insert_bottom(entry);
    }

    /// The first entry, `(time bits, age, LP index)`, after moving entries down as needed.
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<(u64, u32, u32)> {
        if self.bottom.is_empty() {
            self.refill();
        }
        self.bottom
            .last()
            .map(|entry| (entry.time, (entry.tie >> 32) as u32, entry.tie as u32))
    }

    /// The LP of the entry after the first, if the bottom holds one (a hint: it may be stale).
    #[inline]
    pub(crate) fn peek_second(&self) -> Option<u32> {
        let at = self.bottom.len().checked_sub(2)?;
        Some(self.bottom[at].tie as u32)
    }

    /// Removes the first entry.
    #[inline]
    pub(crate) fn pop(&mut self) {
        if self.bottom.is_empty() {
            self.refill();
        }
        if self.bottom.pop().is_some() {
            self.len -= 1;
        }
    }

    /// Entries, stale ones included.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn insert_bottom(&mut self, entry: Entry) {
        let order = entry.order();
        // Latest first, and among equal entries the new one nearer the end: it pops first,
        // which for identical entries makes no difference.
        let at = self.bottom.partition_point(|other| other.order() > order);
        self.bottom.insert(at, entry);
    }

    /// Moves the next entries into the (empty) bottom: the next non-empty bucket of the
    /// finest rung, split into a new rung if crowded; or the top, as a new rung.
    fn refill(&mut self) {
        loop {
            if self.active == 0 {
                if self.top.is_empty() {
                    return;
                }
                self.rung_from_top();
                continue;
            }
            let finest = self.active - 1;
            let rung = &mut self.rungs[finest];
            while rung.cur < rung.buckets.len() && rung.buckets[rung.cur].is_empty() {
                rung.cur += 1;
            }
            if rung.cur == rung.buckets.len() {
                self.active -= 1;
                continue;
            }
            let b = rung.cur;
            rung.cur += 1;
            let mut bucket = std::mem::take(&mut rung.buckets[b]);
            if bucket.len() > THRESHOLD && self.active < MAX_RUNGS && self.split(&bucket, b) {
                bucket.clear();
            } else {
                self.bottom.append(&mut bucket);
                self.bottom
                    .sort_unstable_by_key(|entry| std::cmp::Reverse(entry.order()));
            }
            // Give the bucket its memory back (it was taken out to be read).
            self.rungs[finest].buckets[b] = bucket;
            if !self.bottom.is_empty() {
                return;
            }
        }
    }

    /// Spreads `entries` (bucket `parent` of the finest rung) over a new, finer rung. Returns
    /// `false`, doing nothing, when they all have one time (no rung can split them).
    fn split(&mut self, entries: &[Entry], parent: usize) -> bool {
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for entry in entries {
            min = min.min(entry.at());
            max = max.max(entry.at());
        }
        let width = (max - min) / entries.len() as f64;
        if width.is_nan() || width <= 0.0 {
            return false;
        }
        let rung = self.fresh_rung(min, width, entries.len(), parent);
        for &entry in entries {
            let last = rung.buckets.len() - 1;
            let b = (rung.position(entry.at()).max(0.0) as usize).min(last);
            rung.buckets[b].push(entry);
        }
        true
    }

    /// Makes the top the coarsest rung (the rungs are empty), or sorts it into the bottom
    /// when all its entries have one time.
    fn rung_from_top(&mut self) {
        let mut top = std::mem::take(&mut self.top);
        let (min, max) = (self.top_min, self.top_max);
        // Later entries, up to `max`, go to the new rung (or the bottom); after it, to the top.
        self.top_start = next_up(max);
        self.top_min = f64::INFINITY;
        self.top_max = f64::NEG_INFINITY;
        let width = (max - min) / top.len() as f64;
        if width > 0.0 {
            let rung = self.fresh_rung(min, width, top.len(), 0);
            for &entry in &top {
                let last = rung.buckets.len() - 1;
                let b = (rung.position(entry.at()).max(0.0) as usize).min(last);
                rung.buckets[b].push(entry);
            }
            top.clear();
        } else {
            self.bottom.append(&mut top);
            self.bottom
                .sort_unstable_by_key(|entry| std::cmp::Reverse(entry.order()));
        }
        self.top = top;
    }

    /// Activates a rung of `n` empty buckets, reusing an old one's memory.
    fn fresh_rung(&mut self, start: f64, width: f64, n: usize, parent: usize) -> &mut Rung {
        if self.active == self.rungs.len() {
            self.rungs.push(Rung::default());
        }
        let rung = &mut self.rungs[self.active];
        self.active += 1;
        rung.start = start;
        rung.width = width;
        rung.cur = 0;
        rung.parent = parent;
        // Buckets keep their memory from the rung's last use (most are reused at once).
        rung.buckets.resize_with(n, Vec::new);
        for bucket in &mut rung.buckets {
            bucket.clear();
        }
        rung
    }
}

/// The smallest `f64` above `x` (`x` finite and non-negative, or `-∞`).
fn next_up(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        return f64::MIN;
    }
    f64::from_bits(x.to_bits() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// Pushes and pops against a sorted multiset of the same entries; `time` draws a time
    /// given the last one popped.
    fn against_oracle(ops: usize, pop_every: u64, mut time: impl FnMut(&mut Rng, f64) -> f64) {
        let mut queue = LpQueue::new(8);
        let mut oracle: BTreeMap<(u64, u32, u32), usize> = BTreeMap::new();
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut now = 0.0;
        let mut entries = 0;
        for _ in 0..ops {
            if rng.next().is_multiple_of(pop_every) {
                let first = queue.peek();
                queue.pop();
                match oracle.first_key_value() {
                    Some((&expected, _)) => {
                        assert_eq!(first, Some(expected));
                        now = f64::from_bits(expected.0);
                        entries -= 1;
                        let count = oracle.get_mut(&expected).expect("present");
                        *count -= 1;
                        if *count == 0 {
                            oracle.remove(&expected);
                        }
                    }
                    None => assert_eq!(first, None),
                }
            } else {
                let t = time(&mut rng, now);
                let entry = (
                    t.to_bits(),
                    (rng.next() % 3) as u32,
                    (rng.next() % 5) as u32,
                );
                queue.push(entry.2, entry.0, entry.1);
                *oracle.entry(entry).or_default() += 1;
                entries += 1;
            }
            assert_eq!(queue.peek(), oracle.first_key_value().map(|(k, _)| *k));
            assert_eq!(queue.len(), entries);
        }
    }

    #[test]
    fn few_distinct_times_with_ties_and_duplicates() {
        // Tiny subnormal "times" (raw bit patterns 0..16): ties and duplicates everywhere,
        // widths near the bottom of the float range.
        against_oracle(200_000, 3, |rng, _| f64::from_bits(rng.next() % 16));
    }

    #[test]
    fn a_simulation_s_hold_pattern_with_stragglers() {
        // Mostly "now + exponential" (the hold model), some far ahead, some below now (a
        // rollback puts events back, a straggler arrives), some at exactly now.
        // And some exactly at the latest time so far: the end of a rung's range, where a
        // used-up last bucket must not take new entries.
        let mut latest = 0.0f64;
        against_oracle(400_000, 2, |rng, now| {
            let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
            let t = match rng.next() % 10 {
                0 => now * u,
                1 => now,
                2 => now + 1000.0 * u,
                3 => latest,
                _ => now - (1.0 - u).ln(),
            };
            latest = latest.max(t);
            t
        });
    }

    #[test]
    fn a_push_into_a_used_up_last_bucket_is_not_lost() {
        // Three entries make a rung of three buckets; popping two and peeking uses up the
        // last bucket (the third entry moves to the bottom), and a push at the rung's end
        // must not land in that used-up bucket.
        let mut queue = LpQueue::new(4);
        for (lp, t) in [(0, 1.0f64), (1, 2.0), (2, 3.0)] {
            queue.push(lp, t.to_bits(), 0);
        }
        queue.pop();
        queue.pop();
        assert_eq!(queue.peek(), Some((3.0f64.to_bits(), 0, 2)));
        queue.push(3, 3.0f64.to_bits(), 1);
        queue.push(4, 2.5f64.to_bits(), 0);
        let order: Vec<u32> = std::iter::from_fn(|| {
            let first = queue.peek()?;
            queue.pop();
            Some(first.2)
        })
        .collect();
        assert_eq!(order, [4, 2, 3]);
        assert_eq!(queue.len(), 0);
    }

    #[test]
    fn crowded_buckets_split_into_rungs() {
        // Many pushes before any pop, so buckets overflow and rungs nest; times clustered.
        against_oracle(300_000, 9, |rng, now| {
            let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
            now + (u * u * u * 10.0).floor() * 0.125 + u * 1e-9
        });
    }
}
