//! The command line, declared with clap.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use warpsim_core::{CostModel, QueueKind};
use warpsim_timewarp::{Cancellation, Partition};

/// The commands other than `run`, whose subcommands are the models an [`App`](crate::App)
/// registers (added by [`command`]).
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the models and their parameters with defaults.
    Models,
    /// Run a model over a grid of parameters (--set KEY=a..b), with replications per point.
    Sweep(crate::analysis::sweep::SweepCmd),
    /// Find the smallest value of a whole-number parameter that meets a target (e.g. the
    /// number of feeders that feeds the pets by a deadline).
    Plan(crate::analysis::plan::PlanCmd),
    /// Time a model on the sequential kernel and on Time Warp by threads and cancellation
    /// mode: speedup, efficiency, commit ratio, critical-path bound (the paper's figures).
    Speedup(crate::analysis::speedup::SpeedupCmd),
    /// Continue a run from its checkpoint (`--checkpoint-file`): the command line stored in
    /// it runs again from where it stopped, to the result the uninterrupted run gives.
    /// Only flags that cannot change the result may be added (kernel, threads, queue, the
    /// Time Warp knobs, --json, checkpoint and output files).
    Resume(ResumeCmd),
}

/// `resume FILE [FLAGS]` (handled before clap parses; declared for `--help`).
#[derive(Debug, Args)]
pub(crate) struct ResumeCmd {
    /// The checkpoint file
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
    /// Flags that cannot change the result
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "FLAGS"
    )]
    pub(crate) flags: Vec<String>,
}

/// What the command line asks for.
pub(crate) enum Parsed {
    /// `run <model> …`: the model's parsed scenario.
    Run(Box<dyn crate::run::Scenario>),
    /// Any other command.
    Other(Command),
}

/// The command line of `app` with the settings every subcommand shares: a later flag
/// overrides an earlier one (so flags override a `--config` file, whose values come first),
/// and negative numbers are values, not flags (so `--mean -1` is reported as a bad mean).
pub(crate) fn command(app: &crate::App) -> clap::Command {
    fn configure(command: clap::Command) -> clap::Command {
        command
            .args_override_self(true)
            .allow_negative_numbers(true)
            .mut_subcommands(configure)
    }
    let run = clap::Command::new("run")
        .about("Run a model once (or --replications times) and print its report")
        .subcommand_required(true)
        .display_order(0)
        .subcommands(app.entries().map(|entry| entry.command()));
    let mut top = clap::Command::new(app.program().to_string())
        .subcommand_required(true)
        .subcommand(run);
    top = <Command as Subcommand>::augment_subcommands(top);
    if let Some(about) = app.about_text() {
        top = top.about(about.to_string());
    }
    if let Some(version) = app.version() {
        top = top.version(version.to_string());
    }
    configure(top)
}

/// Parses arguments with [`command`]'s settings.
pub(crate) fn parse(app: &crate::App, args: Vec<OsString>) -> Result<Parsed, clap::Error> {
    let command = command(app);
    let args = join_negative_values(&command, args);
    let matches = command.try_get_matches_from(args)?;
    if let Some(("run", run)) = matches.subcommand() {
        let Some((model, flags)) = run.subcommand() else {
            return Err(clap::Error::new(
                clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand,
            ));
        };
        let entry = app
            .entry(model)
            .expect("clap only accepts registered models");
        return entry.scenario(flags).map(Parsed::Run);
    }
    <Command as clap::FromArgMatches>::from_arg_matches(&matches).map(Parsed::Other)
}

/// Why a kernel flag given to a model that runs on no kernel (`run torches --threads 8`) is
/// refused, or `None` when the command line has no such flag.
pub(crate) fn kernel_flag_note(app: &crate::App, args: &[OsString]) -> Option<String> {
    if args.get(1).and_then(|arg| arg.to_str()) != Some("run") {
        return None;
    }
    let model = args.get(2)?.to_str()?;
    if app.entry(model)?.on_kernel() {
        return None;
    }
    let kernel_flags = KernelArgs::augment_args(clap::Command::new("kernel"));
    let given = args[3..]
        .iter()
        .filter_map(|arg| arg.to_str())
        .find(|arg| {
            let name = arg.strip_prefix("--").unwrap_or("");
            let name = name.split('=').next().unwrap_or(name);
            kernel_flags
                .get_arguments()
                .any(|flag| flag.get_long() == Some(name))
        })?;
    Some(format!(
        "{model} runs on the game-loop timer manager, not on a simulation kernel, so it takes no \
         kernel flags (drop {})",
        given.split('=').next().unwrap_or(given)
    ))
}

/// `--mean -inf` becomes `--mean=-inf`. clap takes a word starting with `-` for a value only
/// when it is made of digits (`-1`, `-2.5e3`); `-inf`, `-infinity`, `-NaN` and `-.5` are
/// numbers too (Rust's `f64` reads them), so a long flag that takes a value is joined to one.
/// Words after `--` are left alone.
fn join_negative_values(command: &clap::Command, args: Vec<OsString>) -> Vec<OsString> {
    fn takes_value(command: &clap::Command, long: &str) -> bool {
        command
            .get_arguments()
            .any(|arg| arg.get_long() == Some(long) && arg.get_action().takes_values())
            || command.get_subcommands().any(|sub| takes_value(sub, long))
    }
    let mut joined = Vec::with_capacity(args.len());
    let mut args = args.into_iter().peekable();
    while let Some(arg) = args.next() {
        if arg == "--" {
            joined.push(arg);
            joined.extend(args);
            break;
        }
        let pair = match (arg.to_str(), args.peek().and_then(|next| next.to_str())) {
            (Some(flag), Some(value))
                if flag.len() > 2
                    && flag.starts_with("--")
                    && !flag.contains('=')
                    && value.starts_with('-')
                    && value.parse::<f64>().is_ok()
                    && takes_value(command, &flag[2..]) =>
            {
                Some(format!("{flag}={value}"))
            }
            _ => None,
        };
        match pair {
            Some(pair) => {
                args.next();
                joined.push(OsString::from(pair));
            }
            None => joined.push(arg),
        }
    }
    joined
}

/// Which kernel runs the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum KernelKind {
    /// One thread, events in key order: the reference every other kernel matches.
    Sequential,
    /// Optimistic Time Warp on `--threads` worker threads: the same committed events.
    Timewarp,
    /// Time Warp over MPI: start under `mpirun -np R`; each rank runs `--threads` workers
    /// (needs a binary built with `--features warpsim-cli/mpi`); a signal to mpirun stops
    /// every rank at the next GVT.
    Mpi,
}

/// Flags of every `run <model>`: the seed, the output form, replications and a TOML file.
#[derive(Debug, Clone, Args)]
pub(crate) struct RunArgs {
    /// Base random seed: the same seed gives the same run on every kernel.
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Print exactly one JSON object on stdout instead of the readable report.
    #[arg(long)]
    pub(crate) json: bool,
    /// Run R independent replications (seeds derived from --seed) in parallel and report the
    /// mean, std dev, 95% CI, min and max of every metric.
    #[arg(long, value_name = "R")]
    pub(crate) replications: Option<u32>,
    /// Read parameters from a TOML file (keys are the flag names; flags override the file).
    #[arg(long, value_name = "FILE.toml")]
    pub(crate) config: Option<PathBuf>,
}

/// Flags of every model that runs on a simulation kernel (not the game-loop demos): the
/// kernel and its knobs.
#[derive(Debug, Clone, Args)]
pub(crate) struct KernelArgs {
    /// Kernel to run on.
    #[arg(long, value_enum, default_value_t = KernelKind::Sequential)]
    pub(crate) kernel: KernelKind,
    /// Pending-event set of the sequential kernel.
    #[arg(long, value_enum, default_value_t = QueueKind::Ladder)]
    pub(crate) queue: QueueKind,
    /// Stop after this many committed events.
    #[arg(long)]
    pub(crate) max_events: Option<u64>,
    /// Compute the critical path and the available parallelism (events cost 1, or `ns`).
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "unit")]
    pub(crate) critical_path: Option<CostModel>,
    /// Also fingerprint the committed events' contents (`content_hash`), to compare kernels
    /// on what handlers were given, not only on which events ran (costs an encoding per
    /// event).
    #[arg(long)]
    pub(crate) content_hash: bool,
    #[command(flatten)]
    pub(crate) timewarp: TimewarpArgs,
    #[command(flatten)]
    pub(crate) checkpoint: CheckpointArgs,
}

/// Checkpoints of a run, and graceful stops (see `checkpointing.rs`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Checkpoints")]
pub(crate) struct CheckpointArgs {
    /// Write the run's committed state to FILE (atomically) at --checkpoint-at, every
    /// --checkpoint-every, and when a first SIGINT or SIGTERM stops it; `resume FILE`
    /// continues the run to the same result as if it had never stopped, on any kernel (over
    /// MPI rank 0 writes the file, with every rank's LPs, and any number of ranks resumes it)
    #[arg(long, value_name = "FILE")]
    pub(crate) checkpoint_file: Option<PathBuf>,
    /// Write a checkpoint when simulated time T is reached (every event before T committed,
    /// none at or after it), then go on
    #[arg(long, value_name = "T", requires = "checkpoint_file", value_parser = parse_time)]
    pub(crate) checkpoint_at: Option<f64>,
    /// Write a checkpoint every DURATION of wall-clock time (30s, 10m, 1h)
    #[arg(long, value_name = "DURATION", requires = "checkpoint_file", value_parser = crate::checkpointing::parse_duration)]
    pub(crate) checkpoint_every: Option<std::time::Duration>,
    /// Continue from this checkpoint (set by `resume`)
    #[arg(long, value_name = "FILE", hide = true)]
    pub(crate) resume_from: Option<PathBuf>,
}

fn parse_time(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(time) if time.is_finite() && time >= 0.0 => Ok(time),
        _ => Err(format!("expected a non-negative time, got `{text}`")),
    }
}

/// Settings of the Time Warp kernel (ignored by the sequential kernel).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Time Warp (--kernel timewarp)")]
pub(crate) struct TimewarpArgs {
    /// Worker threads [default: 2]; capped, with a note, at one per LP and 4 per core.
    // Checked here, so that the error names the flag (the library's names the setting).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub(crate) threads: Option<usize>,
    /// How undone sends are cancelled.
    #[arg(long, value_enum, default_value_t = Cancellation::Lazy)]
    pub(crate) cancellation: Cancellation,
    /// Save each LP's state every K events (rollbacks coast forward from the last save);
    /// `auto` (the default) lets each thread pick K from the cost of a save and its
    /// rollbacks.
    #[arg(long, value_name = "K|auto", default_value = "auto", value_parser = parse_checkpoint)]
    pub(crate) checkpoint_interval: CheckpointArg,
    /// Optimism window: run no event later than GVT + W; `auto` (the default) throttles
    /// only when rollbacks waste work, `none` never.
    #[arg(long, value_name = "W|auto|none", default_value = "auto", value_parser = parse_window)]
    pub(crate) window: WindowArg,
    /// Memory budget for events, state saves and logs (e.g. 2GiB, 512MiB, bytes).
    #[arg(long, value_name = "BYTES", value_parser = warpsim_timewarp::parse_bytes)]
    pub(crate) memory: Option<u64>,
    /// How LPs are spread over the threads.
    #[arg(long, value_enum, default_value_t = Partition::Block)]
    pub(crate) partition: Partition,
    /// Events a thread runs between the GVT rounds it starts.
    #[arg(long, value_name = "EVENTS", default_value_t = 2048, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) gvt_interval: u64,
    /// Move LPs from the busiest thread to the idlest at GVT when the load is uneven
    /// (threads only).
    #[arg(long)]
    pub(crate) balance: bool,
    /// Run every event optimistically, even those no rollback can reach any more (which
    /// otherwise run without state saves or records): to measure the optimistic machinery
    /// alone (threads only; results are the same).
    #[arg(long)]
    pub(crate) no_safe_events: bool,
    /// A thread that waits for a core (another process keeps it busy) more than this share
    /// of the last 120 ms hands all its LPs to the thread that waits least, and takes half
    /// of them back once that process is done (threads only, Linux; `never` to keep them
    /// where they are; results are the same).
    #[arg(long, value_name = "SHARE|never", default_value = "0.4", value_parser = parse_give_way)]
    pub(crate) give_way: GiveWay,
    /// With `--kernel mpi`: give up (on every rank) when other ranks are silent this long.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub(crate) mpi_timeout: f64,
}

/// The optimism window, as given on the command line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum WindowArg {
    /// Adaptive: a window appears and adapts only when rollbacks waste work.
    Auto,
    /// Unbounded optimism.
    Off,
    /// A fixed window (simulated time).
    Fixed(f64),
}

/// `--give-way`: the share of time a thread may wait for a core, or never.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct GiveWay(pub(crate) Option<f64>);

fn parse_give_way(text: &str) -> Result<GiveWay, String> {
    match text {
        "never" => Ok(GiveWay(None)),
        number => match number.parse::<f64>() {
            Ok(share) if (0.0..=1.0).contains(&share) => Ok(GiveWay(Some(share))),
            _ => Err(format!(
                "expected a share of time between 0 and 1, or `never`, got `{number}`"
            )),
        },
    }
}

fn parse_window(text: &str) -> Result<WindowArg, String> {
    match text {
        "auto" => Ok(WindowArg::Auto),
        "none" | "off" => Ok(WindowArg::Off),
        number => match number.parse::<f64>() {
            Ok(w) if w.is_finite() && w >= 0.0 => Ok(WindowArg::Fixed(w)),
            _ => Err(format!(
                "expected a non-negative number, `auto` or `none`, got `{number}`"
            )),
        },
    }
}

/// The state-save interval, as given on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckpointArg {
    /// Each thread adapts it.
    Auto,
    /// A save every this many events.
    Every(u32),
}

fn parse_checkpoint(text: &str) -> Result<CheckpointArg, String> {
    match text {
        "auto" => Ok(CheckpointArg::Auto),
        number => match number.parse::<u32>() {
            Ok(k) if k >= 1 => Ok(CheckpointArg::Every(k)),
            _ => Err(format!(
                "expected a whole number of at least 1 or `auto`, got `{number}`"
            )),
        },
    }
}
