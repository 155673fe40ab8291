//! A barrier that can be broken: when a participant fails, nobody waits for it.
//!
//! # Ground rules
//!
//! 1. A [`Rendezvous`] is a reusable barrier for `parties` threads, like
//!    [`std::sync::Barrier`]: the last arrival of a generation releases the others, and the
//!    next generation starts empty.
//! 2. [`Rendezvous::break_all`] marks it broken for good and wakes every waiter. From then on
//!    every `wait` — current or future — returns `false` at once. A thread that failed calls
//!    it (through `Shared::abort`) instead of arriving, so the survivors never wait for a
//!    thread that will not come.
//! 3. All state changes happen under the mutex, and waiters re-check the state in a loop
//!    after every wake-up, so a spurious wake-up or a `break_all` racing with the last arrival
//!    can neither release a waiter early nor lose a wake-up.
//!
//! `std::sync::Barrier` cannot be broken, and a worker that panicked between two barriers
//! left its peers (and the caller) waiting forever; that is why this exists. The `loom`
//! tests below check rules 1–3.

#[cfg(loom)]
use loom::sync::{Condvar, Mutex};
#[cfg(not(loom))]
use std::sync::{Condvar, Mutex};

#[derive(Debug)]
struct State {
    arrived: usize,
    generation: u64,
    broken: bool,
}

/// A reusable barrier that a failing participant can break (see the module's ground rules).
#[derive(Debug)]
pub(crate) struct Rendezvous {
    parties: usize,
    state: Mutex<State>,
    released: Condvar,
}

impl Rendezvous {
    /// A barrier for `parties` threads.
    pub(crate) fn new(parties: usize) -> Rendezvous {
        Rendezvous {
            parties,
            state: Mutex::new(State {
                arrived: 0,
                generation: 0,
                broken: false,
            }),
            released: Condvar::new(),
        }
    }

    /// Waits until every party has arrived (`true`) or the barrier is broken (`false`).
    pub(crate) fn wait(&self) -> bool {
        let mut state = lock(&self.state);
        if state.broken {
            return false;
        }
        state.arrived += 1;
        if state.arrived >= self.parties {
            state.arrived = 0;
            state.generation += 1;
            self.released.notify_all();
            return true;
        }
        let generation = state.generation;
        loop {
            state = wait(&self.released, state);
            if state.generation != generation {
                return true;
            }
            if state.broken {
                return false;
            }
        }
    }

    /// Breaks the barrier: wakes every waiter, and makes every later `wait` return at once.
    pub(crate) fn break_all(&self) {
        let mut state = lock(&self.state);
        state.broken = true;
        self.released.notify_all();
    }
}

#[cfg(not(loom))]
fn lock(mutex: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // The critical sections only assign plain fields: a panic cannot leave them half done.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(not(loom))]
fn wait<'a>(
    condvar: &Condvar,
    guard: std::sync::MutexGuard<'a, State>,
) -> std::sync::MutexGuard<'a, State> {
    condvar
        .wait(guard)
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(loom)]
fn lock(mutex: &Mutex<State>) -> loom::sync::MutexGuard<'_, State> {
    mutex.lock().unwrap()
}

#[cfg(loom)]
fn wait<'a>(
    condvar: &Condvar,
    guard: loom::sync::MutexGuard<'a, State>,
) -> loom::sync::MutexGuard<'a, State> {
    condvar.wait(guard).unwrap()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Rendezvous;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_party_passes_every_generation() {
        let rendezvous = Arc::new(Rendezvous::new(3));
        let passed = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let (rendezvous, passed) = (rendezvous.clone(), passed.clone());
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        assert!(rendezvous.wait());
                        passed.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(passed.load(Ordering::Relaxed), 300);
    }

    #[test]
    fn breaking_releases_waiters_and_later_arrivals() {
        let rendezvous = Arc::new(Rendezvous::new(3));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let rendezvous = rendezvous.clone();
                std::thread::spawn(move || rendezvous.wait())
            })
            .collect();
        // The third party never comes: it failed, and breaks the barrier instead.
        rendezvous.break_all();
        for waiter in waiters {
            assert!(!waiter.join().unwrap());
        }
        assert!(!rendezvous.wait());
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::Rendezvous;
    use loom::sync::Arc;

    #[test]
    fn two_parties_meet_twice() {
        loom::model(|| {
            let rendezvous = Arc::new(Rendezvous::new(2));
            let other = rendezvous.clone();
            let thread = loom::thread::spawn(move || other.wait() && other.wait());
            assert!(rendezvous.wait() && rendezvous.wait());
            assert!(thread.join().unwrap());
        });
    }

    #[test]
    fn a_break_never_strands_a_waiter() {
        loom::model(|| {
            let rendezvous = Arc::new(Rendezvous::new(3));
            let (first, second) = (rendezvous.clone(), rendezvous.clone());
            let a = loom::thread::spawn(move || first.wait());
            let b = loom::thread::spawn(move || second.wait());
            rendezvous.break_all();
            // Neither waiter can be released by a full generation (the third never came).
            assert!(!a.join().unwrap());
            assert!(!b.join().unwrap());
        });
    }
}
