//! [`Transport`] over `MPI_COMM_WORLD`.
//!
//! # Ground rules
//!
//! **No deadlock.** The only MPI call here that blocks is `MPI_Mrecv` of a message that a
//! probe has already matched: its sender has posted the send and stays inside `send_all`,
//! calling MPI, until that send completes, and a matched send and receive always complete
//! (MPI's progress rule; blocking calls drive all pending operations). Everything else is
//! nonblocking (`MPI_Isend`, `MPI_Improbe`, `MPI_Iallgather`, `MPI_Iallreduce`) and polled
//! with `MPI_Test`,
//! and every polling loop also receives every batch that has arrived. So when two ranks send
//! each other more than MPI can buffer, each drains the other while its own sends wait; a
//! rank waiting in a collective drains a peer stuck in `send_all` towards it, which then
//! reaches the same collective (every rank makes the same sequence of collective calls).
//!
//! **Order.** Batches carry one tag on one communicator, and MPI never lets a message
//! overtake an earlier one with the same sender, receiver, tag and communicator — also for
//! nonblocking sends, matched in the order they were posted. `send_all` posts its sends in
//! batch order and returns only when all have completed, so the next call's sends come after;
//! the receiving side matches one message at a time and hands it on at once. Collectives use
//! their own matching context, so `all_gather` and `all_reduce` do not disturb the batches.
//!
//! **Buffers.** A request borrows its buffer for an `mpi::request::scope`, and a scope must not
//! end while one of its requests is pending (rsmpi aborts the process if it does). So every
//! loop runs until its requests complete, and a timeout — after which the requests may never
//! complete — prints the error and aborts the whole job with `MPI_Abort` instead of returning:
//! it cannot hand the buffers back to Rust, and aborting leaves no rank hanging. (For the same
//! reason a panic in `arrived` while sends are pending aborts the process.)

use std::fmt;
use std::marker::PhantomData;
use std::mem;
use std::thread;
use std::time::{Duration, Instant};

use mpi::Threading;
use mpi::collective::SystemOperation;
use mpi::environment::Universe;
use mpi::request::{LocalScope, Request, scope};
use mpi::topology::{Rank, SimpleCommunicator};
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Equivalence, Source};
use mpi::{Count, Tag};
use warpsim_timewarp::cluster::{Arrived, Reduction, Transport, TransportError};

/// The tag of every data batch. One tag for all keeps MPI's per-pair order (see above).
const BATCH_TAG: Tag = 17;

/// `MPI_Abort` error code after a timeout: 124, like `timeout(1)`, so scripts can tell a hang
/// from other failures.
const TIMEOUT_ABORT_CODE: i32 = 124;

/// How long a polling loop that gets no answer only yields before it starts sleeping, when
/// this node runs no more ranks than it has cores. Yielding answers fastest and gives the core
/// to any runnable thread (the rank's worker shares it), while a sleep of [`IDLE_SLEEP`] lasts
/// about 90 µs here (Linux's timer slack is 50 µs), longer than a collective between two ranks
/// usually waits. Against 16 yielding rounds before sleeping (as on an oversubscribed node,
/// below), PHOLD over 2 ranks on 2 cores ran 1.14–1.19× faster at 32,768 and 1,048,576 LPs
/// (BENCHMARKS.md, "Time Warp over MPI"). After this long a wait is for a slow rank, not a
/// collective, and sleeping stops it from spending a core.
const SPIN_FOR: Duration = Duration::from_millis(100);

/// How long an idle gateway polls before it sleeps ([`Transport::idle_poll`]), on a node
/// with a core per rank.
const IDLE_POLL: Duration = Duration::from_micros(200);

/// Idle polling rounds that only yield before rounds start sleeping on an oversubscribed node
/// (more ranks than cores), where a yielding rank takes turns with ranks that have work: 3
/// ranks on 2 cores ran 15–20 % slower with [`SPIN_FOR`].
const SPIN_ROUNDS_OVERSUBSCRIBED: u32 = 16;

/// How long an idle polling round sleeps once spinning has not helped.
const IDLE_SLEEP: Duration = Duration::from_micros(20);

/// The initialised MPI library: one per process, finalised when dropped.
///
/// Not `Send` or `Sync`: MPI runs with `MPI_THREAD_FUNNELED`, so only the thread that
/// called [`Mpi::init`] may use it (see the [crate docs](crate)).
///
/// ```compile_fail
/// fn on_another_thread<T: Send>() {}
/// on_another_thread::<warpsim_mpi::Mpi>();
/// ```
pub struct Mpi {
    rank: usize,
    ranks: usize,
    /// Whether this node runs more ranks than it has cores (see [`SPIN_FOR`]).
    oversubscribed: bool,
    universe: Universe,
    // Neither `Send` nor `Sync`, so neither is `Mpi` nor any `MpiTransport` borrowing it:
    // the compiler keeps MPI on the thread that initialised it, as FUNNELED requires.
    funneled: PhantomData<*const ()>,
}

impl Mpi {
    /// Initialises MPI with `MPI_THREAD_FUNNELED` on the calling thread.
    ///
    /// Fails if MPI is already initialised in this process or if the library cannot give
    /// that threading level.
    pub fn init() -> Result<Mpi, TransportError> {
        let (universe, provided) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| failed("MPI is already initialised in this process"))?;
        if provided == Threading::Single {
            // Dropping `universe` finalises MPI again.
            return Err(failed(
                "the MPI library supports only MPI_THREAD_SINGLE; warpsim needs \
                 MPI_THREAD_FUNNELED (use an MPI built with thread support)",
            ));
        }
        let world = universe.world();
        // A collective: every rank calls `init`.
        let on_node = index(world.split_shared(0).size());
        let cores = thread::available_parallelism().map_or(1, usize::from);
        Ok(Mpi {
            rank: index(world.rank()),
            ranks: index(world.size()),
            oversubscribed: on_node > cores,
            universe,
            funneled: PhantomData,
        })
    }

    /// This process's rank in `MPI_COMM_WORLD`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many processes `MPI_COMM_WORLD` has.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// A [`Transport`] over `MPI_COMM_WORLD` whose waiting calls give up after `timeout`
    /// without any answer.
    pub fn transport(&self, timeout: Duration) -> MpiTransport<'_> {
        MpiTransport { mpi: self, timeout }
    }

    /// Ends every rank of the job with `code` (`MPI_Abort` on `MPI_COMM_WORLD`).
    ///
    /// For fatal errors: a rank that just exited would leave the others waiting for it.
    pub fn abort(&self, code: i32) -> ! {
        self.universe.world().abort(code)
    }
}

impl fmt::Debug for Mpi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mpi")
            .field("rank", &self.rank)
            .field("ranks", &self.ranks)
            .finish_non_exhaustive()
    }
}

/// The [`Transport`] of one rank over `MPI_COMM_WORLD`, made by [`Mpi::transport`].
///
/// A waiting call that gets no answer (no send completes, no batch arrives, the collective
/// does not finish) for the timeout aborts the job instead of returning
/// [`TransportError::Timeout`]: MPI still holds its buffers (see the module's ground rules).
pub struct MpiTransport<'a> {
    mpi: &'a Mpi,
    timeout: Duration,
}

impl fmt::Debug for MpiTransport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MpiTransport")
            .field("rank", &self.mpi.rank)
            .field("ranks", &self.mpi.ranks)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl MpiTransport<'_> {
    /// Reports a timeout and ends the job; see the module's ground rules for why it cannot
    /// return.
    fn give_up(&self, error: &TransportError) -> ! {
        eprintln!(
            "warpsim-mpi: rank {}: {error}; aborting the MPI job",
            self.mpi.rank
        );
        self.mpi.abort(TIMEOUT_ABORT_CODE)
    }

    /// Checks a batch before any send is posted, so a bad one fails cleanly instead of
    /// inside MPI.
    fn check(&self, destination: usize, bytes: &[u8]) -> Result<(), TransportError> {
        if destination >= self.mpi.ranks || destination == self.mpi.rank {
            return Err(failed(format!(
                "rank {} cannot send to rank {destination} of {}",
                self.mpi.rank, self.mpi.ranks
            )));
        }
        if Count::try_from(bytes.len()).is_err() {
            return Err(failed(format!(
                "a batch of {} bytes is larger than MPI can send at once",
                bytes.len()
            )));
        }
        Ok(())
    }
}

impl Transport for MpiTransport<'_> {
    fn rank(&self) -> usize {
        self.mpi.rank
    }

    fn ranks(&self) -> usize {
        self.mpi.ranks
    }

    fn timeout(&self) -> Duration {
        self.timeout
    }

    /// 200 µs on a node with a core per rank, else zero.
    fn idle_poll(&self) -> Duration {
        if self.mpi.oversubscribed {
            Duration::ZERO
        } else {
            IDLE_POLL
        }
    }

    fn send_all(
        &mut self,
        batches: &mut Vec<(usize, Vec<u8>)>,
        arrived: &mut Arrived<'_>,
    ) -> Result<(), TransportError> {
        for (destination, bytes) in batches.iter() {
            self.check(*destination, bytes)?;
        }
        // Moved out so the requests can borrow the bytes while `arrived` runs.
        let mut outgoing = mem::take(batches);
        let world = &self.mpi.universe.world();
        scope(|scope| {
            let mut pending: Vec<Request<'_, [u8], &LocalScope<'_>>> = outgoing
                .iter()
                .map(|(destination, bytes)| {
                    world
                        .process_at_rank(rank_of(*destination))
                        .immediate_send_with_tag(scope, &bytes[..], BATCH_TAG)
                })
                .collect();
            let mut still_pending = Vec::with_capacity(pending.len());
            let mut patience = Patience::new(self.timeout, self.mpi.oversubscribed);
            while !pending.is_empty() {
                let before = pending.len();
                for request in pending.drain(..) {
                    if let Err(request) = request.test() {
                        still_pending.push(request);
                    }
                }
                mem::swap(&mut pending, &mut still_pending);
                let received = receive_pending(world, arrived);
                if let Err(error) = patience.round(pending.len() < before || received > 0) {
                    self.give_up(&error);
                }
            }
        });
        // Hand the emptied vector back so the caller keeps its capacity.
        outgoing.clear();
        *batches = outgoing;
        Ok(())
    }

    fn receive(&mut self, arrived: &mut Arrived<'_>) -> Result<usize, TransportError> {
        Ok(receive_pending(&self.mpi.universe.world(), arrived))
    }

    fn all_gather(
        &mut self,
        mine: &[u64],
        arrived: &mut Arrived<'_>,
    ) -> Result<Vec<u64>, TransportError> {
        let mut all = vec![0; mine.len() * self.mpi.ranks];
        let world = &self.mpi.universe.world();
        scope(|scope| {
            let mut request = world.immediate_all_gather_into(scope, mine, &mut all[..]);
            let mut patience = Patience::new(self.timeout, self.mpi.oversubscribed);
            loop {
                match request.test() {
                    Ok(_) => break,
                    Err(unfinished) => request = unfinished,
                }
                let received = receive_pending(world, arrived);
                if let Err(error) = patience.round(received > 0) {
                    self.give_up(&error);
                }
            }
        });
        Ok(all)
    }

    fn all_reduce(
        &mut self,
        mine: &[u64],
        op: Reduction,
        arrived: &mut Arrived<'_>,
    ) -> Result<Vec<u64>, TransportError> {
        let world = &self.mpi.universe.world();
        match op {
            // `MPI_SUM` on `MPI_UINT64_T` wraps like `Reduction::Sum` (unsigned C arithmetic).
            Reduction::Sum => {
                let mut result = vec![0u64; mine.len()];
                self.reduce_into(world, mine, &mut result, SystemOperation::sum(), arrived);
                Ok(result)
            }
            // A minimum is taken over the words mapped to `i64` in order (the top bit
            // flipped), with `MPI_MIN` on `MPI_INT64_T`. MPICH 4.0's `MPI_MIN` on
            // `MPI_UINT64_T` compares as signed: a word at or above 2⁶³ (`u64::MAX` is how a
            // rank stays out of a level of a GVT round) won every minimum, and GVT jumped
            // past events still at risk. A signed minimum is right in every MPI.
            Reduction::Min => {
                const FLIP: u64 = 1 << 63;
                let flipped: Vec<i64> = mine.iter().map(|&word| (word ^ FLIP) as i64).collect();
                let mut result = vec![0i64; mine.len()];
                self.reduce_into(
                    world,
                    &flipped,
                    &mut result,
                    SystemOperation::min(),
                    arrived,
                );
                Ok(result.into_iter().map(|word| word as u64 ^ FLIP).collect())
            }
            other => Err(failed(format!("no MPI operation for {other:?}"))),
        }
    }
}

impl MpiTransport<'_> {
    /// `MPI_Iallreduce` of `mine` into `result`, polled until done, receiving every batch
    /// that arrives meanwhile.
    fn reduce_into<W: Equivalence>(
        &self,
        world: &SimpleCommunicator,
        mine: &[W],
        result: &mut [W],
        operation: SystemOperation,
        arrived: &mut Arrived<'_>,
    ) {
        scope(|scope| {
            let mut request = world.immediate_all_reduce_into(scope, mine, result, operation);
            let mut patience = Patience::new(self.timeout, self.mpi.oversubscribed);
            loop {
                match request.test() {
                    Ok(_) => break,
                    Err(unfinished) => request = unfinished,
                }
                let received = receive_pending(world, arrived);
                if let Err(error) = patience.round(received > 0) {
                    self.give_up(&error);
                }
            }
        });
    }
}

/// Receives every batch that has already arrived, handing each to `arrived` in the order MPI
/// matched them, and returns how many there were.
fn receive_pending(world: &SimpleCommunicator, arrived: &mut Arrived<'_>) -> usize {
    let mut count = 0;
    while let Some((message, status)) = world
        .any_process()
        .immediate_matched_probe_with_tag(BATCH_TAG)
    {
        // A byte count is never negative (MPI_UNDEFINED); if MPI said so anyway, the empty
        // buffer makes MPI fail the job with a truncation error.
        let len = usize::try_from(status.count(u8::equivalent_datatype())).unwrap_or(0);
        let mut bytes = vec![0; len];
        // Not `matched_receive`, which panics on an empty message; empty batches are valid.
        message.matched_receive_into(&mut bytes[..]);
        arrived(index(status.source_rank()), bytes);
        count += 1;
    }
    count
}

/// Decides when a polling loop has waited too long, and keeps idle rounds cheap.
struct Patience {
    timeout: Duration,
    oversubscribed: bool,
    last_answer: Instant,
    /// When the current stretch of unanswered rounds began, and how many there were.
    idle_since: Option<Instant>,
    idle_rounds: u32,
}

impl Patience {
    fn new(timeout: Duration, oversubscribed: bool) -> Patience {
        Patience {
            timeout,
            oversubscribed,
            last_answer: Instant::now(),
            idle_since: None,
            idle_rounds: 0,
        }
    }

    /// Ends one polling round. The clock restarts whenever the other ranks answered, so a
    /// long exchange that keeps moving never times out; only silence does.
    fn round(&mut self, answered: bool) -> Result<(), TransportError> {
        if answered {
            self.last_answer = Instant::now();
            self.idle_since = None;
            self.idle_rounds = 0;
            return Ok(());
        }
        if self.last_answer.elapsed() > self.timeout {
            return Err(TransportError::Timeout(self.timeout));
        }
        let idle_since = *self.idle_since.get_or_insert_with(Instant::now);
        self.idle_rounds = self.idle_rounds.saturating_add(1);
        if spins(self.oversubscribed, self.idle_rounds, idle_since.elapsed()) {
            thread::yield_now();
        } else {
            thread::sleep(IDLE_SLEEP);
        }
        Ok(())
    }
}

/// Whether an unanswered polling round only yields (rather than sleeps), after `rounds` such
/// rounds in a row over `idle`.
fn spins(oversubscribed: bool, rounds: u32, idle: Duration) -> bool {
    if oversubscribed {
        rounds < SPIN_ROUNDS_OVERSUBSCRIBED
    } else {
        idle < SPIN_FOR
    }
}

fn failed(message: impl Into<String>) -> TransportError {
    TransportError::Failed(message.into())
}

/// A rank as an index. MPI ranks and sizes are never negative.
fn index(rank: Rank) -> usize {
    usize::try_from(rank).expect("MPI ranks and sizes are non-negative")
}

/// An index as a rank; callers have checked it against the world size, which fits a `Rank`.
fn rank_of(index: usize) -> Rank {
    Rank::try_from(index).expect("checked against the world size")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_per_core_yields_through_a_collective_and_an_oversubscribed_one_soon_sleeps() {
        // One rank per core: however many rounds, yielding until `SPIN_FOR` has gone by.
        assert!(spins(false, 1, Duration::ZERO));
        assert!(spins(false, 1_000_000, Duration::from_millis(1)));
        assert!(!spins(false, 2, SPIN_FOR));
        // Oversubscribed: a few rounds, however short.
        assert!(spins(true, 1, Duration::ZERO));
        assert!(!spins(true, SPIN_ROUNDS_OVERSUBSCRIBED, Duration::ZERO));
    }

    #[test]
    fn silence_times_out_and_an_answer_restarts_the_clock() {
        let mut patience = Patience::new(Duration::ZERO, true);
        std::thread::sleep(Duration::from_millis(1));
        assert!(matches!(
            patience.round(false),
            Err(TransportError::Timeout(_))
        ));
        let mut patience = Patience::new(Duration::from_secs(3600), false);
        assert!(patience.round(false).is_ok());
        assert_eq!(patience.idle_rounds, 1);
        assert!(patience.round(true).is_ok());
        assert_eq!((patience.idle_rounds, patience.idle_since), (0, None));
    }
}
