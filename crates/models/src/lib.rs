//! Models for warpsim, each written once against the public API of `warpsim-core` and so
//! runnable on every kernel.
//!
//! - [`phold`]: PHOLD, the standard benchmark of parallel discrete-event simulation, defined
//!   as ROSS defines it so that figures compare.
//! - [`pets`]: feeding pets with feeders that break, in the three styles of the seed article
//!   (fixed steps, time jumps, events), the events style as a warpsim model.
//! - [`mmc`]: the M/M/c queue with its Erlang C answer, to validate the statistics.
//! - [`sharks`]: Sharks World, the paper's Time Warp benchmark: sectors as the only LPs,
//!   boundary crossings as the only events, checked against a brute-force oracle.
//! - [`game`]: the seed chapter's game-loop demos on `warpsim-timers` (not kernel models):
//!   torches (polling against timers) and the warlock (milestones from a curve).
//!
//! Every model has a parameter struct with the defaults of its scenario, a `validate` that
//! turns bad input into a [`ParamError`], and a `build` that makes the LPs (the game demos have
//! a `run` instead). With the `clap` feature each parameter struct is also its model's
//! command-line flags (`clap::Args`: derived where every flag is a field, written by hand
//! once where a flag sets two fields, as Sharks World's `--world WxH`), with the same
//! defaults, so the `warpsim` command line declares no parameter of its own.

#![forbid(unsafe_code)]

#[cfg(feature = "clap")]
mod flags;
pub mod game;
pub mod mmc;
pub mod pets;
pub mod phold;
pub mod sharks;

/// A model parameter that was refused. The message names the parameter and the rule.
///
/// ```
/// use warpsim_models::phold::PholdParams;
/// let params = PholdParams { lps: 0, ..PholdParams::default() };
/// let error = params.validate().unwrap_err();
/// assert_eq!(error.param, "lps");
/// assert_eq!(error.to_string(), "lps: must be at least 1 (got 0)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{param}: {message}")]
#[non_exhaustive]
pub struct ParamError {
    /// The parameter's name, as on the command line.
    pub param: &'static str,
    /// What is wrong with it.
    pub message: String,
}

impl ParamError {
    /// A refusal of `param` with `message`.
    pub fn new(param: &'static str, message: impl Into<String>) -> ParamError {
        ParamError {
            param,
            message: message.into(),
        }
    }
}

/// Checks that `value` is a finite number in `[min, max]`.
pub(crate) fn check_range(
    param: &'static str,
    value: f64,
    min: f64,
    max: f64,
) -> Result<(), ParamError> {
    if !value.is_finite() {
        return Err(ParamError::new(
            param,
            format!("must be a finite number (got {value})"),
        ));
    }
    if value < min || value > max {
        let bound = if max == f64::MAX {
            format!("at least {min}")
        } else {
            format!("between {min} and {max}")
        };
        return Err(ParamError::new(
            param,
            format!("must be {bound} (got {value})"),
        ));
    }
    Ok(())
}

/// Deterministic busy work: `iterations` rounds of integer arithmetic the optimiser cannot
/// remove. Models use it to raise event granularity (PHOLD's `--work`, Sharks World's delay
/// loops) so that kernel overhead and model work can be told apart.
///
/// ```
/// assert_eq!(warpsim_models::busy_work(1000), warpsim_models::busy_work(1000));
/// ```
#[inline]
pub fn busy_work(iterations: u32) -> u64 {
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    for i in 0..iterations {
        x = std::hint::black_box(
            x.wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(u64::from(i)),
        );
    }
    x
}
