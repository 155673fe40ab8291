//! Fuzz target: a TOML scenario file (`--config`), for one of the models named by the first
//! byte. The parser must return (an error for bad input) with a bounded message.

fn main() {
    const MODELS: [&str; 6] = ["phold", "pets", "mmc", "sharks", "torches", "warlock"];
    afl::fuzz!(|data: &[u8]| {
        let Some((&first, rest)) = data.split_first() else {
            return;
        };
        let Ok(text) = std::str::from_utf8(rest) else {
            return;
        };
        let model = MODELS[usize::from(first) % MODELS.len()];
        if let Err(message) = warpsim_cli::fuzzing::config_text(text, model) {
            assert!(
                message.len() < 2000,
                "unbounded message: {} bytes",
                message.len()
            );
        }
    });
}
