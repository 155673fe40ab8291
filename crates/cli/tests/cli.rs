//! The real `warpsim` binary: reports, JSON, TOML scenarios and bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

fn warpsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .args(args)
        .output()
        .expect("warpsim runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json(args: &[&str]) -> serde_json::Value {
    let output = warpsim(args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(text.lines().count(), 1, "exactly one JSON object: {text}");
    serde_json::from_str(&text).expect("valid JSON")
}

/// A failure must be one clear line on stderr, a non-zero exit, and no panic message.
fn assert_fails(args: &[&str], needle: &str) {
    let output = warpsim(args);
    let err = stderr(&output);
    assert!(!output.status.success(), "{args:?} should fail");
    assert_eq!(
        err.lines().count(),
        1,
        "{args:?}: one line expected, got:\n{err}"
    );
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: `{needle}` not in {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpsim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const SMALL: [&str; 6] = ["--lps", "64", "--end", "30", "--seed", "3"];

#[test]
fn json_report_has_the_common_keys() {
    let mut args = vec!["run", "phold", "--json"];
    args.extend(SMALL);
    let value = json(&args);
    for key in [
        "model",
        "kernel",
        "seed",
        "events_committed",
        "end_time",
        "wall_seconds",
        "events_per_second",
        "trace_hash",
    ] {
        assert!(value.get(key).is_some(), "missing {key}: {value}");
    }
    assert_eq!(value["model"], "phold");
    assert_eq!(value["kernel"], "sequential");
    assert_eq!(value["seed"], 3);
    let hash = value["trace_hash"].as_str().unwrap();
    assert_eq!(hash.len(), 16);
    assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
    let events = value["events_committed"].as_u64().unwrap();
    assert!((1500..2300).contains(&events), "{events}");
}

#[test]
fn queues_agree_and_seeds_differ() {
    let hash = |extra: &[&str]| {
        let mut args = vec!["run", "phold", "--json"];
        args.extend(SMALL);
        args.extend(extra);
        json(&args)["trace_hash"].as_str().unwrap().to_string()
    };
    assert_eq!(hash(&["--queue", "heap"]), hash(&["--queue", "ladder"]));
    assert_ne!(hash(&["--seed", "4"]), hash(&[]));
}

#[test]
fn readable_report_and_critical_path() {
    let mut args = vec!["run", "phold", "--critical-path"];
    args.extend(SMALL);
    let output = warpsim(&args);
    assert!(output.status.success());
    let text = stdout(&output);
    assert!(text.starts_with("PHOLD: 64 LPs"), "{text}");
    assert!(text.contains("trace hash"), "{text}");
    assert!(text.contains("available parallelism"), "{text}");
}

#[test]
fn models_lists_parameters_with_defaults() {
    let output = warpsim(&["models"]);
    assert!(output.status.success());
    let text = stdout(&output);
    assert!(text.contains("phold:"), "{text}");
    assert!(text.contains("--lps"), "{text}");
    assert!(text.contains("(default 16384)"), "{text}");
    assert!(text.contains("--json"), "{text}");
}

#[test]
fn toml_scenario_with_flag_override() {
    let path = temp_file(
        "phold.toml",
        "model = \"phold\"\nlps = 64\nend = 30.0\nseed = 3\nqueue = \"heap\"\n",
    );
    let path = path.to_str().unwrap();
    let mut args = vec!["run", "phold", "--json"];
    args.extend(SMALL);
    let direct = json(&args);
    let from_file = json(&["run", "phold", "--json", "--config", path]);
    assert_eq!(direct["trace_hash"], from_file["trace_hash"]);
    let overridden = json(&["run", "phold", "--json", "--config", path, "--seed", "9"]);
    assert_eq!(overridden["seed"], 9);
    assert_eq!(overridden["lps"], 64);
}

#[test]
fn toml_errors_name_the_line() {
    let malformed = temp_file("bad.toml", "lps = 64\nend = = 3\n");
    assert_fails(
        &["run", "phold", "--config", malformed.to_str().unwrap()],
        "line 2",
    );
    let unknown = temp_file("unknown.toml", "lps = 64\n\nbogus = 1\n");
    assert_fails(
        &["run", "phold", "--config", unknown.to_str().unwrap()],
        "line 3: unknown key `bogus`",
    );
    let bad_value = temp_file("value.toml", "lps = \"many\"\n");
    assert_fails(
        &["run", "phold", "--config", bad_value.to_str().unwrap()],
        "line 1",
    );
    let other_model = temp_file("other.toml", "model = \"sharks-nope\"\n");
    assert_fails(
        &["run", "phold", "--config", other_model.to_str().unwrap()],
        "line 1",
    );
    assert_fails(
        &["run", "phold", "--config", "/nonexistent/x.toml"],
        "cannot read",
    );
}

#[test]
fn bad_input_is_one_line_and_non_zero() {
    assert_fails(&["run", "phold", "--lps", "0"], "lps");
    assert_fails(&["run", "phold", "--mean", "-1"], "mean");
    assert_fails(&["run", "phold", "--mean", "nan"], "mean");
    assert_fails(&["run", "phold", "--remote", "1.5"], "remote");
    assert_fails(&["run", "phold", "--lps", "-3"], "--lps");
    assert_fails(&["run", "phold", "--bogus"], "--bogus");
    assert_fails(&["run", "no-such-model"], "no-such-model");
    assert_fails(&["run", "phold", "--queue", "splay"], "splay");
    assert_fails(&["run", "phold", "--kernel", "quantum"], "quantum");
    assert_fails(&["frobnicate"], "frobnicate");
    assert_fails(
        &["run", "phold", "--kernel", "timewarp", "--window", "-1"],
        "--window",
    );
    assert_fails(
        &["run", "phold", "--kernel", "timewarp", "--window", "soon"],
        "soon",
    );
    assert_fails(
        &["run", "phold", "--kernel", "mpi", "--mpi-timeout", "0"],
        "--mpi-timeout",
    );
    for share in ["1.5", "-0.1", "sometimes"] {
        assert_fails(
            &["run", "phold", "--kernel", "timewarp", "--give-way", share],
            "--give-way",
        );
    }
    // A lookahead PHOLD's own delays cannot keep is refused as a parameter, before the run.
    assert_fails(&["run", "phold", "--lookahead", "2", "--mean", "1"], "mean");
    assert_fails(
        &[
            "run",
            "phold",
            "--kernel",
            "timewarp",
            "--checkpoint-interval",
            "0",
        ],
        "--checkpoint-interval",
    );
}

/// `warpsim run phold --lps 64 --end 50 --json` with `extra` flags: its JSON (it must succeed).
fn small_phold(extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["run", "phold", "--lps", "64", "--end", "50", "--json"];
    args.extend(extra);
    let out = warpsim(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_thread_that_gives_way_hands_over_its_lps_and_changes_nothing() {
    let expected = small_phold(&[]);
    let two = [
        "--kernel",
        "timewarp",
        "--threads",
        "2",
        "--gvt-interval",
        "8",
    ];
    let given = small_phold(&[&two[..], &["--give-way", "0"]].concat());
    let kept = small_phold(&[&two[..], &["--give-way", "never"]].concat());
    for json in [&given, &kept] {
        assert_eq!(json["trace_hash"], expected["trace_hash"]);
        assert_eq!(json["events_committed"], expected["events_committed"]);
    }
    // `0` moves one thread's LPs, all 32 of them, at the first look, and the later half of
    // the 64 back at the next (5 ms later), once, if the run lasts that long: 1.5–2 ms on a
    // quiet machine, 22 ms in one CI run under load. `never` moves none.
    let migrations = given["timewarp"]["migrations"].as_u64().unwrap();
    assert!((1..=2).contains(&migrations), "{given}");
    assert_eq!(
        given["timewarp"]["lps_migrated"].as_u64(),
        Some(32 * migrations),
        "{given}"
    );
    assert_eq!(kept["timewarp"]["lps_migrated"], 0, "{kept}");
}

#[test]
fn safe_events_are_counted_and_change_nothing() {
    // On one thread nearly every event is a safe event (no state save, even with a save
    // before every event asked for); with --no-safe-events every event takes the optimistic
    // path. Same commits either way.
    let run = small_phold;
    let expected = run(&[]);
    let timewarp = [
        "--kernel",
        "timewarp",
        "--threads",
        "1",
        "--checkpoint-interval",
        "1",
    ];
    let safe = run(&timewarp);
    let optimistic = run(&[&timewarp[..], &["--no-safe-events"]].concat());
    for json in [&safe, &optimistic] {
        assert_eq!(json["trace_hash"], expected["trace_hash"]);
        assert_eq!(json["events_committed"], expected["events_committed"]);
    }
    let count = |json: &serde_json::Value, field: &str| json["timewarp"][field].as_u64().unwrap();
    let committed = expected["events_committed"].as_u64().unwrap();
    assert!(count(&safe, "safe_events") * 10 > committed * 9, "{safe}");
    assert!(count(&safe, "saves") * 10 < committed, "{safe}");
    assert_eq!(count(&optimistic, "safe_events"), 0);
    assert_eq!(count(&optimistic, "saves"), count(&optimistic, "processed"));
}

#[test]
fn every_window_and_save_setting_commits_the_same_events() {
    let hash = |extra: &[&str]| {
        small_phold(extra)["trace_hash"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let expected = hash(&[]);
    for window in ["auto", "none", "0.5"] {
        assert_eq!(
            hash(&["--kernel", "timewarp", "--threads", "2", "--window", window]),
            expected,
            "--window {window}"
        );
    }
    for k in ["auto", "1", "5"] {
        assert_eq!(
            hash(&["--kernel", "timewarp", "--checkpoint-interval", k]),
            expected,
            "--checkpoint-interval {k}"
        );
    }
}

#[test]
fn the_content_hash_matches_across_kernels_and_is_off_by_default() {
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "sharks", "--creatures", "256", "--sectors", "4x4"];
        args.extend_from_slice(extra);
        args.push("--json");
        let output = warpsim(&args);
        assert!(output.status.success(), "{output:?}");
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    let plain = run(&[]);
    assert!(plain["content_hash"].is_null());
    let sequential = run(&["--content-hash"]);
    let timewarp = run(&["--content-hash", "--kernel", "timewarp", "--threads", "2"]);
    assert!(sequential["content_hash"].is_string());
    assert_eq!(sequential["content_hash"], timewarp["content_hash"]);
    assert_eq!(sequential["trace_hash"], plain["trace_hash"]);
}

/// `--watchdog` (issue 13): PHOLD with a timeout per LP that every event pushes back runs on
/// every kernel with the same committed events, and counts its timeouts; a negative timeout
/// is refused by name.
#[test]
fn phold_with_a_watchdog_runs_on_every_kernel_alike() {
    let args = [
        "run",
        "phold",
        "--lps",
        "64",
        "--end",
        "40",
        "--watchdog",
        "1.5",
        "--json",
    ];
    let sequential = json(&args);
    assert!(sequential["timeouts"].as_u64().unwrap() > 0);
    assert_eq!(sequential["params"]["watchdog"], 1.5);
    let plain = json(&["run", "phold", "--lps", "64", "--end", "40", "--json"]);
    // The same packets, plus the timeouts.
    assert!(sequential["events_committed"].as_u64() > plain["events_committed"].as_u64());
    for threads in ["1", "2"] {
        let mut timewarp = args.to_vec();
        timewarp.extend(["--kernel", "timewarp", "--threads", threads]);
        let timewarp = json(&timewarp);
        assert_eq!(timewarp["trace_hash"], sequential["trace_hash"]);
        assert_eq!(timewarp["timeouts"], sequential["timeouts"]);
        assert_eq!(timewarp["timewarp"]["retraction_rollbacks"], 0);
    }
    assert_fails(&["run", "phold", "--watchdog", "-1"], "watchdog");
}
