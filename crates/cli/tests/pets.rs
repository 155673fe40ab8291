//! `warpsim run pets`, through the real binary: the article's output lines, JSON, the
//! deterministic case in every style, plots, and bad input.

use std::process::{Command, Output};

use serde_json::Value;

fn warpsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .args(args)
        .output()
        .expect("the warpsim binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn json(args: &[&str]) -> Value {
    let output = warpsim(args);
    assert!(
        output.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON object on stdout")
}

#[test]
fn prints_the_article_lines_and_the_run_figures() {
    let output = warpsim(&["run", "pets", "--tasks", "20000"]);
    assert!(output.status.success());
    let text = stdout(&output);
    for expected in [
        "Feeding pets (events style): 20000 pets, 10 feeders",
        "Time to X%: 50% = ",
        "Relative Time to X%: 50% = 1x, 95% = 1.",
        "Time to 100%: ",
        "events committed",
        "wall time",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in\n{text}");
    }
}

#[test]
fn json_adds_the_four_percentiles() {
    let object = json(&["run", "pets", "--tasks", "20000", "--json"]);
    assert_eq!(object["model"], "pets");
    let p: Vec<f64> = ["p50", "p95", "p99", "p100"]
        .iter()
        .map(|name| object[name].as_f64().expect("a number"))
        .collect();
    assert!(p[0] > 0.0 && p[0] <= p[1] && p[1] <= p[2] && p[2] <= p[3]);
    // The run ends when the last pet is fed.
    assert_eq!(object["end_time"].as_f64(), Some(p[3]));
    assert_eq!(object["params"]["tasks"], 20000);
    assert_eq!(object["seed"], 100);
}

#[test]
fn deterministic_case_in_every_style() {
    // 1000 pets, 7 feeders, meals of 15, nothing breaks: ceil(1000/7) = 143 rounds.
    for style in ["step", "jump", "events"] {
        let object = json(&[
            "run",
            "pets",
            "--tasks=1000",
            "--gates=7",
            "--break-chance=0",
            "--durations=constant",
            "--style",
            style,
            "--json",
        ]);
        assert_eq!(object["p100"].as_f64(), Some(143.0 * 15.0), "{style}");
        assert_eq!(object["breakdowns"], 0);
    }
}

#[test]
fn jump_style_says_what_it_approximates() {
    let output = warpsim(&["run", "pets", "--style", "jump", "--tasks", "5000"]);
    assert!(output.status.success());
    let text = stdout(&output);
    assert!(
        text.contains("the jump style approximates the step style"),
        "{text}"
    );
}

#[test]
fn plot_writes_the_completion_curve() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pets_curve.svg");
    let _ = std::fs::remove_file(&path);
    let output = warpsim(&[
        "run",
        "pets",
        "--tasks",
        "5000",
        "--plot",
        path.to_str().unwrap(),
    ]);
    assert!(output.status.success());
    let svg = std::fs::read_to_string(&path).expect("the plot was written");
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("pets fed (%)"));
    assert!(svg.contains("95% fed"));
}

/// Every bad input: a non-zero exit and exactly one line on stderr, never a panic.
#[test]
fn bad_input_is_one_clear_line() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "pets", "--gates", "0"],
            "gates: must be at least 1",
        ),
        (
            &["run", "pets", "--tasks", "0"],
            "tasks: must be at least 1",
        ),
        (
            &["run", "pets", "--break-chance", "1.5"],
            "break-chance: must be between 0 and 1",
        ),
        (
            &["run", "pets", "--break-chance", "-0.1"],
            "break-chance: must be between 0 and 1",
        ),
        (
            &["run", "pets", "--break-chance", "1"],
            "break-chance: must be below 1",
        ),
        (
            &["run", "pets", "--repair-time", "-5"],
            "repair-time: must be at least 0",
        ),
        (
            &["run", "pets", "--processing-time", "0"],
            "processing-time: must be positive",
        ),
        (&["run", "pets", "--processing-time=-1"], "processing-time"),
        (
            &["run", "pets", "--style", "step", "--durations", "normal"],
            "durations:",
        ),
        (
            &["run", "pets", "--style", "sideways"],
            "invalid value 'sideways'",
        ),
        (&["run", "pets", "--gates", "-3"], "--gates"),
        (&["run", "pets", "--end", "0"], "end: must be positive"),
        (
            &["run", "pets", "--replications", "0"],
            "--replications must be at least 1",
        ),
        (
            &["run", "pets", "--colour", "red"],
            "unexpected argument '--colour'",
        ),
    ];
    for (args, expected) in cases {
        let output = warpsim(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} succeeded");
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{args:?}: `{stderr}` lacks `{expected}`"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn json_has_the_completion_curve_and_the_true_fed_count() {
    let value = json(&["run", "pets", "--tasks", "5000", "--end", "2000", "--json"]);
    let curve = value["curve"].as_array().unwrap();
    assert!(curve.len() > 10);
    let last = curve.last().unwrap().as_array().unwrap();
    // The last point is the tally just before the end: the exact count, not a 0.1 % mark.
    assert_eq!(last[1], value["fed"]);
    assert!(last[0].as_f64().unwrap() <= 2000.0);
    let fed = value["fed"].as_u64().unwrap();
    assert!(fed > 0 && fed < 5000);
    // Time never goes back and the count never falls along the curve.
    for pair in curve.windows(2) {
        assert!(pair[0][0].as_f64() <= pair[1][0].as_f64());
        assert!(pair[0][1].as_u64() <= pair[1][1].as_u64());
    }
}

#[test]
fn plan_answers_any_percentile_and_warns_under_the_articles_rule() {
    let args = [
        "plan",
        "pets",
        "--tasks",
        "5000",
        "--deadline",
        "60000",
        "--percentile",
        "90",
        "--replications",
        "4",
    ];
    let output = warpsim(&args);
    let text = stdout(&output);
    assert!(text.contains("p90 of runs in time"), "{text}");
    assert!(text.contains("Answer:"), "{text}");
    // A warning is one line on stderr, like every other.
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(
        errors.contains("warning: this answer is under the article's breakdown rule"),
        "{errors}"
    );
    let mut with_json = args.to_vec();
    with_json.extend(["--breakdowns", "per-working-time", "--json"]);
    let value = json(&with_json);
    assert_eq!(value["percentile"], 90.0);
    assert!(value["warning"].is_null());
    assert!(value["gates"].as_u64().unwrap() >= 1);
}
