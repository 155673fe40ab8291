//! Property tests: arbitrary operation sequences against a `BTreeMap` shadow.

use std::collections::BTreeMap;

use proptest::prelude::*;
use warpsim_queue::{FifoQueue, Handle, IndexedHeap, LadderQueue, PendingSet};

#[derive(Debug, Clone)]
enum Op {
    Push(u64),
    Pop,
    Peek,
    /// Index into the list of every handle issued so far (wrapped), so stale ones are used.
    Cancel(usize),
    Reschedule(usize, u64),
    Get(usize),
}

fn op(max_key: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..max_key).prop_map(Op::Push),
        3 => Just(Op::Pop),
        1 => Just(Op::Peek),
        2 => any::<usize>().prop_map(Op::Cancel),
        2 => (any::<usize>(), 0..max_key).prop_map(|(i, k)| Op::Reschedule(i, k)),
        1 => any::<usize>().prop_map(Op::Get),
    ]
}

/// Applies `ops` to `queue` and to a shadow keyed by `(key, uid)`; equal keys may pop in any
/// order, except for FIFO where they pop in push/reschedule order. With `monotone`, keys are
/// made non-decreasing by adding them to a running total.
fn check<Q: PendingSet<u64, u64>>(mut queue: Q, ops: Vec<Op>, fifo: bool) {
    let mut shadow: BTreeMap<(u64, u64), u64> = BTreeMap::new(); // (key, order) -> uid
    let mut live: BTreeMap<u64, (u64, u64)> = BTreeMap::new(); // uid -> (key, order)
    let mut handles: Vec<(Handle, u64)> = Vec::new();
    let mut order = 0u64;
    let mut last = 0u64;
    let next_key = |k: u64, last: &mut u64| {
        if fifo {
            *last += k % 4;
            *last
        } else {
            k
        }
    };
    for op in ops {
        match op {
            Op::Push(k) => {
                let k = next_key(k, &mut last);
                let uid = handles.len() as u64;
                handles.push((queue.push(k, uid).unwrap(), uid));
                shadow.insert((k, order), uid);
                live.insert(uid, (k, order));
                order += 1;
            }
            Op::Pop => match queue.pop() {
                Some((k, uid)) => {
                    let (&(min_k, _), &min_uid) = shadow.first_key_value().unwrap();
                    assert_eq!(k, min_k);
                    if fifo {
                        assert_eq!(uid, min_uid);
                    }
                    let (lk, lo) = live.remove(&uid).unwrap();
                    assert_eq!(lk, k);
                    shadow.remove(&(lk, lo));
                }
                None => assert!(shadow.is_empty()),
            },
            Op::Peek => {
                let expected = shadow.first_key_value().map(|(&(k, _), _)| k);
                assert_eq!(queue.peek().map(|(k, _)| k), expected);
            }
            Op::Cancel(i) if !handles.is_empty() => {
                let (h, uid) = handles[i % handles.len()];
                match live.remove(&uid) {
                    Some((k, o)) => {
                        assert_eq!(queue.cancel(h), Some((k, uid)));
                        shadow.remove(&(k, o));
                    }
                    None => assert_eq!(queue.cancel(h), None),
                }
            }
            Op::Reschedule(i, k) if !handles.is_empty() => {
                let k = next_key(k, &mut last);
                let (h, uid) = handles[i % handles.len()];
                match live.get(&uid).copied() {
                    Some((old_k, o)) => {
                        assert_eq!(queue.reschedule(h, k), Ok(old_k));
                        shadow.remove(&(old_k, o));
                        shadow.insert((k, order), uid);
                        live.insert(uid, (k, order));
                        order += 1;
                    }
                    None => assert!(queue.reschedule(h, k).is_err()),
                }
            }
            Op::Get(i) if !handles.is_empty() => {
                let (h, uid) = handles[i % handles.len()];
                let expected = live.get(&uid).map(|&(k, _)| (k, uid));
                assert_eq!(queue.get(h).map(|(k, &v)| (k, v)), expected);
            }
            _ => {}
        }
        assert_eq!(queue.len(), shadow.len());
    }
    while let Some((k, uid)) = queue.pop() {
        let (lk, lo) = live.remove(&uid).unwrap();
        assert_eq!(lk, k);
        assert_eq!(shadow.pop_first().unwrap().0.0, k);
        let _ = lo;
    }
    assert!(shadow.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 64 } else { 512 }))]

    #[test]
    fn heap_small_keys(ops in prop::collection::vec(op(8), 0..400)) {
        check(IndexedHeap::new(), ops, false);
    }

    #[test]
    fn heap_wide_keys(ops in prop::collection::vec(op(u64::MAX), 0..400)) {
        check(IndexedHeap::new(), ops, false);
    }

    #[test]
    fn ladder_small_keys(ops in prop::collection::vec(op(8), 0..400)) {
        check(LadderQueue::new(), ops, false);
    }

    #[test]
    fn ladder_wide_keys(ops in prop::collection::vec(op(u64::MAX), 0..400)) {
        check(LadderQueue::new(), ops, false);
    }

    #[test]
    fn ladder_medium_keys(ops in prop::collection::vec(op(1000), 0..2000)) {
        check(LadderQueue::new(), ops, false);
    }

    #[test]
    fn fifo_monotone_keys(ops in prop::collection::vec(op(16), 0..400)) {
        check(FifoQueue::new(), ops, true);
    }
}
