//! Fuzz target: one `warpsim sweep --set KEY=VALUES` specification (`a..b`, `a..b:step`,
//! `a,b,c`). The parser must return quickly with at most 100000 values, or an error with a
//! bounded message.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(spec) = std::str::from_utf8(data) else {
            return;
        };
        match warpsim_cli::fuzzing::sweep_axis(spec) {
            Ok(values) => assert!((1..=100_000).contains(&values), "{values} values"),
            Err(message) => {
                assert!(
                    message.len() < 2000,
                    "unbounded message: {} bytes",
                    message.len()
                )
            }
        }
    });
}
