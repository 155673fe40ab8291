//! Fuzz target: a Sharks World population CSV (`--population`), read against a small world
//! (so that positions, radii and the precision bound are all reachable). The reader must
//! return (an error for bad input) with a bounded message, and what it accepts must build.

use warpsim_models::sharks::SharksParams;

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let params = SharksParams {
            width: 1000.0,
            height: 800.0,
            sectors_x: 4,
            sectors_y: 3,
            end: 50.0,
            ..SharksParams::default()
        };
        match params.read_population(text) {
            Ok(creatures) => {
                params
                    .build(&creatures)
                    .expect("an accepted population builds");
            }
            Err(error) => {
                let message = error.to_string();
                assert!(
                    message.len() < 2000,
                    "unbounded message: {} bytes",
                    message.len()
                );
            }
        }
    });
}
