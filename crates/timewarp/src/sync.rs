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

/// Brings `parties` threads (those of `barrier`) to quiescence: no message between them
/// unabsorbed. Each thread calls it with its own `state`: `flush` sends what it holds (each
/// sent message counted up in the shared count `unabsorbed` reads, before it is sent),
/// `absorb` takes in what reached it (counting down, and possibly sending more: absorbing can
/// roll an LP back and send antimessages). Rounds of flush, meet, absorb, flush, meet, read
/// the count, meet repeat until the count read between the last two meetings is zero: all
/// threads read it there, between the same meetings, so all see the same value and leave
/// together; and a zero there means every message sent was absorbed, and nobody sends again
/// until the caller moves on. Returns `false` if the barrier broke (a thread failed).
pub(crate) fn quiesce<T>(
    state: &mut T,
    barrier: &Rendezvous,
    unabsorbed: impl Fn() -> i64,
    flush: impl Fn(&mut T),
    absorb: impl Fn(&mut T),
) -> bool {
    loop {
        flush(state);
        let met = barrier.wait();
        absorb(state);
        flush(state);
        let met = met && barrier.wait();
        let left = unabsorbed();
        if !(met && barrier.wait()) {
            return false;
        }
        if left == 0 {
            return true;
        }
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
    use super::{Rendezvous, quiesce};
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicI64, Ordering};
    use loom::sync::mpsc::{Receiver, Sender, channel};

    /// One side of a migration's quiescence: an outbox to the peer, an inbox, and whether
    /// to answer the first message it absorbs with one of its own (as a rollback answers a
    /// straggler with an antimessage).
    struct Side {
        outbox: Vec<u32>,
        to_peer: Sender<u32>,
        inbox: Receiver<u32>,
        answer: bool,
        in_flight: Arc<AtomicI64>,
        absorbed: u32,
    }

    fn flush(side: &mut Side) {
        for message in side.outbox.drain(..) {
            side.in_flight.fetch_add(1, Ordering::SeqCst);
            side.to_peer.send(message).unwrap();
        }
    }

    fn absorb(side: &mut Side) {
        while let Ok(message) = side.inbox.try_recv() {
            side.in_flight.fetch_sub(1, Ordering::SeqCst);
            side.absorbed += 1;
            if side.answer {
                side.answer = false;
                side.outbox.push(message + 100);
            }
        }
    }

    /// The end-of-run handshake (`Worker::finish`): each worker flushes its last messages,
    /// meets the others at `barrier`, then at `landed` (where a distributed run's gateway
    /// delivers what is in flight between ranks), and only then takes its inbox to count
    /// what is left pending. Whatever any worker sent before the first meeting is in its
    /// receiver's inbox after the second, in every interleaving.
    #[test]
    fn messages_sent_before_the_end_handshake_are_there_after_it() {
        loom::model(|| {
            let barrier = Arc::new(Rendezvous::new(2));
            let landed = Arc::new(Rendezvous::new(2));
            let (to_b, b_inbox) = channel::<u32>();
            let (to_a, a_inbox) = channel::<u32>();
            let (barrier_b, landed_b) = (barrier.clone(), landed.clone());
            let thread = loom::thread::spawn(move || {
                to_a.send(2).unwrap();
                assert!(barrier_b.wait());
                assert!(landed_b.wait());
                b_inbox.try_recv().ok()
            });
            to_b.send(1).unwrap();
            assert!(barrier.wait());
            assert!(landed.wait());
            assert_eq!(a_inbox.try_recv().ok(), Some(2));
            assert_eq!(thread.join().unwrap(), Some(1));
        });
    }

    /// The end-of-migration state: nothing in flight and every message absorbed, on both
    /// sides, in every interleaving (the messages that start out and the answers they
    /// provoke included).
    #[test]
    fn quiescence_leaves_nothing_in_flight() {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(2);
        builder.check(|| {
            let barrier = Arc::new(Rendezvous::new(2));
            let in_flight = Arc::new(AtomicI64::new(0));
            let (to_b, b_inbox) = channel();
            let (to_a, a_inbox) = channel();
            let side = |outbox, to_peer, inbox, answer| Side {
                outbox,
                to_peer,
                inbox,
                answer,
                in_flight: in_flight.clone(),
                absorbed: 0,
            };
            let mut b = side(vec![], to_a, b_inbox, true);
            let (barrier_b, count_b) = (barrier.clone(), in_flight.clone());
            let thread = loom::thread::spawn(move || {
                let quiet = quiesce(
                    &mut b,
                    &barrier_b,
                    || count_b.load(Ordering::SeqCst),
                    flush,
                    absorb,
                );
                (quiet, b.absorbed)
            });
            let mut a = side(vec![1], to_b, a_inbox, false);
            let quiet = quiesce(
                &mut a,
                &barrier,
                || in_flight.load(Ordering::SeqCst),
                flush,
                absorb,
            );
            let (quiet_b, absorbed_b) = thread.join().unwrap();
            assert!(quiet && quiet_b);
            assert_eq!(in_flight.load(Ordering::SeqCst), 0);
            // A's message reached B, and B's answer reached A.
            assert_eq!((a.absorbed, absorbed_b), (1, 1));
        });
    }

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
