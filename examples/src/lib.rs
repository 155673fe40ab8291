//! warpsim's cookbook: models written the way a user writes one, from the building blocks in
//! [`warpsim_core::blocks`], each run on the sequential kernel and on Time Warp and checked
//! against something independent.
//!
//! - [`bank`]: the reneging bank — Poisson arrivals, tellers, exponential service and
//!   patience; mean wait, fraction reneged, mean line length, utilisation. Checked against
//!   an independent SimPy program (`benches/bank_simpy.py`, see `BENCHMARKS.md`).
//! - [`mmc`]: an M/M/c queue from a [`Resource`](warpsim_core::blocks::Resource) and a
//!   [`WaitLine`](warpsim_core::blocks::WaitLine), checked against Erlang C.
//! - [`network`]: two kinds of LP with typed messages ([`model_kinds!`](warpsim_core::model_kinds)) —
//!   routers passing packets round a ring, and a watchdog that keeps a
//!   [`KeyedTimers`](warpsim_core::blocks::KeyedTimers) timeout per router.
//!
//! Each module has a `…Params` (serde, with defaults) whose `build` makes the LPs, the model,
//! and a summary read from the outputs. The bank also implements `warpsim_cli::Model`, so
//! `cargo run --release -p warpsim-examples --bin bank -- run bank --replications 20` has
//! the whole `warpsim` command line (run, sweep, replications, JSON, TOML, kernels).

#![forbid(unsafe_code)]

pub mod bank;
pub mod mmc;
pub mod network;

/// A parameter that was refused: which, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{param}: {message}")]
pub struct ParamError {
    /// The parameter's name.
    pub param: &'static str,
    /// What is wrong with it.
    pub message: String,
}

/// A rate that must be a positive, finite number.
pub(crate) fn positive(param: &'static str, value: f64) -> Result<f64, ParamError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ParamError {
            param,
            message: format!("must be a positive number, got {value}"),
        })
    }
}
