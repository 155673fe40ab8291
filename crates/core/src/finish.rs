//! The end of a run: [`LogicalProcess::finish`] on every LP's committed state, and what a
//! kernel hands back ([`Finished`]).

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::SimError;
use crate::model::{LogicalProcess, LpMeta};
use crate::report::Report;
use crate::rng::LpRng;
use crate::time::{EventKey, LpId, Time};

/// What [`LogicalProcess::finish`] can do: read the clock and its identity, draw from its
/// random stream, and [`emit`](FinishCtx::emit) outputs. It cannot send: the run is over.
///
/// ```
/// use warpsim_core::{Ctx, FinishCtx, Kernel, LogicalProcess, RunConfig, Sequential};
///
/// /// Counts its ticks and reports the count, and the rate, once at the end.
/// #[derive(Clone, Default)]
/// struct Ticker { ticks: u64 }
///
/// impl LogicalProcess for Ticker {
///     type Event = ();
///     type Output = (u64, f64);
///     fn init(&mut self, ctx: &mut Ctx<Self>) { ctx.schedule(1.0, ()); }
///     fn on_event(&mut self, _: (), ctx: &mut Ctx<Self>) {
///         self.ticks += 1;
///         ctx.schedule(1.0, ());
///     }
///     fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
///         ctx.emit((self.ticks, self.ticks as f64 / ctx.now().as_f64()));
///     }
/// }
///
/// let mut outputs = Vec::new();
/// let finished = Sequential::new(RunConfig::new(1).end_time(10.0))
///     .run_final(vec![Ticker::default(); 2], &mut outputs)
///     .unwrap();
/// // Ticks at 1, 2, …, 9 (the end time is exclusive); one more was due at exactly 10.
/// assert_eq!(outputs[0].output, (9, 0.9));
/// assert_eq!(outputs[0].time().as_f64(), 10.0);
/// assert_eq!(finished.states[1].ticks, 9);
/// assert_eq!(finished.report.pending_at_end_time, 2);
/// ```
pub struct FinishCtx<'a, M: LogicalProcess> {
    pub(crate) time: Time,
    pub(crate) me: LpId,
    pub(crate) n_lps: u32,
    pub(crate) meta: &'a mut LpMeta,
    pub(crate) outputs: &'a mut Vec<M::Output>,
}

impl<M: LogicalProcess> std::fmt::Debug for FinishCtx<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FinishCtx")
            .field("time", &self.time)
            .field("me", &self.me)
            .finish_non_exhaustive()
    }
}

impl<M: LogicalProcess> FinishCtx<'_, M> {
    /// The end of the run: the end time when one was set and reached (or the model drained
    /// before it — as in SimPy's `run(until=…)`, the clock then stands at the end time);
    /// otherwise (no end time, or the event limit stopped the run) the time of the last
    /// committed event of the whole run. The same for every LP and on every kernel.
    pub fn now(&self) -> Time {
        self.time
    }

    /// This LP's id.
    pub fn me(&self) -> LpId {
        self.me
    }

    /// How many LPs the model has.
    pub fn n_lps(&self) -> u32 {
        self.n_lps
    }

    /// The LP's random stream, where its last event left it.
    pub fn rng(&mut self) -> &mut LpRng {
        &mut self.meta.rng
    }

    /// Reports `output`. Outputs of `finish` reach the sink after every event's, ordered by
    /// LP id (one LP's keep their order), with the key [`EventKey::finish`].
    pub fn emit(&mut self, output: M::Output) {
        self.outputs.push(output);
    }
}

impl EventKey {
    /// The key under which LP `lp`'s [`LogicalProcess::finish`] runs at time `time` and its
    /// outputs are delivered: after every event at `time` (age `u32::MAX`), ordered by LP.
    pub const fn finish(lp: LpId, time: Time) -> EventKey {
        EventKey::new(time, u32::MAX, lp, time, u64::MAX)
    }

    /// Whether this is the key of a `finish` ([`EventKey::finish`]); no event has one.
    pub fn is_finish(&self) -> bool {
        self.age == u32::MAX && self.id == u64::MAX && self.sent == self.time
    }
}

/// What [`Kernel::run_final`](crate::Kernel::run_final) hands back: the report and every LP's
/// state at the end (after [`LogicalProcess::finish`]), indexed by LP id.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Finished<M> {
    /// The run's report.
    pub report: Report,
    /// The final state of LP `i` at index `i`.
    pub states: Vec<M>,
}

impl<M> Finished<M> {
    /// Bundles a report and the final states (for kernels).
    pub fn new(report: Report, states: Vec<M>) -> Finished<M> {
        Finished { report, states }
    }
}

/// The time `finish` sees (see [`FinishCtx::now`]): `end_time` when it is finite and the
/// run was not cut short by the event limit, else the time of the last committed event.
pub fn finish_time(end_time: f64, event_limit_hit: bool, last_commit: f64) -> Time {
    let time = if end_time.is_finite() && !event_limit_hit {
        end_time
    } else {
        last_commit
    };
    Time::new(time).unwrap_or(Time::ZERO)
}

/// Runs LP `lp`'s `finish` at `time`, appending its outputs to `outputs` (kernels only; see
/// [`kernel_api`](crate::kernel_api)).
///
/// # Errors
///
/// [`SimError::ModelPanic`] when `finish` panics (its outputs are dropped, as a panicking
/// handler's are).
pub fn run_finish<M: LogicalProcess>(
    model: &mut M,
    meta: &mut LpMeta,
    lp: LpId,
    n_lps: u32,
    time: Time,
    outputs: &mut Vec<M::Output>,
) -> Result<(), SimError> {
    let before = outputs.len();
    let mut ctx = FinishCtx::<M> {
        time,
        me: lp,
        n_lps,
        meta,
        outputs: &mut *outputs,
    };
    match catch_unwind(AssertUnwindSafe(|| model.finish(&mut ctx))) {
        Ok(()) => Ok(()),
        Err(payload) => {
            outputs.truncate(before);
            Err(SimError::ModelPanic {
                lp,
                time,
                message: format!(
                    "in finish: {}",
                    crate::sequential::panic_message(payload.as_ref())
                ),
            })
        }
    }
}
