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
//! - [`parse_bytes`]: reads memory budgets such as `2GiB`.
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
//! LPs are split over worker threads ([`Partition::Block`] by default). Each worker keeps,
//! per LP, an ordered map of pending events by key (messages name their target by its exact
//! key, so no handle map is needed; the smallest event sits inline in the LP record and the
//! others in a small sorted `Vec`, or a `BTreeMap` once there are many, so the usual LP with
//! one or a few pending events never allocates per event), the list of processed events with a
//! state save (`Clone` of the model and its random stream and send counter) every `k`-th
//! event, and a log of what each event sent, cancelled and moved; a lazy 4-ary heap of 16-byte
//! entries orders the LPs by their smallest pending key. By default each worker adapts `k` at
//! every GVT from timed samples of a save and of an event and its rollbacks per event
//! ([`TimeWarp::checkpoint_interval`]). Handlers run with a buffered [`Ctx`](warpsim_core::Ctx) whose
//! recorded effects the worker turns into messages: to its own LPs through a local FIFO, to
//! other workers in batches over crossbeam channels.
//!
//! A message for an event at or before an LP's last processed event rolls the LP back:
//! restore the nearest save, coast forward to the target, put the undone events back, and
//! undo their effects (antimessages at once in aggressive mode; in lazy mode only for the
//! sends that re-execution does not regenerate identically). Model `cancel` and
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
//! a quarter of its work is rolled back, grown by a quarter once less than 5% is but kept
//! short of where it last thrashed, never below a few hundred of its events. `memory(Some(b))`
//! bounds an estimate of the kernel's storage (records, saves, logs, pending events:
//! counts × `size_of`, so heap data inside model states or events is not counted); over
//! budget, workers run only the event at GVT and start GVT rounds eagerly, which always
//! finishes. A budget smaller than the pending events alone stops the run with an error
//! naming `--memory`.
//!
//! **Load balancing** (optional, [`TimeWarp::load_balancing`]): at GVT, the most loaded LPs of
//! the busiest worker move, with their whole optimistic state, to the idlest one.
//!
//! **Limits.** `RunConfig::max_events` and critical-path analysis are refused with
//! [`SimError::Config`](warpsim_core::SimError::Config): use an end time, and the sequential
//! kernel for the critical path (it commits the same events).
//!
//! The crate has no `unsafe` code. Its concurrent modules open with `# Ground rules`; the GVT
//! protocol has `loom` tests.

#![forbid(unsafe_code)]

pub mod cluster;
mod config;
mod gvt;
mod kernel;
mod lpheap;
mod pending;
mod stats;
mod worker;

pub use config::{Cancellation, Partition, TimeWarp, parse_bytes};
pub use stats::{ThreadStats, TimeWarpStats};
