//! [`App`]: a command line made of registered models.

use std::ffi::OsString;
use std::marker::PhantomData;
use std::process::ExitCode;

use clap::{ArgMatches, Args, FromArgMatches};

use crate::model::{Model, UserArgs};
use crate::run::Scenario;

/// A `warpsim`-style command line for a set of models: `run`, `sweep`, `plan`, `speedup` and
/// `models`, with `--replications`, `--json`, `--config`, `--kernel` and every kernel knob.
///
/// A model is registered under a name with [`App::model`]; its parameters are its flags (see
/// [`Model`]). [`App::main`] parses the process's arguments, runs the command and turns every
/// failure into one line on stderr and a non-zero exit code.
///
/// ```no_run
/// # use warpsim_cli::App;
/// # #[derive(Debug, Clone, clap::Args, serde::Serialize)] struct Bank {}
/// # #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)] struct Teller;
/// # impl warpsim_core::LogicalProcess for Teller {
/// #     type Event = (); type Output = ();
/// #     fn on_event(&mut self, _: (), _: &mut warpsim_core::Ctx<Self>) {}
/// # }
/// # impl warpsim_cli::Model for Bank {
/// #     type Lp = Teller;
/// #     fn end_time(&self) -> f64 { 1.0 }
/// #     fn build(&self) -> Result<Vec<Teller>, warpsim_cli::BoxError> { Ok(vec![Teller]) }
/// #     fn metrics(&self, _: &[warpsim_core::Committed<()>]) -> warpsim_cli::Metrics {
/// #         warpsim_cli::Metrics::new()
/// #     }
/// # }
/// fn main() -> std::process::ExitCode {
///     App::new().model::<Bank>("bank").main()
/// }
/// ```
pub struct App {
    name: String,
    about: Option<String>,
    version: Option<String>,
    entries: Vec<Box<dyn Entry>>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("name", &self.name)
            .field(
                "models",
                &self.entries.iter().map(|e| e.name()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Default for App {
    fn default() -> Self {
        App::new()
    }
}

impl App {
    /// A command line without models, named after the program (its file name).
    pub fn new() -> App {
        let name = std::env::args_os()
            .next()
            .and_then(|arg0| {
                std::path::Path::new(&arg0)
                    .file_stem()
                    .map(|stem| stem.to_string_lossy().into_owned())
            })
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "warpsim".to_string());
        App {
            name,
            about: None,
            version: None,
            entries: Vec::new(),
        }
    }

    /// The `warpsim` command line: every built-in model (PHOLD, pets, M/M/c, Sharks World and
    /// the two game-loop demos).
    pub fn warpsim() -> App {
        let app = App {
            name: "warpsim".to_string(),
            about: Some(
                "warpsim: discrete-event simulation on a sequential or Time Warp kernel.".into(),
            ),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
            entries: Vec::new(),
        };
        crate::scenarios::register(app)
    }

    /// Names the program (in help and error messages).
    pub fn name(mut self, name: impl Into<String>) -> App {
        self.name = name.into();
        self
    }

    /// Sets the one-line description shown by `--help`.
    pub fn about(mut self, about: impl Into<String>) -> App {
        self.about = Some(about.into());
        self
    }

    /// Registers model `M` as `run <name>` (and `sweep <name>`, `plan <name>`, …). Its
    /// parameters are `M`'s flags; the kernel flags and `--seed`, `--json`,
    /// `--replications` and `--config` are added.
    ///
    /// # Panics
    ///
    /// When `name` is already registered (a programming error).
    pub fn model<M: Model>(self, name: &str) -> App {
        self.register(Box::new(UserEntry::<M> {
            name: name.to_string(),
            model: PhantomData,
        }))
    }

    pub(crate) fn register(mut self, entry: Box<dyn Entry>) -> App {
        assert!(
            self.entry(entry.name()).is_none(),
            "model `{}` registered twice",
            entry.name()
        );
        self.entries.push(entry);
        self
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = &dyn Entry> {
        self.entries.iter().map(|entry| &**entry)
    }

    pub(crate) fn entry(&self, name: &str) -> Option<&dyn Entry> {
        self.entries().find(|entry| entry.name() == name)
    }

    pub(crate) fn program(&self) -> &str {
        &self.name
    }

    pub(crate) fn about_text(&self) -> Option<&str> {
        self.about.as_deref()
    }

    pub(crate) fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// Runs the command line given by the process's arguments and returns the exit code: 0
    /// on success (or when stdout was closed by the reader), 1 for any error (one line on
    /// stderr), 101 for an internal error.
    pub fn main(self) -> ExitCode {
        self.main_with(std::env::args_os().collect())
    }

    /// [`App::main`] with the given arguments (the first is the program name).
    pub fn main_with(self, args: Vec<OsString>) -> ExitCode {
        crate::main_with(&self, args)
    }
}

/// One registered model: its `run <name>` command and how to turn parsed flags into a
/// scenario.
pub(crate) trait Entry: Send + Sync {
    fn name(&self) -> &str;
    /// The `run <name>` subcommand with every flag the model takes.
    fn command(&self) -> clap::Command;
    /// The scenario the parsed flags describe.
    fn scenario(&self, matches: &ArgMatches) -> Result<Box<dyn Scenario>, clap::Error>;
    /// Whether the model runs on a simulation kernel (and so takes `--kernel` and its knobs).
    fn on_kernel(&self) -> bool;
}

/// A built-in model: its flags are a clap struct that is its own [`Scenario`].
pub(crate) struct Builtin<A> {
    pub(crate) name: &'static str,
    pub(crate) about: &'static str,
    pub(crate) on_kernel: bool,
    pub(crate) args: PhantomData<fn() -> A>,
}

impl<A> Builtin<A> {
    pub(crate) fn new(name: &'static str, about: &'static str, on_kernel: bool) -> Box<Builtin<A>> {
        Box::new(Builtin {
            name,
            about,
            on_kernel,
            args: PhantomData,
        })
    }
}

impl<A: Args + FromArgMatches + Scenario + 'static> Entry for Builtin<A> {
    fn name(&self) -> &str {
        self.name
    }

    fn command(&self) -> clap::Command {
        A::augment_args(clap::Command::new(self.name)).about(self.about)
    }

    fn scenario(&self, matches: &ArgMatches) -> Result<Box<dyn Scenario>, clap::Error> {
        Ok(Box::new(A::from_arg_matches(matches)?))
    }

    fn on_kernel(&self) -> bool {
        self.on_kernel
    }
}

/// A user's [`Model`].
struct UserEntry<M> {
    name: String,
    model: PhantomData<fn() -> M>,
}

impl<M: Model> Entry for UserEntry<M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn command(&self) -> clap::Command {
        UserArgs::<M>::augment_args(clap::Command::new(self.name.clone()))
    }

    fn scenario(&self, matches: &ArgMatches) -> Result<Box<dyn Scenario>, clap::Error> {
        let mut args = UserArgs::<M>::from_arg_matches(matches)?;
        args.name.clone_from(&self.name);
        Ok(Box::new(args))
    }

    fn on_kernel(&self) -> bool {
        true
    }
}
