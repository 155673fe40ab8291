//! A user's model outside the CLI crate (`examples/mm1.rs`, an M/M/1 queue whose `main` is
//! one line) gets the whole command line through the library: `run`, `--json`,
//! `--replications`, `sweep`, `--config` and the kernels, checked end to end against
//! Erlang's closed forms for M/M/1 (mean wait λ / (μ (μ − λ)), share who wait ρ = λ / μ).

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

/// The example's binary, built beside `warpsim` (cargo builds examples with the tests; a
/// run of this test file alone builds it here).
fn mm1() -> PathBuf {
    let warpsim = PathBuf::from(env!("CARGO_BIN_EXE_warpsim"));
    let profile_dir = warpsim.parent().expect("target dir").to_path_buf();
    let example = profile_dir.join("examples").join("mm1");
    if !example.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "-p", "warpsim-cli", "--example", "mm1"]);
        if !cfg!(debug_assertions) {
            build.arg("--release");
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "building the mm1 example failed");
    }
    example
}

fn run(args: &[&str]) -> Output {
    Command::new(mm1()).args(args).output().expect("mm1 runs")
}

fn json(args: &[&str]) -> Value {
    let output = run(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?}: {stderr}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(text.lines().count(), 1, "exactly one JSON object: {text}");
    serde_json::from_str(&text).expect("valid JSON")
}

const CUSTOMERS: &str = if cfg!(debug_assertions) {
    "4000"
} else {
    "20000"
};

/// Erlang's mean wait in line of an M/M/1 queue.
fn mean_wait(lambda: f64, mu: f64) -> f64 {
    lambda / (mu * (mu - lambda))
}

#[test]
fn replications_bracket_the_closed_form() {
    let value = json(&[
        "run",
        "mm1",
        "--customers",
        CUSTOMERS,
        "--replications",
        "20",
        "--seed",
        "5",
        "--json",
    ]);
    assert_eq!(value["model"], "mm1");
    assert_eq!(value["params"]["arrival_rate"], 0.8);
    let metrics = &value["metrics"];
    for (metric, theory) in [("mean_wait", mean_wait(0.8, 1.0)), ("p_wait", 0.8)] {
        let low = metrics[metric]["ci95_low"].as_f64().unwrap();
        let high = metrics[metric]["ci95_high"].as_f64().unwrap();
        // The runs start empty (no warm-up), which biases the mean wait down by a little;
        // the interval, widened by a tenth, must still hold the formula.
        let slack = (high - low) * 0.1;
        assert!(
            low - slack <= theory && theory <= high + slack,
            "{metric}: {theory} outside [{low}, {high}]"
        );
    }
    assert_eq!(metrics["served"]["mean"], CUSTOMERS.parse::<f64>().unwrap());
}

#[test]
fn one_run_is_the_same_on_every_kernel() {
    let base = ["run", "mm1", "--customers", "2000", "--seed", "9", "--json"];
    let sequential = json(&base);
    let mut on_timewarp = base.to_vec();
    on_timewarp.extend([
        "--kernel",
        "timewarp",
        "--threads",
        "2",
        "--cancellation",
        "aggressive",
    ]);
    let timewarp = json(&on_timewarp);
    assert_eq!(timewarp["kernel"], "timewarp");
    assert_eq!(sequential["trace_hash"], timewarp["trace_hash"]);
    assert_eq!(sequential["mean_wait"], timewarp["mean_wait"]);
    assert_eq!(sequential["served"], 2000.0);
}

#[test]
fn a_sweep_follows_the_closed_form() {
    let value = json(&[
        "sweep",
        "mm1",
        "--set",
        "arrival-rate=0.3,0.6",
        "--customers",
        CUSTOMERS,
        "--replications",
        "8",
        "--json",
    ]);
    let points = value["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (point, lambda) in points.iter().zip([0.3, 0.6]) {
        assert_eq!(point["set"]["arrival-rate"], lambda);
        let measured = point["metrics"]["mean_wait"]["mean"].as_f64().unwrap();
        let theory = mean_wait(lambda, 1.0);
        assert!(
            (measured - theory).abs() < 0.15 * theory,
            "λ = {lambda}: {measured} against {theory}"
        );
    }
}

#[test]
fn toml_scenarios_help_and_errors_use_the_declared_parameters() {
    let dir = std::env::temp_dir().join(format!("warpsim-mm1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("mm1.toml");
    std::fs::write(
        &config,
        "model = \"mm1\"\narrival-rate = 0.5\ncustomers = 500\n",
    )
    .unwrap();
    let value = json(&["run", "mm1", "--config", config.to_str().unwrap(), "--json"]);
    assert_eq!(value["params"]["arrival_rate"], 0.5);
    assert_eq!(value["served"], 500.0);

    let help = run(&["run", "mm1", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    for needle in [
        "--arrival-rate",
        "Arrival rate λ",
        "[default: 0.8]",
        "--kernel",
        "--threads",
    ] {
        assert!(help.contains(needle), "`{needle}` not in help:\n{help}");
    }
    let listing = String::from_utf8_lossy(&run(&["models"]).stdout).into_owned();
    assert!(listing.starts_with("mm1: "), "{listing}");

    let output = run(&["run", "mm1", "--arrival-rate", "-1"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("arrival-rate must be positive"), "{stderr}");
    assert!(output.stdout.is_empty());
}
