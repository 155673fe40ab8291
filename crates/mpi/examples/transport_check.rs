//! Checks `MpiTransport` end to end. Run it under MPI:
//!
//! ```text
//! cargo build --release --features mpi -p warpsim-mpi --example transport_check
//! mpirun -np 3 target/release/examples/transport_check
//! ```
//!
//! Over several rounds every rank sends batches of varied sizes (empty ones and some over
//! 1 MiB, more than MPI buffers eagerly) to every other rank, in three patterns: everyone
//! sends at once (pairs sending to each other), and half the ranks send while the other half
//! already wait in `all_gather` (arrivals during a collective), and the reverse. Each round
//! also checks that `all_gather` returns the contributions in rank order, then `all_reduce`
//! checks sums and minima. At the end every
//! rank checks it got every batch, intact and in order. Rank 0 prints `transport ok`; any
//! failure prints a message and aborts the job with a non-zero code.

use std::time::{Duration, Instant};

use warpsim_mpi::{Mpi, MpiTransport};
use warpsim_timewarp::cluster::{Reduction, Transport};

/// Batch sizes, sent in this order to every other rank each round.
const SIZES: [usize; 8] = [0, 1, 100, 0, 70_000, (1 << 20) + 4_321, 3, 2 << 20];
const ROUNDS: usize = 6;
const TIMEOUT: Duration = Duration::from_secs(60);

fn main() {
    let mpi = match Mpi::init() {
        Ok(mpi) => mpi,
        Err(error) => {
            eprintln!("transport_check: {error}");
            std::process::exit(2);
        }
    };
    let mut transport = mpi.transport(TIMEOUT);
    let mut inbox: Vec<(usize, Vec<u8>)> = Vec::new();
    let me = transport.rank();
    let ranks = transport.ranks();

    for round in 0..ROUNDS {
        let mut batches: Vec<(usize, Vec<u8>)> = Vec::new();
        // Destinations interleaved, so per-pair order does not follow from posting order alone.
        for (k, _) in SIZES.iter().enumerate() {
            for to in (0..ranks).filter(|&to| to != me) {
                batches.push((to, pattern(me, to, round, k)));
            }
        }
        let sends_first = match round % 3 {
            0 => true,
            1 => me % 2 == 0,
            _ => me % 2 == 1,
        };
        if !sends_first {
            gather_check(&mpi, &mut transport, &mut inbox, round);
        }
        transport
            .send_all(&mut batches, &mut |from, bytes| inbox.push((from, bytes)))
            .unwrap_or_else(|error| fail(&mpi, &format!("send_all: {error}")));
        if !batches.is_empty() {
            fail(&mpi, "send_all left batches behind");
        }
        if sends_first {
            gather_check(&mpi, &mut transport, &mut inbox, round);
        }
    }

    let empty = transport
        .all_gather(&[], &mut |from, bytes| inbox.push((from, bytes)))
        .unwrap_or_else(|error| fail(&mpi, &format!("empty all_gather: {error}")));
    if !empty.is_empty() {
        fail(&mpi, "empty all_gather returned values");
    }

    // All-reduces (the GVT's collectives): sums wrap like `i64`s, minima are word by word,
    // and batches arriving meanwhile are kept.
    let rank_word = transport.rank() as u64;
    let mine = [rank_word.wrapping_neg(), rank_word + 1];
    let sums = transport
        .all_reduce(&mine, Reduction::Sum, &mut |from, bytes| {
            inbox.push((from, bytes))
        })
        .unwrap_or_else(|error| fail(&mpi, &format!("all_reduce: {error}")));
    let total: u64 = (0..ranks as u64).sum();
    if sums != [total.wrapping_neg(), total + ranks as u64] {
        fail(&mpi, &format!("all_reduce sum gave {sums:?}"));
    }
    let mine = [10 + rank_word, u64::MAX - rank_word];
    let least = transport
        .all_reduce(&mine, Reduction::Min, &mut |from, bytes| {
            inbox.push((from, bytes))
        })
        .unwrap_or_else(|error| fail(&mpi, &format!("all_reduce: {error}")));
    if least != [10, u64::MAX - (ranks as u64 - 1)] {
        fail(&mpi, &format!("all_reduce min gave {least:?}"));
    }

    // Words at or above 2^63 are unsigned too: u64::MAX is how a rank stays out of a GVT
    // round's level (MPICH 4.0's own minimum on MPI_UINT64_T compared them as signed).
    let mine = [
        if rank_word == 0 { 278 } else { u64::MAX },
        (1 << 63) + rank_word,
        u64::MAX - rank_word,
    ];
    let least = transport
        .all_reduce(&mine, Reduction::Min, &mut |from, bytes| {
            inbox.push((from, bytes))
        })
        .unwrap_or_else(|error| fail(&mpi, &format!("all_reduce: {error}")));
    if least != [278, 1 << 63, u64::MAX - (ranks as u64 - 1)] {
        fail(
            &mpi,
            &format!("all_reduce min of words past 2^63 gave {least:?}"),
        );
    }

    let expected = ROUNDS * SIZES.len() * (ranks - 1);
    let start = Instant::now();
    while inbox.len() < expected {
        if start.elapsed() > TIMEOUT {
            fail(
                &mpi,
                &format!("got {} of {expected} batches in time", inbox.len()),
            );
        }
        transport
            .receive(&mut |from, bytes| inbox.push((from, bytes)))
            .unwrap_or_else(|error| fail(&mpi, &format!("receive: {error}")));
    }
    check_inbox(&mpi, me, ranks, &inbox);

    // Every rank has checked its inbox once this returns, so rank 0 speaks for all.
    let mut late = Vec::new();
    transport
        .all_gather(&[1], &mut |from, bytes| late.push((from, bytes)))
        .unwrap_or_else(|error| fail(&mpi, &format!("final all_gather: {error}")));
    if !late.is_empty() {
        fail(&mpi, &format!("{} unexpected batches arrived", late.len()));
    }
    if me == 0 {
        println!("transport ok ({ranks} ranks)");
    }
}

/// One `all_gather` whose result is checked: each rank contributes values derived from its
/// rank and the round.
fn gather_check(
    mpi: &Mpi,
    transport: &mut MpiTransport<'_>,
    inbox: &mut Vec<(usize, Vec<u8>)>,
    round: usize,
) {
    let contribution = |rank: usize| [rank as u64 * 1_000 + round as u64, round as u64, !0];
    let all = transport
        .all_gather(&contribution(transport.rank()), &mut |from, bytes| {
            inbox.push((from, bytes));
        })
        .unwrap_or_else(|error| fail(mpi, &format!("all_gather: {error}")));
    let expected: Vec<u64> = (0..transport.ranks()).flat_map(contribution).collect();
    if all != expected {
        fail(
            mpi,
            &format!("round {round}: all_gather gave {all:?}, expected {expected:?}"),
        );
    }
}

/// Checks that every batch came from another rank and that each rank's batches arrived
/// complete and in the order sent.
fn check_inbox(mpi: &Mpi, me: usize, ranks: usize, inbox: &[(usize, Vec<u8>)]) {
    for from in 0..ranks {
        let got: Vec<&Vec<u8>> = inbox
            .iter()
            .filter(|(source, _)| *source == from)
            .map(|(_, bytes)| bytes)
            .collect();
        let expected: Vec<Vec<u8>> = if from == me {
            Vec::new()
        } else {
            (0..ROUNDS)
                .flat_map(|round| (0..SIZES.len()).map(move |k| pattern(from, me, round, k)))
                .collect()
        };
        if got.len() != expected.len() {
            fail(
                mpi,
                &format!(
                    "rank {me} got {} batches from rank {from}, expected {}",
                    got.len(),
                    expected.len()
                ),
            );
        }
        for (n, (got, expected)) in got.iter().zip(&expected).enumerate() {
            if *got != expected {
                fail(
                    mpi,
                    &format!(
                        "rank {me}: batch {n} from rank {from} differs ({} bytes, expected {})",
                        got.len(),
                        expected.len()
                    ),
                );
            }
        }
    }
    if let Some((from, _)) = inbox.iter().find(|(from, _)| *from >= ranks) {
        fail(mpi, &format!("rank {me} got a batch from rank {from}"));
    }
}

/// The bytes of batch `k` of `round` from `from` to `to`: pseudo-random, different for every
/// batch, so a lost, reordered or corrupted batch shows.
fn pattern(from: usize, to: usize, round: usize, k: usize) -> Vec<u8> {
    let id = ((from * 1_000 + to) * 1_000 + round * 10 + k) as u64;
    // Odd, so the xorshift never sticks at zero.
    let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..SIZES[k])
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn fail(mpi: &Mpi, message: &str) -> ! {
    eprintln!("transport_check: rank {}: {message}", mpi.rank());
    mpi.abort(2)
}
