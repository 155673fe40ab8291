//! What the kernel tells the user while a run goes on: [`Warning`]s, the watchdog that notices a
//! handler stalling in a speculative state, and the panic hook that keeps speculative panics
//! quiet.
//!
//! # Ground rules
//!
//! 1. **Workers only store.** Each worker publishes a [`Beat`] per event with relaxed stores
//!    to a cache line of its own (the event count, odd while a handler runs, then the LP and
//!    the event's time). Nothing on the worker's path waits for the watchdog.
//! 2. **The watcher only reads**, every [`WATCH_EVERY`], on the thread that delivers outputs
//!    (the caller of `run`, or a rank's gateway). A beat seen odd and unchanged for longer
//!    than the threshold is a stalled handler; the LP and time are read after the count and
//!    checked against it again, so a report never pairs one event's LP with another's count.
//! 3. **Reported once per event**, and only while the event is above GVT: at GVT the
//!    handler runs exactly as on the sequential kernel, and a slow handler is the model's
//!    business, not speculation's.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use warpsim_core::{LpId, Time};

/// How often the watcher looks at the workers' beats.
pub(crate) const WATCH_EVERY: Duration = Duration::from_millis(100);

/// A handler stalled this many times the mean event time (and at least the configured
/// minimum) is reported.
const STALL_FACTOR: f64 = 1000.0;

/// Something a user should know about a run that goes on.
///
/// ```
/// use warpsim_core::{LpId, Time};
/// use warpsim_timewarp::Warning;
///
/// let warning = Warning::SlowSpeculativeHandler {
///     lp: LpId::new(3),
///     time: Time::new(2.5).unwrap(),
///     gvt: Time::new(1.0).unwrap(),
///     seconds: 4.0,
/// };
/// assert!(warning.to_string().starts_with("LP 3 has been handling its event at time 2.5"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Warning {
    /// A handler has run far longer than the worker's events take on average, on a state
    /// that is still speculative (its event is above GVT). A handler that loops, blocks or
    /// sleeps in a state the sequential kernel never reaches stalls Time Warp: see the crate
    /// docs, "Speculation".
    SlowSpeculativeHandler {
        /// The LP whose handler runs.
        lp: LpId,
        /// The time of its event.
        time: Time,
        /// GVT when the stall was noticed.
        gvt: Time,
        /// How long the handler had been running.
        seconds: f64,
    },
    /// The memory budget cannot be kept even with the least optimism the kernel allows: the
    /// run goes on (it never fails because of the budget once started), more slowly, using
    /// more than the budget.
    MemoryBudgetExceeded {
        /// The budget, in bytes.
        budget: u64,
        /// The kernel's estimate of what it holds, in bytes.
        used: u64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::SlowSpeculativeHandler {
                lp,
                time,
                gvt,
                seconds,
            } => write!(
                f,
                "{lp} has been handling its event at time {time} for {seconds:.1} s while its state is speculative (GVT is {gvt}); a handler that loops, blocks or sleeps in a state the sequential kernel never reaches stalls Time Warp"
            ),
            Warning::MemoryBudgetExceeded { budget, used } => write!(
                f,
                "the memory budget of {budget} bytes cannot be kept even with minimal optimism (about {used} bytes in use); the run goes on over budget"
            ),
        }
    }
}

/// Receives the run's [`Warning`]s, on whichever thread noticed them (see
/// [`TimeWarp::on_warning`](crate::TimeWarp::on_warning)).
pub type WarningHook = Arc<dyn Fn(&Warning) + Send + Sync>;

/// The hook a kernel uses when none is set: one line on standard error.
pub(crate) fn default_hook() -> WarningHook {
    // Not `eprintln!`, which panics when standard error is closed: a warning must never
    // be what stops a run.
    Arc::new(|warning: &Warning| {
        use std::io::Write;
        let _ = writeln!(std::io::stderr().lock(), "warning: {warning}");
    })
}

/// One worker's heartbeat (ground rule 1), on a cache line of its own so that publishing it
/// never invalidates a line another worker reads.
#[derive(Debug, Default)]
#[repr(align(64))]
pub(crate) struct Beat {
    /// Twice the events handled, plus one while a handler runs.
    count: AtomicU64,
    lp: AtomicU32,
    time: AtomicU64,
}

impl Beat {
    /// A handler of `lp` at `time` starts; `events` is the worker's count before it.
    #[inline]
    pub(crate) fn enter(&self, events: u64, lp: LpId, time: Time) {
        self.lp.store(lp.get(), Ordering::Relaxed);
        self.time.store(time.as_f64().to_bits(), Ordering::Relaxed);
        self.count.store(2 * events + 1, Ordering::Release);
    }

    /// The handler returned; the worker has now handled `events`.
    #[inline]
    pub(crate) fn leave(&self, events: u64) {
        self.count.store(2 * events, Ordering::Relaxed);
    }
}

/// The watcher's memory of one worker.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    count: u64,
    since: Option<Instant>,
    reported: bool,
}

/// Looks at the workers' beats now and then (ground rules 2 and 3).
pub(crate) struct Watchdog {
    started: Instant,
    last_look: Instant,
    minimum: Duration,
    seen: Vec<Seen>,
    hook: WarningHook,
}

impl Watchdog {
    /// A watchdog for `workers` beats that reports stalls longer than `minimum` (and than
    /// [`STALL_FACTOR`] mean events) to `hook`.
    pub(crate) fn new(workers: usize, minimum: Duration, hook: WarningHook) -> Watchdog {
        let now = Instant::now();
        Watchdog {
            started: now,
            last_look: now,
            minimum,
            seen: vec![Seen::default(); workers],
            hook,
        }
    }

    /// Looks at `beats` if [`WATCH_EVERY`] has passed since the last look; `gvt` is the GVT
    /// now.
    pub(crate) fn look(&mut self, beats: &[Beat], gvt: Time) {
        let now = Instant::now();
        if now.duration_since(self.last_look) < WATCH_EVERY {
            return;
        }
        self.last_look = now;
        // The mean wall time of an event, over all workers (one that has handled few events
        // has no mean of its own worth the name), up to when a stall began: the stall itself
        // must not raise the bar it is measured against.
        let events: u64 = beats
            .iter()
            .map(|beat| beat.count.load(Ordering::Relaxed) / 2)
            .sum();
        let mean_until = |moment: Instant| {
            moment.duration_since(self.started).as_secs_f64() * beats.len() as f64
                / events.max(1) as f64
        };
        for (beat, seen) in beats.iter().zip(&mut self.seen) {
            let count = beat.count.load(Ordering::Acquire);
            if count != seen.count || count.is_multiple_of(2) {
                *seen = Seen {
                    count,
                    since: (count % 2 == 1).then_some(now),
                    reported: false,
                };
                continue;
            }
            let Some(since) = seen.since else { continue };
            let stalled = now.duration_since(since);
            let threshold = self
                .minimum
                .as_secs_f64()
                .max(STALL_FACTOR * mean_until(since));
            if seen.reported || stalled.as_secs_f64() < threshold {
                continue;
            }
            let lp = LpId::new(beat.lp.load(Ordering::Relaxed));
            let time = f64::from_bits(beat.time.load(Ordering::Relaxed));
            if beat.count.load(Ordering::Acquire) != count {
                // The handler returned while we read: not a stall.
                continue;
            }
            let Ok(time) = Time::new(time) else { continue };
            if time <= gvt {
                continue;
            }
            seen.reported = true;
            (self.hook)(&Warning::SlowSpeculativeHandler {
                lp,
                time,
                gvt,
                seconds: stalled.as_secs_f64(),
            });
        }
    }
}

impl fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watchdog")
            .field("minimum", &self.minimum)
            .finish_non_exhaustive()
    }
}

thread_local! {
    /// Set on the kernel's worker threads: their panics are caught and reported as typed
    /// errors (or rolled back as phantoms), so the panic hook's message would only be noise.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

static INSTALL_QUIET_HOOK: std::sync::Once = std::sync::Once::new();

/// Makes panics on the calling thread silent for the rest of its life (worker threads call
/// it first thing). The first call installs, once per process, a panic hook that defers to
/// the hook that was there for every thread not marked quiet.
pub(crate) fn quiet_panics_on_this_thread() {
    INSTALL_QUIET_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    QUIET.with(|quiet| quiet.set(true));
}

#[cfg(test)]
mod tests {
    use super::{Beat, Warning, Watchdog};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use warpsim_core::{LpId, Time};

    fn watchdog(seen: &Arc<Mutex<Vec<Warning>>>, minimum: Duration) -> Watchdog {
        let seen = seen.clone();
        Watchdog::new(
            2,
            minimum,
            Arc::new(move |warning: &Warning| seen.lock().unwrap().push(warning.clone())),
        )
    }

    fn wait_and_look(watchdog: &mut Watchdog, beats: &[Beat], gvt: f64) {
        std::thread::sleep(super::WATCH_EVERY + Duration::from_millis(5));
        watchdog.look(beats, Time::new(gvt).unwrap());
    }

    #[test]
    fn a_speculative_stall_is_reported_once_with_its_lp_and_time() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut watchdog = watchdog(&seen, Duration::from_millis(1));
        let beats = [Beat::default(), Beat::default()];
        // Worker 1 enters a handler of LP 7 at time 5 after a million quick events, and never
        // leaves.
        beats[1].enter(1_000_000, LpId::new(7), Time::new(5.0).unwrap());
        wait_and_look(&mut watchdog, &beats, 1.0);
        for _ in 0..3 {
            wait_and_look(&mut watchdog, &beats, 1.0);
        }
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1, "{seen:?}");
        match &seen[0] {
            Warning::SlowSpeculativeHandler { lp, time, .. } => {
                assert_eq!(*lp, LpId::new(7));
                assert_eq!(time.as_f64(), 5.0);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn handlers_at_gvt_and_handlers_that_return_are_not_reported() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut watchdog = watchdog(&seen, Duration::from_millis(1));
        let beats = [Beat::default(), Beat::default()];
        // At GVT: the sequential kernel would be just as slow.
        beats[0].enter(1_000_000, LpId::new(1), Time::new(2.0).unwrap());
        // Worker 1 keeps handling events.
        for events in 0..4 {
            beats[1].enter(1_000_000 + events, LpId::new(2), Time::new(9.0).unwrap());
            wait_and_look(&mut watchdog, &beats, 2.0);
            beats[1].leave(1_000_000 + events + 1);
        }
        wait_and_look(&mut watchdog, &beats, 2.0);
        assert!(seen.lock().unwrap().is_empty());
    }
}
