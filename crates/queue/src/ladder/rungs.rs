//! The ladder's tiers: the rungs of buckets, the entries they hold, the spill heap's order and
//! the bucket geometry.

use std::cmp::Ordering;

use crate::Key;

/// What Bottom and the spill heap store: a key plus the slot it belongs to.
#[derive(Clone, Copy)]
pub(super) struct Entry<K> {
    pub(super) key: K,
    pub(super) slot: u32,
    pub(super) stamp: u32,
}

impl<K: Key> Entry<K> {
    /// The entry as Top and the rungs store it.
    #[inline]
    pub(super) fn slim(&self, p: f64) -> Slim {
        Slim {
            p,
            slot: self.slot,
            stamp: self.stamp,
        }
    }
}

/// What Top, the rungs and the small mode store: the key's priority, the slot and its stamp,
/// 16 bytes. Top and the rungs spread entries by priority only, so the key (in the slab) is
/// not needed until a bucket is sorted into Bottom, which reads it there: a pending event
/// costs 16 bytes in the tiers instead of the key's size plus 8 (40 bytes for the kernels'
/// 32-byte key), and spreading moves less memory.
#[derive(Clone, Copy)]
pub(super) struct Slim {
    pub(super) p: f64,
    pub(super) slot: u32,
    pub(super) stamp: u32,
}

/// The rungs, coarsest first.
pub(super) struct Ladder {
    /// Rung storage; `rungs[..n_rungs]` are in use, the rest keep their buckets for reuse.
    pub(super) rungs: Vec<Rung>,
    pub(super) n_rungs: usize,
}

impl Ladder {
    /// Adds a rung of `n` buckets below the others, spreads `entries` over it and returns it.
    pub(super) fn push_rung(
        &mut self,
        (start, inv_width): (f64, f64),
        n: usize,
        entries: impl Iterator<Item = Slim>,
    ) -> &mut Rung {
        if self.rungs.len() == self.n_rungs {
            self.rungs.push(Rung {
                start: 0.0,
                inv_width: 0.0,
                n_buckets: 1,
                cur: 0,
                buckets: Vec::new(),
            });
        }
        let rung = &mut self.rungs[self.n_rungs];
        self.n_rungs += 1;
        rung.start = start;
        rung.inv_width = inv_width;
        rung.n_buckets = n;
        rung.cur = 0;
        if rung.buckets.len() < n {
            rung.buckets.resize_with(n, Vec::new);
        }
        rung.spread(entries);
        rung
    }

    pub(super) fn active(&mut self) -> &mut [Rung] {
        &mut self.rungs[..self.n_rungs]
    }
}

/// One rung: `n_buckets` buckets of equal width starting at `start`.
pub(super) struct Rung {
    pub(super) start: f64,
    /// Reciprocal of the bucket width (multiplying is cheaper than dividing).
    pub(super) inv_width: f64,
    pub(super) n_buckets: usize,
    /// First bucket not yet emptied (the paper's `RCur`, as an index).
    pub(super) cur: usize,
    /// `buckets[..n_buckets]` are in use; the rest are empty and kept for reuse.
    pub(super) buckets: Vec<Vec<Slim>>,
}

impl Rung {
    /// Puts each of `entries` into its bucket.
    pub(super) fn spread(&mut self, entries: impl Iterator<Item = Slim>) {
        for entry in entries {
            let bucket = self.bucket_of(entry.p);
            self.buckets[bucket].push(entry);
        }
    }

    /// The bucket for priority `p`. Monotone in `p` (the float-to-int cast saturates:
    /// priorities below `start` map to 0, overflow to the last bucket). The cast goes to
    /// `u32` because that saturating conversion is a few instructions cheaper than to `usize`
    /// and a rung never has more than `u32::MAX` buckets.
    #[inline]
    pub(super) fn bucket_of(&self, p: f64) -> usize {
        (((p - self.start) * self.inv_width) as u32 as usize).min(self.n_buckets - 1)
    }
}

/// An entry ordered by its key only, for the spill heap.
pub(super) struct ByKey<K>(pub(super) Entry<K>);

impl<K: Ord> PartialEq for ByKey<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}
impl<K: Ord> Eq for ByKey<K> {}
impl<K: Ord> PartialOrd for ByKey<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<K: Ord> Ord for ByKey<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.key.cmp(&other.0.key)
    }
}

/// Bucket geometry for `n_buckets` buckets over `[min, max]`: `(start, 1 / width)`, or `None`
/// when the spread cannot be divided (zero, or too small for `f64`).
pub(super) fn geometry(min: f64, max: f64, n_buckets: usize) -> Option<(f64, f64)> {
    let n = n_buckets as f64;
    let mut width = (max - min) / n;
    if !width.is_finite() {
        // `max - min` overflowed; this form cannot.
        width = max / n - min / n;
    }
    let inv_width = 1.0 / width;
    (width > 0.0 && inv_width.is_finite()).then_some((min, inv_width))
}
