//! warpsim's optimistic kernel on threads: Time Warp (Jefferson 1985) with state saving,
//! rollback, lazy or aggressive cancellation, shared-memory GVT and flow control.
//!
//! The kernel runs any warpsim model unchanged and commits exactly what the sequential kernel
//! commits — the same [`TraceHash`](warpsim_core::TraceHash) and the same outputs in the same
//! order — on any thread count.
//!
//! - [`TimeWarp`]: the kernel and its knobs (threads, [`Partition`], [`Cancellation`],
//!   checkpoint interval, optimism window, memory budget, GVT interval). It implements
//!   [`Kernel`](warpsim_core::Kernel); [`TimeWarp::run_with_stats`] also returns the
//!   [`TimeWarpStats`].
//! - [`AnyKernel`]: the sequential kernel or this one, chosen at run time (`"timewarp:4"`).
//! - [`parse_bytes`]: reads memory budgets such as `2GiB`.
//!
//! At the end of a run that finished, `finish` runs on every LP's committed state and its
//! outputs follow every event's, by LP, as on the sequential kernel;
//! [`Kernel::run_final`](warpsim_core::Kernel::run_final) (and
//! [`TimeWarp::run_final_with_stats`]) hand back the final states, and
//! [`TimeWarp::run_cluster_final`] each rank's own. What a model must not do on this kernel,
//! and when it pays off, is in the `warpsim-core` crate docs.
//!
//! # Example
//!
//! ```
//! use warpsim_core::{Discard, Kernel, RunConfig, Sequential};
//! use warpsim_models::phold::PholdParams;
//! use warpsim_timewarp::{Cancellation, TimeWarp};
//!
//! let params = PholdParams { lps: 256, end: 20.0, ..PholdParams::default() };
//! let config = RunConfig::new(3).end_time(params.end);
//! let sequential = Sequential::new(config.clone()).run(params.build().unwrap(), &mut Discard).unwrap();
//! for cancellation in [Cancellation::Aggressive, Cancellation::Lazy] {
//!     let kernel = TimeWarp::new(config.clone()).threads(3).cancellation(cancellation);
//!     let optimistic = kernel.run(params.build().unwrap(), &mut Discard).unwrap();
//!     assert_eq!(optimistic.trace_hash, sequential.trace_hash);
//!     assert_eq!(optimistic.events_committed, sequential.events_committed);
//! }
//! ```
//!
//! # Design
//!
//! LPs are split over worker threads ([`Partition::Block`] by default). Each worker keeps
//! one pending set for all its LPs (a ladder queue of key, LP and event, popped in key order
//! as the sequential kernel pops its own; messages name their target by its exact key, found
//! through entries in the LP's record), and one log of what it ran, in execution order: a
//! record per event, a state save (`Clone` of the model and its random stream) every `k`-th
//! event of an LP, and what each event sent, cancelled and moved. By default each worker
//! adapts `k` at every GVT from timed samples of a save and of an event and its rollbacks
//! per event ([`TimeWarp::checkpoint_interval`]). Handlers run with a buffered
//! [`Ctx`](warpsim_core::Ctx) whose recorded effects the worker turns into messages: to its
//! own LPs at once or through a local FIFO, to other workers in batches over crossbeam
//! channels.
//!
//! **Safe events.** An event below every key another worker could still send its worker
//! cannot be rolled back, so it runs as on the sequential kernel — no state save, record or
//! effect log — and commits at once ([`TimeWarp::safe_events`]). Each GVT round tells every
//! worker the smallest report of the others, which it lowers with its own sends to them.
//! On one thread nearly every event is safe; on several, mostly those of a worker that lags
//! — unless the model declares a lookahead ([`RunConfig::lookahead`](warpsim_core::RunConfig::lookahead)):
//! nothing from another worker can then come sooner than that after its report, and most
//! events are safe on several threads too (PHOLD with 16,384 LPs on 2: nine in ten).
//!
//! A message for an event at or before an LP's last processed event rolls the LP back:
//! restore the nearest save, coast forward to the target, put the undone events back, and
//! undo their effects (antimessages at once in aggressive mode; in lazy mode only for the
//! sends that re-execution does not regenerate identically — same key, which causal
//! identity keeps for a regenerated send, and the same encoding, byte for byte). Model `cancel` and
//! `reschedule` travel as withdraw and move messages, undone by restore and reverse moves.
//!
//! GVT is computed by Fujimoto and Hybinette's asynchronous shared-memory algorithm without
//! stopping the workers; below GVT events are committed (hashed, outputs sent to the calling
//! thread, which delivers them in key order) and their records freed. A handler error or
//! panic stops the run only once GVT reaches it — before that it may be a phantom of a state
//! that a rollback will correct.
//!
//! **Flow control.** `window(Some(w))` runs no event later than `GVT + w`; without a fixed
//! window each worker adapts its own ([`TimeWarp::adaptive_window`]): halved while more than
//! a quarter of its work is rolled back, grown by a quarter once less than 2% is but kept
//! short of where it last thrashed, never below a few hundred of its events.
//!
//! **Memory.** `memory(Some(b))` bounds an estimate of the kernel's storage: pending events,
//! processed records with their state saves, effect logs, deferred and withdrawn events and
//! uncommitted outputs, each counted as its count × `size_of`, plus the heap that the model
//! says each saved state owns ([`LogicalProcess::heap_bytes`](warpsim_core::LogicalProcess::heap_bytes),
//! 0 unless the model implements it; heap inside events and outputs is not counted). Over
//! budget, workers narrow a window of their own and collect fossils eagerly; the budget only
//! throttles, so a run that fits at the start always finishes, and the same command always
//! ends the same way. A budget smaller than the events pending after `init` is refused at
//! the start ([`SimError::MemoryBudget`](warpsim_core::SimError::MemoryBudget)); a budget
//! that even the narrowest window cannot keep is reported once as a [`Warning`].
//!
//! # Speculation: what a handler may and may not do
//!
//! Time Warp runs handlers on states that may be wrong — an LP that has not yet received an
//! earlier event runs later ones, and is rolled back when the straggler comes. Everything a
//! handler does through its [`Ctx`](warpsim_core::Ctx) is undone by a rollback; nothing else
//! is. So a handler:
//!
//! - **may** panic or return an error on a wrong state: the kernel catches it, and reports it
//!   only if GVT reaches it (then it is the sequential kernel's error too). Worker threads
//!   print nothing for such panics; the kernel needs them to unwind, so a build with
//!   `panic = "abort"` is refused at the start.
//! - **must not** have effects outside its LP's state and `Ctx`: no printing, files, globals,
//!   shared counters or clocks (they would see speculative and repeated runs), and no reading
//!   them either (a re-run must do exactly what the first run did).
//! - **must** end quickly on any state, even one that cannot happen sequentially: a handler
//!   that loops, sleeps or blocks on a speculative state stalls the run (the kernel cannot
//!   interrupt it). One that runs far longer than the worker's events take on average
//!   while its state is speculative is reported as a [`Warning::SlowSpeculativeHandler`]
//!   naming the LP and time ([`TimeWarp::slow_handler_after`]). Allocating without bound on
//!   a wrong state aborts the process, as it would sequentially.
//! - relies on the model's `Clone` (state saves) and the event's `Serialize` (lazy
//!   cancellation compares encodings) behaving as plain data: a panic in `Clone` is a typed
//!   error, one in `Serialize` an encoding that matches nothing — never a hang.
//!
//! **Load balancing** (optional, [`TimeWarp::load_balancing`]): at GVT, the most loaded LPs of
//! the busiest worker move, with their whole optimistic state, to the idlest one.
//!
//! **Stopping and checkpoints.** A [`StopHandle`](warpsim_core::StopHandle) in the
//! `RunConfig` stops or pauses a run at its next GVT with a
//! [`Checkpoint`](warpsim_core::Checkpoint) of the committed state
//! ([`TimeWarp::run_from`]), which continues on any kernel to the uninterrupted run's result;
//! [`TimeWarp::run_from_checkpointing`] takes such checkpoints while the run goes on (periodic
//! checkpoints: the workers wait only while they copy their LPs), and
//! [`TimeWarp::run_cluster_from_checkpointing`] on ranks;
//! [`TimeWarp::on_progress`] shows a progress bar the GVT and the counts as the run goes.
//!
//! **Limits.** `RunConfig::max_events` and critical-path analysis are refused with
//! [`SimError::Config`](warpsim_core::SimError::Config): use an end time, and the sequential
//! kernel for the critical path (it commits the same events).
//!
//! The crate has no `unsafe` code. Its concurrent modules open with `# Ground rules`; the GVT
//! protocol has `loom` tests.

#![forbid(unsafe_code)]

mod any;
pub mod cluster;
mod config;
mod control;
mod gvt;
mod home;
mod idmap;
mod kernel;
mod message;
mod observe;
mod pending;
mod progress;
mod setup;
mod shared;
mod snapshot;
mod stats;
mod sync;
mod watch;
mod worker;

pub use any::{AnyKernel, KernelSpec, KernelSpecError};
pub use config::{Cancellation, Partition, TimeWarp, parse_bytes};
pub use progress::{Progress, ProgressHook};
pub use stats::{ThreadStats, TimeWarpStats};
pub use watch::{Warning, WarningHook};
