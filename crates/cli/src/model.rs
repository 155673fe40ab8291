//! [`Model`]: what a user's model provides to get the whole command line.

use std::fmt::Write as _;

use clap::Args;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use warpsim_core::{Committed, LogicalProcess};

use crate::cli::{KernelArgs, RunArgs};
use crate::run::{Outcome, Scenario, run_config, run_on_kernel};

/// The error a model's [`Model::build`] or [`Model::validate`] may return: any error type
/// converts into it with `?`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The output type of a model's LPs.
pub type OutputOf<M> = <<M as Model>::Lp as LogicalProcess>::Output;

/// A model the command line can run: a parameter struct that is its own flags.
///
/// The parameters are declared once, as a struct deriving `clap::Args` (each field a flag,
/// with its default and its doc comment as help) and `serde::Serialize` (the `params` of the
/// JSON output). TOML scenarios (`--config`) use the flag names as keys, and sweeps
/// (`sweep --set KEY=VALUES`) can vary any of them. The command line adds the kernel, its
/// knobs, the seed and the output form.
///
/// Only [`Model::Lp`] and [`Model::build`] are required: by default a run ends at the
/// parameter named `end` ([`Model::end_time`]), and its metrics are the numeric fields of the
/// LPs' outputs averaged over the outputs ([`Model::metrics`]) — so an LP that emits a
/// summary struct from `finish` has its figures reported, replicated and swept.
///
/// The LP type is `Serialize + Deserialize` too: every run of the command line can be
/// checkpointed (`--checkpoint-file`) and resumed (`resume`), which saves the LPs' states.
///
/// ```
/// use warpsim_cli::{BoxError, Metrics, Model};
/// use warpsim_core::{Committed, Ctx, LogicalProcess};
///
/// /// A clock that ticks every `period` until `end`.
/// #[derive(Debug, Clone, clap::Args, serde::Serialize)]
/// struct Clock {
///     /// Time between ticks.
///     #[arg(long, default_value_t = 1.0)]
///     period: f64,
///     /// End of simulated time.
///     #[arg(long, default_value_t = 10.0)]
///     end: f64,
/// }
///
/// #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
/// struct Ticker { period: f64 }
///
/// impl LogicalProcess for Ticker {
///     type Event = ();
///     type Output = f64;
///     fn init(&mut self, ctx: &mut Ctx<Self>) {
///         ctx.send(ctx.me(), self.period, ());
///     }
///     fn on_event(&mut self, _: (), ctx: &mut Ctx<Self>) {
///         ctx.emit(ctx.now().as_f64());
///         ctx.send(ctx.me(), self.period, ());
///     }
/// }
///
/// impl Model for Clock {
///     type Lp = Ticker;
///     // The end of a run is the parameter `end`, by default.
///     fn build(&self) -> Result<Vec<Ticker>, BoxError> {
///         if !(self.period > 0.0) {
///             return Err(format!("period must be positive (got {})", self.period).into());
///         }
///         Ok(vec![Ticker { period: self.period }])
///     }
///     fn metrics(&self, outputs: &[Committed<f64>]) -> Metrics {
///         Metrics::new().with("ticks", outputs.len() as f64)
///     }
/// }
/// // fn main() -> std::process::ExitCode { warpsim_cli::App::new().model::<Clock>("clock").main() }
/// ```
pub trait Model: Args + Serialize + Clone + std::fmt::Debug + Send + Sync + 'static {
    /// The model's logical process (one type; an enum for several kinds).
    type Lp: LogicalProcess<Event: Serialize + DeserializeOwned, Output: Serialize + DeserializeOwned>
        + Serialize
        + DeserializeOwned;

    /// The seed of a run when `--seed` is not given.
    fn default_seed(&self) -> u64 {
        1
    }

    /// One line describing the run, printed above the readable report (by default the
    /// parameters as `key value` pairs).
    fn title(&self) -> String {
        match serde_json::to_value(self) {
            Ok(Value::Object(fields)) => fields
                .iter()
                .map(|(key, value)| format!("{key} {value}"))
                .collect::<Vec<_>>()
                .join(", "),
            _ => String::new(),
        }
    }

    /// Checks the parameters before any run (nothing by default; [`Model::build`] may also
    /// refuse them).
    ///
    /// # Errors
    ///
    /// A message naming the bad parameter; the command line prints it and exits with 1.
    fn validate(&self) -> Result<(), BoxError> {
        Ok(())
    }

    /// The end of simulated time (exclusive; `f64::INFINITY` runs until no event is left).
    ///
    /// By default the numeric parameter named `end` (as every built-in model names it), or
    /// no end when there is none.
    fn end_time(&self) -> f64 {
        match serde_json::to_value(self) {
            Ok(Value::Object(fields)) => fields
                .get("end")
                .and_then(Value::as_f64)
                .unwrap_or(f64::INFINITY),
            _ => f64::INFINITY,
        }
    }

    /// The model's lookahead ([`RunConfig::lookahead`](warpsim_core::RunConfig::lookahead)):
    /// the least delay of any event an LP sends to another LP, cancels or moves there.
    /// 0 by default (no promise). Every kernel checks it; Time Warp on threads runs more
    /// events without optimism's costs the larger it is.
    fn lookahead(&self) -> f64 {
        0.0
    }

    /// The LPs of one run, in LP-id order.
    ///
    /// # Errors
    ///
    /// Parameters the model cannot build.
    fn build(&self) -> Result<Vec<Self::Lp>, BoxError>;

    /// The figures of one run, from its committed outputs (in commit order). Replications
    /// summarise each of them (mean, standard deviation, confidence interval), sweeps
    /// tabulate and plot them.
    ///
    /// By default [`Metrics::mean_of`]: each numeric field of the outputs, averaged over the
    /// outputs — with one LP that emits one summary at the end, its figures.
    fn metrics(&self, outputs: &[Committed<OutputOf<Self>>]) -> Metrics {
        Metrics::mean_of(outputs.iter().map(|committed| &committed.output))
    }
}

/// The named figures of one run, in the order they were set.
///
/// ```
/// let metrics = warpsim_cli::Metrics::new().with("mean_wait", 1.5).with("served", 40.0);
/// assert_eq!(metrics.get("served"), Some(40.0));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics {
    values: Vec<(String, f64)>,
}

impl Metrics {
    /// No figures yet.
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// Sets `name` to `value` (a NaN means "not measured": JSON `null`, left out of
    /// summaries).
    pub fn set(&mut self, name: impl Into<String>, value: f64) -> &mut Metrics {
        let name = name.into();
        match self.values.iter_mut().find(|(known, _)| *known == name) {
            Some(entry) => entry.1 = value,
            None => self.values.push((name, value)),
        }
        self
    }

    /// [`Metrics::set`], by value.
    pub fn with(mut self, name: impl Into<String>, value: f64) -> Metrics {
        self.set(name, value);
        self
    }

    /// The numeric fields of `value` (a struct deriving `serde::Serialize`), by field name,
    /// in declaration order: a model's summary struct becomes its metrics in one call.
    /// Fields that are not numbers are left out.
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// struct Summary { mean_wait: f64, served: u64, label: &'static str }
    /// let metrics = warpsim_cli::Metrics::of(&Summary { mean_wait: 1.5, served: 40, label: "x" });
    /// assert_eq!(metrics.get("served"), Some(40.0));
    /// assert_eq!(metrics.get("label"), None);
    /// ```
    pub fn of<T: Serialize>(value: &T) -> Metrics {
        let mut metrics = Metrics::new();
        // serde_json keeps keys sorted (no `preserve_order`), so the order is taken from a
        // serialisation to text, which follows the declaration.
        if let Ok(text) = serde_json::to_string(value)
            && let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(&text)
        {
            let mut named: Vec<(usize, String, f64)> = fields
                .iter()
                .filter_map(|(name, field)| {
                    let number = field.as_f64()?;
                    let at = text.find(&format!("\"{name}\":"))?;
                    Some((at, name.clone(), number))
                })
                .collect();
            named.sort_by_key(|(at, _, _)| *at);
            for (_, name, number) in named {
                metrics.set(name, number);
            }
        }
        metrics
    }

    /// Each numeric field of `outputs` ([`Metrics::of`]), averaged over the outputs that
    /// have it as a number (a NaN, "not measured", is left out): the default metrics of a
    /// [`Model`].
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// struct Branch { served: u64, mean_wait: f64 }
    /// let branches = [Branch { served: 10, mean_wait: 1.0 }, Branch { served: 30, mean_wait: f64::NAN }];
    /// let metrics = warpsim_cli::Metrics::mean_of(&branches);
    /// assert_eq!(metrics.get("served"), Some(20.0));
    /// assert_eq!(metrics.get("mean_wait"), Some(1.0));
    /// ```
    pub fn mean_of<'a, T: Serialize + 'a>(outputs: impl IntoIterator<Item = &'a T>) -> Metrics {
        let mut sums: Vec<(String, f64, u32)> = Vec::new();
        for output in outputs {
            for (name, value) in Metrics::of(output).values {
                let index = match sums.iter().position(|(known, _, _)| *known == name) {
                    Some(index) => index,
                    None => {
                        sums.push((name, 0.0, 0));
                        sums.len() - 1
                    }
                };
                if !value.is_nan() {
                    sums[index].1 += value;
                    sums[index].2 += 1;
                }
            }
        }
        Metrics {
            values: sums
                .into_iter()
                .map(|(name, sum, n)| (name, if n == 0 { f64::NAN } else { sum / f64::from(n) }))
                .collect(),
        }
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.values
            .iter()
            .find(|(known, _)| known == name)
            .map(|&(_, value)| value)
    }

    fn to_json(&self) -> Map<String, Value> {
        self.values
            .iter()
            .map(|(name, value)| {
                let value = if value.is_finite() {
                    Value::from(*value)
                } else {
                    Value::Null
                };
                (name.clone(), value)
            })
            .collect()
    }

    fn to_text(&self) -> String {
        let mut text = String::new();
        for (name, value) in &self.values {
            let _ = writeln!(
                text,
                "{name:<17} {}",
                crate::analysis::replications::show(*value)
            );
        }
        text
    }
}

/// A user model's full set of flags: its parameters, the kernel's and the run's.
#[derive(Debug, Clone, Args)]
pub(crate) struct UserArgs<M: Model> {
    #[command(flatten)]
    pub(crate) params: M,
    #[command(flatten)]
    pub(crate) kernel: KernelArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    /// The name the model was registered under.
    #[arg(skip)]
    pub(crate) name: String,
}

impl<M: Model> Scenario for UserArgs<M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn run_args(&self) -> &RunArgs {
        &self.run
    }

    fn kernel_args(&self) -> Option<&KernelArgs> {
        Some(&self.kernel)
    }

    fn default_seed(&self) -> u64 {
        self.params.default_seed()
    }

    fn title(&self) -> String {
        format!("{}: {}", self.name, self.params.title())
    }

    fn params(&self) -> Value {
        serde_json::to_value(&self.params).unwrap_or(Value::Null)
    }

    fn validate(&self) -> anyhow::Result<()> {
        self.params
            .validate()
            .map_err(|error| anyhow::anyhow!(error))
    }

    fn run_once(&self, seed: u64, primary: bool) -> anyhow::Result<Outcome> {
        let lps = self
            .params
            .build()
            .map_err(|error| anyhow::anyhow!(error))?;
        let config = run_config(&self.kernel, seed, self.params.end_time())
            .lookahead(self.params.lookahead());
        let mut outputs: Vec<Committed<OutputOf<M>>> = Vec::new();
        let run = run_on_kernel(&self.kernel, config, lps, &mut outputs, primary)?;
        let mut outcome = Outcome::from_result(run);
        let metrics = self.params.metrics(&outputs);
        outcome.metrics = metrics.to_json();
        outcome.text = metrics.to_text();
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use warpsim_core::{Ctx, FinishCtx, Kernel, RunConfig, Sequential};

    use super::*;

    /// Two LPs ticking every `step` (1 and 2) until `end`; each reports its ticks at the end.
    #[derive(Debug, Clone, clap::Args, serde::Serialize)]
    struct Ticks {
        #[arg(long, default_value_t = 10.0)]
        end: f64,
    }

    #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
    struct Ticker {
        step: f64,
        ticks: u64,
    }

    #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Count {
        ticks: u64,
        label: String,
    }

    impl LogicalProcess for Ticker {
        type Event = ();
        type Output = Count;
        fn init(&mut self, ctx: &mut Ctx<Self>) {
            ctx.schedule(self.step, ());
        }
        fn on_event(&mut self, _: (), ctx: &mut Ctx<Self>) {
            self.ticks += 1;
            ctx.schedule(self.step, ());
        }
        fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
            ctx.emit(Count {
                ticks: self.ticks,
                label: "not a number".into(),
            });
        }
    }

    impl Model for Ticks {
        type Lp = Ticker;
        fn build(&self) -> Result<Vec<Ticker>, BoxError> {
            Ok([1.0, 2.0].map(|step| Ticker { step, ticks: 0 }).to_vec())
        }
    }

    /// Parameters without an `end`.
    #[derive(Debug, Clone, clap::Args, serde::Serialize)]
    struct Endless {
        #[arg(long, default_value_t = 1)]
        lps: u32,
    }

    impl Model for Endless {
        type Lp = Ticker;
        fn build(&self) -> Result<Vec<Ticker>, BoxError> {
            Ok(vec![
                Ticker {
                    step: 1.0,
                    ticks: 0
                };
                self.lps as usize
            ])
        }
    }

    #[test]
    fn a_run_ends_at_the_parameter_end_by_default() {
        assert_eq!(Ticks { end: 10.0 }.end_time(), 10.0);
        assert_eq!(Endless { lps: 1 }.end_time(), f64::INFINITY);
    }

    #[test]
    fn the_default_metrics_average_the_outputs_numbers() {
        let params = Ticks { end: 10.0 };
        let mut outputs = Vec::new();
        Sequential::new(RunConfig::new(1).end_time(params.end_time()))
            .run(params.build().unwrap(), &mut outputs)
            .unwrap();
        // Ticks at 1..=9 and at 2, 4, 6, 8 (the end is exclusive): 9 and 4.
        let ticks: Vec<u64> = outputs.iter().map(|c| c.output.ticks).collect();
        assert_eq!(ticks, [9, 4]);
        let metrics = params.metrics(&outputs);
        assert_eq!(metrics.get("ticks"), Some(6.5));
        assert_eq!(metrics.get("label"), None);
        assert_eq!(Model::metrics(&params, &[]), Metrics::new());
    }
}
