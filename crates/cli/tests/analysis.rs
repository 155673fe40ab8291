//! The analyst's toolkit through the real binary: replications (and their independence of the
//! thread count), sweeps (table, CSV, JSON, plot; for any model), the M/M/c check against
//! Erlang C, and the feeder plan.

use std::process::{Command, Output};

use serde_json::Value;
use warpsim_core::derive_seed;
use warpsim_models::mmc::erlang_c;

fn warpsim_with(args: &[&str], threads: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_warpsim"));
    command.args(args);
    if let Some(threads) = threads {
        command.env("RAYON_NUM_THREADS", threads);
    }
    command.output().expect("the warpsim binary runs")
}

fn warpsim(args: &[&str]) -> Output {
    warpsim_with(args, None)
}

fn success(output: Output, args: &[&str]) -> String {
    assert!(
        output.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&success(warpsim(args), args)).expect("one JSON object")
}

fn tmp(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Removes the wall-clock figures, which differ from run to run.
fn without_timing(mut value: Value) -> Value {
    const TIMING: [&str; 2] = ["wall_seconds", "events_per_second"];
    if let Some(metrics) = value["metrics"].as_object_mut() {
        metrics.retain(|name, _| !TIMING.contains(&name.as_str()));
    }
    if let Some(runs) = value["runs"].as_array_mut() {
        for run in runs {
            if let Some(run) = run.as_object_mut() {
                run.retain(|name, _| !TIMING.contains(&name.as_str()));
            }
        }
    }
    value
}

#[test]
fn replications_are_the_same_on_one_and_two_threads() {
    let args = [
        "run",
        "pets",
        "--tasks",
        "20000",
        "--replications",
        "6",
        "--json",
    ];
    let one = success(warpsim_with(&args, Some("1")), &args);
    let two = success(warpsim_with(&args, Some("2")), &args);
    let one: Value = serde_json::from_str(&one).unwrap();
    let two: Value = serde_json::from_str(&two).unwrap();
    assert_eq!(without_timing(one.clone()), without_timing(two));
    // The summary has every statistic for the model's metrics and the report's numbers.
    for metric in ["p50", "p100", "breakdowns", "events_committed", "end_time"] {
        let summary = &one["metrics"][metric];
        assert_eq!(summary["n"], 6, "{metric}");
        let (low, mean, high) = (
            summary["ci95_low"].as_f64().unwrap(),
            summary["mean"].as_f64().unwrap(),
            summary["ci95_high"].as_f64().unwrap(),
        );
        assert!(low <= mean && mean <= high, "{metric}");
        assert!(summary["min"].as_f64().unwrap() <= mean);
        assert!(summary["std_dev"].as_f64().unwrap() > 0.0, "{metric}");
    }
}

#[test]
fn replication_i_runs_with_seed_derive_seed_base_i() {
    let replicated = json(&[
        "run",
        "pets",
        "--tasks",
        "5000",
        "--seed",
        "7",
        "--replications",
        "3",
        "--json",
    ]);
    let second = &replicated["runs"][1];
    let seed = derive_seed(7, 1);
    assert_eq!(second["seed"].as_u64(), Some(seed));
    let single = json(&[
        "run",
        "pets",
        "--tasks",
        "5000",
        "--seed",
        &seed.to_string(),
        "--json",
    ]);
    assert_eq!(second["p100"].as_f64(), single["p100"].as_f64());
    assert_eq!(
        second["events_committed"].as_f64(),
        single["events_committed"].as_f64()
    );
}

#[test]
fn replications_work_for_any_model_and_print_a_table() {
    let args = [
        "run",
        "phold",
        "--lps",
        "64",
        "--end",
        "20",
        "--replications",
        "4",
    ];
    let text = success(warpsim(&args), &args);
    assert!(
        text.contains("4 replications, seeds derive_seed(7, 0..4)"),
        "{text}"
    );
    assert!(text.contains("95% CI"));
    assert!(
        text.lines()
            .any(|line| line.starts_with("events_committed")),
        "{text}"
    );
}

#[test]
fn mmc_matches_erlang_c_within_the_reported_interval() {
    let (customers, replications) = if cfg!(debug_assertions) {
        ("5000", "8")
    } else {
        ("40000", "20")
    };
    let warmup = (customers.parse::<u64>().unwrap() / 10).to_string();
    let object = json(&[
        "run",
        "mmc",
        "--arrival-rate",
        "1.5",
        "--service-rate",
        "1",
        "--servers",
        "2",
        "--customers",
        customers,
        "--warmup",
        &warmup,
        "--replications",
        replications,
        "--json",
    ]);
    let theory = erlang_c(1.5, 1.0, 2).unwrap();
    for (metric, exact) in [
        ("mean_wait", theory.mean_wait),
        ("utilisation", theory.utilisation),
    ] {
        let summary = &object["metrics"][metric];
        let low = summary["ci95_low"].as_f64().unwrap();
        let high = summary["ci95_high"].as_f64().unwrap();
        assert!(
            low <= exact && exact <= high,
            "{metric}: {exact} not in [{low}, {high}]"
        );
    }
    assert_eq!(
        object["metrics"]["erlang_c_wait"]["mean"].as_f64(),
        Some(theory.mean_wait)
    );
}

#[test]
fn sweep_writes_table_csv_and_plot() {
    let csv = tmp("sweep_gates.csv");
    let svg = tmp("sweep_gates.svg");
    let args = [
        "sweep",
        "pets",
        "--set",
        "gates=4..8:2",
        "--tasks",
        "5000",
        "--replications",
        "3",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ];
    let text = success(warpsim(&args), &args);
    assert!(text.contains("sweep of 3 points × 3 runs"), "{text}");
    assert!(text.contains("p100 (mean ± 95% CI)"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(['4', '6', '8']))
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    let csv = std::fs::read_to_string(csv).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("gates,n,"));
    assert!(header.contains("p100_ci95_low"));
    assert_eq!(lines.count(), 3);
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("<polygon"),
        "a CI band is drawn"
    );
}

#[test]
fn sweep_is_generic_two_axes_and_json() {
    // PHOLD has no model metrics: the sweep shows its event count.
    let object = json(&[
        "sweep",
        "phold",
        "--set",
        "lps=8,16",
        "--set",
        "remote=0..0.5:0.5",
        "--end",
        "10",
        "--json",
    ]);
    let points = object["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    assert_eq!(points[1]["set"]["lps"], 8);
    assert_eq!(points[1]["set"]["remote"], 0.5);
    assert_eq!(points[3]["params"]["lps"], 16);
    assert!(
        points[0]["metrics"]["events_committed"]["mean"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // A non-numeric parameter can be swept too.
    let styles = json(&[
        "sweep",
        "pets",
        "--set",
        "style=step,jump",
        "--tasks",
        "2000",
        "--durations",
        "constant",
        "--json",
    ]);
    assert_eq!(styles["points"][1]["params"]["style"], "jump");
}

#[test]
fn bad_sweeps_and_plans_are_one_clear_line() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["sweep", "pets", "--set", "colour=1..3"],
            "unknown parameter `colour` for model `pets`",
        ),
        (&["sweep", "pets", "--set", "gates=9..4"], "is empty"),
        (
            &["sweep", "pets", "--set", "gates=1..4:0"],
            "step of `1..4:0` must be positive",
        ),
        (&["sweep", "pets", "--set", "gates"], "expected KEY=VALUES"),
        (&["sweep", "pets"], "sweep needs at least one --set"),
        (
            &["sweep", "pets", "--set", "gates=0,2", "--tasks", "10"],
            "sweep point gates=0",
        ),
        (
            &["sweep", "pets", "--set", "gates=2,3", "--gates", "4"],
            "both swept",
        ),
        (
            &["sweep", "nosuch", "--set", "a=1"],
            "unknown model `nosuch`",
        ),
        (&["plan", "pets"], "plan needs --deadline"),
        (
            &["plan", "pets", "--deadline", "-1"],
            "--deadline must be a positive number",
        ),
        (
            &["plan", "pets", "--deadline", "100", "--percentile", "90.05"],
            "--percentile must be",
        ),
        (
            &["plan", "pets", "--deadline", "100", "--confidence", "1.5"],
            "--confidence must be",
        ),
        (
            &["plan", "phold", "--deadline", "100"],
            "plan phold needs --search PARAM",
        ),
        (
            &[
                "plan",
                "mmc",
                "--search",
                "colour",
                "--metric",
                "p_wait",
                "--at-most",
                "1",
            ],
            "model `mmc` has no parameter --colour",
        ),
        (
            &["plan", "mmc", "--search", "servers", "--metric", "p_wait"],
            "exactly one of --at-most X and --at-least X",
        ),
        (
            &[
                "plan",
                "mmc",
                "--search",
                "servers",
                "--metric",
                "p_wait",
                "--at-most",
                "1",
                "--servers",
                "3",
            ],
            "plan sets --servers itself",
        ),
        (
            &["plan", "pets", "--deadline", "100", "--gates", "3"],
            "plan sets --gates itself",
        ),
    ];
    for (args, expected) in cases {
        let output = warpsim(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{args:?}: `{stderr}` lacks `{expected}`"
        );
    }
}

#[test]
fn plan_searches_any_models_whole_parameter() {
    // M/M/c with λ = 4, μ = 1: the fewest servers whose mean wait is at most 0.1 in every
    // replication, against Erlang C's answer (the runs are long enough that no replication
    // strays across the target at the answer or just below it).
    let target = 0.1;
    let expected = (5..20)
        .find(|&servers| {
            erlang_c(4.0, 1.0, servers).is_some_and(|theory| theory.mean_wait <= target)
        })
        .unwrap();
    let value = json(&[
        "plan",
        "mmc",
        "--search",
        "servers",
        "--metric",
        "mean_wait",
        "--at-most",
        "0.1",
        "--customers",
        "20000",
        "--replications",
        "6",
        "--json",
    ]);
    assert_eq!(value["answer"], expected, "{value}");
    assert_eq!(value["search"], "servers");
    let probes = value["probes"].as_array().unwrap();
    let below = probes
        .iter()
        .find(|probe| probe["servers"] == expected - 1)
        .expect("the value below the answer was probed");
    assert_eq!(below["pass"], false);
}

#[test]
fn plan_finds_the_smallest_number_of_feeders() {
    // Nothing breaks and meals take exactly 15: 1000 pets by time 750 (50 rounds) need
    // ceil(1000 / 50) = 20 feeders, and 19 do not suffice.
    let args = [
        "plan",
        "pets",
        "--deadline",
        "750",
        "--tasks",
        "1000",
        "--style",
        "step",
        "--break-chance",
        "0",
        "--replications",
        "3",
    ];
    let text = success(warpsim(&args), &args);
    assert!(text.contains("Answer: 20 feeders (19 fail"), "{text}");
    assert!(text.contains("Rule: K meets the deadline when at least 3 of 3 replications"));
    // With breakdowns, in JSON: the answer meets the rule and one fewer feeder does not.
    let object = json(&[
        "plan",
        "pets",
        "--deadline",
        "30000",
        "--tasks",
        "5000",
        "--style",
        "step",
        "--replications",
        "10",
        "--confidence",
        "0.9",
        "--json",
    ]);
    let gates = object["gates"].as_u64().expect("an answer");
    let probes = object["probes"].as_array().unwrap();
    let probe = |k: u64| probes.iter().find(|p| p["gates"] == k).unwrap();
    assert_eq!(probe(gates)["pass"], true);
    assert!(probe(gates)["met"].as_u64().unwrap() >= 9);
    assert_eq!(probe(gates - 1)["pass"], false);
}
