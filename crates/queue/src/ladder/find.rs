//! Finding a pending entry by its key, without an index: the ladder's tiers split the
//! priority line, so an entry sits in the one tier (and bucket) a new entry of its priority
//! would go to now, and only that tier is searched.

use super::rungs::Slim;
use super::{LadderQueue, SlotData, is_current, is_current_slim};
use crate::{Handle, Key};

impl<K: Key, V> LadderQueue<K, V> {
    /// The handle of a pending entry under `key` whose value `accept` takes, if there is one
    /// (with several, any one of them).
    ///
    /// No index is kept for this: it searches the tier an entry of this key's priority
    /// belongs to, which a push of the same key would go to now. That costs a scan of at most
    /// 64 entries in the small mode, a binary search in Bottom, and a scan of one rung bucket
    /// or of Top (16 bytes an entry, read in order) in the ladder: far less than a pass over every pending entry,
    /// though more than a look-up in an index when look-ups are frequent. The optimistic
    /// kernel finds the rare events an antimessage names this way.
    ///
    /// ```
    /// use warpsim_queue::{LadderQueue, PendingSet};
    /// let mut queue = LadderQueue::new();
    /// for key in 0..1000u64 {
    ///     queue.push(key, key % 7).unwrap();
    /// }
    /// let found = queue.find(&500, |value| *value == 500 % 7).unwrap();
    /// assert_eq!(queue.get(found), Some((500, &3)));
    /// assert_eq!(queue.find(&500, |value| *value == 0), None);
    /// assert_eq!(queue.find(&5000, |_| true), None);
    /// ```
    pub fn find(&self, key: &K, mut accept: impl FnMut(&V) -> bool) -> Option<Handle> {
        let p = key.priority();
        let mut take = |entry: &Slim| -> Option<Handle> {
            let slot = &self.slots[entry.slot as usize];
            match &slot.data {
                SlotData::Occupied(k, value)
                    if k == key && is_current_slim(&self.slots, entry) && accept(value) =>
                {
                    Some(Handle::new(entry.slot, slot.generation))
                }
                _ => None,
            }
        };
        if self.small_mode {
            // At most `SMALL_MAX` entries, in no order a search could use.
            return self
                .small
                .entries()
                .filter(|e| e.p == p)
                .find_map(|e| take(&e));
        }
        if p > self.top_start {
            return self.top.iter().filter(|e| e.p == p).find_map(&mut take);
        }
        for rung in &self.ladder.rungs[..self.ladder.n_rungs] {
            let bucket = rung.bucket_of(p);
            if bucket >= rung.cur {
                return rung.buckets[bucket]
                    .iter()
                    .filter(|e| e.p == p)
                    .find_map(&mut take);
            }
        }
        // Bottom is sorted descending by key; the spill heap beside it is unordered here.
        let from = self.bottom.partition_point(|e| e.key > *key);
        let spilled = self.spill.iter().map(|entry| &entry.0.0);
        self.bottom[from..]
            .iter()
            .take_while(|e| e.key == *key)
            .chain(spilled.filter(|e| e.key == *key))
            .filter(|e| is_current(&self.slots, e))
            .find_map(|e| {
                let slot = &self.slots[e.slot as usize];
                match &slot.data {
                    SlotData::Occupied(_, value) if accept(value) => {
                        Some(Handle::new(e.slot, slot.generation))
                    }
                    _ => None,
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PendingSet;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// An operation on the queue and its oracle.
    #[derive(Debug, Clone)]
    enum Op {
        Push(u64),
        Pop,
        Cancel(usize),
        Reschedule(usize, u64),
        Find(u64),
    }

    fn op(spread: u64) -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..spread).prop_map(Op::Push),
            2 => Just(Op::Pop),
            1 => any::<usize>().prop_map(Op::Cancel),
            1 => (any::<usize>(), 0..spread).prop_map(|(i, k)| Op::Reschedule(i, k)),
            3 => (0..spread).prop_map(Op::Find),
        ]
    }

    /// Runs `ops` against a map from key to values (the oracle), checking every `find`,
    /// including one for every key still pending at the end.
    fn check(ops: &[Op], base: u64) {
        let mut queue: LadderQueue<u64, u32> = LadderQueue::new();
        let mut oracle: BTreeMap<(u64, u32), Handle> = BTreeMap::new();
        let mut next = 0u32;
        let found = |queue: &LadderQueue<u64, u32>, oracle: &BTreeMap<(u64, u32), Handle>, k| {
            // Every value under `k` is found, and nothing under another key.
            for (&(key, value), _) in oracle.range((k, 0)..=(k, u32::MAX)) {
                let handle = queue
                    .find(&key, |v| *v == value)
                    .expect("pending, so found");
                assert_eq!(queue.get(handle), Some((key, &value)));
            }
            let any = queue.find(&k, |_| true);
            assert_eq!(
                any.is_some(),
                oracle.range((k, 0)..=(k, u32::MAX)).next().is_some()
            );
            assert_eq!(queue.find(&k, |v| *v == u32::MAX), None);
        };
        for op in ops {
            match *op {
                Op::Push(k) => {
                    let key = base + k;
                    let handle = queue.push(key, next).unwrap();
                    oracle.insert((key, next), handle);
                    next += 1;
                }
                Op::Pop => {
                    if let Some((key, value)) = queue.pop() {
                        assert!(oracle.remove(&(key, value)).is_some());
                    }
                }
                Op::Cancel(i) if !oracle.is_empty() => {
                    let (&entry, &handle) = oracle.iter().nth(i % oracle.len()).unwrap();
                    assert_eq!(queue.cancel(handle), Some((entry.0, entry.1)));
                    oracle.remove(&entry);
                }
                Op::Reschedule(i, k) if !oracle.is_empty() => {
                    let (&entry, &handle) = oracle.iter().nth(i % oracle.len()).unwrap();
                    queue.reschedule(handle, base + k).unwrap();
                    oracle.remove(&entry);
                    oracle.insert((base + k, entry.1), handle);
                }
                Op::Find(k) => found(&queue, &oracle, base + k),
                _ => {}
            }
        }
        let keys: Vec<u64> = oracle.keys().map(|&(key, _)| key).collect();
        for key in keys {
            found(&queue, &oracle, key);
        }
    }

    /// Keys of one priority (`u64` above 2⁶⁰ rounds 256 keys to one `f64`) cannot be spread
    /// over buckets: they (many equal) sort into one long Bottom, and the insertions into its middle go
    /// to the spill heap beside it, which `find` searches too.
    #[test]
    fn find_searches_the_spill_heap() {
        let base = 1u64 << 60;
        let evens = (0..2_000).map(|i| i % 120 * 2);
        let mut ops: Vec<Op> = evens.clone().map(Op::Push).collect();
        ops.push(Op::Pop);
        ops.extend((1..200).step_by(2).map(Op::Push));
        ops.extend((0..256).map(Op::Find));
        check(&ops, base);
        let mut queue: LadderQueue<u64, u32> = LadderQueue::new();
        for k in evens {
            queue.push(base + k, 0).unwrap();
        }
        queue.pop();
        for k in (1..200).step_by(2) {
            queue.push(base + k, 1).unwrap();
        }
        assert!(
            !queue.spill.is_empty(),
            "the test must reach the spill heap"
        );
        assert!(queue.find(&(base + 101), |v| *v == 1).is_some());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        // Small sets (the small mode), sets that cross into the ladder and back, dense keys
        // (many equal) and keys whose priorities collide (`u64` to `f64` rounds above 2⁵³).
        #[test]
        fn find_agrees_with_a_map(ops in prop::collection::vec(op(40), 0..400)) {
            check(&ops, 0);
        }

        #[test]
        fn find_agrees_with_a_map_in_the_ladder(ops in prop::collection::vec(op(5_000), 0..4_000)) {
            check(&ops, 0);
        }

        #[test]
        fn find_agrees_with_a_map_when_priorities_collide(ops in prop::collection::vec(op(2_000), 0..3_000)) {
            check(&ops, 1 << 60);
        }
    }
}
