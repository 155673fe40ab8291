//! One module per model: its flags (a clap `Args` struct) and its runner.

pub(crate) mod phold;
