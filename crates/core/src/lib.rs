//! warpsim's model API and its sequential kernel.
//!
//! This is the crate a model depends on. Its main types:
//!
//! - [`LogicalProcess`]: what a model implements — state that changes only by handling events.
//! - [`Ctx`]: what a handler can do — read the clock ([`Ctx::now`]), draw random numbers from
//!   the LP's own stream ([`Ctx::rng`]), [`send`](Ctx::send), [`cancel`](Ctx::cancel) and
//!   [`reschedule`](Ctx::reschedule) events, and [`emit`](Ctx::emit) outputs.
//! - [`Kernel`]: what runs a model. [`Sequential`] is here; the Time Warp kernels implement the
//!   same trait in their own crates and must commit exactly the same events.
//! - [`Report`]: what a run did, including its [`TraceHash`] and, on request, the
//!   [`CriticalPath`].
//! - [`LogicalProcess::finish`] and [`Kernel::run_final`]: the end of a run — statistics
//!   emitted from each LP's committed state, and the final states handed back.
//! - [`blocks`]: what an LP's state is built from — [`Tally`](blocks::Tally),
//!   [`TimeAverage`](blocks::TimeAverage), [`Histogram`](blocks::Histogram), a
//!   [`WaitLine`](blocks::WaitLine) whose members renege, [`KeyedTimers`](blocks::KeyedTimers),
//!   a [`Resource`](blocks::Resource), and a [`Station`](blocks::Station) — servers and the
//!   line in front of them, with the figures a queueing model reports.
//! - [`kinds`]: several kinds of LP with typed messages ([`model_kinds!`], [`Addr`]).
//! - [`prelude`]: all of the above, with `rand`, `rand_distr` and serde's traits.
//!
//! # Example
//!
//! A counter that ticks once per time unit and reports every fifth tick:
//!
//! ```
//! use warpsim_core::{Ctx, Kernel, LogicalProcess, RunConfig, Sequential};
//!
//! #[derive(Clone, Default)]
//! struct Ticker { ticks: u64 }
//!
//! impl LogicalProcess for Ticker {
//!     type Event = ();
//!     type Output = u64;
//!     fn init(&mut self, ctx: &mut Ctx<Self>) { ctx.schedule(1.0, ()); }
//!     fn on_event(&mut self, _: (), ctx: &mut Ctx<Self>) {
//!         self.ticks += 1;
//!         if self.ticks % 5 == 0 { ctx.emit(self.ticks); }
//!         ctx.schedule(1.0, ());
//!     }
//! }
//!
//! let mut outputs = Vec::new();
//! let report = Sequential::new(RunConfig::new(1).end_time(12.0))
//!     .run(vec![Ticker::default()], &mut outputs)
//!     .unwrap();
//! assert_eq!(report.events_committed, 11);
//! let reported: Vec<u64> = outputs.iter().map(|c| c.output).collect();
//! assert_eq!(reported, [5, 10]);
//! ```
//!
//! # Design
//!
//! **One model, every kernel.** Events are ordered by [`EventKey`] `(time, age, src, seq)`, a
//! key fixed by the sender, never by arrival order; every LP draws from its own random stream;
//! outputs leave only when committed. So the same model and seed commit the same events on
//! every kernel and thread count, which the trace hash makes checkable.
//!
//! **Errors, not panics.** A bad delay or destination in a handler stops the run with a typed
//! [`SimError`]; a panicking handler is caught and reported with its LP id. Either way the
//! [`RunError`] carries the report of everything done so far.
//!
//! # What breaks on Time Warp
//!
//! A model that runs on the sequential kernel runs unchanged on Time Warp, which executes
//! handlers *speculatively* — on states that a late message will prove wrong — and undoes
//! them by restoring an earlier copy of the LP (its `Clone`) and re-running. So a handler
//! must have no effect outside its LP's state and its [`Ctx`]:
//!
//! - **Globals** (`static`s, `thread_local!`s, `Arc<Mutex<…>>` shared between LPs, counters)
//!   are not rolled back and see every speculative run: counts come out too high and differ
//!   from run to run. Keep state in the LP; combine LPs' results from their outputs.
//! - **Printing, files, sockets** from a handler happen for events that are later undone, and
//!   happen again when they are redone. Report through [`Ctx::emit`] (delivered only once
//!   committed, in key order) or at the end through [`LogicalProcess::finish`].
//! - **A loose `PartialEq`** on events used to matter: lazy cancellation once compared a
//!   re-sent event with the old one by `PartialEq`, and one that ignored a field let a
//!   wrong message stand. Now it compares their serde encodings, byte for byte, so
//!   `PartialEq` is never consulted — it is harmless, but a `Serialize` that skips a field
//!   (`#[serde(skip)]`) makes two different events look the same.
//! - **`panic = "abort"`**: a speculative state can make a handler panic, and the kernel must
//!   catch that panic (it is an error only if it survives to commit); with `abort` the
//!   process would die, so the Time Warp kernel refuses to start in such a build.
//! - **Assertions on speculative state**: an `assert!` that holds in every sequential run
//!   can fail on a state that never happens sequentially (a message not yet undone). That is
//!   safe — the panic is caught and forgotten when the state is rolled back — but it is
//!   wasted work, and a handler that *loops* or *blocks* on such a state stalls the run
//!   (the kernel cannot interrupt it; it warns about slow speculative handlers).
//! - **Wall-clock time and other outside input** read in a handler differ between the first
//!   run of an event and its re-run.
//!
//! The blocks in [`blocks`] are plain `Clone` data for this reason: an LP built from them
//! rolls back for free.
//!
//! # When Time Warp pays off
//!
//! Time Warp runs independent events of different LPs at once. How much that can gain is
//! bounded by the model, not the kernel:
//!
//! - **The critical path.** Each event depends on its LP's previous event and on the event
//!   that sent it; the longest chain of such dependencies must run one after another. Its
//!   length against the total work is the *available parallelism*
//!   ([`RunConfig::critical_path`], [`CriticalPath::parallelism`]): a single-LP model (one
//!   bank branch) has none; `n` independent branches have about `n`; a ring of routers
//!   passing packets has as many as packets in flight. No kernel beats it, so measure it
//!   first on the sequential kernel.
//! - **Event granularity.** Time Warp pays per event for what the sequential kernel does not
//!   do: a state save every few events, a message through another thread's queue, the GVT,
//!   rollbacks. With handlers of a few hundred nanoseconds (the queueing models here) that
//!   overhead is comparable to the work, and two threads barely match one sequential
//!   kernel; with handlers of tens of microseconds (physics, geometry — Sharks World) it
//!   vanishes and the speedup approaches the available parallelism. Few LPs with much
//!   work each, little communication between LPs far apart in time, and lookahead (messages
//!   sent well into the future) all help; zero-delay chains across LPs and one busy LP
//!   that everyone talks to hurt. Declare the lookahead ([`RunConfig::lookahead`]): Time
//!   Warp then runs the events within it of what the other threads may still send as the
//!   sequential kernel does, without state saves or records.
//!
//! The crate has no `unsafe` code.

#![forbid(unsafe_code)]

pub mod blocks;
mod checkpoint;
mod error;
mod finish;
mod kernel;
pub mod kinds;
mod model;
mod output;
mod pending;
mod relocations;
mod report;
mod rng;
mod sequential;
mod stop;
mod time;

pub use checkpoint::{
    Checkpoint, CheckpointError, CheckpointHeader, CheckpointLabel, Ending, FORMAT_VERSION,
    PendingEvent, Start, read_checkpoint_header,
};
pub use error::{Breach, RunError, SimError, TimeError};
pub use finish::{FinishCtx, Finished};
pub use kernel::{Kernel, RunConfig};
pub use kinds::{Addr, Kind, Member};
pub use model::{Committed, Ctx, Discard, EventHandle, LogicalProcess, OutputSink, SendError};

/// What kernels outside this crate (the Time Warp kernels) need beyond the model API: the
/// LP's kernel-side state and a [`Ctx`] that records effects instead of applying them.
/// Models never need this module.
pub mod kernel_api {
    pub use crate::finish::{finish_time, run_finish};
    pub use crate::model::{Effect, LpMeta, deliver_guarded, encode_event};
    pub use crate::sequential::panic_message;
}
pub use pending::QueueKind;

/// The `rand` crate this crate's [`LpRng`] works with (its `RngExt` methods draw numbers).
pub use rand;
/// The `rand_distr` crate of distributions (`Exp`, `Normal`, …) for the same `rand`.
pub use rand_distr;
/// The `serde` crate events derive `Serialize` and `Deserialize` from.
pub use serde;

/// What a model usually needs, in one `use warpsim_core::prelude::*;`: the model API, the
/// kernels' trait and the sequential kernel, the building blocks, `rand`'s traits and
/// `rand_distr`'s common distributions, and serde's traits.
///
/// (`#[derive(Serialize, Deserialize)]` expands to code that names the `serde` crate: add
/// `serde` to your dependencies, or write `#[serde(crate = "warpsim_core::serde")]` under
/// the derive.)
///
/// ```
/// use warpsim_core::prelude::*;
///
/// #[derive(Clone)]
/// struct Arrivals { gap: Exp<f64>, seen: Tally }
///
/// impl LogicalProcess for Arrivals {
///     type Event = ();
///     type Output = f64;
///     fn init(&mut self, ctx: &mut Ctx<Self>) { ctx.schedule(0.0, ()); }
///     fn on_event(&mut self, _: (), ctx: &mut Ctx<Self>) {
///         let gap = self.gap.sample(ctx.rng());
///         self.seen.record(gap);
///         ctx.schedule(gap, ());
///     }
///     fn finish(&mut self, ctx: &mut FinishCtx<Self>) { ctx.emit(self.seen.mean()); }
/// }
///
/// let model = Arrivals { gap: Exp::new(2.0).unwrap(), seen: Tally::new() };
/// let mut outputs = Vec::new();
/// Sequential::new(RunConfig::new(1).end_time(5_000.0)).run(vec![model], &mut outputs).unwrap();
/// assert!((outputs[0].output - 0.5).abs() < 0.02);
/// ```
pub mod prelude {
    pub use crate::blocks::{
        Histogram, KeyedTimers, Resource, Served, Station, StationSummary, Tally, Ticket,
        TimeAverage, WaitLine,
    };
    pub use crate::{
        Addr, Committed, Ctx, Discard, EventHandle, EventKey, FinishCtx, Finished, Kernel, Kind,
        LogicalProcess, LpId, LpRng, Report, RunConfig, Sequential, SimError, Time, model_kinds,
    };
    pub use rand::{Rng, RngExt, SeedableRng};
    pub use rand_distr::{
        Bernoulli, Distribution, Exp, Gamma, LogNormal, Normal, Poisson, Triangular, Uniform,
        Weibull,
    };
    pub use serde::{Deserialize, Serialize};
}

/// What [`model_kinds!`] expands to needs (not part of the API).
#[doc(hidden)]
pub mod __private {
    pub use serde;
}
pub use report::{CostModel, CriticalPath, Report, StopReason, TraceHash};
pub use rng::{LpRng, derive_seed, stream_rng};
pub use sequential::{ProgressHook, Sequential};
pub use stop::StopHandle;
pub use time::{EventKey, LpId, Time};
