//! `plan <model> --search PARAM --metric M --at-most X` (or `--at-least X`): for any model,
//! the smallest whole value of `PARAM` whose runs meet a target on metric `M`.
//!
//! # Decision rule
//!
//! A value *meets the target* when at least `ceil(C · R)` of `R` replications (default 20;
//! seeds `derive_seed(seed, i)`, the same for every value: common random numbers) have the
//! metric at most (at least) the target. `C` is `--confidence`, 0.95 by default.
//!
//! # Search
//!
//! Galloping — 1, 2, 4, 8, … — to the first value that meets the
//! target (or `--max`, default 4096), then bisection between the last failure and it. This
//! takes about `2 · log2(answer)` probes and assumes that meeting the target is monotone in
//! the parameter (more servers never make the wait longer); the table of probes is printed so
//! that the answer can be checked.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{Result, anyhow, bail};
use serde_json::{Map, Value};

use super::super::replications::{replicate, show};
use super::super::statistics::Summary;
use super::super::{RunsBar, model_flags, parse_model, take_last};
use super::{PlanCmd, Runs, number_flag};
use crate::run::Scenario;

/// Largest value tried when `--max` is not given.
const DEFAULT_MAX: u64 = 4096;

/// What one value of the parameter gave.
#[derive(Debug, Clone)]
struct Probe {
    met: usize,
    runs: usize,
    pass: bool,
    summary: Option<Summary>,
}

/// `plan <model> --search PARAM …`.
///
/// # Errors
///
/// Missing or bad plan settings, a parameter the model does not have, bad model flags, a
/// failed run, a metric the model does not report, or no value up to `--max` that meets the
/// target (after the probes are printed).
pub(super) fn run(app: &crate::App, command: PlanCmd, search: Option<String>) -> Result<()> {
    let mut flags = command.args;
    let model = command.model;
    let metric = take_last(&mut flags, "metric", command.metric)?;
    let at_most = number_flag(
        "at-most",
        take_last(
            &mut flags,
            "at-most",
            command.at_most.map(|v| v.to_string()),
        )?,
    )?;
    let at_least = number_flag(
        "at-least",
        take_last(
            &mut flags,
            "at-least",
            command.at_least.map(|v| v.to_string()),
        )?,
    )?;
    let confidence = number_flag(
        "confidence",
        take_last(
            &mut flags,
            "confidence",
            command.confidence.map(|v| v.to_string()),
        )?,
    )?
    .unwrap_or(0.95);
    let max = take_last(&mut flags, "max", command.max.map(|v| v.to_string()))?
        .map(|text| {
            text.parse::<u64>()
                .map_err(|_| anyhow!("--max: `{text}` is not a whole number"))
        })
        .transpose()?
        .unwrap_or(DEFAULT_MAX);
    let Some(param) = search else {
        bail!(
            "plan {model} needs --search PARAM --metric METRIC and --at-most X or --at-least X \
             (pets also takes --deadline)"
        );
    };
    let metric = metric.ok_or_else(|| anyhow!("plan needs --metric METRIC (the metric judged)"))?;
    let (target, at_most) = match (at_most, at_least) {
        (Some(target), None) => (target, true),
        (None, Some(target)) => (target, false),
        _ => bail!("plan needs exactly one of --at-most X and --at-least X"),
    };
    if !target.is_finite() {
        bail!("the target must be a finite number (got {target})");
    }
    if !(confidence > 0.0 && confidence <= 1.0) {
        bail!("--confidence must be in (0, 1] (got {confidence})");
    }
    if max == 0 {
        bail!("--max must be at least 1 (got 0)");
    }
    if !model_flags(app, &model)?.contains(&param) {
        bail!("--search {param}: model `{model}` has no parameter --{param}");
    }
    let flag = format!("--{param}");
    if flags
        .iter()
        .any(|f| *f == flag || f.starts_with(&format!("{flag}=")))
    {
        bail!("plan sets {flag} itself (it searches it); drop {flag}");
    }

    let base = parse_model(app, &model, &flags)?;
    let base_scenario: &dyn Scenario = &*base;
    base_scenario
        .validate()
        .map_err(|error| anyhow!("{model}: {error:#}"))?;
    if let Some((flag, _)) = base_scenario.files().outputs.first() {
        bail!("{flag}: a plan writes no file per run; drop {flag}");
    }
    let Runs {
        replications,
        base_seed,
        seeds: run_seeds,
        needed,
    } = Runs::of(base_scenario, confidence)?;

    let mut probes: BTreeMap<u64, Probe> = BTreeMap::new();
    let mut evaluate = |value: u64| -> Result<bool> {
        if let Some(probe) = probes.get(&value) {
            return Ok(probe.pass);
        }
        let mut point_flags = flags.clone();
        point_flags.push(format!("--{param}={value}"));
        let label = format!("{model} with {param} = {value}");
        let scenario = parse_model(app, &model, &point_flags)?;
        scenario
            .validate()
            .map_err(|error| anyhow!("{label}: {error:#}"))?;
        crate::limits::check_run(&*scenario).map_err(|error| anyhow!("{label}: {error:#}"))?;
        let bar = RunsBar::new(
            run_seeds.len() as u64,
            &format!("runs with {param} = {value}"),
        );
        let outcomes = replicate(&*scenario, &run_seeds, false, &bar);
        bar.finish();
        let outcomes = outcomes.map_err(|error| anyhow!("{label}: {error:#}"))?;
        let mut values = Vec::new();
        for outcome in &outcomes {
            let known = super::super::numeric_metrics(outcome);
            match known.iter().find(|(name, _)| *name == metric) {
                Some(&(_, value)) => values.push(value),
                None if outcome.metrics.contains_key(&metric) => {} // not reached: fails
                None => bail!(
                    "--metric {metric}: {model} reports no such metric (metrics: {})",
                    known
                        .iter()
                        .map(|(name, _)| name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
        let met = values
            .iter()
            .filter(|&&value| {
                if at_most {
                    value <= target
                } else {
                    value >= target
                }
            })
            .count();
        let probe = Probe {
            met,
            runs: outcomes.len(),
            pass: met >= needed,
            summary: Summary::of(&values),
        };
        probes.insert(value, probe.clone());
        Ok(probe.pass)
    };
    let mut value = 1;
    let mut found = None;
    loop {
        let now = value.min(max);
        if evaluate(now)? {
            found = Some(now);
            break;
        }
        if now >= max {
            break;
        }
        value = now.saturating_mul(2);
    }
    if let Some(mut high) = found {
        // The gallop's previous probe (half of it) failed; 0 stands for "none below 1".
        let mut low = high / 2;
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if evaluate(middle)? {
                high = middle;
            } else {
                low = middle;
            }
        }
        found = Some(high);
    }

    let relation = if at_most { "at most" } else { "at least" };
    let rule = format!(
        "a value meets the target when at least {needed} of {replications} replications \
         (seeds derive_seed({base_seed}, i)) have {metric} {relation} {target}"
    );
    let mut text = String::new();
    if base_scenario.run_args().json {
        let mut object = Map::new();
        object.insert("model".into(), Value::from(model.as_str()));
        object.insert("search".into(), Value::from(param.as_str()));
        object.insert("metric".into(), Value::from(metric.as_str()));
        object.insert(
            if at_most { "at_most" } else { "at_least" }.into(),
            Value::from(target),
        );
        object.insert("confidence".into(), Value::from(confidence));
        object.insert("replications".into(), Value::from(replications));
        object.insert("required".into(), Value::from(needed));
        object.insert("base_seed".into(), Value::from(base_seed));
        object.insert("rule".into(), Value::from(rule.as_str()));
        object.insert("params".into(), base_scenario.params());
        object.insert("answer".into(), found.map_or(Value::Null, Value::from));
        let probes_json: Vec<Value> = probes
            .iter()
            .map(|(value, probe)| {
                let mut p = Map::new();
                p.insert(param.clone(), Value::from(*value));
                p.insert("met".into(), Value::from(probe.met));
                p.insert("runs".into(), Value::from(probe.runs));
                p.insert("pass".into(), Value::from(probe.pass));
                p.insert(
                    metric.clone(),
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
        let heading = format!("{metric} (mean ± 95% CI)");
        writeln!(
            text,
            "{param:>12}  {:>8}  {:>6}  {heading:>32}",
            "met", "meets"
        )?;
        for (value, probe) in &probes {
            let summary = match &probe.summary {
                Some(s) if s.n >= 2 => format!("{} ± {}", show(s.mean), show(s.half_width())),
                Some(s) => show(s.mean),
                None => "-".to_string(),
            };
            writeln!(
                text,
                "{value:>12}  {:>8}  {:>6}  {summary:>32}",
                format!("{}/{}", probe.met, probe.runs),
                if probe.pass { "yes" } else { "no" },
            )?;
        }
        if let Some(answer) = found {
            writeln!(text, "Answer: {param} = {answer}")?;
        }
    }
    crate::out::print(&text)?;
    match found {
        Some(_) => Ok(()),
        None => bail!("no {param} up to {max} meets the target (raise --max or relax the target)"),
    }
}
