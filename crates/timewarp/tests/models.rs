//! The project's models on Time Warp: pets (events style) and Sharks World (both withdrawal
//! styles) must commit the same events and outputs as on the sequential kernel, on 1–4
//! threads, in both cancellation modes, with and without periodic state saving, and under a
//! tiny window and memory budget (see `common::kernels`).

mod common;

use common::check_equivalent;
use warpsim_models::pets::{PetsParams, Style};
use warpsim_models::sharks::{CancelStyle, RandomPopulation, SharksParams};

fn seeds() -> u64 {
    if cfg!(debug_assertions) { 2 } else { 12 }
}

#[test]
fn pets_events_style_matches_the_sequential_kernel() {
    for seed in 0..seeds() {
        let params = PetsParams {
            tasks: 400,
            gates: 4,
            style: Style::Events,
            ..PetsParams::default()
        };
        check_equivalent("pets", seed, f64::INFINITY, 1 << 20, || {
            params.build().unwrap()
        });
    }
}

#[test]
fn sharks_world_matches_the_sequential_kernel_in_both_cancel_styles() {
    let mut rollbacks = 0;
    for seed in 0..seeds() {
        for (sectors_x, sectors_y) in [(4, 4), (2, 3)] {
            for cancel in [CancelStyle::App, CancelStyle::Kernel] {
                let params = SharksParams {
                    width: 4096.0,
                    height: 4096.0,
                    sectors_x,
                    sectors_y,
                    end: 60.0,
                    cancel,
                    ..SharksParams::default()
                };
                let population = RandomPopulation {
                    creatures: 96,
                    radius_min: 40.0,
                    radius_max: 120.0,
                    ..RandomPopulation::default()
                };
                let creatures = population.generate(&params, seed).unwrap();
                let (r, _) =
                    check_equivalent("sharks", seed, params.kernel_end_time(), 1 << 22, || {
                        params.build(&creatures).unwrap()
                    });
                rollbacks += r;
            }
        }
    }
    assert!(rollbacks > 0, "the runs were optimistic for real");
}

#[test]
fn adaptive_state_saves_thin_out_when_saves_are_dear_and_nothing_rolls_back() {
    // A sector's save copies its creature lists; on one thread nothing rolls back, so the
    // adaptive interval should grow towards its maximum, where a fixed interval of 1 saves
    // before every event.
    let params = SharksParams {
        sectors_x: 4,
        sectors_y: 4,
        end: 5000.0,
        ..SharksParams::default()
    };
    let population = RandomPopulation {
        creatures: 512,
        ..RandomPopulation::default()
    };
    let creatures = population.generate(&params, 3).unwrap();
    let config = warpsim_core::RunConfig::new(3).end_time(params.kernel_end_time());
    // Safe events (which save nothing) off: this is about the optimistic path's saves.
    let adaptive = warpsim_timewarp::TimeWarp::new(config)
        .gvt_interval(256)
        .safe_events(false);
    let fixed = adaptive.clone().checkpoint_interval(1);
    let (result, _, stats) = common::timewarp(&adaptive, params.build(&creatures).unwrap());
    let (fixed_result, _, fixed_stats) =
        common::timewarp(&fixed, params.build(&creatures).unwrap());
    assert_eq!(result.unwrap().trace_hash, fixed_result.unwrap().trace_hash);
    assert!(stats.checkpoint_auto && !fixed_stats.checkpoint_auto);
    assert_eq!(fixed_stats.saves, fixed_stats.processed);
    assert!(
        stats.processed > 20_000 && stats.saves * 5 < stats.processed,
        "{stats}"
    );
}
