//! The game-loop demos of the seed chapter (Rez Graham, *Efficient, Event-Based
//! Simulations*), written on `warpsim-timers`.
//!
//! - [`torches`]: a million torches burning out. The chapter's per-frame polling loop (its
//!   Listing 3) and the event-based timer manager run side by side over the same torches, and
//!   the per-frame cost of each is measured.
//!   The chapter's time-sliced update (Listing 2) runs beside them, so its three flaws are
//!   measured ([`torches::SlicedReport`]), and the timers can run with a per-frame budget.
//! - [`warlock`]: the warlock whose magic points regenerate along a curve; spells become ready
//!   at milestone times computed from the curve (the chapter's Figure 1), and casting one
//!   recomputes them all.
//!
//! Both are plain functions: a parameter struct with the defaults of the CLI scenario and a
//! `validate` that turns bad input into a [`ParamError`](crate::ParamError), and a report
//! struct that serialises to JSON.

#[cfg(feature = "clap")]
mod flags;
mod sliced;
pub mod torches;
pub mod warlock;
