//! One module per built-in model: its flags (a clap `Args` struct) and its runner.

pub(crate) mod game;
pub(crate) mod mmc;
pub(crate) mod pets;
pub(crate) mod phold;
pub(crate) mod sharks;

use crate::App;
use crate::app::Builtin;

/// `app` with the built-in models registered.
pub(crate) fn register(app: App) -> App {
    app.register(Builtin::<phold::PholdArgs>::new(
        "phold",
        "PHOLD, the standard parallel-simulation benchmark (as ROSS defines it).",
        true,
    ))
    .register(Builtin::<pets::PetsArgs>::new(
        "pets",
        "Feeding pets: N pets, K feeders that break; step, jump or events style.",
        true,
    ))
    .register(Builtin::<mmc::MmcArgs>::new(
        "mmc",
        "M/M/c queue (Poisson arrivals, exponential service), checked against Erlang C.",
        true,
    ))
    .register(Builtin::<sharks::SharksArgs>::new(
        "sharks",
        "Sharks World: sectors as LPs, checked against a brute-force oracle (the paper's benchmark).",
        true,
    ))
    .register(Builtin::<game::TorchesArgs>::new(
        "torches",
        "Game loop: a million torches, per-frame polling against event-based timers.",
        false,
    ))
    .register(Builtin::<game::WarlockArgs>::new(
        "warlock",
        "Game loop: the warlock's spells ready at milestones computed from the mana curve.",
        false,
    ))
}
