//! Property-based version of the differential test: proptest generates (and shrinks) the
//! scripts; the callbacks' actions come from a generated seed. `Timers` and the reference must
//! produce identical traces. And the timing wheel against the indexed heap as an oracle, with
//! the scripts' times scaled from a ten-thousandth of a tick to billions of seconds so that
//! every level of the wheel is crossed: identical traces, callbacks in the same order.

mod common;

use common::{Op, first_difference, run_both, run_real};
use proptest::prelude::*;
use warpsim_timers::{CatchUp, TimerQueue};

fn delay() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => Just(0.0),
        5 => (1..=16u32).prop_map(|k| 0.25 * f64::from(k)),
        3 => 0.0..5.0f64,
        1 => prop_oneof![Just(-1.0), Just(f64::NAN), Just(f64::INFINITY)],
    ]
}

fn shift() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (-8..=16i32).prop_map(|k| 0.25 * f64::from(k)),
        3 => -3.0..6.0f64,
        1 => Just(f64::NAN),
    ]
}

fn period() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        5 => Just(None),
        3 => (1..=8u32).prop_map(|k| Some(0.25 * f64::from(k))),
        2 => (0.1..3.0f64).prop_map(Some),
        1 => prop_oneof![Just(Some(0.0)), Just(Some(-1.0)), Just(Some(f64::NAN))],
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let label = 0..40usize;
    prop_oneof![
        6 => (delay(), period(), any::<bool>()).prop_map(|(delay, period, all)| Op::Add {
            delay,
            period,
            catch_up: if all { CatchUp::FireAll } else { CatchUp::FireOnce },
        }),
        2 => label.clone().prop_map(Op::Cancel),
        2 => (label.clone(), shift()).prop_map(|(l, s)| Op::SetTime(l, s)),
        2 => (label.clone(), shift()).prop_map(|(l, s)| Op::Delay(l, s)),
        1 => label.clone().prop_map(Op::Pause),
        1 => label.clone().prop_map(Op::Resume),
        1 => label.prop_map(Op::Query),
        1 => prop_oneof![Just(0.0), Just(0.5), Just(1.0), Just(2.0), Just(f64::NAN), Just(-1.0)]
            .prop_map(Op::SetScale),
        1 => (0..12u32).prop_map(|k| Op::AdvanceBy(0.25 * f64::from(k))),
        6 => prop_oneof![
            Just(0.0),
            Just(1.0 / 60.0),
            0.0..2.0f64,
            2.0..12.0f64,
            Just(-0.5),
            Just(f64::NAN),
        ]
        .prop_map(Op::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(debug_assertions) { 64 } else { 512 },
        ..ProptestConfig::default()
    })]

    #[test]
    fn timers_match_reference(
        ops in prop::collection::vec(op(), 1..200),
        seed in any::<u64>(),
        queue in 0..3usize,
    ) {
        let queue = [TimerQueue::Wheel, TimerQueue::Heap, TimerQueue::Ladder][queue];
        let (real, reference) = run_both(&ops, queue, seed, 200, true);
        if let Some(diff) = first_difference(&real, &reference) {
            prop_assert!(false, "{}", diff);
        }
    }
}

/// `op` with its times multiplied by `scale` (invalid values stay invalid).
fn scaled(op: Op, scale: f64) -> Op {
    match op {
        Op::Add {
            delay,
            period,
            catch_up,
        } => Op::Add {
            delay: delay * scale,
            period: period.map(|p| p * scale),
            catch_up,
        },
        Op::SetTime(l, s) => Op::SetTime(l, s * scale),
        Op::Delay(l, s) => Op::Delay(l, s * scale),
        Op::Advance(dt) => Op::Advance(dt * scale),
        Op::AdvanceBy(dt) => Op::AdvanceBy(dt * scale),
        op => op,
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(debug_assertions) { 64 } else { 1024 },
        ..ProptestConfig::default()
    })]

    #[test]
    fn wheel_fires_as_the_heap_does(
        ops in prop::collection::vec(op(), 1..300),
        seed in any::<u64>(),
        scale in prop_oneof![
            Just(1e-7), Just(1e-3), Just(1.0), Just(60.0), Just(1e4), Just(3e7), Just(1e12),
        ],
    ) {
        let ops: Vec<Op> = ops.into_iter().map(|op| scaled(op, scale)).collect();
        let wheel = run_real(&ops, TimerQueue::Wheel, seed, 200, true);
        let heap = run_real(&ops, TimerQueue::Heap, seed, 200, true);
        if let Some(diff) = first_difference(&wheel, &heap) {
            prop_assert!(false, "{}", diff);
        }
    }
}
