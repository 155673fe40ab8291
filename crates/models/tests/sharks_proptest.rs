//! Property test: for arbitrary small worlds — any grid, creatures on a coarse lattice so that
//! boundaries, corners, simultaneous crossings and exact ties are common — the sector model
//! gives the oracle's deaths, and both cancel styles give the same deaths.

use proptest::prelude::*;
use warpsim_core::{Kernel, RunConfig, Sequential};
use warpsim_models::sharks::{
    CancelStyle, Creature, Death, SharksParams, Tally, compare_deaths, oracle,
};

/// A creature as lattice steps: position in eighths of a sector, velocity in sixteenths of a
/// sector per time unit, radius in quarters of a sector.
type Raw = (bool, u32, u32, i32, i32, u32);

fn deaths(params: &SharksParams, creatures: &[Creature]) -> Vec<Death> {
    let mut tally = Tally::default();
    Sequential::new(RunConfig::new(1).end_time(params.kernel_end_time()))
        .run(params.build(creatures).unwrap(), &mut tally)
        .unwrap();
    assert_eq!(tally.stats.failed_withdrawals, 0);
    tally.sorted_deaths()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 48 } else { 256 }))]

    #[test]
    fn sector_model_equals_oracle(
        nx in 1u32..6,
        ny in 1u32..6,
        end in 1u32..40,
        raw in prop::collection::vec(
            (any::<bool>(), 0u32..48, 0u32..48, -8i32..=8, -8i32..=8, 0u32..10),
            1..40,
        ),
    ) {
        let params = SharksParams {
            width: 600.0,
            height: 480.0,
            sectors_x: nx,
            sectors_y: ny,
            end: f64::from(end),
            ..SharksParams::default()
        };
        let (sw, sh) = (600.0 / f64::from(nx), 480.0 / f64::from(ny));
        let creatures: Vec<Creature> = raw
            .iter()
            .enumerate()
            .map(|(id, &(shark, x, y, vx, vy, r)): (usize, &Raw)| {
                let x = (f64::from(x) * sw / 8.0) % 600.0;
                let y = (f64::from(y) * sh / 8.0) % 480.0;
                let (vx, vy) = (f64::from(vx) * sw / 16.0, f64::from(vy) * sh / 16.0);
                if shark {
                    Creature::shark(id as u32, x, y, vx, vy, (f64::from(r) * sw / 4.0).min(500.0))
                } else {
                    Creature::fish(id as u32, x, y, vx, vy)
                }
            })
            .collect();
        let expected = oracle(&params, &creatures).unwrap();
        let app = deaths(&params, &creatures);
        let mismatches = compare_deaths(&params, &creatures, &app, &expected);
        prop_assert!(mismatches.is_empty(), "{:?}", mismatches.first());
        let kernel = deaths(&SharksParams { cancel: CancelStyle::Kernel, ..params.clone() }, &creatures);
        prop_assert_eq!(app, kernel);
    }
}
