//! What a message-passing library must provide for Time Warp across processes.

use std::time::Duration;

/// Called with every batch that arrives while a transport call waits: `(source rank, bytes)`.
pub type Arrived<'a> = dyn FnMut(usize, Vec<u8>) + 'a;

/// One rank's link to the other ranks of a run (MPI, or [`loopback`](super::loopback) threads).
///
/// The kernel calls it from one thread only (MPI's `THREAD_FUNNELED`). Its contract:
///
/// - **Order.** Batches from one rank to another arrive in the order they were sent. (Time
///   Warp relies on it only for speed: an antimessage that overtakes its event is kept until
///   the event comes.)
/// - **Progress while waiting.** Every call that waits keeps receiving, handing each batch
///   that arrives to `arrived`, so two ranks that both wait on each other never deadlock.
/// - **No endless waits.** A call that has waited longer than the transport's timeout returns
///   [`TransportError::Timeout`].
/// - The contents of batches are opaque bytes; the kernel encodes and decodes them.
pub trait Transport {
    /// This process's rank, in `0..ranks()`.
    fn rank(&self) -> usize;

    /// How many ranks the run has.
    fn ranks(&self) -> usize;

    /// How long any wait may last before it fails with [`TransportError::Timeout`]; the
    /// kernel uses the same limit for its own waits on other ranks.
    fn timeout(&self) -> Duration;

    /// How long the gateway, once it has nothing to do, keeps polling (yielding its core
    /// between polls) before it waits for a worker's batch with short sleeps. Polling notices
    /// another rank's packet at once, where a sleep lasts about 90 µs; it suits a transport
    /// whose node has a core per rank. The default, zero, always sleeps.
    fn idle_poll(&self) -> Duration {
        Duration::ZERO
    }

    /// Sends every `(destination, bytes)` batch in `batches` (leaving it empty) and returns
    /// once all have left this rank's buffers. Never called with this rank as destination.
    fn send_all(
        &mut self,
        batches: &mut Vec<(usize, Vec<u8>)>,
        arrived: &mut Arrived<'_>,
    ) -> Result<(), TransportError>;

    /// Hands every batch that has already arrived to `arrived`, without waiting. Returns how
    /// many there were.
    fn receive(&mut self, arrived: &mut Arrived<'_>) -> Result<usize, TransportError>;

    /// All-gather: every rank contributes `mine` (the same length on every rank, in the same
    /// sequence of calls) and gets every rank's contribution, concatenated in rank order.
    fn all_gather(
        &mut self,
        mine: &[u64],
        arrived: &mut Arrived<'_>,
    ) -> Result<Vec<u64>, TransportError>;

    /// All-reduce: every rank contributes `mine` (the same length on every rank, in the same
    /// sequence of collective calls as [`Transport::all_gather`]) and gets the word-by-word
    /// reduction over all ranks. The kernel's GVT rounds use only this, so what a rank sends
    /// and receives per round does not grow with the number of ranks (MPI: `MPI_Iallreduce`,
    /// O(log ranks) steps).
    ///
    /// The provided method reduces an [`all_gather`](Transport::all_gather), which is
    /// correct for any transport but moves O(ranks) words.
    fn all_reduce(
        &mut self,
        mine: &[u64],
        op: Reduction,
        arrived: &mut Arrived<'_>,
    ) -> Result<Vec<u64>, TransportError> {
        let all = self.all_gather(mine, arrived)?;
        let mut chunks = all.chunks(mine.len().max(1));
        let mut result = chunks.next().unwrap_or_default().to_vec();
        for theirs in chunks {
            op.fold(&mut result, theirs);
        }
        Ok(result)
    }
}

/// How an all-reduce combines the ranks' words, word by word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reduction {
    /// The sum, wrapping (so `i64`s sent as their bit patterns add up correctly).
    Sum,
    /// The smallest.
    Min,
}

impl Reduction {
    /// Folds `theirs` into `acc`, word by word.
    ///
    /// ```
    /// use warpsim_timewarp::cluster::Reduction;
    /// let mut acc = vec![1, 7];
    /// Reduction::Min.fold(&mut acc, &[3, 2]);
    /// assert_eq!(acc, [1, 2]);
    /// Reduction::Sum.fold(&mut acc, &[u64::MAX, 1]); // -1 as a bit pattern
    /// assert_eq!(acc, [0, 3]);
    /// ```
    pub fn fold(self, acc: &mut [u64], theirs: &[u64]) {
        for (acc, theirs) in acc.iter_mut().zip(theirs) {
            *acc = match self {
                Reduction::Sum => acc.wrapping_add(*theirs),
                Reduction::Min => (*acc).min(*theirs),
            };
        }
    }
}

/// Why a [`Transport`] call failed. Every one ends the run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The other ranks did not answer in time: one died, hangs, or runs something else.
    #[error("no answer from the other ranks for {0:?} (did a rank die or hang?)")]
    Timeout(Duration),
    /// A peer is gone (its end of the link closed).
    #[error("rank {0} is gone")]
    Disconnected(usize),
    /// The message-passing library reported an error.
    #[error("{0}")]
    Failed(String),
}
