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
