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
//! The crate has no `unsafe` code.

#![forbid(unsafe_code)]

mod error;
mod kernel;
mod model;
mod pending;
mod report;
mod rng;
mod sequential;
mod time;

pub use error::{RunError, SimError, TimeError};
pub use kernel::{Kernel, RunConfig};
pub use model::{Committed, Ctx, Discard, EventHandle, LogicalProcess, OutputSink, SendError};

/// What kernels outside this crate (the Time Warp kernels) need beyond the model API: the
/// LP's kernel-side state and a [`Ctx`] that records effects instead of applying them.
/// Models never need this module.
pub mod kernel_api {
    pub use crate::model::{Effect, LpMeta, deliver_guarded, encode_event};
    pub use crate::sequential::panic_message;
}
pub use pending::QueueKind;
pub use report::{CostModel, CriticalPath, Report, StopReason, TraceHash};
pub use rng::{LpRng, derive_seed};
pub use sequential::{ProgressHook, Sequential};
pub use time::{EventKey, LpId, Time};
