//! `--kernel mpi`: Time Warp over MPI, when the binary is built with the `mpi` feature.
//!
//! MPI is initialised on first use, on the main thread (MPI_THREAD_FUNNELED: that thread is
//! the rank's communication thread), and finalised by [`finish`] at exit.

use warpsim_core::{LogicalProcess, OutputSink, Report, RunConfig, RunError, SimError, StopReason};
use warpsim_timewarp::cluster::{RankEnding, RankPause, RankStart};
use warpsim_timewarp::{TimeWarp, TimeWarpStats};

use crate::cli::KernelArgs;
use crate::progress::Progress;
use crate::run::KernelRun;

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

/// [`refuse`] for a run from a [`RankStart`].
fn refuse_ending<M: LogicalProcess>(
    kernel: &TimeWarp,
    n_lps: usize,
    message: String,
) -> (Result<RankEnding<M>, RunError>, TimeWarpStats) {
    let (result, stats) = refuse(kernel, n_lps, message);
    (result.map(|_| unreachable!("refused")), stats)
}

/// The main run over MPI (`run_on_kernel`'s `show_progress` run): it stops on a signal to
/// any rank at the next GVT on every rank (the signal handlers set the run's stop handle,
/// which the ranks decide on together, ground rule 7 of `warpsim_timewarp::cluster`), writes
/// checkpoints (rank 0 writes the file, which holds every rank's LPs) and resumes one written
/// by any kernel on any number of ranks — the stretches of `run.rs`'s `run_in_stretches`,
/// with rank 0 holding the checkpoint and the other ranks their own LPs between two.
///
/// # Errors
///
/// A checkpoint that cannot be read or written (on any rank: every rank gives up alike).
pub(crate) fn run_main<M, S>(
    common: &KernelArgs,
    config: RunConfig,
    lps: Vec<M>,
    sink: &mut S,
) -> anyhow::Result<KernelRun>
where
    M: LogicalProcess + serde::Serialize + serde::de::DeserializeOwned,
    M::Event: serde::Serialize + serde::de::DeserializeOwned,
    M::Output: serde::Serialize + serde::de::DeserializeOwned,
    S: OutputSink<M::Output>,
{
    use crate::checkpointing::{self, Recorder, Ticker};
    let n_lps = lps.len();
    let refused = |message: String| {
        let kernel = crate::run::timewarp_kernel(common, config.clone(), n_lps, false);
        let (result, stats) = refuse(&kernel, n_lps, message);
        Ok(KernelRun {
            result,
            timewarp: Some(stats),
        })
    };
    let timeout = common.timewarp.mpi_timeout;
    if !(timeout.is_finite() && timeout > 0.0) {
        return refused(format!(
            "--mpi-timeout must be a positive number of seconds, got {timeout}"
        ));
    }
    if std::thread::current().name() != Some("main") {
        return refused(
            "--kernel mpi runs one run at a time on the main thread: use it without --replications, sweep or plan".into(),
        );
    }
    let rank = match start() {
        Ok((rank, _)) => rank,
        Err(error) => return refused(format!("{error:#}")),
    };
    let timeout = std::time::Duration::from_secs_f64(timeout);
    // mpirun passes SIGINT and SIGTERM on to the ranks: each asks the run to stop.
    checkpointing::install_signals()?;
    let config = config.stop_handle(checkpointing::stop_handle());
    let progress = Progress::new(if rank == 0 { config.end_time } else { f64::NAN });
    let plan = &common.checkpoint;
    let file = plan.checkpoint_file.as_deref();
    let mut sink = Recorder::new(sink, file.is_some() && rank == 0);
    // Every rank reads the checkpoint (a path every rank can read, as any input file);
    // rank 0 delivers its outputs again.
    let mut start = match &plan.resume_from {
        Some(path) => {
            let read = checkpointing::read::<M>(path).and_then(|checkpoint| {
                if rank == 0 {
                    sink.replay(checkpoint.attachment())?;
                }
                Ok(checkpoint)
            });
            let everywhere = imp::agree(read.is_ok(), timeout)?;
            let checkpoint = read?;
            if !everywhere {
                anyhow::bail!("another rank cannot read the checkpoint {}", path.display());
            }
            RankStart::Resume(Box::new(checkpoint))
        }
        None => RankStart::Init(lps),
    };
    // A checkpoint time the resumed run is already at or past is not asked for again.
    let mut pause_at = plan.checkpoint_at.filter(|at| match &start {
        RankStart::Resume(checkpoint) => checkpoint
            .pending()
            .first()
            .is_some_and(|event| event.key.time.as_f64() < *at),
        _ => true,
    });
    // Rank 0 keeps the period; its request reaches every rank at the next GVT round.
    let ticker = Ticker::start(
        plan.checkpoint_every.filter(|_| rank == 0),
        checkpointing::stop_handle(),
    );
    let started = std::time::Instant::now();
    let first_event = match &start {
        RankStart::Resume(checkpoint) => checkpoint.events_committed(),
        _ => 0,
    };
    let whole = |report: Report| crate::run::whole_run(report, started, first_event);
    let mut first = true;
    // Rank 0 writes each checkpoint on a thread of its own while the ranks go on: those
    // taken in place as it is handed them, the last one (at a stop) from a copy (as on
    // threads; BENCHMARKS.md, "Checkpoints of PHOLD with a million LPs").
    let mut writer = checkpointing::Writer::default();
    loop {
        let mut stretch = config.clone();
        if let Some(at) = pause_at {
            stretch = stretch.pause_at(at);
        }
        let mut kernel = crate::run::timewarp_kernel(common, stretch, n_lps, first && rank == 0);
        if rank == 0 {
            kernel = kernel.on_progress(progress.timewarp_hook());
        }
        first = false;
        // Rank 0: a checkpoint taken in place while the ranks go on, written like the
        // others; a failed write stops every rank.
        let mut taken = checkpointing::TakenInPlace::new(file, &mut writer, &progress, &ticker);
        let mut periodic = |checkpoint: Box<warpsim_core::Checkpoint<M>>,
                            report: Report,
                            sink: &mut Recorder<'_, S>| {
            taken.take(checkpoint, &report, sink);
        };
        let (ending, stats) = imp::run_from(&kernel, start, &mut sink, timeout, &mut periodic);
        if file.is_some() && ending.is_ok() {
            // Every rank ends alike (the ranks reach the same verdict, so all get here).
            let everywhere = imp::agree(taken.failed.is_none(), timeout)?;
            if let Some(error) = taken.failed {
                return Err(error);
            }
            if !everywhere {
                anyhow::bail!("rank 0 could not write a checkpoint");
            }
        }
        let done = |result| {
            progress.finish();
            Ok(KernelRun {
                result,
                timewarp: Some(stats.clone()),
            })
        };
        let (mut state, report, at) = match ending {
            Err(mut error) => {
                *error.partial = whole((*error.partial).clone());
                // The run's error is the one to report; a failed write is said in a note.
                if let Err(failed) = writer.wait() {
                    crate::out::note(&format!("{failed:#}"));
                }
                return done(Err(error));
            }
            Ok(RankEnding::Finished(finished)) => {
                // A checkpoint asked for and not written is an error.
                writer.wait()?;
                return done(Ok(whole(finished.report)));
            }
            Ok(RankEnding::Paused { state, report, at }) => (state, report, at),
        };
        if let Some(path) = file {
            // Starting the write fails when the previous one failed: the ranks stop on it.
            let written = match state.checkpoint() {
                Some(checkpoint) => writer
                    .write(
                        path,
                        checkpoint.clone(),
                        sink.log(),
                        report.events_committed,
                        report.end_time,
                    )
                    .map(|()| true),
                None => Ok(false),
            };
            let everywhere = imp::agree(written.is_ok(), timeout)?;
            if written? {
                progress.checkpointed(report.end_time);
            }
            if !everywhere {
                anyhow::bail!("rank 0 could not write the checkpoint {}", path.display());
            }
            ticker.restart(&checkpointing::stop_handle());
        }
        if report.stop_reason == StopReason::Interrupted {
            // Every rank exits as the signalled one does (a launcher may pass the signal to
            // some ranks only, or report the exit code of any rank).
            let heard = checkpointing::signal().map_or(0, |signal| signal as u64);
            let signal = imp::largest(heard, timeout)?;
            if let Ok(signal) = i32::try_from(signal) {
                checkpointing::note_signal(signal);
            }
            // Rank 0 ends the run on the committed state of every LP, for the partial
            // report; the other ranks only share its verdict.
            let result = match state {
                RankPause::Whole(checkpoint) => checkpoint
                    .finish(whole(report), &mut sink)
                    .map(|done| done.report),
                RankPause::Part(_) => Ok(whole(report)),
            };
            writer.wait()?;
            return done(result);
        }
        if pause_at.is_some_and(|pause| at >= pause) {
            pause_at = None;
        }
        start = state.into_start();
    }
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

    use warpsim_core::{Checkpoint, LogicalProcess, OutputSink, Report, RunError};
    use warpsim_mpi::Mpi;
    use warpsim_timewarp::cluster::{RankEnding, RankStart};
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

    /// One stretch of the main run from `start` (MPI already started by `super::start`).
    pub(super) fn run_from<M, S, F>(
        kernel: &TimeWarp,
        start: RankStart<M>,
        sink: &mut S,
        timeout: Duration,
        on_checkpoint: F,
    ) -> (Result<RankEnding<M>, RunError>, TimeWarpStats)
    where
        M: LogicalProcess + serde::Serialize + serde::de::DeserializeOwned,
        M::Event: serde::Serialize + serde::de::DeserializeOwned,
        M::Output: serde::Serialize + serde::de::DeserializeOwned,
        S: OutputSink<M::Output>,
        F: FnMut(Box<Checkpoint<M>>, Report, &mut S),
    {
        MPI.with(|cell| {
            let slot = cell.borrow();
            let Some(mpi) = slot.as_ref() else {
                return super::refuse_ending(kernel, start.lps(), "MPI is not started".into());
            };
            let mut transport = mpi.transport(timeout);
            kernel.run_cluster_from_checkpointing(
                start,
                sink,
                &mut transport,
                super::fingerprint(),
                on_checkpoint,
            )
        })
    }

    /// Whether `ok` holds on every rank (an all-reduce: every rank must call it).
    pub(super) fn agree(ok: bool, timeout: Duration) -> anyhow::Result<bool> {
        use warpsim_timewarp::cluster::{Reduction, Transport};
        MPI.with(|cell| {
            let slot = cell.borrow();
            let Some(mpi) = slot.as_ref() else {
                anyhow::bail!("MPI is not started");
            };
            let mut transport = mpi.transport(timeout);
            // Between two stretches nothing is in flight: no packet can arrive here.
            let all = transport
                .all_reduce(&[u64::from(ok)], Reduction::Min, &mut |_, _| {})
                .map_err(|error| anyhow::anyhow!("{error}"))?;
            Ok(all.first() == Some(&1))
        })
    }

    /// The largest of every rank's `value` (an all-reduce: every rank must call it).
    pub(super) fn largest(value: u64, timeout: Duration) -> anyhow::Result<u64> {
        use warpsim_timewarp::cluster::{Reduction, Transport};
        MPI.with(|cell| {
            let slot = cell.borrow();
            let Some(mpi) = slot.as_ref() else {
                anyhow::bail!("MPI is not started");
            };
            let mut transport = mpi.transport(timeout);
            // The largest as the smallest complement (the transport's operations are `SUM`
            // and `MIN`); between two stretches no packet can arrive here.
            let all = transport
                .all_reduce(&[u64::MAX - value], Reduction::Min, &mut |_, _| {})
                .map_err(|error| anyhow::anyhow!("{error}"))?;
            Ok(u64::MAX - all.first().copied().unwrap_or(u64::MAX))
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

    use warpsim_core::{Checkpoint, LogicalProcess, OutputSink, Report, RunError};
    use warpsim_timewarp::cluster::{RankEnding, RankStart};
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

    pub(super) fn run_from<M, S, F>(
        kernel: &TimeWarp,
        start: RankStart<M>,
        _sink: &mut S,
        _timeout: Duration,
        _on_checkpoint: F,
    ) -> (Result<RankEnding<M>, RunError>, TimeWarpStats)
    where
        M: LogicalProcess,
        F: FnMut(Box<Checkpoint<M>>, Report, &mut S),
    {
        super::refuse_ending(kernel, start.lps(), NO_MPI.into())
    }

    pub(super) fn agree(_ok: bool, _timeout: Duration) -> anyhow::Result<bool> {
        anyhow::bail!(NO_MPI)
    }

    pub(super) fn largest(_value: u64, _timeout: Duration) -> anyhow::Result<u64> {
        anyhow::bail!(NO_MPI)
    }

    const NO_MPI: &str = "this warpsim was built without MPI; build it with `cargo build --release --features warpsim-cli/mpi` (see README)";

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
