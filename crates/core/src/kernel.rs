//! What every kernel shares: the run configuration and the [`Kernel`] trait.

use crate::error::{RunError, SimError};
use crate::finish::Finished;
use crate::model::{LogicalProcess, OutputSink};
use crate::report::{CostModel, Report};
use crate::stop::StopHandle;

/// Settings of one run that every kernel honours.
///
/// ```
/// use warpsim_core::{CostModel, RunConfig};
/// let config = RunConfig::new(7).end_time(200.0).max_events(1_000_000).critical_path(CostModel::Unit);
/// assert_eq!(config.seed, 7);
/// assert!(config.validate().is_ok());
/// assert!(RunConfig::new(7).end_time(f64::NAN).validate().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunConfig {
    /// Base seed: every LP's random stream is derived from it and the LP id.
    pub seed: u64,
    /// Events at or after this time are not executed (default: infinity, run until drained).
    pub end_time: f64,
    /// Stop after committing this many events (default: no limit).
    pub max_events: Option<u64>,
    /// Compute the critical path, pricing events this way (default: off).
    pub critical_path: Option<CostModel>,
    /// Also fingerprint the contents of the committed events (default: off; see
    /// [`RunConfig::content_hash`]).
    pub content_hash: bool,
    /// Who may ask the run to stop or pause early (default: nobody; see [`StopHandle`]).
    pub stop: Option<StopHandle>,
    /// Pause before the first event at or after this time and hand back a
    /// [`Checkpoint`](crate::Checkpoint) (default: never; see [`RunConfig::pause_at`]).
    pub pause_at: Option<f64>,
    /// Pause once this many events are committed in all (default: never).
    pub pause_after: Option<u64>,
    /// The model's lookahead: a promise that no LP sends an event to *another* LP (or
    /// cancels or moves one it sent there) less than this far ahead of its own time
    /// (default 0: no promise; see [`RunConfig::lookahead`]).
    pub lookahead: f64,
}

impl RunConfig {
    /// A run with seed `seed`, no end time, no event limit, no critical-path analysis.
    pub fn new(seed: u64) -> RunConfig {
        RunConfig {
            seed,
            end_time: f64::INFINITY,
            max_events: None,
            critical_path: None,
            content_hash: false,
            stop: None,
            pause_at: None,
            pause_after: None,
            lookahead: 0.0,
        }
    }

    /// Lets `stop` end the run early (see [`StopHandle`]).
    pub fn stop_handle(mut self, stop: StopHandle) -> RunConfig {
        self.stop = Some(stop);
        self
    }

    /// Pauses the run before its first event at or after `time`: every event before `time`
    /// is committed and none at or after it, and the kernel hands back a
    /// [`Checkpoint`](crate::Checkpoint) instead of finishing (see
    /// [`Sequential::run_from`](crate::Sequential::run_from)). A pause at or after the end
    /// time never happens.
    pub fn pause_at(mut self, time: f64) -> RunConfig {
        self.pause_at = Some(time);
        self
    }

    /// Pauses the run once `events` events are committed in all (counting those before the
    /// checkpoint it resumed from), handing back a checkpoint.
    pub fn pause_after(mut self, events: u64) -> RunConfig {
        self.pause_after = Some(events);
        self
    }

    /// Sets the end time.
    pub fn end_time(mut self, end_time: f64) -> RunConfig {
        self.end_time = end_time;
        self
    }

    /// Sets the event limit.
    pub fn max_events(mut self, max_events: u64) -> RunConfig {
        self.max_events = Some(max_events);
        self
    }

    /// Also computes [`Report::content_hash`](crate::Report::content_hash): a fingerprint of
    /// every committed event's *contents* (its serde encoding) with its key and destination,
    /// so that a cross-kernel comparison catches any difference in what handlers were given,
    /// not only in which events ran. It costs an encoding per event, so it is off by default;
    /// the equivalence tests turn it on.
    pub fn content_hash(mut self, on: bool) -> RunConfig {
        self.content_hash = on;
        self
    }

    /// Declares the model's *lookahead*, as ROSS's `g_tw_lookahead` does: every event an LP
    /// sends to another LP happens at least `lookahead` after the time of the event that
    /// sent it, and so does every event it cancels or moves there, before and after the
    /// move. (Events an LP sends to itself are free of it.)
    ///
    /// Every kernel checks the promise: a send, cancel or move that breaks it stops the run
    /// with [`SimError::Lookahead`], the same on every kernel. The results are otherwise the
    /// same with or without it; what changes is speed. Time Warp on threads runs every event
    /// that lies within the lookahead of what the other threads may still do without
    /// optimism's costs (no state save, no rollback record), as a conservative kernel would.
    ///
    /// ```
    /// use warpsim_core::{Ctx, Kernel, LogicalProcess, RunConfig, Sequential, SimError};
    /// #[derive(Clone)]
    /// struct Relay;
    /// impl LogicalProcess for Relay {
    ///     type Event = ();
    ///     type Output = ();
    ///     fn init(&mut self, ctx: &mut Ctx<Self>) {
    ///         if ctx.me().get() == 0 { ctx.send(1u32, 0.05, ()); }
    ///     }
    ///     fn on_event(&mut self, _: (), _: &mut Ctx<Self>) {}
    /// }
    /// let config = RunConfig::new(1).lookahead(0.1);
    /// let error = Sequential::new(config).run(vec![Relay, Relay], &mut Vec::new()).unwrap_err();
    /// assert!(matches!(error.error, SimError::Lookahead { .. }));
    /// ```
    pub fn lookahead(mut self, lookahead: f64) -> RunConfig {
        self.lookahead = lookahead;
        self
    }

    /// Turns on critical-path analysis.
    pub fn critical_path(mut self, cost_model: CostModel) -> RunConfig {
        self.critical_path = Some(cost_model);
        self
    }

    /// Checks the settings.
    ///
    /// # Errors
    ///
    /// [`SimError::Config`] when the end time or the pause time is NaN or negative, or the
    /// lookahead is NaN, negative or infinite.
    pub fn validate(&self) -> Result<(), SimError> {
        if !self.lookahead.is_finite() || self.lookahead < 0.0 {
            return Err(SimError::Config(format!(
                "lookahead must be a finite non-negative number, got {}",
                self.lookahead
            )));
        }
        if self.end_time.is_nan() || self.end_time < 0.0 {
            return Err(SimError::Config(format!(
                "end time must be a non-negative number, got {}",
                self.end_time
            )));
        }
        if let Some(pause) = self.pause_at
            && (pause.is_nan() || pause < 0.0)
        {
            return Err(SimError::Config(format!(
                "pause time must be a non-negative number, got {pause}"
            )));
        }
        Ok(())
    }
}

/// A simulation kernel: runs a model's LPs and delivers its committed outputs to a sink.
///
/// Implemented by [`Sequential`](crate::Sequential) here and by the optimistic kernels in
/// their own crates. The contract every implementation keeps: the same LPs and the same
/// [`RunConfig`] give the same committed events (the same
/// [`TraceHash`](crate::TraceHash)) and the same outputs, in the same order.
pub trait Kernel {
    /// Short name used in reports (`sequential`, `timewarp`, …).
    fn name(&self) -> &'static str;

    /// Runs the model to completion (then [`LogicalProcess::finish`] on every LP).
    ///
    /// # Errors
    ///
    /// A [`RunError`] carrying the [`SimError`] that stopped the run and the [`Report`] of what
    /// was done before it.
    fn run<M, S>(&self, lps: Vec<M>, sink: &mut S) -> Result<Report, RunError>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>,
    {
        self.run_final(lps, sink).map(|finished| finished.report)
    }

    /// Like [`Kernel::run`], and also hands back every LP's final state (its committed state
    /// after [`LogicalProcess::finish`]), the same on every kernel.
    ///
    /// # Errors
    ///
    /// As [`Kernel::run`]; a failed run hands back no states.
    fn run_final<M, S>(&self, lps: Vec<M>, sink: &mut S) -> Result<Finished<M>, RunError>
    where
        M: LogicalProcess,
        S: OutputSink<M::Output>;
}
