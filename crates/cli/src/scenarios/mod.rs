//! The built-in models. Each model's parameters are declared once, in `warpsim-models` (a
//! struct that is its own flags through that crate's `clap` feature); a module here adds only
//! what the command line does with them — output files, the readable report, the memory
//! check — as a [`BuiltinModel`], and [`BuiltinArgs`] adds the flags every model shares.

pub(crate) mod game;
pub(crate) mod mmc;
pub(crate) mod pets;
pub(crate) mod phold;
pub(crate) mod sharks;

use anyhow::Result;
use clap::{Args, FromArgMatches};
use serde_json::Value;

use warpsim_models::game::torches::TorchesParams;
use warpsim_models::game::warlock::WarlockParams;
use warpsim_models::mmc::MmcParams;
use warpsim_models::phold::PholdParams;

use crate::App;
use crate::app::Builtin;
use crate::cli::{KernelArgs, RunArgs};
use crate::files::FileSet;
use crate::limits::Demand;
use crate::run::{Outcome, Scenario};

/// What a built-in model adds to its parameters, and how it runs.
pub(crate) trait BuiltinModel: Args + FromArgMatches + Send + Sync + 'static {
    /// The name of `run <name>`.
    const NAME: &'static str;
    /// [`KernelArgs`] for a model that runs on a simulation kernel, [`NoKernel`] for the
    /// game-loop demos (which then refuse the kernel flags).
    type Kernel: KernelChoice;
    /// The seed when neither `--seed` nor the config file gives one.
    fn default_seed(&self) -> u64;
    /// One line describing the parameters, printed above the readable report.
    fn title(&self) -> String;
    /// The parameters, for the JSON output.
    fn params(&self) -> Value;
    /// Checks the parameters before any run.
    fn validate(&self) -> Result<()>;
    /// The files the model reads and writes besides `--config` (none by default).
    fn files(&self, files: FileSet) -> FileSet {
        files
    }
    /// What a run will allocate (nothing checked by default).
    fn demands(&self) -> Vec<Demand> {
        Vec::new()
    }
    /// Runs the model once with `seed` (on the kernel `kernel` describes, if any).
    fn run_once(&self, kernel: &Self::Kernel, seed: u64, primary: bool) -> Result<Outcome>;
}

/// The kernel flags a built-in model takes: all of them, or none.
pub(crate) trait KernelChoice:
    Args + FromArgMatches + Clone + std::fmt::Debug + Send + Sync + 'static
{
    /// Whether the model runs on a simulation kernel.
    const ON_KERNEL: bool;
    /// The kernel flags, if the model takes them.
    fn kernel_args(&self) -> Option<&KernelArgs>;
}

impl KernelChoice for KernelArgs {
    const ON_KERNEL: bool = true;
    fn kernel_args(&self) -> Option<&KernelArgs> {
        Some(self)
    }
}

/// No kernel flags: the game-loop demos run on the timer manager.
#[derive(Debug, Clone, Args)]
pub(crate) struct NoKernel {}

impl KernelChoice for NoKernel {
    const ON_KERNEL: bool = false;
    fn kernel_args(&self) -> Option<&KernelArgs> {
        None
    }
}

/// A built-in model's full set of flags: its own, the kernel's (if it runs on one) and the
/// run's.
#[derive(Debug, Clone, Args)]
pub(crate) struct BuiltinArgs<M: BuiltinModel> {
    #[command(flatten)]
    pub(crate) model: M,
    #[command(flatten)]
    pub(crate) kernel: M::Kernel,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

impl<M: BuiltinModel> Scenario for BuiltinArgs<M> {
    fn name(&self) -> &str {
        M::NAME
    }
    fn run_args(&self) -> &RunArgs {
        &self.run
    }
    fn kernel_args(&self) -> Option<&KernelArgs> {
        self.kernel.kernel_args()
    }
    fn default_seed(&self) -> u64 {
        self.model.default_seed()
    }
    fn title(&self) -> String {
        self.model.title()
    }
    fn params(&self) -> Value {
        self.model.params()
    }
    fn validate(&self) -> Result<()> {
        self.model.validate()
    }
    fn run_once(&self, seed: u64, primary: bool) -> Result<Outcome> {
        self.model.run_once(&self.kernel, seed, primary)
    }
    fn files(&self) -> FileSet {
        self.model
            .files(FileSet::with_config(self.run.config.as_ref()))
    }
    fn demands(&self) -> Vec<Demand> {
        self.model.demands()
    }
}

/// The `run <name>` entry of built-in model `M`.
fn entry<M: BuiltinModel>(about: &'static str) -> Box<Builtin<BuiltinArgs<M>>> {
    Builtin::new(M::NAME, about, M::Kernel::ON_KERNEL)
}

/// `app` with the built-in models registered.
pub(crate) fn register(app: App) -> App {
    app.register(entry::<PholdParams>(
        "PHOLD, the standard parallel-simulation benchmark (as ROSS defines it).",
    ))
    .register(entry::<pets::Pets>(
        "Feeding pets: N pets, K feeders that break; step, jump or events style.",
    ))
    .register(entry::<MmcParams>(
        "M/M/c queue (Poisson arrivals, exponential service), checked against Erlang C.",
    ))
    .register(entry::<sharks::Sharks>(
        "Sharks World: sectors as LPs, checked against a brute-force oracle (the paper's benchmark).",
    ))
    .register(entry::<TorchesParams>(
        "Game loop: a million torches, per-frame polling against event-based timers.",
    ))
    .register(entry::<WarlockParams>(
        "Game loop: the warlock's spells ready at milestones computed from the mana curve.",
    ))
}
