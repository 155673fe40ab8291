//! A [`Transport`] between threads of one process: a distributed run without MPI, for tests
//! and for trying a set-up on one machine.
//!
//! # Ground rules
//!
//! Batches travel over one unbounded crossbeam channel per receiving rank, so sends never
//! block and batches from one rank to another keep their order (one sender's sends into one
//! channel are FIFO). All-gathers meet on a board under a mutex: call `c` of every rank posts
//! its words in slot `c`; each rank reads the slot once all have posted, and the last reader
//! removes it. Waiting ranks keep receiving, and give up after the timeout.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TryRecvError};

use super::transport::{Arrived, Transport, TransportError};

/// One rank's end of a [`loopback`] cluster.
#[derive(Debug)]
pub struct Loopback {
    rank: usize,
    ranks: usize,
    timeout: Duration,
    inbox: Receiver<(usize, Vec<u8>)>,
    peers: Vec<Sender<(usize, Vec<u8>)>>,
    board: Arc<Board>,
    calls: u64,
}

#[derive(Debug, Default)]
struct Board {
    slots: Mutex<HashMap<u64, Slot>>,
    posted: Condvar,
}

#[derive(Debug)]
struct Slot {
    words: Vec<Option<Vec<u64>>>,
    readers: usize,
}

/// `ranks` connected transports, one per rank (hand each to its own thread). Every wait
/// gives up after `timeout`.
///
/// ```
/// use std::time::Duration;
/// use warpsim_timewarp::cluster::{Transport, loopback};
///
/// let mut ranks = loopback(2, Duration::from_secs(5));
/// let mut second = ranks.pop().unwrap();
/// let mut first = ranks.pop().unwrap();
/// first.send_all(&mut vec![(1, b"hi".to_vec())], &mut |_, _| {}).unwrap();
/// let mut got = Vec::new();
/// second.receive(&mut |from, bytes| got.push((from, bytes))).unwrap();
/// assert_eq!(got, vec![(0, b"hi".to_vec())]);
/// ```
pub fn loopback(ranks: usize, timeout: Duration) -> Vec<Loopback> {
    let (senders, receivers): (Vec<_>, Vec<_>) =
        (0..ranks).map(|_| crossbeam_channel::unbounded()).unzip();
    let board = Arc::new(Board::default());
    receivers
        .into_iter()
        .enumerate()
        .map(|(rank, inbox)| Loopback {
            rank,
            ranks,
            timeout,
            inbox,
            peers: senders.clone(),
            board: board.clone(),
            calls: 0,
        })
        .collect()
}

impl Transport for Loopback {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    fn send_all(
        &mut self,
        batches: &mut Vec<(usize, Vec<u8>)>,
        _arrived: &mut Arrived<'_>,
    ) -> Result<(), TransportError> {
        for (to, bytes) in batches.drain(..) {
            let peer = self
                .peers
                .get(to)
                .ok_or_else(|| TransportError::Failed(format!("no rank {to}")))?;
            peer.send((self.rank, bytes))
                .map_err(|_| TransportError::Disconnected(to))?;
        }
        Ok(())
    }

    fn receive(&mut self, arrived: &mut Arrived<'_>) -> Result<usize, TransportError> {
        let mut count = 0;
        loop {
            match self.inbox.try_recv() {
                Ok((from, bytes)) => {
                    arrived(from, bytes);
                    count += 1;
                }
                // Our own sender is in `peers`, so the channel never disconnects.
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return Ok(count),
            }
        }
    }

    fn all_gather(
        &mut self,
        mine: &[u64],
        arrived: &mut Arrived<'_>,
    ) -> Result<Vec<u64>, TransportError> {
        let call = self.calls;
        self.calls += 1;
        let deadline = Instant::now() + self.timeout;
        {
            let mut slots = lock(&self.board.slots);
            let slot = slots.entry(call).or_insert_with(|| Slot {
                words: vec![None; self.ranks],
                readers: 0,
            });
            slot.words[self.rank] = Some(mine.to_vec());
            self.board.posted.notify_all();
        }
        loop {
            {
                let mut slots = lock(&self.board.slots);
                let slot = slots.get_mut(&call).expect("this rank posted in the slot");
                if slot.words.iter().all(Option::is_some) {
                    let all: Vec<u64> = slot.words.iter().flatten().flatten().copied().collect();
                    slot.readers += 1;
                    if slot.readers == self.ranks {
                        slots.remove(&call);
                    }
                    return Ok(all);
                }
                if Instant::now() > deadline {
                    return Err(TransportError::Timeout(self.timeout));
                }
                // Short waits: batches may arrive meanwhile, and they must be taken.
                let _ = self
                    .board
                    .posted
                    .wait_timeout(slots, Duration::from_micros(200))
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            self.receive(arrived)?;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section leaves the board consistent, so poisoning is not an error.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
