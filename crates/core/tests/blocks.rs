//! The building blocks against closed forms and brute force: M/M/1 and M/M/c waits against
//! Erlang C, a reneging multi-server line against a naive reference simulation of the same
//! customers, time averages against hand integration, histogram quantiles against sorting,
//! and keyed timers against a naive model (proptest).

use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};
use warpsim_core::blocks::{
    Histogram, KeyedTimers, Resource, Tally, Ticket, TimeAverage, WaitLine,
};
use warpsim_core::{Ctx, FinishCtx, Kernel, LogicalProcess, RunConfig, Sequential, Time};

#[derive(Clone, Serialize, Deserialize)]
enum QueueEv {
    Arrive,
    Depart,
    Renege(Ticket),
}

/// An M/M/c queue built from the blocks; `finish` reports the mean wait (all customers
/// served, zero waits included) and the mean number in line.
#[derive(Clone)]
struct Mmc {
    arrival: Exp<f64>,
    service: Exp<f64>,
    servers: Resource,
    line: WaitLine<()>,
    waits: Tally,
}

impl LogicalProcess for Mmc {
    type Event = QueueEv;
    type Output = (f64, f64, u64);
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        let first = self.arrival.sample(ctx.rng());
        ctx.schedule(first, QueueEv::Arrive);
    }
    fn on_event(&mut self, event: QueueEv, ctx: &mut Ctx<Self>) {
        match event {
            QueueEv::Arrive => {
                let next = self.arrival.sample(ctx.rng());
                ctx.schedule(next, QueueEv::Arrive);
                if self.servers.try_acquire(ctx.now()) {
                    self.waits.record(0.0);
                    let service = self.service.sample(ctx.rng());
                    ctx.schedule(service, QueueEv::Depart);
                } else {
                    self.line.join(ctx, (), f64::INFINITY, QueueEv::Renege);
                }
            }
            QueueEv::Depart => match self.line.serve(ctx) {
                Some(served) => {
                    self.waits.record(served.waited);
                    let service = self.service.sample(ctx.rng());
                    ctx.schedule(service, QueueEv::Depart);
                }
                None => {
                    self.servers.release(ctx.now());
                }
            },
            QueueEv::Renege(ticket) => {
                self.line.renege(ctx, ticket);
            }
        }
    }
    fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
        ctx.emit((
            self.waits.mean(),
            self.line.mean_length(ctx.now()),
            self.waits.count(),
        ));
    }
}

/// Erlang C: the probability of waiting in M/M/c, and the mean wait `C / (cμ − λ)`.
fn erlang_c_wait(servers: u32, lambda: f64, mu: f64) -> f64 {
    let a = lambda / mu;
    let c = f64::from(servers);
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..servers {
        term *= a / f64::from(k);
        sum += term;
    }
    let last = term * a / c * c / (c - a);
    let wait_probability = last / (sum + last);
    wait_probability / (c * mu - lambda)
}

fn check_against_erlang_c(servers: u32, lambda: f64, mu: f64) {
    let expected = erlang_c_wait(servers, lambda, mu);
    let replications = if cfg!(debug_assertions) { 8 } else { 30 };
    let horizon = if cfg!(debug_assertions) {
        5_000.0
    } else {
        20_000.0
    };
    let (mut waits, mut lengths) = (Tally::new(), Tally::new());
    for seed in 0..replications {
        let model = Mmc {
            arrival: Exp::new(lambda).unwrap(),
            service: Exp::new(mu).unwrap(),
            servers: Resource::new(servers),
            line: WaitLine::new(),
            waits: Tally::new(),
        };
        let mut outputs = Vec::new();
        Sequential::new(RunConfig::new(seed).end_time(horizon))
            .run(vec![model], &mut outputs)
            .unwrap();
        let (wait, length, _) = outputs[0].output;
        waits.record(wait);
        lengths.record(length);
    }
    // Replication means are independent; the start empty biases them down a little, far
    // less than the interval at these horizons.
    let (low, high) = waits.confidence_interval(0.999).unwrap();
    assert!(
        low <= expected && expected <= high,
        "M/M/{servers} mean wait {expected} outside [{low}, {high}]"
    );
    // Little's law: mean line length = λ × mean wait.
    let (low, high) = lengths.confidence_interval(0.999).unwrap();
    assert!(
        low <= lambda * expected && lambda * expected <= high,
        "M/M/{servers} mean line length {} outside [{low}, {high}]",
        lambda * expected
    );
}

#[test]
fn mm1_mean_wait_matches_erlang_c() {
    check_against_erlang_c(1, 0.7, 1.0);
}

#[test]
fn mmc_mean_wait_matches_erlang_c() {
    check_against_erlang_c(3, 2.4, 1.0);
}

/// One customer: arrival time, service time, patience.
type Customer = (f64, f64, f64);

#[derive(Clone, Serialize, Deserialize)]
enum BankEv {
    Arrive(usize),
    Depart,
    GiveUp(Ticket),
}

/// A reneging multi-server line over a fixed list of customers.
#[derive(Clone)]
struct Bank {
    customers: Vec<Customer>,
    tellers: Resource,
    line: WaitLine<usize>,
    served_at_once: u64,
}

impl LogicalProcess for Bank {
    type Event = BankEv;
    type Output = (u64, u64, u64, f64);
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        for (i, customer) in self.customers.iter().enumerate() {
            ctx.schedule(customer.0, BankEv::Arrive(i));
        }
    }
    fn on_event(&mut self, event: BankEv, ctx: &mut Ctx<Self>) {
        match event {
            BankEv::Arrive(i) => {
                let (_, service, patience) = self.customers[i];
                if self.tellers.try_acquire(ctx.now()) {
                    self.served_at_once += 1;
                    ctx.schedule(service, BankEv::Depart);
                } else {
                    self.line.join(ctx, i, patience, BankEv::GiveUp);
                }
            }
            BankEv::Depart => match self.line.serve(ctx) {
                Some(next) => {
                    ctx.schedule(self.customers[next.item].1, BankEv::Depart);
                }
                None => {
                    self.tellers.release(ctx.now());
                }
            },
            BankEv::GiveUp(ticket) => {
                self.line.renege(ctx, ticket);
            }
        }
    }
    fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
        let waits = self.line.waits();
        ctx.emit((
            self.served_at_once,
            waits.count(),
            self.line.reneged(),
            waits.sum(),
        ));
    }
}

/// The same bank as a plain loop: at each step take the earliest of the next arrival, the
/// earliest departure and the earliest patience deadline of anyone in line.
fn reference_bank(customers: &[Customer], tellers: usize) -> (u64, u64, u64, f64) {
    let mut departures: Vec<f64> = Vec::new();
    let mut line: Vec<(usize, f64)> = Vec::new(); // (customer, deadline)
    let (mut at_once, mut from_line, mut reneged, mut waited) = (0, 0, 0, 0.0);
    let mut next = 0;
    loop {
        let arrival = customers.get(next).map_or(f64::INFINITY, |c| c.0);
        let (d_index, departure) = departures
            .iter()
            .copied()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or((0, f64::INFINITY), |x| x);
        let (r_index, deadline) = line
            .iter()
            .map(|m| m.1)
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or((0, f64::INFINITY), |x| x);
        let now = arrival.min(departure).min(deadline);
        if now == f64::INFINITY {
            return (at_once, from_line, reneged, waited);
        }
        if now == arrival {
            let (_, service, patience) = customers[next];
            if departures.len() < tellers {
                at_once += 1;
                departures.push(now + service);
            } else {
                line.push((next, now + patience));
            }
            next += 1;
        } else if now == departure {
            departures.swap_remove(d_index);
            if !line.is_empty() {
                let (customer, _) = line.remove(0);
                let (arrived, service, _) = customers[customer];
                from_line += 1;
                waited += now - arrived;
                departures.push(now + service);
            }
        } else {
            line.remove(r_index);
            reneged += 1;
        }
    }
}

#[test]
fn a_reneging_line_matches_a_naive_reference() {
    for seed in 0..20u64 {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let (arrival, service, patience) = (
            Exp::new(2.0).unwrap(),
            Exp::new(0.6).unwrap(),
            Exp::new(0.5).unwrap(),
        );
        let mut at = 0.0;
        let customers: Vec<Customer> = (0..500)
            .map(|_| {
                at += arrival.sample(&mut rng);
                (at, service.sample(&mut rng), patience.sample(&mut rng))
            })
            .collect();
        let bank = Bank {
            customers: customers.clone(),
            tellers: Resource::new(3),
            line: WaitLine::new(),
            served_at_once: 0,
        };
        let mut outputs = Vec::new();
        Sequential::new(RunConfig::new(seed))
            .run(vec![bank], &mut outputs)
            .unwrap();
        let got = outputs[0].output;
        let expected = reference_bank(&customers, 3);
        assert_eq!(
            (got.0, got.1, got.2),
            (expected.0, expected.1, expected.2),
            "seed {seed}"
        );
        assert!(
            (got.3 - expected.3).abs() < 1e-9 * expected.3.max(1.0),
            "seed {seed}"
        );
        assert!(got.2 > 50, "seed {seed}: customers did renege ({})", got.2);
    }
}

#[test]
fn time_average_matches_hand_integration() {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
    let mut average = TimeAverage::new(Time::new(2.0).unwrap(), 3.0);
    let (mut now, mut value, mut area) = (2.0f64, 3.0f64, 0.0f64);
    let mut steps = vec![(now, value)];
    for _ in 0..1000 {
        now += rng.random_range(0.0..1.0);
        value = rng.random_range(-5.0..5.0);
        steps.push((now, value));
        if rng.random_bool(0.5) {
            average.set(Time::new(now).unwrap(), value);
        } else {
            average.add(Time::new(now).unwrap(), value - average.value());
        }
    }
    let end = now + 1.5;
    steps.push((end, 0.0));
    for pair in steps.windows(2) {
        area += pair[0].1 * (pair[1].0 - pair[0].0);
    }
    let end = Time::new(end).unwrap();
    assert!((average.integral(end) - area).abs() < 1e-9 * area.abs().max(1.0));
    let mean = area / (end.as_f64() - 2.0);
    assert!((average.mean(end) - mean).abs() < 1e-9);
}

#[test]
fn tally_matches_two_pass_statistics_and_merges() {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
    let values: Vec<f64> = (0..10_000)
        .map(|_| 1e6 + rng.random_range(0.0..1.0))
        .collect();
    let mut whole = Tally::new();
    let (mut first, mut second) = (Tally::new(), Tally::new());
    for (i, &v) in values.iter().enumerate() {
        whole.record(v);
        if i < 3_000 {
            first.record(v)
        } else {
            second.record(v)
        }
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    // Around 1e6 with a spread of 1: the naive sum loses digits Welford keeps.
    assert!((whole.mean() - mean).abs() < 1e-12 * mean);
    assert!((whole.variance() - variance).abs() < 1e-6 * variance);
    first.merge(&second);
    assert_eq!(first.count(), whole.count());
    assert!((first.mean() - mean).abs() < 1e-12 * mean);
    assert!((first.variance() - variance).abs() < 1e-6 * variance);
    assert_eq!(first.min(), whole.min());
    assert_eq!(first.max(), whole.max());
    // Uniform(0, 1): variance 1/12.
    assert!((whole.variance() - 1.0 / 12.0).abs() < 0.005);
}

#[test]
fn histogram_quantiles_are_within_their_accuracy_of_sorting() {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
    let exp = Exp::new(0.1).unwrap();
    for accuracy in [0.01, 0.05] {
        let mut histogram = Histogram::with_accuracy(accuracy).unwrap();
        let mut values: Vec<f64> = (0..20_000).map(|_| exp.sample(&mut rng)).collect();
        for &v in &values {
            histogram.record(v);
        }
        values.sort_by(f64::total_cmp);
        for q in [0.01, 0.1, 0.5, 0.9, 0.99, 0.999] {
            let exact = values[(q * (values.len() - 1) as f64) as usize];
            let got = histogram.quantile(q).unwrap().unwrap();
            assert!(
                (got - exact).abs() <= accuracy * exact * 1.000_001,
                "q {q}: {got} vs {exact} (accuracy {accuracy})"
            );
        }
        assert_eq!(histogram.count(), values.len() as u64);
    }
    assert!(Histogram::with_accuracy(0.0).is_err());
    assert!(Histogram::with_accuracy(f64::NAN).is_err());
    assert_eq!(Histogram::new().quantile(0.5).unwrap(), None);
}

/// One operation on keyed timers, at an integer time.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Op {
    Set(u8, u8),
    PushBack(u8, u8),
    Clear(u8),
}

#[derive(Clone, Serialize, Deserialize)]
enum TimerEv {
    Do(Op),
    Fire(u8),
}

#[derive(Clone)]
struct TimerLp {
    script: Vec<Op>,
    timers: KeyedTimers<u8>,
}

impl LogicalProcess for TimerLp {
    type Event = TimerEv;
    /// (time, key) of every timer that fired.
    type Output = (f64, u8);
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        for (i, op) in self.script.iter().enumerate() {
            ctx.schedule(i as f64 + 1.0, TimerEv::Do(op.clone()));
        }
    }
    fn on_event(&mut self, event: TimerEv, ctx: &mut Ctx<Self>) {
        match event {
            // Delays are d + 0.5, so a timer never fires at the time of an operation.
            TimerEv::Do(Op::Set(key, delay)) => {
                self.timers
                    .set(ctx, key, f64::from(delay) + 0.5, TimerEv::Fire(key));
            }
            TimerEv::Do(Op::PushBack(key, delay)) => {
                self.timers.push_back(ctx, &key, f64::from(delay) + 0.5);
            }
            TimerEv::Do(Op::Clear(key)) => {
                self.timers.clear(ctx, &key);
            }
            TimerEv::Fire(key) => {
                assert!(self.timers.fired(&key), "a live timer fired");
                ctx.emit((ctx.now().as_f64(), key));
            }
        }
    }
}

/// The naive model: a map from key to deadline, advanced operation by operation.
fn naive_timers(script: &[Op]) -> Vec<(f64, u8)> {
    let mut deadlines: std::collections::BTreeMap<u8, f64> = Default::default();
    let mut fired = Vec::new();
    let fire_before = |deadlines: &mut std::collections::BTreeMap<u8, f64>,
                       fired: &mut Vec<(f64, u8)>,
                       until: f64| {
        let mut due: Vec<(f64, u8)> = deadlines
            .iter()
            .filter(|(_, at)| **at < until)
            .map(|(&key, &at)| (at, key))
            .collect();
        due.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (at, key) in due {
            deadlines.remove(&key);
            fired.push((at, key));
        }
    };
    for (i, op) in script.iter().enumerate() {
        let now = i as f64 + 1.0;
        fire_before(&mut deadlines, &mut fired, now);
        match *op {
            Op::Set(key, delay) => {
                deadlines.insert(key, now + f64::from(delay) + 0.5);
            }
            Op::PushBack(key, delay) => {
                if let Some(at) = deadlines.get_mut(&key) {
                    *at = now + f64::from(delay) + 0.5;
                }
            }
            Op::Clear(key) => {
                deadlines.remove(&key);
            }
        }
    }
    fire_before(&mut deadlines, &mut fired, f64::INFINITY);
    fired
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..4, 0u8..6).prop_map(|(k, d)| Op::Set(k, d)),
        (0u8..4, 0u8..6).prop_map(|(k, d)| Op::PushBack(k, d)),
        (0u8..4).prop_map(Op::Clear),
    ]
}

proptest! {
    #[test]
    fn keyed_timers_match_a_naive_model(script in proptest::collection::vec(op(), 0..60)) {
        let lp = TimerLp { script: script.clone(), timers: KeyedTimers::new() };
        let mut outputs = Vec::new();
        Sequential::new(RunConfig::new(1)).run(vec![lp], &mut outputs).unwrap();
        let got: Vec<(f64, u8)> = outputs.iter().map(|c| c.output).collect();
        // Two timers due at one time fire in an order the naive model does not fix.
        let mut expected = naive_timers(&script);
        let mut got_sorted = got.clone();
        expected.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        got_sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        prop_assert_eq!(got_sorted, expected);
    }
}

/// What a buffered kernel (Time Warp) saves with every state: the LP's record of the events
/// it moved or cancelled must hold only the ones still pending, however many timers came and
/// went. A watchdog that pushes its timer back on most events and re-arms a new one when it
/// fires used to carry up to sixteen dead entries into every save (issue 13).
#[test]
fn a_timer_moved_on_every_event_leaves_one_entry_in_the_lp_record() {
    use warpsim_core::kernel_api::{Effect, LpMeta, encode_event};
    use warpsim_core::{EventHandle, EventKey, LpId};

    #[derive(Clone)]
    struct Lp;
    impl LogicalProcess for Lp {
        type Event = ();
        type Output = ();
        fn on_event(&mut self, _: (), _: &mut Ctx<Self>) {}
    }

    let me = LpId::new(0);
    let mut meta = LpMeta::new(1, me);
    let (mut effects, mut outputs, mut error) = (Vec::<Effect<()>>::new(), Vec::new(), None);
    let mut timer = EventHandle::DEAD;
    let mut bytes = Vec::new();
    let mut sizes = Vec::new();
    for i in 1..400u32 {
        let now = Time::new(f64::from(i)).unwrap();
        let key = EventKey::new(
            now,
            0,
            me,
            Time::new(f64::from(i - 1)).unwrap(),
            u64::from(i),
        );
        {
            let mut ctx = Ctx::<Lp>::buffered(
                me,
                key,
                1,
                &mut meta,
                &mut effects,
                &mut outputs,
                &mut error,
            );
            // Pushed back on four events in eight; in the silence between, it fires (its time
            // passes), and the next event arms a new one.
            if i % 8 < 4 && !ctx.reschedule(&mut timer, 3.0) {
                timer = ctx.schedule(3.0, ());
            }
        }
        effects.clear();
        assert!(encode_event(&meta, &mut bytes));
        sizes.push(bytes.len());
    }
    assert!(error.is_none());
    // One live timer: the record's size once it holds one entry (an entry encodes in about
    // 70 bytes; later keys' varints take a few bytes more), whatever came before.
    let settled = sizes[8..].iter().copied().max().unwrap();
    let one_entry = sizes[1];
    assert!(
        settled <= one_entry + 8,
        "the record grew to {settled} bytes from {one_entry}: {sizes:?}"
    );
}
