//! A kernel chosen at run time: [`AnyKernel`].

use std::str::FromStr;

use warpsim_core::{
    EventKey, Finished, Kernel, LogicalProcess, LpId, OutputSink, RunConfig, RunError, Sequential,
};

use crate::config::TimeWarp;

/// Either kernel, chosen at run time — from a configuration file or a command line — while
/// the model stays generic. [`Kernel`] has generic methods (the kernels are monomorphised
/// over the model for speed), so it is not a trait object; this enum is what a `dyn Kernel`
/// would be.
///
/// [`AnyKernel::parse`] reads `sequential`, `timewarp` (as many threads as cores) and
/// `timewarp:N` (N threads); [`KernelSpec`] is the parsed form.
///
/// ```
/// use warpsim_core::{Discard, Kernel, RunConfig};
/// use warpsim_models::phold::PholdParams;
/// use warpsim_timewarp::AnyKernel;
///
/// let params = PholdParams { lps: 16, end: 10.0, ..PholdParams::default() };
/// let mut hashes = Vec::new();
/// for spec in ["sequential", "timewarp:2"] {
///     let kernel = AnyKernel::parse(spec, RunConfig::new(5).end_time(params.end)).unwrap();
///     hashes.push(kernel.run(params.build().unwrap(), &mut Discard).unwrap().trace_hash);
/// }
/// assert_eq!(hashes[0], hashes[1]);
/// assert!(AnyKernel::parse("timewarp:0", RunConfig::new(5)).is_err());
/// assert!(AnyKernel::parse("optimistic", RunConfig::new(5)).is_err());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AnyKernel {
    /// The sequential kernel.
    Sequential(Sequential),
    /// Time Warp on threads.
    TimeWarp(TimeWarp),
}

/// Which kernel, as [`AnyKernel::parse`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KernelSpec {
    /// `sequential`.
    Sequential,
    /// `timewarp` (`threads: None`: one per core) or `timewarp:N`.
    TimeWarp {
        /// The thread count, when given.
        threads: Option<usize>,
    },
}

/// A kernel name that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KernelSpecError {
    /// Not a kernel's name.
    #[error("unknown kernel {0:?}: expected sequential, timewarp or timewarp:THREADS")]
    Unknown(String),
    /// A thread count that is not a positive integer.
    #[error("bad thread count {0:?} in the kernel name: expected a positive integer")]
    Threads(String),
}

impl FromStr for KernelSpec {
    type Err = KernelSpecError;
    fn from_str(text: &str) -> Result<KernelSpec, KernelSpecError> {
        let text = text.trim();
        let (name, threads) = match text.split_once(':') {
            Some((name, threads)) => (name, Some(threads)),
            None => (text, None),
        };
        match (name.to_ascii_lowercase().as_str(), threads) {
            ("sequential", None) => Ok(KernelSpec::Sequential),
            ("timewarp", None) => Ok(KernelSpec::TimeWarp { threads: None }),
            ("timewarp", Some(threads)) => match threads.trim().parse::<usize>() {
                Ok(n) if n > 0 => Ok(KernelSpec::TimeWarp { threads: Some(n) }),
                _ => Err(KernelSpecError::Threads(threads.to_string())),
            },
            _ => Err(KernelSpecError::Unknown(text.to_string())),
        }
    }
}

impl std::fmt::Display for KernelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelSpec::Sequential => write!(f, "sequential"),
            KernelSpec::TimeWarp { threads: None } => write!(f, "timewarp"),
            KernelSpec::TimeWarp { threads: Some(n) } => write!(f, "timewarp:{n}"),
        }
    }
}

impl AnyKernel {
    /// The kernel `spec` names, with `config`; Time Warp with its other settings at their
    /// defaults (change them on the [`AnyKernel::TimeWarp`] variant).
    pub fn new(spec: KernelSpec, config: RunConfig) -> AnyKernel {
        match spec {
            KernelSpec::Sequential => AnyKernel::Sequential(Sequential::new(config)),
            KernelSpec::TimeWarp { threads } => {
                // Without a count, one thread per core: the committed events are the same
                // on any count, only the speed differs.
                let threads = threads.unwrap_or_else(|| {
                    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
                });
                AnyKernel::TimeWarp(TimeWarp::new(config).threads(threads))
            }
        }
    }

    /// Reads a kernel name (`sequential`, `timewarp`, `timewarp:4`) and makes that kernel.
    ///
    /// # Errors
    ///
    /// [`KernelSpecError`] for an unknown name or a bad thread count.
    pub fn parse(spec: &str, config: RunConfig) -> Result<AnyKernel, KernelSpecError> {
        Ok(AnyKernel::new(spec.parse()?, config))
    }

    /// Runs the model showing `observer` every committed event in key order, each before
    /// its outputs (see [`Sequential::run_observed`] and [`TimeWarp::run_observed`]: both
    /// show the same events).
    ///
    /// # Errors
    ///
    /// As [`Kernel::run`].
    pub fn run_observed<M, S, F>(
        &self,
        lps: Vec<M>,
        sink: &mut S,
        observer: F,
    ) -> Result<Finished<M>, RunError>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
        F: FnMut(&EventKey, LpId, &M::Event),
    {
        match self {
            AnyKernel::Sequential(kernel) => kernel.run_observed(lps, sink, observer),
            AnyKernel::TimeWarp(kernel) => kernel.run_observed(lps, sink, observer),
        }
    }
}

impl Kernel for AnyKernel {
    fn name(&self) -> &'static str {
        match self {
            AnyKernel::Sequential(kernel) => kernel.name(),
            AnyKernel::TimeWarp(kernel) => kernel.name(),
        }
    }

    fn run_final<M, S>(&self, lps: Vec<M>, sink: &mut S) -> Result<Finished<M>, RunError>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        match self {
            AnyKernel::Sequential(kernel) => kernel.run_final(lps, sink),
            AnyKernel::TimeWarp(kernel) => kernel.run_final(lps, sink),
        }
    }
}
