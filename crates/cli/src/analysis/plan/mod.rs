//! `warpsim plan pets --deadline T --percentile P --confidence C`: the article's planning
//! question, "how many feeders do N pets need?", answered as the smallest number of feeders K
//! that meets the deadline.
//!
//! # Decision rule
//!
//! K *meets the deadline* when at least `ceil(C · R)` of `R` replications (default 20; seeds
//! `derive_seed(seed, i)`, the same for every K) feed `P` % of the pets by time `T`. In other
//! words, the empirical `C`-quantile of the time to `P` % is at most `T`: with `C = 0.95` and
//! 20 replications, 19 of the 20 simulated days must finish in time. Each probe stops its runs
//! at the deadline, so a hopeless K costs no more than a good one.
//!
//! # Search
//!
//! Galloping, then bisection: try K = 1, 2, 4, 8, … until one meets the deadline (or
//! `--max-gates` fails), then bisect between the last failure and the first success. This
//! needs about `2 · log2(K)` probes and assumes that meeting the deadline is monotone in K
//! (more feeders never hurt). That holds for the step and jump styles. It need not hold for
//! the events style: there, as in the article, *every* event rolls breakage for *every*
//! feeder, so with many feeders (K · P well above 1) the station spends nearly all its time
//! broken and more feeders make things worse. So the gallop also stops when doubling K feeds
//! *fewer* pets by the deadline (on average) than the previous probe: past that point the
//! curve only goes down, and the plan says no K meets the deadline. The table of probes is
//! printed so the answer can be checked.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{Result, anyhow, bail};
use serde_json::{Map, Value};
use warpsim_models::pets::{CurvePoint, PetsResult};

use super::replications::{replicate, seeds, show};
use super::statistics::Summary;
use super::{RunsBar, parse_model, take_last};
use crate::run::{Scenario, seed_of};

mod target;

/// Replications per probe when `--replications` is not given.
const DEFAULT_REPLICATIONS: u32 = 20;

/// Largest K tried when `--max-gates` is not given (and fewer when there are fewer pets).
const DEFAULT_MAX_GATES: u64 = 4096;

/// `warpsim plan pets --deadline T [--percentile P] [--confidence C] [--max-gates M] [model
/// flags]`, or for any model `plan <model> --search PARAM --metric M --at-most X` (see
/// [`target`]). The plan's flags may come anywhere after the model name.
#[derive(Debug, clap::Args)]
pub(crate) struct PlanCmd {
    /// The model to plan for.
    pub(crate) model: String,
    /// Any model: the whole-number parameter to search (its smallest value that meets the
    /// target is the answer).
    #[arg(long, value_name = "PARAM")]
    pub(crate) search: Option<String>,
    /// Any model: the metric each run is judged by.
    #[arg(long, value_name = "METRIC")]
    pub(crate) metric: Option<String>,
    /// A run meets the target when the metric is at most this.
    #[arg(long, allow_negative_numbers = true, conflicts_with = "at_least")]
    pub(crate) at_most: Option<f64>,
    /// A run meets the target when the metric is at least this.
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) at_least: Option<f64>,
    /// Largest value of the searched parameter to try [default: 4096].
    #[arg(long)]
    pub(crate) max: Option<u64>,
    /// The deadline, in simulated time units (e.g. half a day, to feed the pets twice a day).
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) deadline: Option<f64>,
    /// Which share of the pets must be fed by the deadline: 50, 95, 99 or 100 [default: 100].
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) percentile: Option<f64>,
    /// Fraction of replications that must meet the deadline [default: 0.95].
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) confidence: Option<f64>,
    /// Largest number of feeders to try [default: the number of pets, at most 4096].
    #[arg(long)]
    pub(crate) max_gates: Option<u32>,
    /// The model's flags (e.g. --tasks 100000 --style step --replications 40 --json).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "MODEL FLAGS"
    )]
    pub(crate) args: Vec<String>,
}

/// The runs of every probe: `replications` seeds derived from the base seed (the same for
/// every value tried), of which `needed` must meet the target.
struct Runs {
    replications: u32,
    base_seed: u64,
    seeds: Vec<u64>,
    needed: usize,
}

impl Runs {
    /// The runs for `scenario`'s `--replications` (default 20) and `confidence`.
    fn of(scenario: &dyn Scenario, confidence: f64) -> Result<Runs> {
        let replications = match scenario.run_args().replications {
            Some(0) => bail!("--replications must be at least 1 (got 0)"),
            Some(count) => count,
            None => DEFAULT_REPLICATIONS,
        };
        let base_seed = seed_of(scenario);
        Ok(Runs {
            replications,
            base_seed,
            seeds: seeds(base_seed, replications),
            needed: ((confidence * f64::from(replications)) - 1e-9)
                .ceil()
                .max(1.0) as usize,
        })
    }
}

/// The number a plan flag gives, if any.
fn number_flag(name: &str, text: Option<String>) -> Result<Option<f64>> {
    text.map(|text| {
        text.parse::<f64>()
            .map_err(|_| anyhow!("--{name}: `{text}` is not a number"))
    })
    .transpose()
}

/// The result of trying one K.
#[derive(Debug, Clone)]
struct Probe {
    gates: u32,
    /// Replications that met the deadline.
    met: usize,
    runs: usize,
    pass: bool,
    /// The metric over the runs that reached it by the deadline.
    summary: Option<Summary>,
    /// Mean number of pets fed by the deadline.
    mean_fed: f64,
}

/// The search state: what every probe shares, and the probes so far.
struct Planner<'a> {
    app: &'a crate::App,
    flags: Vec<String>,
    end: f64,
    seeds: Vec<u64>,
    needed: usize,
    deadline: f64,
    /// Pets per run and the percentile asked for: each run's time to it is read off its
    /// completion curve, so any multiple of 0.1 % works.
    tasks: u64,
    percentile: f64,
    probes: BTreeMap<u32, Probe>,
}

impl Planner<'_> {
    /// Runs the replications with `gates` feeders (once: probes are remembered).
    fn evaluate(&mut self, gates: u32) -> Result<Probe> {
        if let Some(probe) = self.probes.get(&gates) {
            return Ok(probe.clone());
        }
        let mut point_flags = self.flags.clone();
        point_flags.push(format!("--gates={gates}"));
        point_flags.push(format!("--end={:e}", self.end));
        let command = parse_model(self.app, "pets", &point_flags)?;
        let scenario: &dyn Scenario = &*command;
        scenario
            .validate()
            .map_err(|error| anyhow!("pets with {gates} feeders: {error:#}"))?;
        crate::limits::check_run(scenario)
            .map_err(|error| anyhow!("pets with {gates} feeders: {error:#}"))?;
        let bar = RunsBar::new(
            self.seeds.len() as u64,
            &format!("runs with {gates} feeders"),
        );
        let outcomes = replicate(scenario, &self.seeds, false, &bar);
        bar.finish();
        let outcomes = outcomes.map_err(|error| anyhow!("pets with {gates} feeders: {error:#}"))?;
        let reached: Vec<f64> = outcomes
            .iter()
            .filter_map(|outcome| {
                time_to(outcome.metrics.get("curve"), self.tasks, self.percentile)
            })
            .filter(|&time| time <= self.deadline)
            .collect();
        let fed: Vec<f64> = outcomes
            .iter()
            .map(|outcome| {
                outcome
                    .metrics
                    .get("fed")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
            })
            .collect();
        let probe = Probe {
            gates,
            met: reached.len(),
            runs: outcomes.len(),
            pass: reached.len() >= self.needed,
            summary: Summary::of(&reached),
            mean_fed: fed.iter().sum::<f64>() / fed.len().max(1) as f64,
        };
        self.probes.insert(gates, probe.clone());
        Ok(probe)
    }

    /// The smallest K probed that met the deadline.
    fn smallest_pass(&self) -> Option<u32> {
        self.probes
            .values()
            .find(|probe| probe.pass)
            .map(|probe| probe.gates)
    }
}

/// The time by which `percentile` % of `tasks` pets were fed, from a run's `curve` metric
/// (`[[time, fed], …]`, every 0.1 % of the pets), by the article's rule.
fn time_to(curve: Option<&Value>, tasks: u64, percentile: f64) -> Option<f64> {
    let points = curve?
        .as_array()?
        .iter()
        .filter_map(|point| {
            let point = point.as_array()?;
            Some(CurvePoint {
                time: point.first()?.as_f64()?,
                fed: point.get(1)?.as_u64()?,
            })
        })
        .collect();
    PetsResult::from_curve(tasks, points, 0, 0).time_to(percentile)
}

/// Why an answer under the events style's per-roll breakdowns (the article's rule) may be
/// an artifact, or `None` when the model has no such artifact.
fn artifact_warning(params: &Value) -> Option<String> {
    let events = params.get("style").and_then(Value::as_str) == Some("events");
    let per_roll = params.get("breakdowns").and_then(Value::as_str) == Some("per_roll");
    let breaks = params
        .get("break_chance")
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
        > 0.0;
    (events && per_roll && breaks).then(|| {
        "this answer is under the article's breakdown rule: in the events style every feeder \
         rolls for breakage at every event, so more feeders make each one break more often per \
         meal (an artifact of the article's code, not of feeders). Add --breakdowns \
         per-working-time for feeders that break per unit of work."
            .to_string()
    })
}

/// `warpsim plan`.
///
/// # Errors
///
/// A model other than pets, missing or bad plan settings, bad model flags, a failed run, or no
/// K up to `--max-gates` meeting the deadline.
pub(crate) fn run(app: &crate::App, mut command: PlanCmd) -> Result<()> {
    let search = take_last(&mut command.args, "search", command.search.clone())?;
    if search.is_some() || command.model != "pets" {
        return target::run(app, command, search);
    }
    let mut flags = command.args;
    let deadline = number_flag(
        "deadline",
        take_last(
            &mut flags,
            "deadline",
            command.deadline.map(|v| v.to_string()),
        )?,
    )?
    .ok_or_else(|| anyhow!("plan needs --deadline T (in simulated time units)"))?;
    let percentile = number_flag(
        "percentile",
        take_last(
            &mut flags,
            "percentile",
            command.percentile.map(|v| v.to_string()),
        )?,
    )?
    .unwrap_or(100.0);
    let confidence = number_flag(
        "confidence",
        take_last(
            &mut flags,
            "confidence",
            command.confidence.map(|v| v.to_string()),
        )?,
    )?
    .unwrap_or(0.95);
    let max_gates = take_last(
        &mut flags,
        "max-gates",
        command.max_gates.map(|v| v.to_string()),
    )?
    .map(|text| {
        text.parse::<u32>()
            .map_err(|_| anyhow!("--max-gates: `{text}` is not a positive integer"))
    })
    .transpose()?;

    if !(deadline.is_finite() && deadline > 0.0) {
        bail!("--deadline must be a positive number (got {deadline})");
    }
    // Runs record their completion curve at every 0.1 % of the pets, so those are the
    // percentiles that can be answered exactly.
    let per_mille = percentile * 10.0;
    if !(percentile > 0.0 && percentile <= 100.0 && (per_mille - per_mille.round()).abs() < 1e-9) {
        bail!(
            "--percentile must be in (0, 100] and a multiple of 0.1, e.g. 90 or 99.9 (got {percentile})"
        );
    }
    let percentile = per_mille.round() / 10.0;
    if !(confidence > 0.0 && confidence <= 1.0) {
        bail!("--confidence must be in (0, 1] (got {confidence})");
    }
    if max_gates == Some(0) {
        bail!("--max-gates must be at least 1 (got 0)");
    }
    for fixed in ["gates", "end"] {
        let flag = format!("--{fixed}");
        if flags
            .iter()
            .any(|f| *f == flag || f.starts_with(&format!("{flag}=")))
        {
            bail!("plan sets {flag} itself (it searches --gates and stops runs at the deadline)");
        }
    }
    let metric = format!("p{percentile}");

    let base = parse_model(app, "pets", &flags)?;
    let base_scenario: &dyn Scenario = &*base;
    base_scenario
        .validate()
        .map_err(|error| anyhow!("pets: {error:#}"))?;
    let files = base_scenario.files();
    if let Some((flag, _)) = files.outputs.first() {
        bail!("{flag}: a plan writes no file per run; drop {flag}");
    }
    let tasks = base_scenario
        .params()
        .get("tasks")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MAX_GATES);
    let max_gates = max_gates.unwrap_or(tasks.clamp(1, DEFAULT_MAX_GATES) as u32);
    let Runs {
        replications,
        base_seed,
        seeds: run_seeds,
        needed,
    } = Runs::of(base_scenario, confidence)?;
    // Runs stop at the deadline: events at the deadline itself still run (the end is
    // exclusive), so a percentile reached exactly on time counts.
    let end = deadline.next_up();

    let mut planner = Planner {
        app,
        flags,
        end,
        seeds: run_seeds,
        needed,
        deadline,
        tasks,
        percentile,
        probes: BTreeMap::new(),
    };

    // Gallop up from 1 to the first K that meets the deadline…
    let mut gates: u32 = 1;
    let mut previous_fed = f64::NEG_INFINITY;
    let mut declined = None;
    loop {
        let gates_now = gates.min(max_gates);
        let probe = planner.evaluate(gates_now)?;
        if probe.pass || gates_now >= max_gates {
            break;
        }
        // Fewer pets fed by the deadline with twice the feeders: more feeders now hurt (the
        // events style's breakage grows with K), so doubling further cannot help.
        if probe.mean_fed < previous_fed {
            declined = Some(gates_now);
            break;
        }
        previous_fed = probe.mean_fed;
        gates = gates_now.saturating_mul(2);
    }
    // Past the peak: under unimodality the best K lies strictly between a quarter and all of
    // the K where feeding declined. Find it by ternary search on the pets fed by the deadline;
    // if it meets the deadline, the smallest K that does lies on the rising side below it.
    let mut best_fed = None;
    if let Some(top) = declined {
        let (mut low, mut high) = ((top / 4).max(1), top);
        while high - low > 2 {
            let third = (high - low) / 3;
            let (left, right) = (low + third, high - third);
            if planner.evaluate(left)?.mean_fed < planner.evaluate(right)?.mean_fed {
                low = left;
            } else {
                high = right;
            }
        }
        let mut best = (low, f64::NEG_INFINITY);
        for gates in low..=high {
            let probe = planner.evaluate(gates)?;
            if probe.pass {
                break;
            }
            if probe.mean_fed > best.1 {
                best = (gates, probe.mean_fed);
            }
        }
        best_fed = Some(best.0);
    }
    // …then bisect between the largest failure below the smallest success, and it.
    let mut passed = planner.smallest_pass();
    if let Some(mut high) = passed {
        let mut failed = planner
            .probes
            .range(..high)
            .rev()
            .find(|(_, probe)| !probe.pass)
            .map_or(0, |(gates, _)| *gates);
        while high - failed > 1 {
            let middle = failed + (high - failed) / 2;
            if planner.evaluate(middle)?.pass {
                high = middle;
            } else {
                failed = middle;
            }
        }
        passed = Some(high);
    }
    let probes = planner.probes;

    let rule = format!(
        "K meets the deadline when at least {needed} of {replications} replications \
         (seeds derive_seed({base_seed}, i)) feed {percentile}% of the pets by time {deadline}"
    );
    let mut text = String::new();
    if base_scenario.run_args().json {
        let mut object = Map::new();
        object.insert("model".into(), Value::from("pets"));
        object.insert("deadline".into(), Value::from(deadline));
        object.insert("percentile".into(), Value::from(percentile));
        object.insert("confidence".into(), Value::from(confidence));
        object.insert("replications".into(), Value::from(replications));
        object.insert("required".into(), Value::from(needed));
        object.insert("base_seed".into(), Value::from(base_seed));
        object.insert("max_gates".into(), Value::from(max_gates));
        object.insert("rule".into(), Value::from(rule.as_str()));
        object.insert(
            "warning".into(),
            artifact_warning(&base_scenario.params()).map_or(Value::Null, Value::from),
        );
        object.insert("params".into(), base_scenario.params());
        object.insert("gates".into(), passed.map_or(Value::Null, Value::from));
        let probes_json: Vec<Value> = probes
            .values()
            .map(|probe| {
                let mut p = Map::new();
                p.insert("gates".into(), Value::from(probe.gates));
                p.insert("met".into(), Value::from(probe.met));
                p.insert("runs".into(), Value::from(probe.runs));
                p.insert("pass".into(), Value::from(probe.pass));
                p.insert("mean_fed".into(), Value::from(probe.mean_fed));
                p.insert(
                    format!("{metric}_of_runs_in_time"),
                    probe.summary.map_or(Value::Null, Summary::to_json),
                );
                Value::Object(p)
            })
            .collect();
        object.insert("probes".into(), Value::Array(probes_json));
        writeln!(text, "{}", Value::Object(object))?;
    } else {
        writeln!(text, "{}", base_scenario.title())?;
        writeln!(text, "Rule: {rule}.")?;
        text.push_str(&probe_table(&probes, &metric));
        if let Some(warning) = artifact_warning(&base_scenario.params()) {
            crate::out::warning(&warning);
        }
    }
    // The probes are results even when no K meets the deadline: they are printed first, and
    // that case is then an error line (exit 1), the one exception to "nothing on stdout".
    if !base_scenario.run_args().json
        && let Some(gates) = passed
    {
        match probes.get(&(gates - 1)) {
            Some(below) => writeln!(
                text,
                "Answer: {gates} feeders ({} fail: {} of {replications} runs in time)",
                gates - 1,
                below.met
            )?,
            None => writeln!(
                text,
                "Answer: {gates} feeder{}",
                if gates == 1 { "" } else { "s" }
            )?,
        }
    }
    crate::out::print(&text)?;
    match passed {
        Some(_) => Ok(()),
        None => match best_fed {
            Some(gates) => bail!(
                "no number of feeders meets the deadline: the most pets are fed by it with \
                 {gates} feeders, and more feeders only hurt (in the events style every event \
                 rolls breakage for every feeder)"
            ),
            None => bail!(
                "no number of feeders up to {max_gates} meets the deadline \
                 (raise --max-gates or the deadline)"
            ),
        },
    }
}

fn probe_table(probes: &BTreeMap<u32, Probe>, metric: &str) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:>8}  {:>8}  {:>6}  {:>14}  {:>40}",
        "feeders",
        "in time",
        "meets",
        "fed by then",
        format!("{metric} of runs in time (mean ± 95% CI)")
    );
    for probe in probes.values() {
        let summary = match &probe.summary {
            Some(s) if s.n >= 2 => format!("{} ± {}", show(s.mean), show(s.half_width())),
            Some(s) => show(s.mean),
            None => "-".to_string(),
        };
        let _ = writeln!(
            text,
            "{:>8}  {:>8}  {:>6}  {:>14}  {:>40}",
            probe.gates,
            format!("{}/{}", probe.met, probe.runs),
            if probe.pass { "yes" } else { "no" },
            show(probe.mean_fed),
            summary
        );
    }
    text
}
