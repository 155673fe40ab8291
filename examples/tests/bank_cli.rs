//! The reneging bank's few-line command line (`src/bin/bank.rs`): the library's
//! numbers through `run`, the kernels agree, and replications and sweeps work.

use std::process::Command;

use serde_json::Value;
use warpsim_core::{Kernel, RunConfig, Sequential};
use warpsim_examples::bank::{BankParams, summarise};

fn json(args: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_bank"))
        .args(args)
        .output()
        .expect("bank runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?}: {stderr}");
    serde_json::from_str(&String::from_utf8_lossy(&output.stdout)).expect("one JSON object")
}

#[test]
fn run_reports_what_the_library_computes() {
    let params = BankParams {
        end: 3_000.0,
        tellers: 4,
        ..BankParams::default()
    };
    let mut outputs = Vec::new();
    Sequential::new(RunConfig::new(7).end_time(params.end))
        .run(params.build().unwrap(), &mut outputs)
        .unwrap();
    let expected = summarise(&outputs);
    let value = json(&[
        "run",
        "bank",
        "--end",
        "3000",
        "--tellers",
        "4",
        "--seed",
        "7",
        "--json",
    ]);
    assert_eq!(value["params"]["tellers"], 4);
    // The same run: equal but for serde_json's parsing, which is not always correctly
    // rounded in the last bit (its `float_roundtrip` feature is off).
    for (name, expected) in [
        ("mean_wait", expected.mean_wait),
        ("fraction_reneged", expected.fraction_reneged),
        ("mean_line", expected.mean_line),
        ("utilisation", expected.utilisation),
    ] {
        let got = value[name].as_f64().unwrap();
        assert!(
            (got - expected).abs() <= 1e-14 * expected.abs(),
            "{name}: {got} against {expected}"
        );
    }
}

#[test]
fn every_kernel_commits_the_same_run() {
    let base = ["run", "bank", "--end", "1000", "--branches", "4", "--json"];
    let sequential = json(&base);
    let mut timewarp = base.to_vec();
    timewarp.extend(["--kernel", "timewarp", "--threads", "2"]);
    let timewarp = json(&timewarp);
    assert_eq!(sequential["trace_hash"], timewarp["trace_hash"]);
    assert_eq!(sequential["mean_wait"], timewarp["mean_wait"]);
}

#[test]
fn replications_and_sweeps() {
    let value = json(&[
        "run",
        "bank",
        "--end",
        "1000",
        "--replications",
        "6",
        "--json",
    ]);
    let reneged = &value["metrics"]["fraction_reneged"];
    assert_eq!(reneged["n"], 6);
    assert!(reneged["ci95_low"].as_f64().unwrap() < reneged["ci95_high"].as_f64().unwrap());
    let value = json(&[
        "sweep",
        "bank",
        "--set",
        "tellers=2,5",
        "--end",
        "1000",
        "--replications",
        "3",
        "--json",
    ]);
    let points = value["points"].as_array().unwrap();
    let reneged = |index: usize| {
        points[index]["metrics"]["fraction_reneged"]["mean"]
            .as_f64()
            .unwrap()
    };
    // More tellers, fewer customers give up.
    assert!(reneged(1) < reneged(0), "{value}");
}
