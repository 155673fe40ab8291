//! One module per model: its flags (a clap `Args` struct) and its runner.

pub(crate) mod game;
pub(crate) mod mmc;
pub(crate) mod pets;
pub(crate) mod phold;
pub(crate) mod sharks;
