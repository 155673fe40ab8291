//! Sharks World's precision bound (`sharks/precision.rs`): just below it the sector model still
//! gives the brute-force oracle's deaths, on populations built to collide often at the highest
//! speeds the bound allows; just above it, and for the absurd speeds of issue 17 (a fish at
//! `vx = 1e308`), the population is refused with the reason, by the model and the oracle alike.

use rand::{RngExt, SeedableRng};
use warpsim_core::{Kernel, LpRng, RunConfig, Sequential};
use warpsim_models::sharks::{
    CancelStyle, Creature, RandomPopulation, SharksError, SharksParams, Tally, compare_deaths,
    oracle, write_population,
};

/// A large world crossed in few sectors and a small radius: the smallest length is the radius,
/// so the bound is reached with few crossings (cheap runs) and many torus images (the oracle's
/// hard case).
fn params() -> SharksParams {
    SharksParams {
        width: 1e6,
        height: 1e6,
        sectors_x: 2,
        sectors_y: 2,
        end: 1.0,
        ..SharksParams::default()
    }
}

const RADIUS: f64 = 1.0;

/// `n` creatures in a band 4 units high, streaming along x in both directions at `fraction` of
/// the bound's speed (each a little different), so that they pass each other thousands of
/// times on the torus and contacts are common. Half are sharks.
fn band(params: &SharksParams, n: u32, fraction: f64, seed: u64) -> Vec<Creature> {
    let top = params.max_speed(RADIUS) * fraction;
    let mut rng = LpRng::seed_from_u64(seed);
    (0..n)
        .map(|id| {
            let x = rng.random::<f64>() * params.width;
            let y = 500.0 + rng.random::<f64>() * 4.0;
            let speed = top * rng.random_range(0.9..=1.0);
            let vx = if rng.random::<bool>() { speed } else { -speed };
            let vy = rng.random_range(-1.0..1.0);
            if id % 2 == 0 {
                Creature::shark(id, x, y, vx, vy, RADIUS)
            } else {
                Creature::fish(id, x, y, vx, vy)
            }
        })
        .collect()
}

fn model_deaths(
    params: &SharksParams,
    creatures: &[Creature],
) -> Vec<warpsim_models::sharks::Death> {
    let mut tally = Tally::default();
    Sequential::new(RunConfig::new(1).end_time(params.kernel_end_time()))
        .run(params.build(creatures).unwrap(), &mut tally)
        .unwrap();
    assert_eq!(tally.settled, params.sectors());
    tally.sorted_deaths()
}

#[test]
fn just_below_the_bound_the_model_matches_the_oracle() {
    let params = params();
    let limit = params.max_speed(RADIUS);
    assert!(limit > 2e9 && limit < 2.5e9, "{limit}");
    let n = if cfg!(debug_assertions) { 16 } else { 40 };
    let mut deaths = 0;
    for seed in 1..=3 {
        let creatures = band(&params, n, 0.999, seed);
        let expected = oracle(&params, &creatures).unwrap();
        for cancel in [CancelStyle::App, CancelStyle::Kernel] {
            let params = SharksParams {
                cancel,
                ..params.clone()
            };
            let got = model_deaths(&params, &creatures);
            let mismatches = compare_deaths(&params, &creatures, &got, &expected);
            assert!(
                mismatches.is_empty(),
                "seed {seed}, {cancel:?}: {} mismatches, first {}\n{}",
                mismatches.len(),
                mismatches[0],
                write_population(&creatures)
            );
        }
        deaths += expected.len();
    }
    // The populations do collide: the comparison is not between two empty lists.
    assert!(deaths >= n as usize / 2, "{deaths} deaths");
}

#[test]
fn just_above_the_bound_the_population_is_refused_with_the_reason() {
    let params = params();
    let creatures = band(&params, 10, 1.01 / 0.9, 4);
    // The sectors (500000 wide) are still resolved; the radius is not: it is blamed, with
    // the speed that would do.
    let check = |result: Result<(), SharksError>| {
        let message = result.unwrap_err().to_string();
        assert!(message.contains(": radius 1 is below 1.1"), "{message}");
        assert!(message.contains("or speeds up to 2.251e9"), "{message}");
    };
    check(params.check_population(&creatures));
    check(params.build(&creatures).map(drop));
    check(oracle(&params, &creatures).map(drop));
    let text = write_population(&creatures);
    let error = params.read_population(&text).unwrap_err().to_string();
    assert!(error.starts_with("line "), "{error}");
}

#[test]
fn a_fish_at_vx_1e308_is_refused_not_miscounted() {
    // Issue 17: this fish made a normal fish survive that the oracle said was eaten.
    let params = SharksParams::default();
    let mut creatures = RandomPopulation {
        creatures: 200,
        radius_min: 300.0,
        radius_max: 300.0,
        ..RandomPopulation::default()
    }
    .generate(&params, 7)
    .unwrap();
    oracle(&params, &creatures).unwrap();
    creatures.push(Creature::fish(9999, 100.0, 100.0, 1e308, 0.0));
    let error = params.build(&creatures).unwrap_err().to_string();
    assert!(
        error.starts_with("creature 9999: speed 1e308 is too fast"),
        "{error}"
    );
    assert!(oracle(&params, &creatures).is_err());
    let text = write_population(&creatures);
    let error = params.read_population(&text).unwrap_err().to_string();
    assert!(error.starts_with("line 202: speed 1e308"), "{error}");
}

#[test]
fn random_populations_are_bounded_by_their_largest_speed_and_smallest_radius() {
    let params = SharksParams::default();
    let fast = RandomPopulation {
        speed_max: 1e12,
        ..RandomPopulation::default()
    };
    let error = fast.validate(&params).unwrap_err();
    assert_eq!(error.param, "speed-max");
    assert!(error.message.contains("at most 5629467"), "{error}");
    let tiny = RandomPopulation {
        radius_min: 1e-9,
        radius_max: 1e-9,
        ..RandomPopulation::default()
    };
    assert_eq!(tiny.validate(&params).unwrap_err().param, "radius");
    let open = RandomPopulation {
        radius_min: 0.0,
        ..RandomPopulation::default()
    };
    assert_eq!(open.validate(&params).unwrap_err().param, "radius-min");
    let sharks_without_teeth = RandomPopulation {
        radius_min: 0.0,
        radius_max: 0.0,
        ..RandomPopulation::default()
    };
    sharks_without_teeth.validate(&params).unwrap();
    // The paper's speeds are three orders of magnitude below the bound.
    RandomPopulation::default().validate(&params).unwrap();
}
