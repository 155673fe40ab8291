//! One test per promise of the timer manager (issue #3), on small hand-written scenarios.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

use warpsim_timers::{CatchUp, RemovalReason, TimerCtx, TimerError, TimerId, Timers};

type Log = Vec<(u32, f64)>;

/// A callback that logs `(tag, scheduled time)`.
fn tag(tag: u32) -> impl FnMut(&mut Log, &mut TimerCtx<'_, Log>) + Send + 'static {
    move |log, ctx| log.push((tag, ctx.scheduled()))
}

fn tags(log: &Log) -> Vec<u32> {
    log.iter().map(|&(t, _)| t).collect()
}

#[test]
fn equal_times_fire_in_insertion_order() {
    // The measurement: the chapter's heap fired 8 equal-time callbacks as
    // 0,2,6,5,7,4,1,3. Here they fire in the order they were added, however they were added.
    let mut timers = Timers::new();
    for i in 0..8 {
        timers.add(1.0, tag(i)).unwrap();
    }
    // Timers moved onto the same time keep their insertion order too.
    let late = timers.add(5.0, tag(100)).unwrap();
    let early = timers.add(0.5, tag(101)).unwrap();
    timers.set_time(late, 1.0).unwrap();
    timers.set_time(early, 1.0).unwrap();
    let mut log = Vec::new();
    timers.advance(1.0, &mut log).unwrap();
    assert_eq!(tags(&log), [0, 1, 2, 3, 4, 5, 6, 7, 100, 101]);
}

#[test]
fn one_advance_fires_in_time_order() {
    let mut timers = Timers::new();
    for (i, delay) in [3.0, 0.5, 2.0, 0.25, 1.0, 2.5].into_iter().enumerate() {
        timers.add(delay, tag(i as u32)).unwrap();
    }
    let mut log = Vec::new();
    assert_eq!(timers.advance(10.0, &mut log).unwrap(), 6);
    assert_eq!(tags(&log), [3, 1, 4, 2, 5, 0]);
    let times: Vec<f64> = log.iter().map(|&(_, t)| t).collect();
    assert_eq!(times, [0.25, 0.5, 1.0, 2.0, 2.5, 3.0]);
}

#[test]
fn callbacks_see_their_own_time_and_add_relative_to_it() {
    let mut timers = Timers::new();
    timers
        .add(1.0, |log: &mut Log, ctx| {
            log.push((0, ctx.now()));
            // 0.5 after *this event*, i.e. at 1.5: still inside the advance to 2.0.
            ctx.add(0.5, |log: &mut Log, ctx| log.push((1, ctx.now())))
                .unwrap();
        })
        .unwrap();
    let mut log = Vec::new();
    timers.advance(2.0, &mut log).unwrap();
    assert_eq!(log, [(0, 1.0), (1, 1.5)]);
    assert_eq!(timers.now(), 2.0);
}

#[test]
fn zero_delay_added_in_a_callback_fires_in_the_next_advance() {
    let mut timers = Timers::new();
    timers
        .add(1.0, |log: &mut Log, ctx| {
            log.push((0, ctx.scheduled()));
            ctx.add(0.0, tag(1)).unwrap();
        })
        .unwrap();
    let mut log = Vec::new();
    timers.advance(1.0, &mut log).unwrap();
    assert_eq!(log, [(0, 1.0)]);
    timers.advance(0.0, &mut log).unwrap();
    assert_eq!(log, [(0, 1.0), (1, 1.0)]);
}

/// A callback that re-adds itself with no delay: once per advance, never a hung frame.
fn again(n: &mut u32, ctx: &mut TimerCtx<'_, u32>) {
    *n += 1;
    ctx.add(0.0, again).unwrap();
}

#[test]
fn a_callback_re_adding_itself_cannot_hang_a_frame() {
    let mut timers = Timers::new();
    timers.add(0.0, again).unwrap();
    let mut n = 0;
    for frame in 1..=100 {
        assert_eq!(timers.advance(1.0 / 60.0, &mut n).unwrap(), 1);
        assert_eq!(n, frame);
    }
    // The same with set_time to the present and to the past.
    let mut timers = Timers::new();
    timers
        .add_repeating(0.0, 1.0, |n: &mut u32, ctx| {
            *n += 1;
            let (id, now) = (ctx.id(), ctx.now());
            ctx.set_time(id, now - 5.0).unwrap();
        })
        .unwrap();
    let mut n = 0;
    for frame in 1..=10 {
        timers.advance(0.1, &mut n).unwrap();
        assert_eq!(n, frame);
    }
}

#[test]
fn callbacks_change_other_timers_and_their_own() {
    let mut timers = Timers::new();
    let victim = timers.add(2.0, tag(9)).unwrap();
    let moved = timers.add(3.0, tag(8)).unwrap();
    timers
        .add(1.0, move |log: &mut Log, ctx| {
            log.push((0, ctx.scheduled()));
            // Only the first call finds them live; later calls are stale no-ops.
            let first = ctx.cancel(victim);
            assert_eq!(ctx.set_time(moved, 1.5).is_ok(), first);
            // Re-arm itself (a one-shot) for 2.5.
            let me = ctx.id();
            ctx.delay(me, 1.5).unwrap();
            assert!(ctx.is_active(me));
        })
        .unwrap();
    let mut log = Vec::new();
    timers.advance(2.0, &mut log).unwrap();
    assert_eq!(log, [(0, 1.0), (8, 1.5)]);
    timers.advance(1.0, &mut log).unwrap();
    assert_eq!(log, [(0, 1.0), (8, 1.5), (0, 2.5)]);
    // The third time it re-arms again, so it stays live.
    assert_eq!(timers.len(), 1);
}

#[test]
fn a_callback_cancelling_a_timer_due_at_the_same_time_stops_it() {
    let mut timers = Timers::new();
    let second = Arc::new(Mutex::new(None::<TimerId>));
    let handle = Arc::clone(&second);
    timers
        .add(1.0, move |log: &mut Log, ctx| {
            log.push((0, ctx.scheduled()));
            assert!(ctx.cancel(handle.lock().unwrap().unwrap()));
        })
        .unwrap();
    *second.lock().unwrap() = Some(timers.add(1.0, tag(1)).unwrap());
    let mut log = Vec::new();
    assert_eq!(timers.advance(5.0, &mut log).unwrap(), 1);
    assert_eq!(tags(&log), [0]);
}

#[test]
fn repeating_timers_do_not_drift() {
    let period = 0.1;
    let mut timers = Timers::new();
    timers
        .add_repeating(0.1, period, |times: &mut Vec<f64>, ctx| {
            times.push(ctx.scheduled())
        })
        .unwrap();
    let mut times = Vec::new();
    // Frames of 1/60 s, which do not divide the period.
    for _ in 0..60 * 1000 {
        timers.advance(1.0 / 60.0, &mut times).unwrap();
    }
    assert!(times.len() >= 9_990, "{}", times.len());
    for (k, &t) in times.iter().enumerate() {
        assert_eq!(t, 0.1 + (k as f64) * period, "occurrence {k}");
    }
    // Accumulating `t += period` would have drifted by now.
    let accumulated = (0..times.len() - 1).fold(0.1, |t, _| t + period);
    assert_ne!(accumulated, *times.last().unwrap());
}

#[test]
fn catch_up_fire_all_sees_every_scheduled_time_in_order_with_others() {
    let mut timers = Timers::new();
    timers
        .timer(1.0)
        .repeat(1.0)
        .catch_up(CatchUp::FireAll)
        .build(tag(0))
        .unwrap();
    timers.add(2.5, tag(1)).unwrap();
    let mut log = Vec::new();
    timers.advance(4.0, &mut log).unwrap();
    assert_eq!(log, [(0, 1.0), (0, 2.0), (1, 2.5), (0, 3.0), (0, 4.0)]);
}

#[test]
fn catch_up_fire_once_skips_ahead_on_the_original_grid() {
    let mut timers = Timers::new();
    timers
        .timer(1.0)
        .repeat(1.0)
        .catch_up(CatchUp::FireOnce)
        .build(|log: &mut Vec<(f64, u64)>, ctx| log.push((ctx.scheduled(), ctx.occurrences())))
        .unwrap();
    let mut log = Vec::new();
    timers.advance(4.5, &mut log).unwrap();
    assert_eq!(log, [(1.0, 4)]);
    timers.advance(0.4, &mut log).unwrap();
    assert_eq!(log, [(1.0, 4)]);
    timers.advance(0.1, &mut log).unwrap();
    assert_eq!(log, [(1.0, 4), (5.0, 1)]);
}

#[test]
fn stale_ids_are_rejected_and_touch_nothing() {
    let mut timers = Timers::new();
    let fired = timers.add(1.0, tag(0)).unwrap();
    let cancelled = timers.add(1.0, tag(1)).unwrap();
    assert!(timers.cancel(cancelled));
    let mut log = Vec::new();
    timers.advance(1.0, &mut log).unwrap();
    // Both slots are now reused by new timers.
    let a = timers.add(1.0, tag(2)).unwrap();
    let b = timers.add(1.0, tag(3)).unwrap();
    for stale in [fired, cancelled] {
        assert!(!timers.cancel(stale));
        assert!(!timers.pause(stale));
        assert!(!timers.resume(stale));
        assert!(!timers.is_active(stale));
        assert_eq!(timers.remaining(stale), None);
        assert_eq!(timers.due_time(stale), None);
        assert_eq!(
            timers.set_time(stale, 9.0),
            Err(TimerError::StaleTimer(stale))
        );
        assert_eq!(timers.delay(stale, 9.0), Err(TimerError::StaleTimer(stale)));
    }
    assert_eq!(
        (timers.remaining(a), timers.remaining(b)),
        (Some(1.0), Some(1.0))
    );
    timers.advance(1.0, &mut log).unwrap();
    assert_eq!(tags(&log), [0, 2, 3]);
}

#[test]
fn remaining_and_is_active_follow_the_timer() {
    let mut timers = Timers::<()>::new();
    let id = timers.add_repeating(2.0, 3.0, |_, _| {}).unwrap();
    assert_eq!(timers.remaining(id), Some(2.0));
    timers.advance(1.5, &mut ()).unwrap();
    assert_eq!(timers.remaining(id), Some(0.5));
    timers.advance(1.0, &mut ()).unwrap(); // fired at 2.0, next at 5.0
    assert_eq!(timers.remaining(id), Some(2.5));
    assert_eq!(timers.due_time(id), Some(5.0));
    assert!(timers.pause(id));
    assert!(!timers.pause(id));
    assert!(!timers.is_active(id) && timers.is_paused(id));
    timers.advance(100.0, &mut ()).unwrap();
    assert_eq!(timers.remaining(id), Some(2.5));
    assert_eq!(timers.due_time(id), None);
    assert!(timers.resume(id));
    assert!(!timers.resume(id));
    assert_eq!(timers.due_time(id), Some(105.0));
    assert!(timers.cancel(id));
    assert!(!timers.is_active(id) && !timers.is_paused(id));
}

#[test]
fn a_resumed_repeating_timer_keeps_its_period_from_the_resume() {
    let mut timers = Timers::new();
    let id = timers.add_repeating(1.0, 1.0, tag(0)).unwrap();
    let mut log = Vec::new();
    timers.advance(1.5, &mut log).unwrap(); // fired at 1; 0.5 left
    timers.pause(id);
    timers.advance(10.0, &mut log).unwrap();
    timers.resume(id); // at 11.5: next at 12, then 13, …
    timers.advance(2.0, &mut log).unwrap();
    assert_eq!(log, [(0, 1.0), (0, 12.0), (0, 13.0)]);
}

#[test]
fn time_scale_scales_and_zero_pauses_everything() {
    let mut timers = Timers::new();
    timers.add(1.0, tag(0)).unwrap();
    let mut log = Vec::new();
    timers.set_time_scale(0.0).unwrap();
    for _ in 0..1000 {
        timers.advance(1.0, &mut log).unwrap();
    }
    assert!(log.is_empty());
    assert_eq!(timers.now(), 0.0);
    timers.set_time_scale(2.0).unwrap();
    timers.advance(0.5, &mut log).unwrap();
    assert_eq!(log, [(0, 1.0)]);
    // advance_to is in game time, unscaled.
    timers.advance_to(3.0, &mut log).unwrap();
    assert_eq!(timers.now(), 3.0);
}

#[test]
fn a_callback_can_set_the_time_scale_for_the_next_advance() {
    let mut timers = Timers::new();
    timers
        .add(0.5, |_: &mut (), ctx| ctx.set_time_scale(0.25).unwrap())
        .unwrap();
    timers.advance(1.0, &mut ()).unwrap();
    assert_eq!(timers.now(), 1.0);
    timers.advance(1.0, &mut ()).unwrap();
    assert_eq!(timers.now(), 1.25);
}

#[test]
fn bad_input_is_an_error_and_changes_nothing() {
    let mut timers = Timers::<()>::new();
    let id = timers.add(1.0, |_, _| {}).unwrap();
    for delay in [f64::NAN, -1.0, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(matches!(
            timers
                .add(delay, |_, _| {})
                .map_err(|refused| refused.error),
            Err(TimerError::InvalidDelay(_))
        ));
    }
    for period in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY] {
        let result = timers
            .add_repeating(1.0, period, |_, _| {})
            .map_err(|refused| refused.error);
        assert!(
            matches!(result, Err(TimerError::InvalidPeriod(_))),
            "{period}"
        );
    }
    for scale in [f64::NAN, -1.0, f64::INFINITY] {
        assert!(matches!(
            timers.set_time_scale(scale),
            Err(TimerError::InvalidTimeScale(_))
        ));
    }
    for dt in [f64::NAN, -1.0, f64::INFINITY] {
        assert!(matches!(
            timers.advance(dt, &mut ()),
            Err(TimerError::InvalidStep(_))
        ));
    }
    assert!(matches!(
        timers.advance_to(f64::NAN, &mut ()),
        Err(TimerError::InvalidTime(_))
    ));
    assert!(matches!(
        timers.advance_to(-1.0, &mut ()),
        Err(TimerError::TimeWentBackwards { .. })
    ));
    assert!(matches!(
        timers.set_time(id, f64::NAN),
        Err(TimerError::InvalidTime(_))
    ));
    assert!(matches!(
        timers.delay(id, f64::NAN),
        Err(TimerError::InvalidDelay(_))
    ));
    assert_eq!(timers.remaining(id), Some(1.0));
    // Overflow of now + delay, of a shift, and of the scaled step.
    timers.advance_to(f64::MAX / 2.0, &mut ()).unwrap(); // `id` fires
    let late = timers.add(1.0, |_, _| {}).unwrap();
    assert_eq!(
        timers
            .add(f64::MAX, |_, _| {})
            .map_err(|refused| refused.error),
        Err(TimerError::TimeOverflow)
    );
    assert_eq!(timers.delay(late, f64::MAX), Err(TimerError::TimeOverflow));
    timers.set_time_scale(4.0).unwrap();
    assert_eq!(
        timers.advance(f64::MAX / 2.0, &mut ()),
        Err(TimerError::TimeOverflow)
    );
    // Only the valid timers were ever added, and the failed calls moved nothing.
    assert_eq!(timers.len(), 1);
    assert_eq!(timers.now(), f64::MAX / 2.0);
    assert_eq!(timers.due_time(late), Some(f64::MAX / 2.0 + 1.0));
}

#[test]
fn owners_are_told_why_their_timers_went_away() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut timers = Timers::<()>::new();
    let owner = timers.add_owner({
        let seen = Arc::clone(&seen);
        move |id, reason| seen.lock().unwrap().push((id, reason))
    });
    let cancelled = timers.timer(1.0).owner(owner).build(|_, _| {}).unwrap();
    let replaced = timers.timer(1.0).owner(owner).build(|_, _| {}).unwrap();
    let finished = timers.timer(1.0).owner(owner).build(|_, _| {}).unwrap();
    let dropped = timers.timer(9.0).owner(owner).build(|_, _| {}).unwrap();
    let replacement = timers
        .timer(9.0)
        .replacing(replaced)
        .build(|_, _| {})
        .unwrap();
    let unowned = timers.add(1.0, |_, _| {}).unwrap();
    timers.cancel(cancelled);
    timers.cancel(unowned);
    timers.advance(1.0, &mut ()).unwrap();
    assert!(timers.is_active(replacement));
    drop(timers);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (replaced, RemovalReason::Replaced),
            (cancelled, RemovalReason::Cancelled),
            (finished, RemovalReason::Finished),
            (dropped, RemovalReason::ManagerDropped),
        ]
    );
}

#[test]
fn cancel_owner_removes_all_of_its_timers_and_only_those() {
    let seen = Arc::new(Mutex::new(0));
    let mut timers = Timers::new();
    let torch = timers.add_owner({
        let seen = Arc::clone(&seen);
        move |_, reason| {
            assert_eq!(reason, RemovalReason::Cancelled);
            *seen.lock().unwrap() += 1;
        }
    });
    let other = timers.add_owner(|_, _| {});
    for i in 0..10 {
        timers
            .timer(1.0 + f64::from(i))
            .owner(torch)
            .build(tag(0))
            .unwrap();
        timers
            .timer(1.0 + f64::from(i))
            .owner(other)
            .build(tag(1))
            .unwrap();
    }
    // A paused repeating timer still belongs to its owner.
    let paused = timers
        .timer(0.5)
        .repeat(1.0)
        .owner(torch)
        .build(tag(0))
        .unwrap();
    assert!(timers.pause(paused));
    assert_eq!(timers.cancel_owner(torch), Some(11));
    assert_eq!(*seen.lock().unwrap(), 11);
    assert_eq!(timers.cancel_owner(torch), Some(0));
    let mut log = Vec::new();
    timers.advance(20.0, &mut log).unwrap();
    assert_eq!(tags(&log), [1; 10]);
    // Removing the owner unregisters it.
    assert_eq!(timers.remove_owner(torch), Some(0));
    assert_eq!(timers.cancel_owner(torch), None);
    let result = timers.timer(1.0).owner(torch).build(tag(0));
    assert_eq!(
        result.map_err(|refused| refused.error),
        Err(TimerError::StaleOwner(torch))
    );
}

#[test]
fn a_callback_can_cancel_its_own_owner_group() {
    let mut timers = Timers::new();
    let owner = timers.add_owner(|_, _| {});
    for i in 0..5 {
        timers
            .timer(f64::from(i))
            .owner(owner)
            .build(move |log: &mut Log, ctx| {
                log.push((i, ctx.scheduled()));
                ctx.cancel_owner(owner);
            })
            .unwrap();
    }
    let mut log = Vec::new();
    timers.advance(10.0, &mut log).unwrap();
    assert_eq!(log, [(0, 0.0)]);
    assert!(timers.is_empty());
}

#[test]
fn a_panicking_callback_leaves_the_manager_usable() {
    let mut timers = Timers::new();
    timers.add(1.0, |_: &mut Log, _| panic!("boom")).unwrap();
    timers.add(1.0, tag(1)).unwrap();
    timers.add(2.0, tag(2)).unwrap();
    let mut log = Vec::new();
    let result = catch_unwind(AssertUnwindSafe(|| timers.advance(5.0, &mut log)));
    assert!(result.is_err());
    // The panicking timer is gone; the others still fire, in order.
    timers.advance(5.0, &mut log).unwrap();
    assert_eq!(tags(&log), [1, 2]);
    assert!(timers.is_empty());
}

#[test]
fn callbacks_are_dropped_with_the_manager() {
    let token = Arc::new(());
    let mut timers = Timers::<()>::new();
    for _ in 0..3 {
        let token = Arc::clone(&token);
        timers
            .add(1.0, move |_, _| assert!(Arc::strong_count(&token) > 1))
            .unwrap();
    }
    assert_eq!(Arc::strong_count(&token), 4);
    timers.advance(1.0, &mut ()).unwrap();
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "finished one-shots drop their callbacks"
    );
    let token2 = Arc::clone(&token);
    timers
        .add(1.0, move |_, _| assert!(Arc::strong_count(&token2) > 1))
        .unwrap();
    drop(timers);
    assert_eq!(Arc::strong_count(&token), 1);
}

#[test]
fn next_due_sees_queued_and_held_timers_but_not_paused_ones() {
    type Seen = Vec<Option<f64>>;
    let mut timers = Timers::<Seen>::new();
    assert_eq!(timers.next_due(), None);
    timers.add(2.0, |_, _| {}).unwrap();
    timers
        .add(1.0, |seen: &mut Seen, ctx| {
            ctx.add(0.0, |_, _| {}).unwrap(); // held for the next advance, due at 1.0
            seen.push(ctx.next_due());
        })
        .unwrap();
    let paused = timers.add(0.5, |_, _| {}).unwrap();
    timers.pause(paused);
    assert_eq!(timers.next_due(), Some(1.0));
    let mut seen = Vec::new();
    timers.advance(1.5, &mut seen).unwrap();
    assert_eq!(seen, [Some(1.0)]);
    assert_eq!(timers.next_due(), Some(1.0)); // overdue: fires in the next advance
    assert_eq!(timers.advance(0.0, &mut seen).unwrap(), 1);
    assert_eq!(timers.next_due(), Some(2.0));
}

#[test]
fn a_refused_add_hands_its_callback_back_and_changes_nothing() {
    let token = Arc::new(());
    let mut timers = Timers::<Vec<u32>>::new();
    let owner = timers.add_owner(|_, _| {});
    timers.remove_owner(owner);
    let kept = Arc::clone(&token);
    let refused = timers
        .timer(1.0)
        .owner(owner)
        .build(move |log: &mut Vec<u32>, _: &mut TimerCtx<'_, Vec<u32>>| {
            assert!(Arc::strong_count(&kept) > 1);
            log.push(7);
        })
        .unwrap_err();
    assert_eq!(refused.error, TimerError::StaleOwner(owner));
    assert_eq!(timers.len(), 0);
    // Not dropped: the callback still holds its capture, and it still runs.
    assert_eq!(Arc::strong_count(&token), 2);
    let mut log = Vec::new();
    timers.add(0.5, refused.callback).unwrap();
    timers.advance(1.0, &mut log).unwrap();
    assert_eq!(log, [7]);
    assert_eq!(Arc::strong_count(&token), 1);
}

#[test]
fn timers_can_move_to_another_thread() {
    let mut timers = Timers::<Vec<f64>>::new();
    timers.add(1.0, |log, ctx| log.push(ctx.now())).unwrap();
    let log = std::thread::spawn(move || {
        let mut log = Vec::new();
        timers.advance(2.0, &mut log).unwrap();
        log
    })
    .join()
    .unwrap();
    assert_eq!(log, [1.0]);
}
