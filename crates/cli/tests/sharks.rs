//! `warpsim run sharks` through the real binary: files in and out, `--verify`, the JSON
//! metrics, and one-line errors with a non-zero exit for bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

fn warpsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .args(args)
        .output()
        .expect("the warpsim binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpsim-sharks-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Fails with a readable message unless the run failed with exactly one line on stderr that
/// contains every one of `needles`.
fn assert_one_line_error(output: &Output, needles: &[&str]) {
    let err = stderr(output);
    assert!(
        !output.status.success(),
        "expected failure, got success; stderr: {err}"
    );
    assert_eq!(err.lines().count(), 1, "stderr should be one line:\n{err}");
    for needle in needles {
        assert!(
            err.contains(needle),
            "stderr {err:?} should contain {needle:?}"
        );
    }
}

#[test]
fn a_run_writes_population_deaths_and_plot_and_verifies() {
    let dir = scratch("files");
    let population = dir.join("population.csv");
    let deaths = dir.join("deaths.csv");
    let plot = dir.join("world.svg");
    let output = warpsim(&[
        "run",
        "sharks",
        "--creatures",
        "300",
        "--radius-min",
        "100",
        "--radius-max",
        "400",
        "--sectors",
        "4x4",
        "--end",
        "500",
        "--critical-path",
        "--verify",
        "--json",
        "--dump-population",
        population.to_str().unwrap(),
        "--deaths",
        deaths.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let json: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(json["model"], "sharks");
    assert_eq!(json["creatures"], 300);
    assert_eq!(json["sectors"], 16);
    assert_eq!(json["verified"], true);
    assert_eq!(json["complete"], true);
    let kinds = &json["events_by_kind"];
    let sum: u64 = [
        "fish_arrival",
        "shark_arrival",
        "shark_sighting",
        "withdrawal_message",
        "settle",
    ]
    .iter()
    .map(|k| kinds[k].as_u64().unwrap())
    .sum();
    assert_eq!(sum, json["events_committed"].as_u64().unwrap());
    assert!(json["available_parallelism"].as_f64().unwrap() > 1.0);
    assert!(json["granularity_us"].as_f64().unwrap() > 0.0);

    let deaths_text = std::fs::read_to_string(&deaths).unwrap();
    let mut lines = deaths_text.lines();
    assert_eq!(lines.next(), Some("fish,shark,time"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len() as u64, json["fish_eaten"].as_u64().unwrap());
    assert!(!rows.is_empty());
    let ids: Vec<u32> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "sorted by fish id");
    for row in &rows {
        let digits = row[2]
            .chars()
            .filter(char::is_ascii_digit)
            .skip_while(|&c| c == '0')
            .count();
        assert!(
            digits >= 9 || row[2] == "0",
            "time {} has < 9 significant digits",
            row[2]
        );
    }
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("live fish"));

    // Replaying the dumped population gives the same deaths, with either cancel style.
    for cancel in ["app", "kernel"] {
        let replay = dir.join(format!("replay-{cancel}.csv"));
        let output = warpsim(&[
            "run",
            "sharks",
            "--population",
            population.to_str().unwrap(),
            "--sectors",
            "3x5",
            "--end",
            "500",
            "--cancel",
            cancel,
            "--verify",
            "--deaths",
            replay.to_str().unwrap(),
        ]);
        assert!(output.status.success(), "stderr: {}", stderr(&output));
        assert!(stdout(&output).contains("deaths match the brute-force oracle"));
        assert_eq!(
            std::fs::read_to_string(&replay).unwrap(),
            deaths_text,
            "{cancel}"
        );
    }
}

#[test]
fn the_readable_report_names_the_figures() {
    let output = warpsim(&[
        "run",
        "sharks",
        "--creatures",
        "128",
        "--end",
        "200",
        "--critical-path",
    ]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    for needle in [
        "Sharks World: 128 creatures",
        "events by kind",
        "fish eaten",
        "granularity",
        "available parallelism",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
}

#[test]
fn verify_accepts_a_file_population_on_the_smallest_grid() {
    // One shark, one fish it reaches at t = 2.5 across a 1x1 world, one fish out of reach.
    let dir = scratch("verify");
    let population = dir.join("p.csv");
    std::fs::write(
        &population,
        "id,kind,x,y,vx,vy,radius\n0,shark,10,10,1,0,5\n1,fish,20,10,-1,0,\n2,fish,50,50,0,1,\n",
    )
    .unwrap();
    let output = warpsim(&[
        "run",
        "sharks",
        "--world",
        "100",
        "--sectors",
        "1x1",
        "--end",
        "10",
        "--population",
        population.to_str().unwrap(),
        "--verify",
        "--json",
    ]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let json: serde_json::Value = serde_json::from_str(stdout(&output).trim()).unwrap();
    assert_eq!(json["fish_eaten"], 1);
    assert_eq!(json["verified"], true);
}

#[test]
fn bad_input_is_one_line_and_a_failure() {
    let dir = scratch("bad");
    let header = "id,kind,x,y,vx,vy,radius\n";
    let files = [
        (
            "malformed.csv",
            format!("{header}1,fish,1,2\n"),
            vec!["malformed.csv", "line 2", "expected 7 fields"],
        ),
        (
            "negative.csv",
            format!("{header}1,shark,1,2,3,4,-5\n"),
            vec!["line 2", "radius `-5` must not be negative"],
        ),
        (
            "nan.csv",
            format!("{header}1,fish,NaN,2,3,4,\n"),
            vec!["line 2", "not a finite number"],
        ),
        (
            "twice.csv",
            format!("{header}1,fish,1,2,3,4,\n1,shark,5,5,0,0,1\n"),
            vec!["line 3", "duplicate id 1 (first on line 2)"],
        ),
        (
            "outside.csv",
            format!("{header}1,fish,70000,2,3,4,\n"),
            vec!["line 2", "outside the world"],
        ),
        (
            "noheader.csv",
            "1,fish,1,2,3,4,\n".to_string(),
            vec!["line 1", "expected the header"],
        ),
    ];
    for (name, text, needles) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let output = warpsim(&["run", "sharks", "--population", path.to_str().unwrap()]);
        assert_one_line_error(&output, &needles);
    }
    let missing = dir.join("missing.csv");
    assert_one_line_error(
        &warpsim(&["run", "sharks", "--population", missing.to_str().unwrap()]),
        &["cannot read"],
    );
    assert_one_line_error(
        &warpsim(&["run", "sharks", "--sectors", "0x3"]),
        &["sectors", "0x3"],
    );
    assert_one_line_error(
        &warpsim(&["run", "sharks", "--sectors", "eight"]),
        &["--sectors"],
    );
    assert_one_line_error(
        &warpsim(&["run", "sharks", "--radius", "-1"]),
        &["radius-min", "-1"],
    );
    assert_one_line_error(&warpsim(&["run", "sharks", "--end", "NaN"]), &["end"]);
    assert_one_line_error(&warpsim(&["run", "sharks", "--world", "0"]), &["world"]);
    assert_one_line_error(
        &warpsim(&[
            "run",
            "sharks",
            "--radius",
            "3",
            "--radius-min",
            "1",
            "--radius-max",
            "2",
        ]),
        &["--radius"],
    );
    assert_one_line_error(
        &warpsim(&["run", "sharks", "--population", "x.csv", "--creatures", "5"]),
        &["--creatures"],
    );
}
