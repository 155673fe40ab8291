//! Sharks World against its brute-force oracle: the sector model must give the same deaths
//! (same shark, same time within 1e-6) for random populations, every sector grid, radii larger
//! than a sector, creatures on sector boundaries and corners, and both cancel styles — and the
//! two cancel styles must give identical deaths.

use rand::{RngExt, SeedableRng};
use warpsim_core::{Kernel, LpRng, QueueKind, Report, RunConfig, Sequential};
use warpsim_models::sharks::{
    CancelStyle, Creature, Death, RandomPopulation, SharksError, SharksParams, Tally,
    compare_deaths, oracle, write_population,
};

/// Smaller populations in debug builds, where the model runs ~30× slower.
fn scaled(n: u32) -> u32 {
    if cfg!(debug_assertions) { n / 4 } else { n }
}

fn run(
    params: &SharksParams,
    creatures: &[Creature],
    queue: QueueKind,
) -> (Vec<Death>, Tally, Report) {
    let lps = params.build(creatures).unwrap();
    let mut tally = Tally::default();
    let report = Sequential::new(RunConfig::new(1).end_time(params.kernel_end_time()))
        .queue(queue)
        .run(lps, &mut tally)
        .unwrap();
    (tally.sorted_deaths(), tally, report)
}

/// Runs both cancel styles, checks each against the oracle and against each other, and returns
/// the number of deaths.
fn check(label: &str, params: &SharksParams, creatures: &[Creature]) -> usize {
    let expected = oracle(params, creatures).unwrap();
    let mut by_style = Vec::new();
    for cancel in [CancelStyle::App, CancelStyle::Kernel] {
        let params = SharksParams {
            cancel,
            ..params.clone()
        };
        let (deaths, tally, report) = run(&params, creatures, QueueKind::Ladder);
        let mismatches = compare_deaths(&params, creatures, &deaths, &expected);
        if !mismatches.is_empty() {
            let file = std::env::temp_dir().join(format!("sharks-mismatch-{label}.csv"));
            std::fs::write(&file, write_population(creatures)).unwrap();
            panic!(
                "{label} ({cancel:?}, {}x{}): {} of {} fish disagree with the oracle, first: {}\n\
                 population written to {}",
                params.sectors_x,
                params.sectors_y,
                mismatches.len(),
                creatures.len(),
                mismatches[0],
                file.display()
            );
        }
        assert_eq!(
            tally.settled,
            params.sectors(),
            "{label}: every sector settles"
        );
        assert_eq!(tally.stats.events(), report.events_committed, "{label}");
        assert_eq!(tally.stats.deaths as usize, deaths.len(), "{label}");
        assert_eq!(tally.stats.failed_withdrawals, 0, "{label}");
        match cancel {
            CancelStyle::App => {
                assert_eq!(tally.stats.withdraw_messages, tally.stats.withdrawals);
                assert_eq!(tally.stats.ignored_arrivals, tally.stats.withdrawals);
            }
            CancelStyle::Kernel => assert_eq!(tally.stats.withdraw_messages, 0),
        }
        by_style.push(deaths);
    }
    assert_eq!(by_style[0], by_style[1], "{label}: cancel styles differ");
    expected.len()
}

fn world(width: f64, height: f64, nx: u32, ny: u32, end: f64) -> SharksParams {
    SharksParams {
        width,
        height,
        sectors_x: nx,
        sectors_y: ny,
        end,
        ..SharksParams::default()
    }
}

#[test]
fn random_populations_match_the_oracle_on_every_grid() {
    let population = RandomPopulation {
        creatures: scaled(600),
        radius_min: 20.0,
        radius_max: 120.0,
        ..RandomPopulation::default()
    };
    for (seed, (nx, ny)) in [
        (1, (1, 1)),
        (2, (2, 3)),
        (3, (8, 8)),
        (4, (16, 16)),
        (5, (5, 7)),
    ] {
        let params = world(65536.0, 65536.0, nx, ny, 2000.0);
        let creatures = population.generate(&params, seed).unwrap();
        let deaths = check(&format!("random-{nx}x{ny}"), &params, &creatures);
        let fish = creatures.len() - creatures.len() / 2;
        assert!(
            deaths > fish / 5 && deaths < fish,
            "{deaths} of {fish} eaten"
        );
    }
}

#[test]
fn radii_larger_than_a_sector_match_the_oracle() {
    // Sectors 125 × 100; radii up to 3 sectors; a few creatures so that fish live a while.
    let population = RandomPopulation {
        creatures: scaled(160),
        shark_fraction: 0.25,
        speed_min: 5.0,
        speed_max: 40.0,
        radius_min: 10.0,
        radius_max: 300.0,
    };
    for (seed, (nx, ny)) in [(11, (8, 6)), (12, (1, 1)), (13, (16, 16)), (14, (2, 3))] {
        let params = world(1000.0, 600.0, nx, ny, 60.0);
        let creatures = population.generate(&params, seed).unwrap();
        check(&format!("big-radius-{nx}x{ny}"), &params, &creatures);
    }
}

/// Creatures on grid lines and corners, moving along lines, diagonally through corners, or
/// not at all, at speeds that make them cross lines at the same instants: many simultaneous
/// events and knife-edge contacts.
fn boundary_population(seed: u64, n: u32, params: &SharksParams) -> Vec<Creature> {
    let mut rng = LpRng::seed_from_u64(seed);
    let sw = params.width / f64::from(params.sectors_x);
    let sh = params.height / f64::from(params.sectors_y);
    (0..n)
        .map(|id| {
            let snap = |rng: &mut LpRng, cell: f64, cells: u32| {
                let line = f64::from(rng.random_range(0..cells));
                match rng.random_range(0..4) {
                    0 | 1 => line * cell,
                    2 => (line + 0.5) * cell,
                    _ => rng.random::<f64>() * cells as f64 * cell,
                }
            };
            let x = snap(&mut rng, sw, params.sectors_x);
            let y = snap(&mut rng, sh, params.sectors_y);
            let speed = [0.0, 10.0, 20.0, 25.0][rng.random_range(0..4)];
            let (vx, vy) = match rng.random_range(0..5) {
                0 => (speed, 0.0),
                1 => (0.0, -speed),
                2 => (speed, speed),
                3 => (-speed, speed),
                _ => (rng.random_range(-30.0..30.0), rng.random_range(-30.0..30.0)),
            };
            if rng.random_range(0..3) == 0 {
                let radius = [0.0, 25.0, 50.0, 100.0, 250.0][rng.random_range(0..5)];
                Creature::shark(id, x, y, vx, vy, radius)
            } else {
                Creature::fish(id, x, y, vx, vy)
            }
        })
        .collect()
}

#[test]
fn creatures_on_boundaries_and_corners_match_the_oracle() {
    for (seed, (nx, ny)) in [
        (21, (8, 8)),
        (22, (2, 3)),
        (23, (1, 1)),
        (24, (16, 16)),
        (25, (4, 2)),
    ] {
        let params = world(800.0, 800.0, nx, ny, 40.0);
        let creatures = boundary_population(seed, scaled(240), &params);
        check(&format!("boundary-{nx}x{ny}"), &params, &creatures);
    }
}

#[test]
fn fish_inside_a_radius_at_time_zero_die_at_zero() {
    let params = world(1000.0, 1000.0, 4, 4, 10.0);
    let creatures = [
        Creature::shark(0, 250.0, 250.0, 5.0, 0.0, 30.0),
        Creature::fish(1, 260.0, 240.0, -3.0, 7.0), // inside
        Creature::fish(2, 250.0, 280.0, 0.0, 0.0),  // exactly on the radius
        Creature::fish(3, 990.0, 500.0, 0.0, 0.0),  // far away and still
        Creature::shark(4, 990.0, 990.0, 0.0, 0.0, 40.0),
        Creature::fish(5, 10.0, 10.0, 0.0, 0.0), // across the torus corner from shark 4
    ];
    let (deaths, _, _) = run(&params, &creatures, QueueKind::Heap);
    assert_eq!(
        deaths,
        [
            Death {
                fish: 1,
                shark: 0,
                time: 0.0
            },
            Death {
                fish: 2,
                shark: 0,
                time: 0.0
            },
            Death {
                fish: 5,
                shark: 4,
                time: 0.0
            },
        ]
    );
    check("time-zero", &params, &creatures);
}

#[test]
fn a_later_shark_takes_a_dead_fish_and_its_departure_is_withdrawn() {
    // The fish crosses from sector 0 to sector 1 at t = 5, where shark 9 would eat it at t = 8;
    // so sector 0 sends its arrival at t = 0. But shark 3, starting in sector 1, reaches into
    // sector 0 at t = 3 and meets the fish at t ≈ 3.86: the arrival must be withdrawn.
    let params = world(100.0, 100.0, 2, 1, 20.0);
    let creatures = [
        Creature::fish(1, 30.0, 50.0, 4.0, 0.0),
        Creature::shark(9, 65.0, 50.0, 0.0, 0.0, 3.0),
        Creature::shark(3, 70.0, 10.0, -6.0, 10.0, 2.0),
    ];
    let expected = 4.0 - 2.0 / 200f64.sqrt(); // they meet at t = 4, closing at |(-10, 10)|
    for cancel in [CancelStyle::App, CancelStyle::Kernel] {
        let params = SharksParams {
            cancel,
            ..params.clone()
        };
        let (deaths, tally, _) = run(&params, &creatures, QueueKind::Ladder);
        assert_eq!(deaths.len(), 1);
        assert_eq!((deaths[0].fish, deaths[0].shark), (1, 3));
        assert!(
            (deaths[0].time - expected).abs() < 1e-9,
            "{}",
            deaths[0].time
        );
        assert!(
            tally.stats.withdrawals >= 1,
            "{cancel:?}: {:?}",
            tally.stats
        );
    }
    check("withdrawal", &params, &creatures);
}

#[test]
fn runs_are_deterministic_and_independent_of_the_queue() {
    let params = world(65536.0, 65536.0, 8, 8, 2000.0);
    let population = RandomPopulation {
        creatures: scaled(400),
        radius_min: 50.0,
        radius_max: 150.0,
        ..RandomPopulation::default()
    };
    let creatures = population.generate(&params, 99).unwrap();
    let (deaths_a, tally_a, report_a) = run(&params, &creatures, QueueKind::Ladder);
    let (deaths_b, tally_b, report_b) = run(&params, &creatures, QueueKind::Heap);
    assert_eq!(report_a.trace_hash, report_b.trace_hash);
    assert_eq!(deaths_a, deaths_b);
    assert_eq!(tally_a.deaths, tally_b.deaths, "outputs in the same order");
    assert_eq!(tally_a.stats, tally_b.stats);
    // A shuffled population file is the same world.
    let mut shuffled = creatures.clone();
    shuffled.reverse();
    let (deaths_c, _, _) = run(&params, &shuffled, QueueKind::Ladder);
    assert_eq!(deaths_a, deaths_c);
}

#[test]
fn the_critical_path_bounds_the_parallelism_by_the_sector_count() {
    let params = world(65536.0, 65536.0, 8, 8, 2000.0);
    let creatures = RandomPopulation {
        creatures: scaled(512),
        ..RandomPopulation::default()
    }
    .generate(&params, 3)
    .unwrap();
    let config = RunConfig::new(1)
        .end_time(params.kernel_end_time())
        .critical_path(warpsim_core::CostModel::Unit);
    let report = Sequential::new(config)
        .run(params.build(&creatures).unwrap(), &mut Tally::default())
        .unwrap();
    let cp = report.critical_path.unwrap();
    assert_eq!(cp.total_cost, report.events_committed as f64);
    assert!(cp.parallelism > 1.0 && cp.parallelism <= 64.0, "{cp:?}");
}

#[test]
fn bad_populations_name_the_line() {
    let params = world(100.0, 100.0, 2, 2, 10.0);
    let header = "id,kind,x,y,vx,vy,radius\n";
    let cases = [
        ("", "line 1: empty population file"),
        ("id,kind,x,y\n", "line 1: expected the header"),
        ("1,fish,1,2,3\n", "line 2: expected 7 fields"),
        (
            "1,fish,1,2,3,4,\n2,whale,1,2,3,4,5\n",
            "line 3: kind `whale`",
        ),
        (
            "1,shark,1,2,3,4,-1\n",
            "line 2: radius `-1` must not be negative",
        ),
        (
            "1,shark,1,2,NaN,4,1\n",
            "line 2: vx `NaN` is not a finite number",
        ),
        (
            "1,fish,1,2,inf,4,\n",
            "line 2: vx `inf` is not a finite number",
        ),
        ("1,fish,1,2,x,4,\n", "line 2: vx `x` is not a number"),
        ("-1,fish,1,2,3,4,\n", "line 2: id `-1`"),
        (
            "\n1,fish,1,2,3,4,\n# note\n1,shark,5,5,0,0,1\n",
            "line 5: duplicate id 1 (first on line 3)",
        ),
        (
            "1,fish,100,2,3,4,\n",
            "line 2: fish 1 at (100, 2) is outside the world",
        ),
        (
            "1,fish,1,-0.5,3,4,\n",
            "line 2: fish 1 at (1, -0.5) is outside the world",
        ),
        (
            "1,shark,1,2,3,4,1e9\n",
            "line 2: radius `1e9` is larger than the world",
        ),
    ];
    for (body, expected) in cases {
        let text = if body.starts_with("id,") || body.is_empty() {
            body.to_string()
        } else {
            format!("{header}{body}")
        };
        let error = params.read_population(&text).unwrap_err();
        assert!(matches!(error, SharksError::Line { .. }));
        let message = error.to_string();
        assert!(
            message.starts_with(expected),
            "{message:?} should start with {expected:?}"
        );
        assert!(!message.contains('\n'));
    }
    // Fish radius is ignored, kinds are case-insensitive, whitespace is trimmed.
    let creatures = params
        .read_population(&format!("{header} 7 , Fish ,1,2,3,4,\n8,SHARK,0,0,0,0,0\n"))
        .unwrap();
    assert_eq!(creatures.len(), 2);
}

#[test]
fn bad_parameters_are_refused() {
    let mut params = world(100.0, 100.0, 0, 3, 10.0);
    assert_eq!(
        params.validate().unwrap_err().to_string(),
        "sectors: must be at least 1x1 (got 0x3)"
    );
    params.sectors_x = 2;
    params.end = f64::NAN;
    assert!(params.build(&[]).is_err());
    params.end = 10.0;
    params.width = -1.0;
    assert!(params.validate().is_err());
    let params = world(100.0, 100.0, 2, 2, 10.0);
    let bad = RandomPopulation {
        speed_min: 10.0,
        speed_max: 5.0,
        ..RandomPopulation::default()
    };
    assert_eq!(bad.generate(&params, 1).unwrap_err().param, "speed-max");
    let shark = Creature::shark(0, 5.0, 5.0, 1.0, 1.0, f64::INFINITY);
    assert!(matches!(
        params.build(&[shark]),
        Err(SharksError::Creature { id: 0, .. })
    ));
}
