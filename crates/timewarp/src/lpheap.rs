//! The worker's scheduler: its LPs with an executable event, by their smallest event.
//!
//! Hand-written rather than [`warpsim_queue::IndexedHeap`] because the LP set has a shape
//! the general queue cannot assume. An indexed heap keeps every entry's position up to date,
//! which at 16 K LPs is a cache miss written on every level of every sift; here entries carry
//! no position. Instead the heap is *lazy*: an LP whose smallest event moves earlier is pushed
//! again, and the worker keeps, in the LP record, the one key its entry is valid for; entries
//! that no longer match are dropped when they surface (they surface no later than the LP's
//! valid entry, since a valid key only ever replaces a larger one). An LP whose smallest event
//! moves later keeps its entry, which surfaces early and is then re-pushed with the real key.
//! Entries are 16 bytes, so the four children of a node share one cache line. Measured with
//! cachegrind on PHOLD (see BENCHMARKS.md).

/// Children per node.
const ARITY: usize = 4;

/// One entry: `time` (the bits of a non-negative `f64`, which order like the number), then
/// `tie` = (age, LP index). The age keeps zero-delay cascades in the order the sequential
/// kernel runs them; the LP index only makes the order total. The exact key order among LPs
/// is not needed for correctness (each LP runs its own events in key order and rollback
/// repairs the rest); it keeps rollbacks rare.
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
}

/// A 4-ary min-heap of LP indices keyed by (time, age), possibly with stale entries.
#[derive(Debug, Default)]
pub(crate) struct LpHeap {
    heap: Vec<Entry>,
}

impl LpHeap {
    /// An empty heap with room for `lps` entries.
    pub(crate) fn new(lps: usize) -> LpHeap {
        LpHeap {
            heap: Vec::with_capacity(lps),
        }
    }

    /// The first entry: `(time bits, age, LP index)`.
    #[inline]
    pub(crate) fn peek(&self) -> Option<(u64, u32, u32)> {
        self.heap
            .first()
            .map(|entry| (entry.time, (entry.tie >> 32) as u32, entry.tie as u32))
    }

    /// Adds an entry for LP `lp` at (`time`, `age`).
    #[inline]
    pub(crate) fn push(&mut self, lp: u32, time: u64, age: u32) {
        let entry = Entry {
            time,
            tie: (u64::from(age) << 32) | u64::from(lp),
        };
        let mut at = self.heap.len();
        self.heap.push(entry);
        let order = entry.order();
        while at > 0 {
            let parent = (at - 1) / ARITY;
            let above = self.heap[parent];
            if above.order() <= order {
                break;
            }
            self.heap[at] = above;
            at = parent;
        }
        self.heap[at] = entry;
    }

    /// Removes the first entry.
    #[inline]
    pub(crate) fn pop(&mut self) {
        let Some(last) = self.heap.pop() else {
            return;
        };
        if self.heap.is_empty() {
            return;
        }
        let len = self.heap.len();
        let order = last.order();
        let mut at = 0;
        loop {
            let first = at * ARITY + 1;
            if first >= len {
                break;
            }
            let (best, child) = if first + ARITY <= len {
                // A full node: a two-round tournament without branches (which child wins is
                // unpredictable, so branches would mispredict about once per level).
                let h = &self.heap[first..first + ARITY];
                let a = usize::from(h[1].order() < h[0].order());
                let b = 2 + usize::from(h[3].order() < h[2].order());
                let i = if h[b].order() < h[a].order() { b } else { a };
                (first + i, h[i])
            } else {
                let mut best = first;
                for child in first + 1..len {
                    if self.heap[child].order() < self.heap[best].order() {
                        best = child;
                    }
                }
                (best, self.heap[best])
            };
            if child.order() >= order {
                break;
            }
            self.heap[at] = child;
            at = best;
        }
        self.heap[at] = last;
    }

    /// Entries, stale ones included.
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Random pushes and pops against a sorted multiset of the same entries.
    #[test]
    fn pops_in_order() {
        let mut heap = LpHeap::new(8);
        let mut oracle: BTreeMap<(u64, u32, u32), usize> = BTreeMap::new();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200_000 {
            if next() % 3 == 0 {
                let top = heap.peek();
                heap.pop();
                if let Some((&first, _)) = oracle.first_key_value() {
                    assert_eq!(top, Some(first));
                    let count = oracle.get_mut(&first).expect("present");
                    *count -= 1;
                    if *count == 0 {
                        oracle.remove(&first);
                    }
                } else {
                    assert_eq!(top, None);
                }
            } else {
                // Few distinct times, ages and LPs, so ties and duplicates are common.
                let entry = (next() % 16, (next() % 3) as u32, (next() % 5) as u32);
                heap.push(entry.2, entry.0, entry.1);
                *oracle.entry(entry).or_default() += 1;
            }
            assert_eq!(heap.peek(), oracle.first_key_value().map(|(k, _)| *k));
            assert_eq!(heap.len(), oracle.values().sum::<usize>());
        }
    }
}
