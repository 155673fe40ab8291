//! `--kernel mpi`: Time Warp over MPI, when the binary is built with the `mpi` feature.
//!
//! MPI is initialised on first use, on the main thread (MPI_THREAD_FUNNELED: that thread is
//! the rank's communication thread), and finalised by [`finish`] at exit.

use warpsim_core::{LogicalProcess, OutputSink, Report, RunError, SimError, StopReason};
use warpsim_timewarp::{TimeWarp, TimeWarpStats};

use crate::cli::KernelArgs;

/// A hash of the command line, the same on every rank that runs the same command: ranks
/// started with different parameters refuse to run together.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn fingerprint() -> u64 {
    // FNV-1a: stable across processes and builds, unlike `DefaultHasher`.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for arg in std::env::args_os().skip(1) {
        for byte in arg.as_encoded_bytes().iter().chain([&0u8]) {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

fn refuse(
    kernel: &TimeWarp,
    n_lps: usize,
    message: String,
) -> (Result<Report, RunError>, TimeWarpStats) {
    let mut report = Report::new("mpi", kernel.config().seed, n_lps as u32);
    report.stop_reason = StopReason::Error;
    let error = RunError {
        error: SimError::Config(message),
        partial: Box::new(report),
    };
    (Err(error), TimeWarpStats::default())
}

/// Runs the model as this process's rank.
pub(crate) fn run<M, S>(
    kernel: TimeWarp,
    lps: Vec<M>,
    sink: &mut S,
    common: &KernelArgs,
) -> (Result<Report, RunError>, TimeWarpStats)
where
    M: LogicalProcess,
    M::Event: serde::Serialize + serde::de::DeserializeOwned,
    M::Output: serde::Serialize + serde::de::DeserializeOwned,
    S: OutputSink<M::Output>,
{
    let timeout = common.timewarp.mpi_timeout;
    if !(timeout.is_finite() && timeout > 0.0) {
        return refuse(
            &kernel,
            lps.len(),
            format!("--mpi-timeout must be a positive number of seconds, got {timeout}"),
        );
    }
    imp::run(
        kernel,
        lps,
        sink,
        std::time::Duration::from_secs_f64(timeout),
    )
}

#[cfg(feature = "mpi")]
mod imp {
    use std::cell::RefCell;
    use std::time::Duration;

    use warpsim_core::{LogicalProcess, OutputSink, Report, RunError};
    use warpsim_mpi::Mpi;
    use warpsim_timewarp::{TimeWarp, TimeWarpStats};

    thread_local! {
        static MPI: RefCell<Option<Mpi>> = const { RefCell::new(None) };
    }

    pub(super) fn run<M, S>(
        kernel: TimeWarp,
        lps: Vec<M>,
        sink: &mut S,
        timeout: Duration,
    ) -> (Result<Report, RunError>, TimeWarpStats)
    where
        M: LogicalProcess,
        M::Event: serde::Serialize + serde::de::DeserializeOwned,
        M::Output: serde::Serialize + serde::de::DeserializeOwned,
        S: OutputSink<M::Output>,
    {
        if std::thread::current().name() != Some("main") {
            return super::refuse(
                &kernel,
                lps.len(),
                "--kernel mpi runs one run at a time on the main thread: use it without --replications, sweep or plan".into(),
            );
        }
        MPI.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                match Mpi::init() {
                    Ok(mpi) => *slot = Some(mpi),
                    Err(error) => {
                        return super::refuse(
                            &kernel,
                            lps.len(),
                            format!("cannot start MPI: {error}"),
                        );
                    }
                }
            }
            let mpi = slot.as_ref().expect("initialised above");
            let mut transport = mpi.transport(timeout);
            kernel.run_cluster(lps, sink, &mut transport, super::fingerprint())
        })
    }

    pub(super) fn rank() -> Option<usize> {
        MPI.with(|cell| cell.borrow().as_ref().map(Mpi::rank))
    }

    pub(super) fn start() -> anyhow::Result<(usize, usize)> {
        MPI.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                *slot = Some(
                    Mpi::init().map_err(|error| anyhow::anyhow!("cannot start MPI: {error}"))?,
                );
            }
            let mpi = slot.as_ref().expect("initialised above");
            Ok((mpi.rank(), mpi.ranks()))
        })
    }

    pub(super) fn finish() {
        MPI.with(|cell| drop(cell.borrow_mut().take()));
    }
}

#[cfg(not(feature = "mpi"))]
mod imp {
    use std::time::Duration;

    use warpsim_core::{LogicalProcess, OutputSink, Report, RunError};
    use warpsim_timewarp::{TimeWarp, TimeWarpStats};

    pub(super) fn run<M, S>(
        kernel: TimeWarp,
        lps: Vec<M>,
        _sink: &mut S,
        _timeout: Duration,
    ) -> (Result<Report, RunError>, TimeWarpStats)
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        super::refuse(
            &kernel,
            lps.len(),
            "this warpsim was built without MPI; build it with `cargo build --release --features warpsim-cli/mpi` (see README)".into(),
        )
    }

    pub(super) fn rank() -> Option<usize> {
        None
    }

    pub(super) fn start() -> anyhow::Result<(usize, usize)> {
        anyhow::bail!(
            "--kernel mpi: this warpsim was built without MPI; build it with `cargo build \
             --release --features warpsim-cli/mpi` (see README)"
        )
    }

    pub(super) fn finish() {}
}

/// Starts MPI (if this is the first use) and returns `(rank, ranks)`.
///
/// # Errors
///
/// A binary built without MPI, or MPI that cannot start.
pub(crate) fn start() -> anyhow::Result<(usize, usize)> {
    imp::start()
}

/// This process's rank, once MPI is running.
pub(crate) fn rank() -> Option<usize> {
    imp::rank()
}

/// Finalises MPI if it was started.
pub(crate) fn finish() {
    imp::finish();
}
