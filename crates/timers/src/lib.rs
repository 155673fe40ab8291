//! Game-loop timers: a delayed-callback manager that replaces per-frame polling.
//!
//! Instead of decrementing every torch's remaining time every frame and testing it (the
//! busy-wait of the chapter this crate follows, Rez Graham's *Efficient, Event-Based
//! Simulations*), a game schedules a callback for the moment something happens and lets the
//! manager call it. A frame in which nothing is due costs a comparison; a frame costs work only
//! for what actually happens in it.
//!
//! # Main types
//!
//! | type | role |
//! |---|---|
//! | [`Timers<C>`] | the manager the game loop owns; [`advance`](Timers::advance) fires what is due |
//! | [`Scheduler<C>`] | everything else — add, cancel, change time, pause, owners, meters; `Timers` derefs to it |
//! | [`Budget`], [`FrameReport`] | a per-frame limit for [`advance_within`](Timers::advance_within), and what it fired and carried over |
//! | [`TimerCtx<C>`] | what a callback gets besides `&mut C`: the scheduler, plus what fired |
//! | [`TimerBuilder`] | a timer with a repeat period, catch-up policy, owner, payload, or replacing another |
//! | [`TimersBuilder`], [`TimerQueue`] | a manager's capacity and pending set (timing wheel, ladder queue or heap) |
//! | [`TimerId`], [`OwnerId`], [`MeterId`], [`MilestoneId`] | generation-checked ids: a stale one never touches anything |
//! | [`Meter`], [`Curve`] | a value regenerating along a curve; milestones fire when it reaches thresholds |
//! | [`TimerError`], [`AddError`] | every refused call (a refused add hands its callback back); nothing here panics on bad input |
//!
//! # Example: the warlock of the chapter's Figure 1
//!
//! The warlock has 5 magic points and regenerates 2 per second. Ice costs 35, fireball 65 and
//! lightning 95, so the spells become ready at 15 s, 30 s and 45 s — computed from the curve,
//! not polled. When the warlock casts ice at 20 s, every milestone is recomputed.
//!
//! ```
//! use warpsim_timers::{Linear, Meter, Timers};
//!
//! let mut timers = Timers::<Vec<(&str, f64)>>::new();
//! let mana = timers.add_meter(Meter::builder(Linear::new(2.0)?).value(5.0).max(100.0).build()?)?;
//! for (spell, cost) in [("ice", 35.0), ("fireball", 65.0), ("lightning", 95.0)] {
//!     timers.add_milestone(mana, cost, move |log, ctx| log.push((spell, ctx.now())))?;
//! }
//! let mut log = Vec::new();
//! for _frame in 0..1000 {
//!     timers.advance(1.0 / 60.0, &mut log)?; // the game loop at 60 fps, for 16.7 s
//! }
//! assert_eq!(log, [("ice", 15.0)]); // at the exact time, not at the next frame
//!
//! timers.advance_to(20.0, &mut log)?;
//! timers.spend(mana, 35.0)?; // cast ice at 20 s: 45 - 35 = 10 MP left
//! timers.advance_to(60.0, &mut log)?;
//! assert_eq!(log, [("ice", 15.0), ("ice", 32.5), ("fireball", 47.5)]);
//! assert_eq!(timers.meter_value(mana), Some(90.0)); // lightning follows at 62.5 s
//! # Ok::<(), warpsim_timers::TimerError>(())
//! ```
//!
//! # Design decisions
//!
//! - **Callbacks get `&mut C` and a [`TimerCtx`]**, not a shared handle: the borrow checker,
//!   not a runtime flag, guarantees that a callback can change timers (its own included) but
//!   cannot advance time re-entrantly.
//! - **Deterministic order.** Timers due in one advance fire in time order, equal times in the
//!   order the timers were added: the queue key is `(time, insertion sequence number)`. The
//!   chapter's plain heap fires equal times in an arbitrary order.
//! - **A frame always ends.** Work a callback schedules at or before the current event's time
//!   (a zero delay, a time in the past) is held back to the next advance, so a callback that
//!   re-adds itself with no delay runs once per frame instead of looping forever.
//! - **No drift.** Occurrence `k` of a repeating timer is due at `first + k · period`,
//!   computed, not accumulated. When one advance spans several periods, each timer chooses
//!   ([`CatchUp`]): fire every occurrence with its own scheduled time, or fire once and skip.
//! - **Milestones are analytic.** A [`Meter`] computes when its value reaches each threshold
//!   from the curve's inverse; a change of value (`spend`) recomputes every milestone, which
//!   fires once per crossing — never twice, never skipped.
//! - **Owners** ([`Scheduler::add_owner`]) are the chapter's observer extension: told when
//!   a timer is cancelled, replaced, finished, or dropped with the manager, and removable as a
//!   group ([`Scheduler::cancel_owner`]) when the object they stand for is destroyed.
//! - **`Send`.** Callbacks, owners' observers and curves must be `Send`, so a `Timers<C>` can
//!   move to another thread or be an engine resource (Bevy's resources are `Send`); a
//!   callback shares state through `Arc`, or better through the context `C`.
//! - **A refused add hands its callback back** ([`AddError`]), so nothing it captured is lost.
//! - **Bad input is an error**, never a panic or a silent clamp: NaN or negative delays, zero
//!   periods, NaN time scales and the like return a [`TimerError`] and change nothing.
//!
//! # Implementation
//!
//! Timers live in a slab of 64-byte slots (one cache line each, with a 32-bit generation that
//! makes ids stale when the slot is reused). From 16,384 live timers on, a new timer's slot is
//! taken beside those of timers due at about the same time (pages of 64 slots, one open per
//! 1/16 time unit of due times), so that a frame firing thousands of timers reads a few pages
//! of slots rather than one page per timer; the slab stays within about twice the live
//! timers. The scheduled
//! ones sit in a pending set keyed by `(time, insertion sequence)` so that equal times fire in
//! insertion order ([`TimerQueue`]): by default a hierarchical timing wheel (eight levels of
//! 256 buckets of 2⁻¹⁰-unit ticks) that keeps each entry in the bucket of its tick and sorts a
//! tick's few entries when the clock reaches it; or the
//! [`LadderQueue`](warpsim_queue::LadderQueue) of Tang, Goh and Thng (2005), or the
//! [`IndexedHeap`](warpsim_queue::IndexedHeap), a 4-ary heap. All three cancel and reschedule
//! in place and fire in the same order. The manager keeps a lower bound of the earliest due
//! time, so an advance with nothing due never touches the queue.
//!
//! | operation | wheel (default) | ladder | heap |
//! |---|---|---|---|
//! | `add`, `cancel`, `set_time`, `delay`, `pause`, `resume` | O(1) (cancel amortised) | amortised O(1) | O(log n) |
//! | `advance` with nothing due | O(1): one comparison | O(1) | O(1) |
//! | `advance` firing k timers | amortised O(k), plus sorting each tick's entries | amortised O(k) | O(k log n) |
//! | `remaining`, `is_active`, `due_time` | O(1) | O(1) | O(1) |
//! | `spend` on a meter with m milestones | O(m) | amortised O(m) | O(m log n) |
//!
//! A callback that captures nothing is not allocated; give it a [`payload`](TimerBuilder::payload)
//! to tell timers apart, and adding a timer allocates nothing in the steady state.
//!
//! No feature flags; no `unsafe` code.

#![forbid(unsafe_code)]

mod builder;
mod ctx;
mod curve;
mod error;
mod id;
mod meter;
mod queue;
mod scheduler;
mod time;
mod timers;
mod wheel;

pub use builder::TimerBuilder;
pub use ctx::TimerCtx;
pub use curve::{Curve, Exponential, FnCurve, Linear, Logarithmic};
pub use error::{AddError, TimerError};
pub use id::{MeterId, MilestoneId, OwnerId, TimerId};
pub use meter::{Meter, MeterBuilder};
pub use queue::TimerQueue;
pub use scheduler::{CatchUp, RemovalReason, Scheduler};
pub use timers::{Budget, FrameReport, Timers, TimersBuilder};
