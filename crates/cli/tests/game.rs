//! The game-loop demos through the real binary.

use std::process::Command;

fn warpsim_json(args: &[&str]) -> serde_json::Value {
    let output = Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .args(args)
        .output()
        .expect("warpsim runs");
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON object")
}

#[test]
fn warlock_timeline_follows_the_curve() {
    let value = warpsim_json(&["run", "warlock", "--json"]);
    assert_eq!(value["model"], "warlock");
    let ready: Vec<(String, f64)> = value["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["kind"] == "ready")
        .map(|event| {
            (
                event["spell"].as_str().unwrap().to_string(),
                event["time"].as_f64().unwrap(),
            )
        })
        .collect();
    // 5 MP + 2 MP/s: ice (35) at 15 s; casting spends, so the next ice is 32.5 s, etc.
    assert_eq!(ready[0], ("ice".to_string(), 15.0));
    assert!(
        ready
            .iter()
            .any(|(spell, time)| spell == "fireball" && *time == 47.5)
    );
    assert!(
        ready
            .iter()
            .any(|(spell, time)| spell == "lightning" && *time == 95.0)
    );
}

#[test]
fn torches_polling_and_timers_agree() {
    let value = warpsim_json(&["run", "torches", "--n", "20000", "--seconds", "5", "--json"]);
    assert_eq!(value["extinguished_polling"], value["extinguished_events"]);
    assert!(value["extinguished_events"].as_u64().unwrap() > 1000);
    assert!(value["polling"]["mean_ns"].as_f64().unwrap() > 0.0);
    for key in [
        "kernel",
        "seed",
        "events_committed",
        "wall_seconds",
        "trace_hash",
    ] {
        assert!(value.get(key).is_some(), "{key}");
    }
}

#[test]
fn demos_refuse_bad_input() {
    for args in [
        &["run", "torches", "--fps", "0"][..],
        &["run", "torches", "--n", "0"],
        &["run", "warlock", "--curve", "cubic"],
        &["run", "warlock", "--start-mana", "nan"],
        &["run", "warlock", "--kernel", "timewarp"],
        &["run", "torches", "--threads", "8"],
        &["run", "torches", "--cancellation=aggressive"],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_warpsim"))
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        if args.iter().any(|arg| {
            arg.starts_with("--kernel")
                || arg.starts_with("--threads")
                || arg.starts_with("--cancellation")
        }) {
            assert!(
                stderr.contains("takes no kernel flags"),
                "{args:?}: {stderr}"
            );
        }
    }
}

#[test]
fn warlock_text_shows_figure_1_and_torches_their_real_pending_count() {
    let output = Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .args(["run", "warlock", "--seconds", "50"])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("Figure 1 (no casting) ice in 15 s, fireball in 30 s, lightning in 45 s"),
        "{text}"
    );
    let value = warpsim_json(&[
        "run",
        "torches",
        "--n",
        "10000",
        "--seconds",
        "3",
        "--slice-torches",
        "2500",
        "--budget",
        "50",
        "--json",
    ]);
    let out = value["extinguished_events"].as_u64().unwrap();
    assert_eq!(value["pending_at_end"].as_u64().unwrap(), 10_000 - out);
    assert_eq!(value["stop_reason"], "end_time");
    assert_eq!(value["sliced"]["max_gap_frames"], 4);
    assert!(value["budgeted"]["late"].as_u64().is_some());
}
