//! Typed errors of the model API and the kernels.

use crate::report::Report;
use crate::time::{LpId, Time};

/// A time or delay that was refused.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum TimeError {
    /// The value was NaN.
    #[error("time is NaN")]
    NotANumber,
    /// The value was infinite.
    #[error("time is infinite ({0})")]
    Infinite(f64),
    /// The value was negative.
    #[error("time is negative ({0})")]
    Negative(f64),
    /// A time plus a delay is not a finite number.
    #[error("time overflow: time plus delay is not finite")]
    Overflow,
}

/// Why a run stopped early. None of these can be resumed: the run is over, but the
/// [`RunError`] that carries it also carries the [`Report`] of what was done, and every output
/// committed before the error has already reached the sink.
// Serde: a distributed kernel carries the error from the rank where it happened to the rank
// that reports it.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum SimError {
    /// An LP sent (or rescheduled) an event with a NaN, negative or infinite delay, or one
    /// whose time overflows.
    #[error("{lp} at time {time}: bad delay {delay}: {reason}")]
    BadDelay {
        /// The LP whose handler made the call.
        lp: LpId,
        /// Its simulation time.
        time: Time,
        /// The delay it asked for.
        delay: f64,
        /// What was wrong with it.
        reason: TimeError,
    },
    /// An LP sent an event to an LP that does not exist.
    #[error("{lp} at time {time}: sent to unknown {dest} (the run has {n_lps} LPs)")]
    UnknownLp {
        /// The sender.
        lp: LpId,
        /// Its simulation time.
        time: Time,
        /// The destination asked for.
        dest: LpId,
        /// How many LPs the run has.
        n_lps: u32,
    },
    /// A chain of more than `u32::MAX` zero-delay events: the model never lets time advance.
    #[error(
        "{lp} at time {time}: zero-delay chain longer than {} events; time never advances",
        u32::MAX
    )]
    ZeroDelayChain {
        /// The LP that sent the event.
        lp: LpId,
        /// The stuck time.
        time: Time,
    },
    /// A model handler panicked.
    #[error("{lp} panicked at time {time}: {message}")]
    ModelPanic {
        /// The LP whose handler panicked.
        lp: LpId,
        /// The simulation time of the event (0 for `init`).
        time: Time,
        /// The panic message.
        message: String,
    },
    /// The run was given no LPs.
    #[error("the model has no logical processes")]
    NoLps,
    /// More LPs than `LpId` can name.
    #[error("too many LPs ({0}); at most {max}", max = u32::MAX)]
    TooManyLps(usize),
    /// A run setting is invalid.
    #[error("invalid run configuration: {0}")]
    Config(String),
    /// A distributed run lost touch with its other processes (a rank died, hung, or sent
    /// something unreadable).
    #[error("distributed run failed: {0}")]
    Cluster(String),
    /// More than `u32::MAX` events pending at once.
    #[error("pending-event set is full (more than {} events)", u32::MAX)]
    QueueFull,
}

/// A run that ended in an error, with the statistics of everything done before it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{error}")]
pub struct RunError {
    /// What went wrong.
    pub error: SimError,
    /// What the run did before it stopped; its outputs already reached the sink.
    pub partial: Box<Report>,
}
