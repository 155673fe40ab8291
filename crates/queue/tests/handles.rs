//! Handle semantics shared by every queue: stale handles never reach a reused slot, refused
//! pushes hand their payload back, and non-finite keys are rejected.

use std::cmp::Ordering;

use warpsim_queue::{
    FifoQueue, Handle, IndexedHeap, Key, LadderQueue, PendingSet, PushErrorKind, RescheduleError,
};

/// An `f64` time with a total order, to feed non-finite priorities to the queues.
#[derive(Debug, Clone, Copy)]
struct Time(f64);

impl PartialEq for Time {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Time {}
impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Time {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}
impl Key for Time {
    fn priority(&self) -> f64 {
        self.0
    }
}

/// Pops and cancels entries so their slots are reused, then checks that every old handle is
/// rejected by every handle-taking method and that the new occupants are untouched.
fn stale_handles_never_touch_reused_slots<Q: PendingSet<u64, u64>>(mut queue: Q) {
    let old: Vec<Handle> = (0..100).map(|i| queue.push(i, i).unwrap()).collect();
    for &handle in &old[..50] {
        assert!(queue.cancel(handle).is_some());
    }
    for _ in 0..50 {
        assert!(queue.pop().is_some());
    }
    assert!(queue.is_empty());
    // Reuse every freed slot.
    let new: Vec<Handle> = (0..100)
        .map(|i| queue.push(1000 + i, 1000 + i).unwrap())
        .collect();
    for &handle in &old {
        assert_eq!(queue.get(handle), None);
        assert_eq!(queue.get_mut(handle), None);
        assert_eq!(queue.cancel(handle), None);
        assert_eq!(
            queue.reschedule(handle, 5000),
            Err(RescheduleError::StaleHandle)
        );
        // A raw round trip does not revive anything either.
        assert_eq!(queue.get(Handle::from_raw(handle.into_raw())), None);
    }
    assert_eq!(queue.len(), 100);
    for (i, &handle) in new.iter().enumerate() {
        let i = i as u64;
        assert_eq!(queue.get(handle), Some((1000 + i, &(1000 + i))));
    }
    for i in 0..100 {
        assert_eq!(queue.pop(), Some((1000 + i, 1000 + i)));
    }
    // Handles that were never issued are stale too.
    for raw in [0, u64::MAX, 1 << 40, 12345] {
        assert_eq!(queue.cancel(Handle::from_raw(raw)), None);
    }
}

#[test]
fn stale_handles_heap() {
    stale_handles_never_touch_reused_slots(IndexedHeap::new());
}

#[test]
fn stale_handles_ladder() {
    stale_handles_never_touch_reused_slots(LadderQueue::new());
}

#[test]
fn stale_handles_fifo() {
    stale_handles_never_touch_reused_slots(FifoQueue::new());
}

/// Non-finite priorities are refused with the payload handed back, for push and reschedule.
fn rejects_non_finite<Q: PendingSet<Time, &'static str>>(mut queue: Q) {
    let ok = queue.push(Time(1.0), "ok").unwrap();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let err = queue.push(Time(bad), "bad").unwrap_err();
        assert_eq!(err.kind, PushErrorKind::NonFiniteKey);
        assert_eq!(err.value, "bad");
        assert_eq!(
            queue.reschedule(ok, Time(bad)),
            Err(RescheduleError::KeyRejected(PushErrorKind::NonFiniteKey))
        );
    }
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.pop(), Some((Time(1.0), "ok")));
}

#[test]
fn non_finite_keys_rejected() {
    rejects_non_finite(IndexedHeap::new());
    rejects_non_finite(LadderQueue::new());
    rejects_non_finite(FifoQueue::new());
}

/// Extreme but finite priorities (and negative zero) sort correctly.
fn extreme_priorities<Q: PendingSet<Time, usize>>(mut queue: Q) {
    let keys = [
        f64::MAX,
        -f64::MAX,
        0.0,
        -0.0,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        5e-324,
        1e300,
        -1e300,
        1.0,
        1.0 + f64::EPSILON,
    ];
    for round in 0..3 {
        for (i, &k) in keys.iter().enumerate() {
            queue.push(Time(k), round * 100 + i).unwrap();
        }
    }
    let mut sorted: Vec<f64> = keys.iter().flat_map(|&k| [k, k, k]).collect();
    sorted.sort_by(f64::total_cmp);
    for expected in sorted {
        let (key, _) = queue.pop().unwrap();
        assert_eq!(key.0.to_bits(), expected.to_bits());
    }
    assert!(queue.is_empty());
}

#[test]
fn extreme_priorities_sort() {
    extreme_priorities(IndexedHeap::new());
    extreme_priorities(LadderQueue::new());
}

#[test]
fn fifo_keeps_push_order_for_equal_keys_and_refuses_decrease() {
    let mut queue = FifoQueue::new();
    let a = queue.push(5u64, 'a').unwrap();
    queue.push(5u64, 'b').unwrap();
    let err = queue.push(4u64, 'x').unwrap_err();
    assert_eq!(
        (err.kind, err.key, err.value),
        (PushErrorKind::KeyDecreased, 4, 'x')
    );
    assert_eq!(
        queue.reschedule(a, 4),
        Err(RescheduleError::KeyRejected(PushErrorKind::KeyDecreased))
    );
    assert_eq!(queue.reschedule(a, 5), Ok(5)); // moves behind 'b'
    assert_eq!(queue.pop(), Some((5, 'b')));
    assert_eq!(queue.pop(), Some((5, 'a')));
    // The last key is remembered after draining.
    assert_eq!(
        queue.push(4u64, 'y').unwrap_err().kind,
        PushErrorKind::KeyDecreased
    );
}

#[test]
fn fifo_compacts_tombstones() {
    // Rescheduling the same entry over and over must not grow memory without bound; the
    // observable part is that the queue stays correct across many compactions.
    let mut queue = FifoQueue::new();
    let keep = queue.push(0u64, 0u32).unwrap();
    let moved = queue.push(0u64, 1u32).unwrap();
    for t in 1..100_000u64 {
        queue.reschedule(moved, t).unwrap();
    }
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.get(keep), Some((0, &0)));
    assert_eq!(queue.pop(), Some((0, 0)));
    assert_eq!(queue.pop(), Some((99_999, 1)));
    assert_eq!(queue.pop(), None);
}

/// Reschedule and cancel must work on the entry at the top and on the only entry.
fn edge_positions<Q: PendingSet<u64, char>>(mut queue: Q) {
    let only = queue.push(7, 'a').unwrap();
    assert_eq!(queue.reschedule(only, 9), Ok(7));
    assert_eq!(queue.peek(), Some((9, &'a')));
    assert_eq!(queue.reschedule(only, 9), Ok(9));
    assert_eq!(queue.cancel(only), Some((9, 'a')));
    assert!(queue.is_empty());
    assert_eq!(queue.peek(), None);
    let b = queue.push(10, 'b').unwrap();
    queue.push(11, 'c').unwrap();
    assert_eq!(queue.reschedule(b, 12), Ok(10));
    assert_eq!(queue.pop(), Some((11, 'c')));
    assert_eq!(queue.pop(), Some((12, 'b')));
}

#[test]
fn edge_positions_all() {
    edge_positions(IndexedHeap::new());
    edge_positions(LadderQueue::new());
    edge_positions(FifoQueue::new());
}

/// A key whose priority is shared by many keys: `(priority, tiebreak)`, ordered by both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Tied(u8, u32);

impl Key for Tied {
    fn priority(&self) -> f64 {
        f64::from(self.0)
    }
}

/// The small mode orders equal priorities by the keys in the slab. A cancelled entry stays in
/// the array until it reaches the front, and its slot may by then hold another key of the same
/// priority: insertions must pass over it, not order by the key it no longer has.
#[test]
fn small_mode_orders_equal_priorities_past_stale_entries() {
    let mut queue = LadderQueue::new();
    let a = queue.push(Tied(1, 5), 'a').unwrap();
    queue.push(Tied(1, 3), 'b').unwrap();
    queue.push(Tied(2, 0), 'c').unwrap();
    assert_eq!(queue.cancel(a), Some((Tied(1, 5), 'a')));
    // Reuses `a`'s slot: the stale entry now points at a later key of the same priority.
    queue.push(Tied(1, 9), 'd').unwrap();
    queue.push(Tied(1, 4), 'e').unwrap();
    queue.push(Tied(1, 1), 'f').unwrap();
    let order: String = std::iter::from_fn(|| queue.pop().map(|(_, v)| v)).collect();
    assert_eq!(order, "fbedc");

    // A stale entry whose slot now holds a smaller key, to the right of a live entry larger
    // than the one being inserted: ordering by the slot's key would stop at the stale entry
    // and put the new one after that larger live entry.
    let mut queue = LadderQueue::new();
    queue.push(Tied(1, 50), 'l').unwrap();
    let a = queue.push(Tied(1, 60), 'a').unwrap();
    queue.push(Tied(1, 70), 'x').unwrap();
    queue.cancel(a);
    queue.push(Tied(1, 10), 'd').unwrap();
    queue.push(Tied(1, 40), 'n').unwrap();
    let order: String = std::iter::from_fn(|| queue.pop().map(|(_, v)| v)).collect();
    assert_eq!(order, "dnlx");

    // The same, at random, against a sorted list: few priorities, many keys each, cancels and
    // reschedules, never more than the small mode's 64 entries.
    let mut queue = LadderQueue::new();
    let mut shadow: Vec<(Tied, Handle)> = Vec::new();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut tiebreak = 0u32;
    for _ in 0..200_000 {
        match next(8) {
            0..=3 if shadow.len() < 60 => {
                tiebreak += 1;
                let key = Tied(
                    next(4) as u8 + 10,
                    ((next(1000) as u32) << 12) | (tiebreak % 4096),
                );
                let handle = queue.push(key, ()).unwrap();
                shadow.push((key, handle));
            }
            4 if !shadow.is_empty() => {
                let (key, handle) = shadow.swap_remove(next(shadow.len() as u64) as usize);
                assert_eq!(queue.cancel(handle), Some((key, ())));
            }
            5 if !shadow.is_empty() => {
                let i = next(shadow.len() as u64) as usize;
                tiebreak += 1;
                let key = Tied(
                    next(4) as u8 + 10,
                    ((next(1000) as u32) << 12) | (tiebreak % 4096),
                );
                queue.reschedule(shadow[i].1, key).unwrap();
                shadow[i].0 = key;
            }
            _ => {
                let smallest = shadow.iter().enumerate().min_by_key(|(_, (key, _))| *key);
                let expected = smallest.map(|(i, &(key, _))| (i, key));
                let popped = queue.pop().map(|(key, ())| key);
                assert_eq!(popped, expected.map(|(_, key)| key));
                if let Some((i, _)) = expected {
                    shadow.swap_remove(i);
                }
            }
        }
        assert_eq!(queue.len(), shadow.len());
    }
}
