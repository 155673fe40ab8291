//! Typed errors of the model API and the kernels.

use crate::report::Report;
use crate::time::{EventKey, LpId, Time};

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
    /// An absolute time before the current one (an event cannot be sent into the past).
    #[error("time {at} is before the current time {now}")]
    Past {
        /// The time asked for.
        at: f64,
        /// The current time.
        now: f64,
    },
}

/// What an LP did that broke the run's lookahead ([`SimError::Lookahead`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Breach {
    /// It sent an event to another LP.
    Sent,
    /// It cancelled an event it had sent to another LP.
    Cancelled,
    /// It moved an event it had sent to another LP.
    Moved,
}

impl std::fmt::Display for Breach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Breach::Sent => "sent",
            Breach::Cancelled => "cancelled",
            Breach::Moved => "moved",
        })
    }
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
    /// An LP broke the run's lookahead ([`RunConfig::lookahead`](crate::RunConfig::lookahead)):
    /// it sent an event to another LP, or cancelled or moved one it had sent there, less
    /// than the lookahead ahead of its own time.
    #[error(
        "{lp} at time {time}: {what} an event of {dest} at time {at}, before {earliest} (its time plus the lookahead)"
    )]
    Lookahead {
        /// The LP whose handler made the call.
        lp: LpId,
        /// Its simulation time.
        time: Time,
        /// What it did.
        what: Breach,
        /// The other LP.
        dest: LpId,
        /// The time of the event it sent, cancelled or moved (for a move, the time it was at
        /// when that was too close, else the time it was moved to).
        at: f64,
        /// The earliest time the lookahead allowed: the LP's time plus the lookahead.
        earliest: f64,
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
    /// A model stopped the run on purpose ([`Ctx::stop_with`](crate::Ctx::stop_with)): a
    /// state it finds impossible, or a message for another kind of LP.
    #[error("{lp} at time {time}: {message}")]
    Model {
        /// The LP whose handler stopped the run.
        lp: LpId,
        /// Its simulation time.
        time: Time,
        /// What the model said.
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
    /// The output sink panicked while taking a committed output. The outputs delivered
    /// before it stand; the run stops.
    #[error("the output sink panicked taking an output of {lp} at time {time}: {message}")]
    SinkPanic {
        /// The LP that emitted the output.
        lp: LpId,
        /// The time of the event that emitted it.
        time: Time,
        /// The panic message.
        message: String,
    },
    /// A memory budget too small to start the run: the events pending after `init` alone
    /// need more. (Once a run has started, a budget only throttles optimism; it never stops
    /// the run.)
    #[error(
        "memory budget of {budget} bytes is too small: the {events} events pending at the start need about {needed} bytes"
    )]
    MemoryBudget {
        /// The budget.
        budget: u64,
        /// The estimated bytes the pending events need.
        needed: u64,
        /// How many events were pending.
        events: u64,
    },
    /// A kernel thread failed outside the model's handlers in a way it cannot attribute to
    /// one LP (a panic in the model's `Clone`, `PartialEq` or `Drop` where the kernel cannot
    /// tell which LP's, or a bug of the kernel). The run stopped at once on every thread.
    #[error("internal error: {0}")]
    Internal(String),
    /// Two pending events have the same key: their causal identities collided (see
    /// [`EventKey`](crate::EventKey), "Uniqueness"; a chance of about one in 2⁶⁴ per pair of
    /// sends that also land at the same time). The run stops rather than order them
    /// arbitrarily; another seed will almost surely not collide.
    #[error(
        "two pending events for {dest} have the same key (time {}, sent by {} at time {}): their identities collided, a chance of about 1 in 2^64; run again with another seed",
        key.time, key.src, key.sent
    )]
    DuplicateKey {
        /// The LP both events are for.
        dest: LpId,
        /// Their key.
        key: EventKey,
    },
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
