//! `TimeWarp::run_observed` shows exactly what `Sequential::run_observed` shows: every
//! committed event in key order, each just before its outputs, and the event that failed
//! the run — on 1, 2 and 4 threads with both cancellations, for a model that sends,
//! cancels and reschedules at random and one that fails part-way.

mod common;

use std::cell::RefCell;

use common::{Chaos, Misbehave};
use warpsim_core::{Committed, EventKey, LogicalProcess, LpId, RunConfig, Sequential, SimError};
use warpsim_timewarp::{Cancellation, TimeWarp};

/// One entry of a run's interleaved record: an event shown to the observer, or an output.
#[derive(Debug, PartialEq)]
enum Seen<E, O> {
    Event(EventKey, LpId, E),
    Output(EventKey, LpId, O),
}

type Record<M> = Vec<Seen<<M as LogicalProcess>::Event, <M as LogicalProcess>::Output>>;

/// Runs `lps` with an observer and a sink writing into one record, on the sequential kernel
/// (`kernel` = `None`) or on Time Warp; returns the record and the run's error, if any.
fn observed<M>(
    kernel: Option<&TimeWarp>,
    config: &RunConfig,
    lps: Vec<M>,
) -> (Record<M>, Option<SimError>)
where
    M: LogicalProcess,
    M::Output: Clone,
{
    let record = RefCell::new(Vec::new());
    let mut sink = |output: Committed<M::Output>| {
        record
            .borrow_mut()
            .push(Seen::Output(output.key, output.lp, output.output));
    };
    let observer = |key: &EventKey, lp: LpId, event: &M::Event| {
        record
            .borrow_mut()
            .push(Seen::Event(*key, lp, event.clone()));
    };
    let result = match kernel {
        None => Sequential::new(config.clone()).run_observed(lps, &mut sink, observer),
        Some(kernel) => kernel.run_observed(lps, &mut sink, observer),
    };
    (record.into_inner(), result.err().map(|error| error.error))
}

fn time_warps(config: &RunConfig) -> Vec<TimeWarp> {
    let mut kernels = Vec::new();
    for threads in [1, 2, 4] {
        for cancellation in [Cancellation::Lazy, Cancellation::Aggressive] {
            kernels.push(
                TimeWarp::new(config.clone())
                    .threads(threads)
                    .cancellation(cancellation),
            );
        }
    }
    kernels
}

#[test]
fn every_kernel_shows_the_sequential_kernels_events_between_the_same_outputs() {
    for seed in 0..6 {
        let config = RunConfig::new(seed).end_time(12.0);
        let make = || vec![Chaos::default(); 24];
        let (expected, error) = observed(None, &config, make());
        assert!(error.is_none(), "{error:?}");
        let events = expected
            .iter()
            .filter(|seen| matches!(seen, Seen::Event(..)))
            .count();
        assert!(events > 500, "seed {seed}: only {events} events");
        for kernel in time_warps(&config) {
            let (record, error) = observed(Some(&kernel), &config, make());
            assert!(error.is_none(), "{error:?}");
            assert!(
                record == expected,
                "seed {seed}, {kernel:?}: the records differ"
            );
        }
    }
}

#[test]
fn the_event_that_fails_the_run_is_shown_last_on_every_kernel() {
    for panic in [false, true] {
        let config = RunConfig::new(1).end_time(10.0);
        let make = || vec![Misbehave { bad: 2, panic }; 5];
        let (expected, error) = observed(None, &config, make());
        assert!(error.is_some(), "the run should fail");
        // The failing event: LP 2's tick at time 3, shown after every earlier one.
        let Some(Seen::Event(key, lp, 0)) = expected
            .iter()
            .rev()
            .find(|seen| matches!(seen, Seen::Event(..)))
        else {
            panic!("no event shown");
        };
        assert_eq!((key.time.as_f64(), *lp), (3.0, LpId::new(2)));
        for kernel in time_warps(&config) {
            let (record, failed) = observed(Some(&kernel), &config, make());
            assert_eq!(
                failed.map(|error| std::mem::discriminant(&error)),
                error.as_ref().map(std::mem::discriminant),
                "{kernel:?}"
            );
            assert!(
                record == expected,
                "panic {panic}, {kernel:?}: the records differ"
            );
        }
    }
}

#[test]
fn a_panicking_observer_stops_the_run_as_a_panicking_sink_does() {
    let config = RunConfig::new(2).end_time(12.0);
    let mut shown = 0;
    let result = TimeWarp::new(config).threads(2).run_observed(
        vec![Chaos::default(); 8],
        &mut warpsim_core::Discard,
        |_: &EventKey, _, _: &u32| {
            shown += 1;
            assert!(shown < 50, "observer bug");
        },
    );
    let Err(error) = result else {
        panic!("the observer's panic should stop the run");
    };
    let error = error.error;
    assert!(
        matches!(&error, SimError::SinkPanic { message, .. } if message.contains("observer bug")),
        "{error:?}"
    );
}
