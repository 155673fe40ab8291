//! Meters and milestones: the seed's Figure 1, closed-form times on every curve kind, and a
//! seeded oracle check that every milestone fires once per crossing — never twice, never
//! missed — while the value is spent and set at random times.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use warpsim_timers::{
    Curve, Exponential, FnCurve, Linear, Logarithmic, Meter, MilestoneId, TimerError, Timers,
};

/// `(level, scheduled time, value inside the callback)` per milestone firing.
type Log = Vec<(f64, f64, f64)>;

/// Adds milestones at `levels` that log their firing and check the value promise.
fn add_levels(timers: &mut Timers<Log>, meter: warpsim_timers::MeterId, levels: &[f64]) {
    for &level in levels {
        timers
            .add_milestone(meter, level, move |log: &mut Log, ctx| {
                let value = ctx.meter_value(meter).unwrap();
                assert!(
                    value >= level,
                    "value {value} below level {level} in its callback"
                );
                assert!(ctx.milestone().is_some());
                log.push((level, ctx.scheduled(), value));
            })
            .unwrap();
    }
}

#[test]
fn figure_1_ice_fireball_lightning() {
    // 5 MP now, 2 MP/s (the chapter's kMagicPointRegenTime = 0.5 s per MP); ice costs 35,
    // fireball 65, lightning 95: ready at 15 s, 30 s and 45 s.
    let mut timers = Timers::new();
    let mana = timers
        .add_meter(
            Meter::builder(Linear::new(2.0).unwrap())
                .value(5.0)
                .max(100.0)
                .build()
                .unwrap(),
        )
        .unwrap();
    let spells: Vec<MilestoneId> = [35.0, 65.0, 95.0]
        .into_iter()
        .map(|cost| {
            timers
                .add_milestone(mana, cost, move |log: &mut Log, ctx| {
                    log.push((cost, ctx.scheduled(), ctx.now()))
                })
                .unwrap()
        })
        .collect();
    let times: Vec<_> = spells.iter().map(|&s| timers.milestone_time(s)).collect();
    assert_eq!(times, [Some(15.0), Some(30.0), Some(45.0)]);
    let mut log = Vec::new();
    let mut frames = 0;
    while timers.now() < 50.0 {
        timers.advance(1.0 / 60.0, &mut log).unwrap();
        frames += 1;
    }
    assert!(frames > 2900);
    // Exact times, not frame-rounded ones: the clock steps to each event.
    assert_eq!(
        log,
        [(35.0, 15.0, 15.0), (65.0, 30.0, 30.0), (95.0, 45.0, 45.0)]
    );
    assert_eq!(timers.len(), 0);
}

#[test]
fn casting_recomputes_every_milestone() {
    let mut timers = Timers::new();
    let mana = timers
        .add_meter(
            Meter::builder(Linear::new(2.0).unwrap())
                .value(5.0)
                .max(100.0)
                .build()
                .unwrap(),
        )
        .unwrap();
    add_levels(&mut timers, mana, &[35.0, 65.0, 95.0]);
    let mut log = Vec::new();
    timers.advance_to(20.0, &mut log).unwrap();
    assert_eq!(log, [(35.0, 15.0, 35.0)]);
    assert_eq!(timers.spend(mana, 40.0).unwrap(), 5.0); // a big spell at 20 s
    timers.advance_to(100.0, &mut log).unwrap();
    assert_eq!(
        log,
        [
            (35.0, 15.0, 35.0),
            (35.0, 35.0, 35.0),
            (65.0, 50.0, 65.0),
            (95.0, 65.0, 95.0)
        ]
    );
}

#[test]
fn closed_form_times_on_exponential_logarithmic_and_custom_curves() {
    let quadratic = FnCurve::new(|s: f64| s * s, |v: f64| (v >= 0.0).then(|| v.sqrt()));
    let cases: Vec<(Meter, f64, f64)> = vec![
        // limit 100, τ = 10, from 0: reaches L at −τ ln(1 − L/100).
        (
            Meter::builder(Exponential::new(100.0, 10.0).unwrap())
                .build()
                .unwrap(),
            50.0,
            10.0 * std::f64::consts::LN_2,
        ),
        // 10 ln(1 + s/5) from 0: reaches 10 at 5 (e − 1).
        (
            Meter::builder(Logarithmic::new(10.0, 5.0).unwrap())
                .build()
                .unwrap(),
            10.0,
            5.0 * (std::f64::consts::E - 1.0),
        ),
        // s² from 1 (s0 = 1): reaches 16 at s = 4, i.e. after 3.
        (
            Meter::builder(quadratic).value(1.0).build().unwrap(),
            16.0,
            3.0,
        ),
    ];
    for (meter, level, expected) in cases {
        let mut timers = Timers::new();
        let meter = timers.add_meter(meter).unwrap();
        add_levels(&mut timers, meter, &[level]);
        let mut log = Vec::new();
        timers.advance(100.0, &mut log).unwrap();
        assert_eq!(log.len(), 1);
        let (_, at, value) = log[0];
        assert!((at - expected).abs() < 1e-9, "{at} vs {expected}");
        assert!(value >= level && value - level < 1e-9);
    }
}

#[test]
fn exponential_never_reaches_its_limit() {
    let mut timers = Timers::new();
    let meter = timers
        .add_meter(
            Meter::builder(Exponential::new(100.0, 1.0).unwrap())
                .build()
                .unwrap(),
        )
        .unwrap();
    add_levels(&mut timers, meter, &[99.0, 100.0]);
    let mut log = Vec::new();
    timers.advance(1e6, &mut log).unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].0, 99.0);
}

#[test]
fn milestones_already_reached_or_jumped_over_fire_in_the_next_advance() {
    let mut timers = Timers::new();
    let meter = timers
        .add_meter(
            Meter::builder(Linear::new(1.0).unwrap())
                .value(50.0)
                .max(200.0)
                .build()
                .unwrap(),
        )
        .unwrap();
    add_levels(&mut timers, meter, &[10.0, 150.0]);
    let mut log = Vec::new();
    timers.advance(0.0, &mut log).unwrap();
    assert_eq!(log, [(10.0, 0.0, 50.0)]);
    timers.advance(1.0, &mut log).unwrap();
    timers.set_meter_value(meter, 180.0).unwrap(); // a potion jumps past 150
    timers.advance(1.0, &mut log).unwrap();
    assert_eq!(log[1], (150.0, 1.0, 180.0));
    // Setting it back below re-arms both.
    timers.set_meter_value(meter, 0.0).unwrap();
    timers.advance(1000.0, &mut log).unwrap();
    assert_eq!(log.len(), 4);
    assert_eq!((log[2].0, log[2].1), (10.0, 12.0));
    assert_eq!((log[3].0, log[3].1), (150.0, 152.0));
}

#[test]
fn milestones_above_the_cap_wait_and_the_cap_holds() {
    let mut timers = Timers::new();
    let meter = timers
        .add_meter(
            Meter::builder(Linear::new(1.0).unwrap())
                .max(10.0)
                .build()
                .unwrap(),
        )
        .unwrap();
    add_levels(&mut timers, meter, &[10.0, 10.5]);
    let mut log = Vec::new();
    timers.advance(100.0, &mut log).unwrap();
    assert_eq!(log, [(10.0, 10.0, 10.0)]);
    assert_eq!(timers.meter_value(meter), Some(10.0));
}

#[test]
fn a_milestone_callback_can_spend_and_remove_its_meter() {
    let mut timers = Timers::new();
    let meter = timers
        .add_meter(Meter::builder(Linear::new(1.0).unwrap()).build().unwrap())
        .unwrap();
    // Cast whenever 10 is reached: fires at 10, 20, 30, … until the meter is removed at 40.
    timers
        .add_milestone(meter, 10.0, move |log: &mut Log, ctx| {
            log.push((10.0, ctx.scheduled(), ctx.meter_value(meter).unwrap()));
            ctx.spend(meter, 10.0).unwrap();
            if ctx.now() >= 40.0 {
                assert!(ctx.remove_meter(meter));
            }
        })
        .unwrap();
    let mut log = Vec::new();
    timers.advance(100.0, &mut log).unwrap();
    let times: Vec<f64> = log.iter().map(|e| e.1).collect();
    assert_eq!(times, [10.0, 20.0, 30.0, 40.0]);
    assert!(timers.meter(meter).is_none());
    assert!(timers.is_empty());
}

#[test]
fn meter_errors_are_typed_and_change_nothing() {
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            Linear::new(bad),
            Err(TimerError::InvalidParameter { .. })
        ));
        assert!(Exponential::new(bad, 1.0).is_err() && Exponential::new(1.0, bad).is_err());
        assert!(Logarithmic::new(bad, 1.0).is_err() && Logarithmic::new(1.0, bad).is_err());
    }
    let line = || Linear::new(1.0).unwrap();
    assert!(Meter::builder(line()).value(f64::NAN).build().is_err());
    assert!(Meter::builder(line()).value(-1.0).build().is_err());
    assert!(Meter::builder(line()).min(5.0).max(1.0).build().is_err());
    assert!(Meter::builder(line()).max(f64::NAN).build().is_err());
    assert!(Meter::builder(line()).min(f64::NAN).build().is_err());

    let mut timers = Timers::<Log>::new();
    let meter = timers
        .add_meter(
            Meter::builder(line())
                .value(10.0)
                .max(20.0)
                .build()
                .unwrap(),
        )
        .unwrap();
    let level = timers.add_milestone(meter, 15.0, |_, _| {}).unwrap();
    for amount in [f64::NAN, -1.0, f64::INFINITY] {
        assert!(matches!(
            timers.spend(meter, amount),
            Err(TimerError::InvalidParameter { .. })
        ));
    }
    assert_eq!(
        timers.spend(meter, 11.0),
        Err(TimerError::Insufficient {
            requested: 11.0,
            available: 10.0
        })
    );
    assert!(timers.set_meter_value(meter, 21.0).is_err());
    assert!(timers.add_milestone(meter, f64::NAN, |_, _| {}).is_err());
    assert_eq!(timers.meter_value(meter), Some(10.0));
    assert_eq!(timers.milestone_time(level), Some(5.0));
    assert!(timers.remove_meter(meter));
    assert_eq!(timers.spend(meter, 1.0), Err(TimerError::StaleMeter(meter)));
    assert_eq!(
        timers.set_meter_value(meter, 1.0),
        Err(TimerError::StaleMeter(meter))
    );
    assert!(matches!(
        timers.add_milestone(meter, 1.0, |_, _| {}),
        Err(TimerError::StaleMeter(_))
    ));
    assert_eq!(timers.milestone_time(level), None);
}

/// The oracle: linear regeneration tracked by hand, with the expected firings per level.
struct Oracle {
    rate: f64,
    cap: f64,
    value: f64,
    time: f64,
    /// Per level: has the current crossing fired (or been scheduled to)?
    reached: Vec<bool>,
    levels: Vec<f64>,
    expected: Vec<Vec<f64>>,
}

impl Oracle {
    fn new(rate: f64, cap: f64, value: f64, levels: &[f64]) -> Self {
        let mut oracle = Oracle {
            rate,
            cap,
            value,
            time: 0.0,
            reached: vec![false; levels.len()],
            levels: levels.to_vec(),
            expected: vec![Vec::new(); levels.len()],
        };
        oracle.set(value);
        oracle
    }

    fn run_to(&mut self, t: f64) {
        for (i, &level) in self.levels.iter().enumerate() {
            if self.reached[i] || level > self.cap {
                continue;
            }
            let crossing = self.time + (level - self.value) / self.rate;
            if crossing <= t {
                self.expected[i].push(crossing);
                self.reached[i] = true;
            }
        }
        self.value = (self.value + self.rate * (t - self.time)).min(self.cap);
        self.time = t;
    }

    fn set(&mut self, value: f64) {
        self.value = value;
        for (i, &level) in self.levels.iter().enumerate() {
            if value < level {
                self.reached[i] = false;
            } else if !self.reached[i] {
                self.expected[i].push(self.time);
                self.reached[i] = true;
            }
        }
    }
}

#[test]
fn every_crossing_fires_exactly_once_under_random_spending() {
    let levels = [5.0, 10.0, 35.0, 50.0, 65.0, 95.0, 100.0, 120.0];
    let n_seeds = if cfg!(debug_assertions) { 40 } else { 400 };
    let mut n_fired = 0;
    for seed in 0..n_seeds {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let rate = rng.random_range(0.5..5.0);
        let start = rng.random_range(0.0..100.0);
        let mut timers = Timers::new();
        let meter = timers
            .add_meter(
                Meter::builder(Linear::new(rate).unwrap())
                    .value(start)
                    .max(100.0)
                    .build()
                    .unwrap(),
            )
            .unwrap();
        add_levels(&mut timers, meter, &levels);
        let mut oracle = Oracle::new(rate, 100.0, start, &levels);
        let mut log = Vec::new();
        let mut t = 0.0;
        for _ in 0..60 {
            t += rng.random_range(0.01..20.0);
            timers.advance_to(t, &mut log).unwrap();
            oracle.run_to(t);
            let value = timers.meter_value(meter).unwrap();
            assert!(
                (value - oracle.value).abs() < 1e-9,
                "seed {seed}: value drifted"
            );
            if rng.random_bool(0.7) {
                let amount = rng.random_range(0.0..60.0);
                match timers.spend(meter, amount) {
                    Ok(new_value) => oracle.set(new_value),
                    Err(TimerError::Insufficient { .. }) => assert!(amount > value),
                    Err(e) => panic!("{e}"),
                }
            } else {
                let new_value = rng.random_range(0.0..100.0);
                timers.set_meter_value(meter, new_value).unwrap();
                oracle.set(new_value);
            }
        }
        timers.advance_to(t + 1000.0, &mut log).unwrap();
        oracle.run_to(t + 1000.0);
        for (i, &level) in levels.iter().enumerate() {
            let fired: Vec<f64> = log.iter().filter(|e| e.0 == level).map(|e| e.1).collect();
            let expected = &oracle.expected[i];
            assert_eq!(
                fired.len(),
                expected.len(),
                "seed {seed}, level {level}: {fired:?} vs {expected:?}"
            );
            for (a, b) in fired.iter().zip(expected) {
                assert!(
                    (a - b).abs() < 1e-9,
                    "seed {seed}, level {level}: {a} vs {b}"
                );
            }
            n_fired += fired.len();
        }
    }
    assert!(n_fired > 20 * n_seeds as usize);
}

#[test]
fn curve_inverses_agree_with_values() {
    let curves: Vec<Box<dyn Curve>> = vec![
        Box::new(Linear::new(3.0).unwrap()),
        Box::new(Exponential::new(50.0, 4.0).unwrap()),
        Box::new(Logarithmic::new(7.0, 2.0).unwrap()),
    ];
    for curve in &curves {
        for i in 0..100 {
            let s = f64::from(i) * 0.37;
            let v = curve.value(s);
            let back = curve.inverse(v).unwrap();
            assert!(
                (back - s).abs() < 1e-9 * (1.0 + s),
                "{curve:?}: {s} -> {v} -> {back}"
            );
        }
    }
}

#[test]
fn a_milestone_reached_by_a_spend_fires_in_the_same_frame_at_the_spend_time() {
    // 100 MP at the start: ice (35) is ready at once; casting it leaves exactly 65, the
    // fireball's level, so the fireball is ready at that same moment, not a frame later.
    let mut timers = Timers::<Vec<(&str, f64, f64)>>::new();
    let mana = timers
        .add_meter(
            Meter::builder(Linear::new(2.0).unwrap())
                .value(100.0)
                .max(100.0)
                .build()
                .unwrap(),
        )
        .unwrap();
    timers
        .add_milestone(mana, 35.0, move |log, ctx| {
            log.push(("ice", ctx.scheduled(), ctx.now()));
            ctx.spend(mana, 35.0).unwrap();
        })
        .unwrap();
    timers
        .add_milestone(mana, 65.0, |log, ctx| {
            log.push(("fireball", ctx.scheduled(), ctx.now()))
        })
        .unwrap();
    let mut log = Vec::new();
    // One frame of 1/60 s: both fire in it, at time 0 (the time of the spend).
    let fired = timers.advance(1.0 / 60.0, &mut log).unwrap();
    assert_eq!(log, [("ice", 0.0, 0.0), ("fireball", 0.0, 0.0)]);
    assert_eq!(fired, 2);
    // Fired once for this crossing: spending down to exactly 65 again does not re-fire it.
    timers.advance_to(10.0, &mut log).unwrap();
    log.clear();
    let value = timers.meter_value(mana).unwrap();
    timers.spend(mana, value - 65.0).unwrap();
    timers.advance(1.0 / 60.0, &mut log).unwrap();
    assert_eq!(log, []);
}
