//! Budgeted advances (`advance_within`) against the unbudgeted manager as the oracle: over
//! seeded random timers (one-shot and repeating) and random budgets, a budgeted game loop
//! fires exactly the same callbacks, with the same scheduled times, in the same order; it
//! never fires more than its budget per frame; and what it reports as late is exactly what
//! was due before its frame began.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use warpsim_timers::{Budget, TimerCtx, Timers};

/// `(timer tag, scheduled time, frame index)` per firing.
type Log = Vec<(u64, f64, u64)>;

struct World {
    log: Log,
    frame: u64,
}

fn record(world: &mut World, ctx: &mut TimerCtx<'_, World>) {
    let frame = world.frame;
    world.log.push((ctx.payload(), ctx.scheduled(), frame));
}

fn build(seed: u64) -> Timers<World> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut timers = Timers::new();
    for tag in 0..rng.random_range(1..400u64) {
        let delay = rng.random_range(0.0..3.0);
        let mut builder = timers.timer(delay).payload(tag);
        if rng.random_range(0..5) == 0 {
            builder = builder.repeat(rng.random_range(0.05..1.0));
        }
        builder.build(record).unwrap();
    }
    timers
}

#[test]
fn a_budget_delays_callbacks_but_never_reorders_or_loses_them() {
    let dt = 1.0 / 60.0;
    let frames = 360; // 6 s of game time
    for seed in 0..if cfg!(debug_assertions) { 20 } else { 200 } {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1000 + seed);
        let max_callbacks = rng.random_range(1..12usize);

        let mut oracle = build(seed);
        let mut expected = World {
            log: Vec::new(),
            frame: 0,
        };
        for frame in 0..frames {
            expected.frame = frame;
            oracle.advance(dt, &mut expected).unwrap();
        }

        let mut timers = build(seed);
        let mut world = World {
            log: Vec::new(),
            frame: 0,
        };
        let mut frame = 0;
        // Run until the budgeted loop has caught up with everything the oracle fired.
        while world.log.len() < expected.log.len() {
            assert!(
                frame < 100 * frames,
                "seed {seed}: the backlog never clears"
            );
            world.frame = frame;
            let frame_start = timers.now();
            let before = world.log.len();
            let report = timers
                .advance_within(dt, &mut world, Budget::callbacks(max_callbacks))
                .unwrap();
            let fired = &world.log[before..];
            assert_eq!(report.fired, fired.len());
            assert!(report.fired <= max_callbacks);
            let late: Vec<f64> = fired
                .iter()
                .filter(|&&(_, scheduled, _)| scheduled < frame_start)
                .map(|&(_, scheduled, _)| frame_start - scheduled)
                .collect();
            assert_eq!(report.late, late.len(), "seed {seed} frame {frame}");
            let max_lateness = late.iter().copied().fold(0.0, f64::max);
            assert_eq!(report.max_lateness, max_lateness);
            frame += 1;
        }
        let n = expected.log.len();
        let same: Vec<(u64, f64)> = world.log[..n].iter().map(|&(t, s, _)| (t, s)).collect();
        let oracle_order: Vec<(u64, f64)> = expected.log.iter().map(|&(t, s, _)| (t, s)).collect();
        assert_eq!(same, oracle_order, "seed {seed}");
        // Never early: a callback fires in the frame it is due in, or later.
        for (got, want) in world.log[..n].iter().zip(&expected.log) {
            assert!(got.2 >= want.2, "seed {seed}: fired before its frame");
        }
    }
}

#[test]
fn an_unlimited_budget_is_a_plain_advance() {
    let dt = 1.0 / 30.0;
    let mut plain = build(7);
    let mut budgeted = build(7);
    let mut a = World {
        log: Vec::new(),
        frame: 0,
    };
    let mut b = World {
        log: Vec::new(),
        frame: 0,
    };
    for frame in 0..120 {
        a.frame = frame;
        b.frame = frame;
        let n = plain.advance(dt, &mut a).unwrap();
        let report = budgeted
            .advance_within(dt, &mut b, Budget::unlimited())
            .unwrap();
        assert_eq!(report.fired, n);
        assert_eq!(report.late, 0);
        assert!(!report.carried_over);
    }
    assert_eq!(a.log, b.log);
}
