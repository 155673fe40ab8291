//! The parsers of untrusted input over arbitrary input (the property-test counterpart of the
//! AFL++ harnesses in `fuzz/`, run with every test run): each returns, an error for bad
//! input, with a one-line message of bounded length, and never panics.

use proptest::prelude::*;
use warpsim_cli::fuzzing;
use warpsim_models::sharks::SharksParams;

const MODELS: [&str; 6] = ["phold", "pets", "mmc", "sharks", "torches", "warlock"];

fn bounded(message: &str) {
    // The message itself, not only the printed line, is bounded: no input is echoed whole.
    let start: String = message.chars().take(200).collect();
    assert!(message.len() < 2000, "{} bytes: {start}", message.len());
    let line = fuzzing::error_line(message);
    assert!(!line.contains('\n'), "{line}");
    assert!(
        line.chars().count() <= 1100,
        "{} characters",
        line.chars().count()
    );
}

/// Text built from the pieces the parsers care about, so that the cases get past the first
/// check: keys, numbers (huge, tiny, signed, special), separators and noise.
fn pieces() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("lps".to_string()),
        Just("gates".to_string()),
        Just("=".to_string()),
        Just("..".to_string()),
        Just(":".to_string()),
        Just(",".to_string()),
        Just("\n".to_string()),
        Just("\"".to_string()),
        Just("[t]".to_string()),
        Just("-inf".to_string()),
        Just("1e308".to_string()),
        Just("1e-300".to_string()),
        Just("fish".to_string()),
        Just("shark".to_string()),
        Just("id,kind,x,y,vx,vy,radius\n".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|x| x.to_string()),
        "[ -~]{0,12}",
        "9{100,3000}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 64 } else { 512 }))]

    #[test]
    fn sweep_axes_return_bounded(spec in pieces()) {
        match fuzzing::sweep_axis(&spec) {
            Ok(values) => prop_assert!((1..=100_000).contains(&values)),
            Err(message) => bounded(&message),
        }
    }

    #[test]
    fn toml_scenarios_return_bounded(text in pieces(), model in 0usize..6) {
        if let Err(message) = fuzzing::config_text(&text, MODELS[model]) {
            bounded(&message);
        }
    }

    #[test]
    fn command_lines_return_bounded(args in prop::collection::vec(pieces(), 0..8), model in 0usize..6) {
        let mut argv = vec!["run".to_string(), MODELS[model].to_string()];
        argv.extend(args.into_iter().map(|arg| format!("--{arg}")));
        if let Err(message) = fuzzing::arguments(&argv) {
            bounded(&message);
        }
    }

    #[test]
    fn populations_return_bounded(text in pieces()) {
        let params = SharksParams { width: 1000.0, height: 800.0, sectors_x: 4, sectors_y: 3, end: 50.0, ..SharksParams::default() };
        match params.read_population(&text) {
            Ok(creatures) => { params.build(&creatures).unwrap(); }
            Err(error) => bounded(&error.to_string()),
        }
    }
}
