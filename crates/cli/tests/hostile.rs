//! Issue 17, the CLI's half: hostile input, absurd sizes, closed and full outputs, through the
//! real binary. Every failure must be exactly one line on stderr, exit code 1, nothing on
//! stdout, and no abort; every output file is checked before the run and written atomically.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
}

fn warpsim(args: &[&str]) -> Output {
    bin().args(args).output().expect("warpsim runs")
}

/// `warpsim args` with the address space limited to `kib` KiB (`ulimit -v`): the memory
/// checks then see the same small machine everywhere, and an unchecked allocation would abort.
fn warpsim_limited(kib: u64, args: &[&str]) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_warpsim"))
        .args(args)
        .output()
        .expect("bash runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// One line on stderr containing every needle, exit code 1, nothing on stdout.
fn assert_refused(output: &Output, needles: &[&str]) -> String {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(1), "exit code; stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line on stderr:\n{err}");
    assert!(err.starts_with("error: "), "{err}");
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{err}"
    );
    assert!(
        output.stdout.is_empty(),
        "nothing on stdout, got: {}",
        stdout(output)
    );
    err
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpsim-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

// ---- Finding 4: silent wrong results --------------------------------------------------------

#[test]
fn sweep_counts_that_overflow_are_errors() {
    for range in ["gates=1..1e30", "gates=1..3:1e-300"] {
        let output = warpsim(&["sweep", "pets", "--set", range, "--tasks", "100"]);
        assert_refused(&output, &["--set gates", "values (at most 100000)"]);
    }
}

#[test]
fn sharks_refuses_speeds_its_arithmetic_cannot_resolve() {
    let dir = scratch("speeds");
    let population = dir.join("population.csv");
    let made = warpsim(&[
        "run",
        "sharks",
        "--creatures",
        "200",
        "--radius",
        "300",
        "--dump-population",
        path(&population),
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let mut text = std::fs::read_to_string(&population).unwrap();
    text.push_str("9999,fish,100,100,1e308,0,\n");
    std::fs::write(&population, text).unwrap();
    for extra in [&[][..], &["--verify"][..]] {
        let mut args = vec!["run", "sharks", "--population", path(&population)];
        args.extend(extra);
        assert_refused(
            &warpsim(&args),
            &[
                "line 202: speed 1e308 is too fast to compute exactly",
                "radius 300",
            ],
        );
    }
    assert_refused(
        &warpsim(&["run", "sharks", "--speed-max", "1e12"]),
        &["speed-max: 1e12 is too fast", "at most 5629467"],
    );
    // At the bound's scale, but inside it: accepted (and cut short, to stay cheap).
    let output = warpsim(&[
        "run",
        "sharks",
        "--speed-max",
        "5e6",
        "--creatures",
        "20",
        "--max-events",
        "20000",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
}

// ---- Finding 5: memory and threads ----------------------------------------------------------

#[test]
fn sizes_beyond_the_memory_end_in_one_line_naming_the_flag() {
    let cases: [(&[&str], &str); 6] = [
        (&["run", "phold", "--lps", "1000000000"], "--lps 1000000000"),
        (
            &["run", "phold", "--lps", "64", "--population", "4294967295"],
            "--population 4294967295",
        ),
        (
            &["run", "phold", "--lps", "64", "--replications", "100000000"],
            "--replications 100000000",
        ),
        (
            &["run", "pets", "--gates", "4294967295"],
            "--gates 4294967295",
        ),
        (&["run", "torches", "--n", "4294967295"], "--n 4294967295"),
        (
            &["run", "sharks", "--creatures", "4294967295"],
            "--creatures 4294967295",
        ),
    ];
    for (args, flag) in cases {
        // 4 GiB of address space: the same verdict on any machine.
        let output = warpsim_limited(4 << 20, args);
        assert_refused(
            &output,
            &[flag, "the run needs at least", "of memory is available"],
        );
    }
    // Without the limit too: these need terabytes.
    let output = warpsim(&["run", "phold", "--lps", "64", "--population", "4294967295"]);
    assert_refused(&output, &["--population 4294967295", "TiB"]);
}

#[test]
fn a_huge_sweep_grid_is_refused_before_it_is_built() {
    // Within 1 GiB of address space: building the 10^10-point grid would abort.
    let output = warpsim_limited(
        1 << 20,
        &[
            "sweep",
            "pets",
            "--set",
            "gates=1..99999",
            "--set",
            "tasks=1..99999",
        ],
    );
    assert_refused(
        &output,
        &[
            "--set gates=1..99999 --set tasks=1..99999",
            "9999800001 grid points",
        ],
    );
}

#[test]
fn threads_beyond_what_helps_are_capped_with_one_note() {
    for threads in ["4294967296", "10000"] {
        let output = warpsim(&[
            "run",
            "phold",
            "--lps",
            "64",
            "--end",
            "20",
            "--kernel",
            "timewarp",
            "--threads",
            threads,
            "--json",
        ]);
        assert!(output.status.success(), "{}", stderr(&output));
        let err = stderr(&output);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("note: --threads {threads} capped to ")),
            "{err}"
        );
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let sequential = warpsim(&["run", "phold", "--lps", "64", "--end", "20", "--json"]);
        let expected: serde_json::Value = serde_json::from_slice(&sequential.stdout).unwrap();
        assert_eq!(json["trace_hash"], expected["trace_hash"]);
    }
    // More threads than LPs: one per LP.
    let output = warpsim(&[
        "run",
        "phold",
        "--lps",
        "3",
        "--end",
        "5",
        "--kernel",
        "timewarp",
        "--threads",
        "5",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("capped to 3 (one per LP"),
        "{}",
        stderr(&output)
    );
}

// ---- Finding 6: outputs ---------------------------------------------------------------------

#[test]
fn output_paths_are_checked_before_the_run() {
    // A budget below the starting events fails only when the run starts: the path error
    // coming instead proves the check came first.
    let output = warpsim(&[
        "run",
        "sharks",
        "--kernel",
        "timewarp",
        "--memory",
        "16",
        "--deaths",
        "/nonexistent/d.csv",
    ]);
    assert_refused(&output, &["--deaths /nonexistent/d.csv", "does not exist"]);
    let dir = scratch("checked");
    let output = warpsim(&[
        "run",
        "sharks",
        "--kernel",
        "timewarp",
        "--memory",
        "16",
        "--plot",
        path(&dir),
    ]);
    assert_refused(&output, &["--plot", "is a directory"]);
    let output = warpsim(&[
        "sweep",
        "pets",
        "--set",
        "gates=1..2",
        "--kernel",
        "mpi",
        "--csv",
        "/nonexistent/s.csv",
    ]);
    assert_refused(&output, &["--csv /nonexistent/s.csv", "does not exist"]);
    // Per-run files of the model are not written by sweeps and plans: refused, not ignored.
    let output = warpsim(&[
        "sweep",
        "sharks",
        "--set",
        "end=10..11",
        "--deaths",
        "d.csv",
    ]);
    assert_refused(&output, &["--deaths: a sweep writes no file per run"]);
    let output = warpsim(&["plan", "pets", "--deadline", "100", "--plot", "p.svg"]);
    assert_refused(&output, &["--plot: a plan writes no file per run"]);
    // A scenario file that never ends is refused, not read into memory.
    let output = warpsim(&["run", "phold", "--config", "/dev/zero"]);
    assert_refused(
        &output,
        &["cannot read /dev/zero: the file is larger than 256.0 MiB"],
    );
}

#[test]
fn an_output_over_an_input_is_refused_however_it_is_spelled() {
    let dir = scratch("same");
    let population = dir.join("f.csv");
    let made = warpsim(&[
        "run",
        "sharks",
        "--creatures",
        "50",
        "--dump-population",
        path(&population),
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let original = std::fs::read(&population).unwrap();
    let dotted = dir.join(".").join("f.csv");
    let linked = dir.join("hard.csv");
    std::fs::hard_link(&population, &linked).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&population, dir.join("soft.csv")).unwrap();
    let mut spellings = vec![population.clone(), dotted, linked];
    if cfg!(unix) {
        spellings.push(dir.join("soft.csv"));
    }
    for spelling in &spellings {
        for flag in ["--deaths", "--plot", "--dump-population"] {
            let output = warpsim(&[
                "run",
                "sharks",
                "--population",
                path(&population),
                flag,
                path(spelling),
            ]);
            assert_refused(&output, &[flag, "same file as the input --population"]);
        }
    }
    let config = dir.join("s.toml");
    std::fs::write(&config, "end = 100\n").unwrap();
    let output = warpsim(&[
        "run",
        "sharks",
        "--config",
        path(&config),
        "--deaths",
        path(&config),
    ]);
    assert_refused(&output, &["same file as the input --config"]);
    let output = warpsim(&[
        "run",
        "sharks",
        "--deaths",
        path(&dir.join("x")),
        "--plot",
        path(&dir.join("x")),
    ]);
    assert_refused(&output, &["--plot", "same file as the output --deaths"]);
    assert_eq!(std::fs::read(&population).unwrap(), original);
}

#[test]
fn a_failed_run_writes_no_deaths_and_keeps_the_previous_file() {
    let dir = scratch("failed");
    let deaths = dir.join("deaths.csv");
    let good = warpsim(&[
        "run",
        "sharks",
        "--creatures",
        "300",
        "--radius",
        "300",
        "--end",
        "200",
        "--deaths",
        path(&deaths),
    ]);
    assert!(good.status.success(), "{}", stderr(&good));
    let before = std::fs::read(&deaths).unwrap();
    assert!(before.starts_with(b"fish,shark,time\n") && before.len() > 40);
    let output = warpsim(&[
        "run",
        "sharks",
        "--kernel",
        "timewarp",
        "--memory",
        "16",
        "--deaths",
        path(&deaths),
    ]);
    assert_refused(&output, &["run stopped", "no output file written"]);
    assert_eq!(std::fs::read(&deaths).unwrap(), before);
    // And no temporary file is left behind by either run.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["deaths.csv"]);
}

#[test]
fn partial_results_say_so_in_the_file_and_the_report() {
    let dir = scratch("partial");
    let deaths = dir.join("deaths.csv");
    let plot = dir.join("world.svg");
    let output = warpsim(&[
        "run",
        "sharks",
        "--creatures",
        "300",
        "--radius",
        "300",
        "--max-events",
        "500",
        "--deaths",
        path(&deaths),
        "--plot",
        path(&plot),
        "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("note: sharks: the run stopped at --max-events 500"),
        "{err}"
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["complete"], false);
    assert_eq!(json["stop_reason"], "event_limit");
    let text = std::fs::read_to_string(&deaths).unwrap();
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("# PARTIAL: the run stopped at --max-events 500"),
        "{text}"
    );
    assert_eq!(lines.next(), Some("fish,shark,time"));
    assert!(std::fs::read_to_string(&plot).unwrap().contains("PARTIAL"));
    // A complete run's file has no such line.
    let output = warpsim(&[
        "run",
        "sharks",
        "--creatures",
        "300",
        "--radius",
        "300",
        "--end",
        "200",
        "--deaths",
        path(&deaths),
    ]);
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "{}",
        stderr(&output)
    );
    assert!(
        std::fs::read_to_string(&deaths)
            .unwrap()
            .starts_with("fish,shark,time\n")
    );
    // Pets: the plot's title says it, and so does a sweep's CSV (a column) and stderr.
    let plot = dir.join("pets.svg");
    let output = warpsim(&[
        "run",
        "pets",
        "--tasks",
        "1000",
        "--max-events",
        "100",
        "--plot",
        path(&plot),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--max-events"),
        "{}",
        stderr(&output)
    );
    assert!(std::fs::read_to_string(&plot).unwrap().contains("PARTIAL"));
    let csv = dir.join("sweep.csv");
    let output = warpsim(&[
        "sweep",
        "pets",
        "--set",
        "gates=1..2",
        "--tasks",
        "1000",
        "--max-events",
        "100",
        "--csv",
        path(&csv),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("2 runs stopped at --max-events"),
        "{}",
        stderr(&output)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = header
        .iter()
        .position(|name| *name == "partial_runs")
        .unwrap();
    for row in text.lines().skip(1) {
        assert_eq!(row.split(',').nth(column), Some("1"), "{row}");
    }
}

// ---- Finding 8: messages and streams ---------------------------------------------------------

#[test]
fn a_closed_stdout_ends_quietly() {
    let mut child = bin()
        .args(["run", "phold", "--lps", "256", "--end", "200"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end before the report is written (the run takes a while).
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}: {err}");
    assert_eq!(err, "");
    // `| head -1` as a shell does it.
    let output = Command::new("bash")
        .arg("-c")
        .arg("\"$0\" run phold --lps 256 --end 100 | head -1; exit ${PIPESTATUS[0]}")
        .arg(env!("CARGO_BIN_EXE_warpsim"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{:?}: {}",
        output.status,
        stderr(&output)
    );
    assert_eq!(stderr(&output), "");
    assert!(stdout(&output).starts_with("PHOLD: 256 LPs"));
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_one_line_and_exit_1() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = bin()
        .args(["run", "phold", "--lps", "64", "--end", "10"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert_eq!(
        err.trim_end(),
        "error: cannot write to stdout: No space left on device (os error 28)"
    );
}

#[cfg(unix)]
#[test]
fn a_non_unicode_config_path_is_read_not_ignored() {
    use std::os::unix::ffi::OsStrExt;
    let output = bin()
        .args(["run", "phold", "--lps", "64", "--end", "10"])
        .arg(std::ffi::OsStr::from_bytes(b"--config=\xff.toml"))
        .output()
        .unwrap();
    assert_refused(&output, &["cannot read", ".toml"]);
    let dir = scratch("unicode");
    let file = dir.join(std::ffi::OsStr::from_bytes(b"\xff.toml"));
    std::fs::write(&file, "lps = 0\n").unwrap();
    let output = bin()
        .args(["run", "phold", "--config"])
        .arg(&file)
        .output()
        .unwrap();
    assert_refused(&output, &["lps: must be at least 1"]);
}

#[test]
fn clap_errors_keep_the_names_they_list() {
    let output = warpsim(&["sweep"]);
    assert_refused(
        &output,
        &["the following required arguments were not provided: <MODEL>"],
    );
    let output = warpsim(&["run", "phold", "--lps"]);
    assert_refused(&output, &["--lps <LPS>"]);
}

#[test]
fn negative_numbers_are_values() {
    assert_refused(
        &warpsim(&["run", "phold", "--mean", "-inf"]),
        &["mean: must be a finite number (got -inf)"],
    );
    assert_refused(
        &warpsim(&["run", "phold", "--lookahead", "-NaN"]),
        &["lookahead: must be a finite number"],
    );
    assert_refused(
        &warpsim(&["run", "mmc", "--arrival-rate", "-.5"]),
        &["arrival-rate"],
    );
    assert_refused(
        &warpsim(&["sweep", "phold", "--set", "lps=1..2", "--mean", "-infinity"]),
        &["mean: must be a finite number"],
    );
}

#[test]
fn huge_input_is_not_echoed_whole() {
    let dir = scratch("huge");
    let toml = dir.join("big.toml");
    let value = "9".repeat(100 << 20);
    std::fs::write(&toml, format!("lps = \"{value}\"\n")).unwrap();
    let err = assert_refused(
        &warpsim(&["run", "phold", "--config", path(&toml)]),
        &["line 1", "bytes)"],
    );
    assert!(err.len() < 500, "{} bytes", err.len());
    drop(value);
    let csv = dir.join("big.csv");
    std::fs::write(&csv, format!("{}\n", "h".repeat(100 << 10))).unwrap();
    let err = assert_refused(
        &warpsim(&["run", "sharks", "--population", path(&csv)]),
        &["line 1", "(102400 bytes)"],
    );
    assert!(err.len() < 500, "{} bytes", err.len());
    let err = assert_refused(
        &warpsim(&["run", "phold", "--lps", &"7".repeat(100_000)]),
        &["--lps"],
    );
    assert!(err.len() < 500, "{} bytes", err.len());
}

#[test]
fn toml_errors_are_reported_at_their_line() {
    let dir = scratch("lines");
    let toml = dir.join("table.toml");
    std::fs::write(&toml, "lps = 64\nend = 10\n[extra]\nx = 1\n").unwrap();
    assert_refused(
        &warpsim(&["run", "phold", "--config", path(&toml)]),
        &["line 3: unknown key `extra`"],
    );
    std::fs::write(&toml, "lps = 64\n\n\nend = [1, 2]\n").unwrap();
    assert_refused(
        &warpsim(&["run", "phold", "--config", path(&toml)]),
        &["line 4:", "`end`"],
    );
}

#[test]
fn a_failed_run_prints_nothing_on_stdout() {
    // A memory budget smaller than the events pending at the start stops a Time Warp run
    // before it runs anything, whatever features the binary was built with.
    let refused = ["--kernel", "timewarp", "--memory", "16"];
    for args in [
        &["run", "phold", "--lps", "64"][..],
        &["run", "phold", "--lps", "64", "--json"][..],
        &["run", "pets", "--tasks", "100"][..],
    ] {
        let mut args = args.to_vec();
        args.extend(refused);
        let args = &args[..];
        assert_refused(
            &warpsim(args),
            &["run stopped at time 0 after 0 committed events"],
        );
    }
}

#[test]
fn kernel_warnings_and_budget_refusals_are_one_line() {
    let base = [
        "run", "phold", "--lps", "1024", "--end", "20", "--kernel", "timewarp",
    ];
    let mut args = base.to_vec();
    args.extend(["--memory", "40KB"]);
    assert_refused(
        &warpsim(&args),
        &["--memory", "memory budget of 40000 bytes is too small"],
    );
    let mut args = base.to_vec();
    // Every event through the optimistic path, which the budget is for: safe events keep
    // no record, and with PHOLD's lookahead most events are safe.
    args.extend(["--memory", "200KB", "--no-safe-events"]);
    let output = warpsim(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let err = stderr(&output);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("warning: the memory budget of 200000 bytes cannot be kept"),
        "{err}"
    );
}
