//! Shared test machinery: a `BTreeMap` shadow and a random-operation driver that checks a
//! [`PendingSet`] against it after every operation.

#![allow(dead_code, unreachable_pub)] // Each test binary uses a different part of this module.

use std::collections::BTreeMap;

use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp};
use rand_xoshiro::Xoshiro256PlusPlus;
use warpsim_queue::{Handle, PendingSet, PushErrorKind, RescheduleError};

/// Test keys: a time in integer ticks plus a tag. The priority is the time only, so keys with
/// equal time and different tags have equal priority but a definite order.
pub type K = (u64, u32);

/// How the driver picks keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyDist {
    /// Hold model: the current time plus an exponential increment (mean 1e6 ticks).
    Exponential,
    /// Uniform over a wide window above the current time.
    Uniform,
    /// A handful of distinct times and tags, so many keys are equal or tie on priority.
    ManyEqual,
    /// Mostly exponential, with 2% of keys far in the future and in bursts.
    FarBursts,
    /// Mostly exponential, with 10% of keys below the current minimum.
    BelowMinimum,
    /// Huge spread: times anywhere in `0..2^63`, beyond f64's exact integers.
    HugeSpread,
    /// Never decreasing: each key is at least the last one generated (for the FIFO queue).
    Monotone,
}

/// What a pending entry looks like in the shadow.
#[derive(Debug, Clone, Copy)]
struct LiveEntry {
    handle: Handle,
    key: K,
    /// Tie-break in the shadow: push (or reschedule) order.
    order: u64,
}

/// The reference implementation plus the bookkeeping to compare against it.
pub struct Driver<Q> {
    pub queue: Q,
    shadow: BTreeMap<(K, u64), u64>,
    /// uid -> entry, for live entries.
    live: BTreeMap<u64, LiveEntry>,
    /// Every handle ever issued, with its uid (a bounded, rolling window), to replay stale ones.
    issued: Vec<(Handle, u64)>,
    next_uid: u64,
    next_order: u64,
    /// Time of the last popped key; keys are drawn relative to it.
    clock: u64,
    /// Largest key generated so far (for `KeyDist::Monotone`).
    last_key: K,
    /// Largest key the queue accepted (push or reschedule).
    accepted_last: K,
    /// FIFO semantics: equal keys pop in order, keys must not decrease.
    fifo: bool,
    rng: Xoshiro256PlusPlus,
    exp: Exp<f64>,
    dist: KeyDist,
    pub counts: [u64; 8],
}

const ISSUED_WINDOW: usize = 4096;

impl<Q: PendingSet<K, u64>> Driver<Q> {
    pub fn new(queue: Q, seed: u64, dist: KeyDist, fifo: bool) -> Self {
        Driver {
            queue,
            shadow: BTreeMap::new(),
            live: BTreeMap::new(),
            issued: Vec::new(),
            next_uid: 0,
            next_order: 0,
            clock: 1 << 40,
            last_key: (1 << 40, 0),
            accepted_last: (0, 0),
            fifo,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            exp: Exp::new(1e-6).unwrap(),
            dist,
            counts: [0; 8],
        }
    }

    fn exp_ticks(&mut self) -> u64 {
        self.exp.sample(&mut self.rng) as u64
    }

    fn gen_key(&mut self) -> K {
        let tag = self.rng.random_range(0..4u32);
        let key = match self.dist {
            KeyDist::Exponential => (self.clock + self.exp_ticks(), tag),
            KeyDist::Uniform => (self.clock + self.rng.random_range(0..100_000_000u64), tag),
            KeyDist::ManyEqual => (self.clock + self.rng.random_range(0..3u64), tag % 2),
            KeyDist::FarBursts => {
                if self.rng.random_range(0..50) == 0 {
                    (
                        self.clock + (1 << 50) + self.rng.random_range(0..1000u64),
                        tag,
                    )
                } else {
                    (self.clock + self.exp_ticks(), tag)
                }
            }
            KeyDist::BelowMinimum => {
                if self.rng.random_range(0..10) == 0 {
                    (
                        self.clock
                            .saturating_sub(self.rng.random_range(0..10_000_000u64)),
                        tag,
                    )
                } else {
                    (self.clock + self.exp_ticks(), tag)
                }
            }
            KeyDist::HugeSpread => (self.rng.random_range(0..1u64 << 63), tag),
            KeyDist::Monotone => {
                let step = match self.rng.random_range(0..10) {
                    0..=3 => (0, self.rng.random_range(0..2u32)),
                    4..=8 => (self.exp_ticks() / 100, 0),
                    _ => (self.rng.random_range(0..1u64 << 45), 0),
                };
                let t = self.last_key.0 + step.0;
                if step.0 == 0 {
                    (t, self.last_key.1 + step.1)
                } else {
                    (t, step.1)
                }
            }
        };
        self.last_key = self.last_key.max(key);
        key
    }

    fn random_issued(&mut self) -> Option<(Handle, u64)> {
        if self.issued.is_empty() {
            return None;
        }
        // Bias towards recent handles (more likely live) but keep old, stale ones in play.
        let n = self.issued.len();
        let i = if self.rng.random_bool(0.5) {
            n - 1 - self.rng.random_range(0..n.min(64))
        } else {
            self.rng.random_range(0..n)
        };
        Some(self.issued[i])
    }

    fn remember(&mut self, handle: Handle, uid: u64) {
        if self.issued.len() == ISSUED_WINDOW {
            let i = self.rng.random_range(0..ISSUED_WINDOW);
            self.issued.swap_remove(i);
        }
        self.issued.push((handle, uid));
    }

    pub fn push(&mut self, key: K) {
        let uid = self.next_uid;
        self.next_uid += 1;
        let handle = self.queue.push(key, uid).expect("push of a valid key");
        self.accepted_last = self.accepted_last.max(key);
        let order = self.next_order;
        self.next_order += 1;
        self.shadow.insert((key, order), uid);
        self.live.insert(uid, LiveEntry { handle, key, order });
        self.remember(handle, uid);
    }

    /// Checks that the popped `(key, uid)` is a legal answer and removes it from the shadow.
    fn take_from_shadow(&mut self, key: K, uid: u64) {
        let (&(min_key, _), &min_uid) = self.shadow.first_key_value().expect("shadow non-empty");
        assert_eq!(key, min_key, "popped key is not the minimum");
        let entry = self.live.remove(&uid).expect("popped a live entry");
        assert_eq!(entry.key, key, "popped entry carries its own key");
        if self.fifo {
            assert_eq!(uid, min_uid, "FIFO: equal keys pop in push order");
        }
        self.shadow.remove(&(key, entry.order)).unwrap();
    }

    pub fn push_random(&mut self) {
        let key = self.gen_key();
        self.push(key);
    }

    /// Pops everything left, checking the order, and checks the set is then empty.
    pub fn drain(&mut self) {
        while !self.shadow.is_empty() {
            self.pop();
        }
        assert_eq!(self.queue.pop(), None);
        self.check_len();
    }

    pub fn pop(&mut self) {
        match self.queue.pop() {
            Some((key, uid)) => {
                self.take_from_shadow(key, uid);
                self.clock = key.0;
            }
            None => assert!(
                self.shadow.is_empty(),
                "pop returned None on a non-empty set"
            ),
        }
    }

    pub fn peek(&mut self) {
        let expected = self
            .shadow
            .first_key_value()
            .map(|(&(k, _), &uid)| (k, uid));
        match self.queue.peek() {
            Some((key, &uid)) => {
                let (min_key, min_uid) = expected.expect("peek found an entry in an empty set");
                assert_eq!(key, min_key);
                assert_eq!(self.live[&uid].key, key);
                if self.fifo {
                    assert_eq!(uid, min_uid);
                }
            }
            None => assert!(expected.is_none()),
        }
    }

    pub fn cancel(&mut self) {
        let Some((handle, uid)) = self.random_issued() else {
            return;
        };
        let got = self.queue.cancel(handle);
        match self.live.get(&uid).filter(|e| e.handle == handle).copied() {
            Some(entry) => {
                assert_eq!(got, Some((entry.key, uid)));
                self.live.remove(&uid);
                self.shadow.remove(&(entry.key, entry.order)).unwrap();
            }
            None => assert_eq!(got, None, "stale handle cancelled something"),
        }
        assert_eq!(self.queue.get(handle), None);
    }

    pub fn reschedule(&mut self) {
        let Some((handle, uid)) = self.random_issued() else {
            return;
        };
        if self.fifo && self.rng.random_range(0..8) == 0 && self.accepted_last.0 > 0 {
            // A decreasing key must be refused without changing anything.
            let smaller = (self.accepted_last.0 - 1, 0);
            let got = self.queue.reschedule(handle, smaller);
            let expected = if self.live.contains_key(&uid) {
                RescheduleError::KeyRejected(PushErrorKind::KeyDecreased)
            } else {
                RescheduleError::StaleHandle
            };
            assert_eq!(got, Err(expected));
            return;
        }
        let new_key = self.gen_key();
        let got = self.queue.reschedule(handle, new_key);
        match self.live.get(&uid).copied() {
            Some(entry) => {
                assert_eq!(got, Ok(entry.key));
                self.accepted_last = self.accepted_last.max(new_key);
                self.shadow.remove(&(entry.key, entry.order)).unwrap();
                let order = self.next_order;
                self.next_order += 1;
                self.shadow.insert((new_key, order), uid);
                self.live.insert(
                    uid,
                    LiveEntry {
                        handle,
                        key: new_key,
                        order,
                    },
                );
                assert_eq!(self.queue.get(handle), Some((new_key, &uid)));
            }
            None => assert_eq!(got, Err(RescheduleError::StaleHandle)),
        }
    }

    pub fn get(&mut self) {
        let Some((handle, uid)) = self.random_issued() else {
            return;
        };
        let expected = self.live.get(&uid).map(|e| (e.key, uid));
        assert_eq!(self.queue.get(handle).map(|(k, &v)| (k, v)), expected);
        match self.queue.get_mut(handle) {
            Some((key, value)) => {
                assert_eq!(Some((key, *value)), expected);
                // Write through the reference and back, to prove it is the entry's own value.
                *value = u64::MAX;
                assert_eq!(self.queue.get(handle), Some((key, &u64::MAX)));
                *self.queue.get_mut(handle).unwrap().1 = uid;
            }
            None => assert_eq!(expected, None),
        }
    }

    pub fn fifo_push_decreasing(&mut self) {
        if self.accepted_last.0 == 0 {
            return;
        }
        let err = self
            .queue
            .push((self.accepted_last.0 - 1, 0), 77)
            .unwrap_err();
        assert_eq!(err.kind, PushErrorKind::KeyDecreased);
        assert_eq!(err.value, 77);
    }

    pub fn check_len(&self) {
        assert_eq!(self.queue.len(), self.shadow.len());
        assert_eq!(self.queue.is_empty(), self.shadow.is_empty());
    }

    /// Runs `n_ops` random operations; the target size changes every few thousand operations
    /// so the set repeatedly grows (up to `max_len`) and drains.
    pub fn run(&mut self, n_ops: u64, max_len: usize) {
        let mut target = 0usize;
        for op in 0..n_ops {
            if op % 4096 == 0 {
                target = match self.rng.random_range(0..4) {
                    0 => 0,
                    1 => self.rng.random_range(0..64),
                    2 => self.rng.random_range(0..max_len / 8 + 1),
                    _ => max_len,
                };
            }
            let grow = self.shadow.len() < target;
            let roll = self.rng.random_range(0..100);
            let kind = match roll {
                0..=39 if grow => 0,
                0..=24 => 0,
                25..=54 => 1,
                55..=59 => 2,
                60..=71 => 3,
                72..=85 => 4,
                86..=97 => 5,
                _ => 6,
            };
            self.counts[kind] += 1;
            match kind {
                0 => {
                    let key = self.gen_key();
                    self.push(key)
                }
                1 => self.pop(),
                2 => self.peek(),
                3 => self.cancel(),
                4 => self.reschedule(),
                5 => self.get(),
                _ => {
                    if self.fifo {
                        self.fifo_push_decreasing()
                    } else {
                        self.pop()
                    }
                }
            }
            self.check_len();
        }
        self.drain();
    }
}

/// Operation budget: millions in release builds, a small fraction in debug builds so that
/// `cargo test` stays fast.
pub fn budget(release_ops: u64) -> u64 {
    if cfg!(debug_assertions) {
        release_ops / 40
    } else {
        release_ops
    }
}
