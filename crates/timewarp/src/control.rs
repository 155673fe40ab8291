//! The adaptive controllers each worker runs at every GVT: the optimism window, the state-save
//! interval and the memory budget's window. They change only speed, never what commits, and
//! are plain structs — numbers in, a decision out — so each is tested here without threads.

/// The fewest events of its own an adaptive window should hold (narrower, GVT rounds rather
/// than rollbacks would set the pace).
pub(crate) const WINDOW_EVENTS: f64 = 512.0;

/// The most events of its own an adaptive window lets a worker run past GVT, even when
/// nothing is rolled back. Beyond a few GVT intervals' worth, running ahead wastes no work
/// but costs memory: every record past GVT stays uncommitted, so the worker's working set
/// (and page faults, and cache misses at commit) grows with how far it runs ahead. On a
/// shared machine that is how far a worker runs while its peer is descheduled: PHOLD 16,384
/// LPs on 2 threads sharing a core with a busy process held 15–25 MB uncommitted and burnt
/// ≈ 25 % more CPU than with a window of this many events (issue 13, part 5).
pub(crate) const WINDOW_EVENTS_MAX: f64 = 8192.0;

/// However wide its window, a worker holds at most this many uncommitted records (or four
/// GVT intervals' worth, if more) and otherwise waits for GVT, as at a window. The window
/// bounds optimism in simulated time only once a few GVTs have measured the run; before
/// that, or while GVT cannot pass an event (a failed handler not yet known to be real), a
/// worker whose peers cannot keep up would run away: a failing model on 4 threads once ran
/// 3.7 M events past GVT and several gigabytes before GVT reached the failure.
pub(crate) const RECORDS_MAX: u64 = 4 * WINDOW_EVENTS_MAX as u64;

/// The window grows only while less than this share of the work run since the last GVTs
/// was rolled back. At 5 %, PHOLD 1,024 LPs on 2 threads grew into 2–3.5 % waste (commit
/// ratio 0.97–0.98) and ran 1.13–1.14× the time of the best fixed window
/// (`scripts/window-matrix.sh`); at 2 % it stays near 1 % waste, and every row of that
/// matrix is within 10 % of its best fixed window in two passes (issue 13, part 6).
const GROW_BELOW: f64 = 0.02;

/// How much the memory of the window a worker thrashed at fades per calm GVT.
const CLIFF_FADE: f64 = 1.02;

/// The widest adaptive state-save interval: wider ones save little more copying, and keep
/// more committed records for a rollback to coast from.
pub(crate) const MAX_CHECKPOINT: u32 = 32;

/// One event in this many is timed, and its state save if it makes one, for the adaptive
/// state-save interval.
const TIMED_EVERY: u32 = 64;

/// A worker's counters as the controllers read them at a GVT.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Progress {
    pub(crate) processed: u64,
    pub(crate) rolled_back: u64,
    pub(crate) committed: u64,
    /// Rollbacks (primary and secondary), not events rolled back.
    pub(crate) rollbacks: u64,
}

/// The optimism window (see [`TimeWarp::adaptive_window`](crate::TimeWarp::adaptive_window)).
/// Runaway optimism — an LP far ahead whose work keeps being undone by stragglers — is Time
/// Warp's classic instability; bounding it turns wasted work into waiting, which a GVT round
/// ends.
#[derive(Debug, Clone)]
pub(crate) struct WindowControl {
    /// The window in force: the fixed one, or the adaptive one.
    window: Option<f64>,
    /// The latest time executed since the last GVT, and the events processed and rolled
    /// back then.
    horizon: f64,
    at_last_gvt: (u64, u64),
    /// The decayed events rolled back and run, the rate (own events committed per unit of
    /// simulated time), and the window it last thrashed at.
    waste: (f64, f64),
    rate: f64,
    cliff: f64,
}

impl WindowControl {
    /// A controller starting from `fixed` (no window if `None`).
    pub(crate) fn new(fixed: Option<f64>) -> WindowControl {
        WindowControl {
            window: fixed,
            horizon: 0.0,
            at_last_gvt: (0, 0),
            waste: (0.0, 0.0),
            rate: 0.0,
            cliff: f64::INFINITY,
        }
    }

    /// The window in force.
    #[inline]
    pub(crate) fn window(&self) -> Option<f64> {
        self.window
    }

    /// An event at `time` is about to run.
    #[inline]
    pub(crate) fn ran(&mut self, time: f64) {
        self.horizon = self.horizon.max(time);
    }

    /// The latest time run since the last GVT that adapted the window.
    pub(crate) fn horizon(&self) -> f64 {
        self.horizon
    }

    /// After a checkpoint taken in place, whose pause rolled back what ran past it: starts
    /// the next interval from `processed` and `rolled_back` and the time `gvt`, so that the
    /// pause's rollbacks do not read as wasted optimism. (Read as waste they halved the
    /// window and set the cliff at the pause's tiny span, so the window stayed near its
    /// floor for hundreds of GVTs: over MPI, where a round costs collectives, a run with
    /// checkpoints every 10 s once took 2.6× as long.)
    pub(crate) fn skip_pause(&mut self, processed: u64, rolled_back: u64, gvt: f64) {
        self.at_last_gvt = (processed, rolled_back);
        self.horizon = gvt;
    }

    /// Adapts the window to the waste since the last GVT, `gvt` being the new GVT's time.
    pub(crate) fn adapt(&mut self, gvt: f64, progress: Progress) {
        let ran = progress.processed - self.at_last_gvt.0;
        if ran < 64 {
            // Too little evidence; keep counting.
            return;
        }
        let span = (self.horizon - gvt).max(0.0);
        // Waste is rolled back over run, both counts decayed by half at every GVT: one
        // interval may hold only a few dozen events, and the rollback of a transient (the
        // other thread descheduled for a moment) would otherwise read as thrashing.
        self.waste.0 = 0.5 * self.waste.0 + (progress.rolled_back - self.at_last_gvt.1) as f64;
        self.waste.1 = 0.5 * self.waste.1 + ran as f64;
        let waste = self.waste.0 / self.waste.1;
        if gvt > 0.0 && gvt.is_finite() {
            self.rate = progress.committed as f64 / gvt;
        }
        // Never so narrow that a window holds fewer than a few hundred of this worker's
        // events: below that, GVT rounds, not rollbacks, would set the pace.
        let floor = if self.rate > 0.0 {
            WINDOW_EVENTS / self.rate
        } else {
            0.0
        };
        // Never so wide that it holds more than WINDOW_EVENTS_MAX of them (see there).
        let ceiling = if self.rate > 0.0 {
            WINDOW_EVENTS_MAX / self.rate
        } else {
            f64::INFINITY
        };
        // Optimism has a cliff (Sharks World on 2 threads runs at 99% efficiency with 40
        // time units ahead of GVT and at 55% with 80), and waste stays low right up to it,
        // so a window that grew while the waste was low would jump over it again and again.
        // The window where it last thrashed is remembered, and growth stops short of it;
        // that memory fades slowly, so a transient does not throttle a run for good.
        if waste > 0.25 {
            let at = self.window.map_or(span, |window| window.min(span));
            self.cliff = at;
            self.window = Some((at * 0.5).max(floor));
        } else if waste < GROW_BELOW
            && let Some(window) = self.window
        {
            self.cliff *= CLIFF_FADE;
            self.window = Some((window * 1.25).min(0.75 * self.cliff).max(floor));
        }
        if ceiling.is_finite() {
            self.window = Some(self.window.map_or(ceiling, |window| window.min(ceiling)));
        }
        self.at_last_gvt = (progress.processed, progress.rolled_back);
        self.horizon = gvt;
    }
}

/// The state-save interval (see
/// [`TimeWarp::checkpoint_interval`](crate::TimeWarp::checkpoint_interval)). Saving before
/// every `k`-th event costs `save / k` per event, and a rollback then re-runs `(k - 1) / 2`
/// events on average to rebuild the state, so with `r` rollbacks per event the cost per
/// event, `save / k + r × event × (k - 1) / 2`, is least at `k = √(2 save / (r × event))`.
/// Sharks World's sectors copy kilobytes of creature lists per save and roll back seldom: `k`
/// grows; a thrashing run's `k` stays near 1.
#[derive(Debug, Clone)]
pub(crate) struct CheckpointControl {
    interval: u32,
    adaptive: bool,
    /// The smoothed cost of a save and of an event (seconds, sampled), the decayed rollbacks
    /// and events run, and those counters at the last look.
    save_cost: f64,
    event_cost: f64,
    ticks: u32,
    rollback_rate: (f64, f64),
    at_last_look: (u64, u64),
}

impl CheckpointControl {
    /// A controller with the interval `interval`, fixed or (when `adaptive`) the first one.
    pub(crate) fn new(interval: u32, adaptive: bool) -> CheckpointControl {
        CheckpointControl {
            interval,
            adaptive,
            save_cost: 0.0,
            event_cost: 0.0,
            ticks: 0,
            rollback_rate: (0.0, 0.0),
            at_last_look: (0, 0),
        }
    }

    /// The interval in force.
    #[inline]
    pub(crate) fn interval(&self) -> u32 {
        self.interval
    }

    /// Whether to time the event about to run (one in [`TIMED_EVERY`], when adaptive).
    #[inline]
    pub(crate) fn time_this_event(&mut self) -> bool {
        self.adaptive && {
            self.ticks = self.ticks.wrapping_add(1);
            self.ticks.is_multiple_of(TIMED_EVERY)
        }
    }

    /// A timed event took `event` seconds, after a save of `save` seconds if it made one.
    pub(crate) fn sampled(&mut self, save: Option<f64>, event: f64) {
        self.event_cost = smooth(self.event_cost, event);
        if let Some(save) = save {
            self.save_cost = smooth(self.save_cost, save);
        }
    }

    /// Sets the interval from the samples and the rollbacks since the last look.
    pub(crate) fn adapt(&mut self, progress: Progress) {
        let ran = progress.processed - self.at_last_look.0;
        if ran < 256 || self.save_cost == 0.0 || self.event_cost == 0.0 {
            // Too little evidence; keep counting.
            return;
        }
        // Decayed by half per look, like the window's waste (see `WindowControl::adapt`).
        self.rollback_rate.0 =
            0.5 * self.rollback_rate.0 + (progress.rollbacks - self.at_last_look.1) as f64;
        self.rollback_rate.1 = 0.5 * self.rollback_rate.1 + ran as f64;
        self.at_last_look = (progress.processed, progress.rollbacks);
        let rate = self.rollback_rate.0 / self.rollback_rate.1;
        self.interval = best_interval(self.save_cost, self.event_cost, rate, self.interval);
    }
}

/// The memory budget's own window (see [`TimeWarp::memory`](crate::TimeWarp::memory)):
/// halved at every GVT while the run is over budget, grown by a quarter once it is under
/// three quarters of it, never below a span of about [`WINDOW_EVENTS`] of the worker's
/// events, and dropped once it is wide again.
#[derive(Debug, Clone)]
pub(crate) struct MemoryControl {
    budget: u64,
    over: bool,
    window: Option<f64>,
    /// GVTs in a row at the narrowest window and still over budget, and whether that was
    /// said.
    over_at_floor: u32,
    warned: bool,
}

impl MemoryControl {
    /// A controller for a budget of `budget` bytes.
    pub(crate) fn new(budget: u64) -> MemoryControl {
        MemoryControl {
            budget,
            over: false,
            window: None,
            over_at_floor: 0,
            warned: false,
        }
    }

    /// The budget's window in force.
    #[inline]
    pub(crate) fn window(&self) -> Option<f64> {
        self.window
    }

    /// The run as a whole now holds `sum` bytes; `span` is how far past GVT this worker has
    /// run. Returns `true` when the run has just gone over budget: then fossils should be
    /// collected at once (a GVT round), and until it comes the worker runs no further.
    pub(crate) fn gauge(&mut self, sum: u64, span: f64) -> bool {
        let over = sum > self.budget;
        let newly = over && !self.over;
        if newly {
            self.window = Some(self.window.map_or(span, |window| window.min(span)));
        }
        self.over = over;
        newly
    }

    /// Adapts the window at a new GVT at time `gvt`: the worker has committed `committed`
    /// events, run up to `horizon`, and holds `used` bytes. Returns `true` once, when the
    /// budget could not be kept for a few GVTs in a row even at the narrowest window (the
    /// caller warns).
    pub(crate) fn adapt(&mut self, gvt: f64, committed: u64, horizon: f64, used: u64) -> bool {
        let floor = if gvt > 0.0 && gvt.is_finite() && committed > 0 {
            WINDOW_EVENTS * gvt / committed as f64
        } else {
            0.0
        };
        if self.over {
            let span = (horizon - gvt).max(0.0);
            let current = self.window.map_or(span, |window| window.min(span));
            if current <= floor {
                self.over_at_floor += 1;
            }
            self.window = Some((current * 0.5).max(floor));
        } else {
            self.over_at_floor = 0;
            if let Some(window) = self.window
                && (used as f64) < 0.75 * self.budget as f64
            {
                let widened = window * 1.25;
                // Far wider than anything that ran: the budget no longer binds.
                self.window =
                    (widened <= 4.0 * (horizon - gvt).max(floor)).then_some(widened.max(floor));
            }
        }
        let warn = self.over_at_floor >= 8 && !self.warned;
        self.warned |= warn;
        warn
    }
}

/// The state-save interval that costs least per event (see [`CheckpointControl`]), given
/// the cost of a save and of an event and the rollbacks per event; at most double `current`,
/// so that one calm interval cannot swing it to the maximum.
fn best_interval(save: f64, event: f64, rollbacks: f64, current: u32) -> u32 {
    // Infinite without rollbacks, and NaN (which `max` turns into 1) if nothing was timed.
    let best = (2.0 * save / (rollbacks * event)).sqrt();
    let best = best.max(1.0).min(f64::from(MAX_CHECKPOINT)) as u32;
    best.min(current.saturating_mul(2))
}

/// An exponentially weighted mean of timing samples, `sample` weighing one eighth (the first
/// sample is taken whole).
fn smooth(mean: f64, sample: f64) -> f64 {
    if mean == 0.0 {
        sample
    } else {
        mean + (sample - mean) / 8.0
    }
}

#[cfg(test)]
mod tests {
    use super::{
        CheckpointControl, MAX_CHECKPOINT, MemoryControl, Progress, WINDOW_EVENTS,
        WINDOW_EVENTS_MAX, WindowControl, best_interval,
    };

    #[test]
    fn the_save_interval_balances_copying_against_coasting() {
        // Saves cost 50 events' work, 1 rollback per 100 events: √(2 · 50 / 0.01) = 100,
        // capped at the maximum.
        assert_eq!(best_interval(50.0, 1.0, 0.01, 64), MAX_CHECKPOINT);
        // Saves cost 2 events, 1 rollback per 100 events: √400 = 20.
        assert_eq!(best_interval(2.0, 1.0, 0.01, 64), 20);
        // Cheap saves and frequent rollbacks: save before every event.
        assert_eq!(best_interval(0.1, 1.0, 0.5, 8), 1);
        // No rollbacks: grow, but at most double per step.
        assert_eq!(best_interval(1.0, 1.0, 0.0, 3), 6);
        assert_eq!(best_interval(1.0, 1.0, 0.0, 31), MAX_CHECKPOINT);
        // Nothing timed yet (0 / 0): stay at one save per event.
        assert_eq!(best_interval(0.0, 0.0, 0.0, 4), 1);
    }

    #[test]
    fn the_checkpoint_controller_times_one_event_in_64_and_follows_its_samples() {
        let mut control = CheckpointControl::new(1, true);
        let timed = (0..640).filter(|_| control.time_this_event()).count();
        assert_eq!(timed, 10);
        // Saves as dear as 8 events, no rollbacks: the interval doubles per look.
        control.sampled(Some(8e-6), 1e-6);
        let mut progress = Progress::default();
        for expected in [2, 4, 8, 16, 32, 32] {
            progress.processed += 1000;
            control.adapt(progress);
            assert_eq!(control.interval(), expected);
        }
        // Now one rollback every 10 events. The rate is decayed: 100 rollbacks over the
        // ≈ 1984 events the decayed count holds after seven looks, 0.0504, so
        // √(2 · 8 / 0.0504) ≈ 17.8.
        progress.processed += 1000;
        progress.rollbacks += 100;
        control.adapt(progress);
        assert_eq!(control.interval(), 17);
        // A fixed interval never times anything.
        let mut fixed = CheckpointControl::new(3, false);
        assert!((0..1000).all(|_| !fixed.time_this_event()));
        assert_eq!(fixed.interval(), 3);
    }

    fn progress(processed: u64, rolled_back: u64, committed: u64) -> Progress {
        Progress {
            processed,
            rolled_back,
            committed,
            rollbacks: 0,
        }
    }

    #[test]
    fn a_little_waste_holds_the_window_where_it_is() {
        let mut control = WindowControl::new(Some(20.0));
        control.ran(20.0);
        // 3 % of the events run were rolled back: neither thrashing nor calm.
        control.adapt(10.0, progress(10_000, 300, 500));
        assert_eq!(control.window(), Some(20.0));
        control.ran(20.0);
        control.adapt(10.0, progress(20_000, 400, 1_000));
        assert!(control.window() > Some(20.0));
    }

    #[test]
    fn the_rollbacks_of_a_checkpoint_taken_in_place_are_not_waste() {
        let calm = |control: &mut WindowControl| {
            control.ran(20.0);
            control.adapt(10.0, progress(10_000, 0, 500));
        };
        let mut control = WindowControl::new(Some(20.0));
        calm(&mut control);
        let before = control.window();
        // The pause rolled back 4,000 of the 6,000 events run since (the same counts, read
        // at the next GVT without `skip_pause`, halve the window).
        let mut unaware = control.clone();
        unaware.ran(12.0);
        unaware.adapt(11.0, progress(16_000, 4_000, 600));
        assert!(unaware.window() < before);
        control.skip_pause(16_000, 4_000, 10.5);
        control.ran(12.0);
        control.adapt(11.0, progress(17_000, 4_000, 600));
        assert!(control.window() >= before);
    }

    #[test]
    fn the_window_halves_when_work_is_wasted_and_grows_short_of_the_cliff() {
        let mut control = WindowControl::new(Some(100.0));
        // Ran 80 time units past GVT 10 and rolled back half: halve from the span run.
        // (500 committed by time 10: 50 per unit, so the floor, 10.24, and the ceiling,
        // 163.84, are out of the way.)
        control.ran(90.0);
        control.adapt(10.0, progress(10_000, 5_000, 500));
        assert_eq!(control.window(), Some(40.0));
        // Calm GVTs: grow by a quarter, but only to 3/4 of the cliff (80, fading 2% a step).
        let mut processed = 10_000;
        for _ in 0..10 {
            processed += 10_000;
            control.ran(20.0);
            control.adapt(20.0, progress(processed, 5_000, 1_000));
        }
        let window = control.window().unwrap();
        assert!(window > 40.0 && window <= 0.75 * 80.0 * 1.02f64.powi(10) + 1e-9);
        // Never narrower than WINDOW_EVENTS of the worker's events: 1 event per time unit
        // committed over 1000 units means a floor of 512 units.
        let mut control = WindowControl::new(Some(1.0));
        control.ran(1001.0);
        control.adapt(1000.0, progress(10_000, 9_000, 1000));
        assert_eq!(control.window(), Some(WINDOW_EVENTS));
        // Without a window, a run that does not thrash gets one only as wide as holds
        // WINDOW_EVENTS_MAX of its events: 9,990 committed by time 10 is 999 per unit.
        let mut control = WindowControl::new(None);
        control.ran(50.0);
        control.adapt(10.0, progress(10_000, 10, 9_990));
        assert_eq!(control.window(), Some(WINDOW_EVENTS_MAX / 999.0));
        // ... and growth stops there too.
        let mut control = WindowControl::new(Some(8.0));
        let mut processed = 10_000;
        for _ in 0..10 {
            processed += 10_000;
            control.ran(20.0);
            control.adapt(10.0, progress(processed, 0, 10_000));
        }
        assert_eq!(control.window(), Some(WINDOW_EVENTS_MAX / 1000.0));
        // Before any commit the rate is unknown: no ceiling yet.
        let mut control = WindowControl::new(None);
        control.ran(50.0);
        control.adapt(0.0, progress(10_000, 10, 0));
        assert_eq!(control.window(), None);
        // Too few events since the last GVT: no decision.
        let mut control = WindowControl::new(Some(8.0));
        control.adapt(10.0, progress(63, 60, 3));
        assert_eq!(control.window(), Some(8.0));
    }

    #[test]
    fn the_memory_window_halves_over_budget_widens_under_it_and_warns_once_at_the_floor() {
        let mut control = MemoryControl::new(1000);
        assert_eq!(control.window(), None);
        // Over budget 30 units past GVT: stop there, then halve at each GVT.
        assert!(control.gauge(2000, 30.0));
        assert!(!control.gauge(2000, 30.0), "reported once per crossing");
        assert_eq!(control.window(), Some(30.0));
        // 10 000 committed by time 100: the floor is 512 × 100 / 10 000 = 5.12.
        assert!(!control.adapt(100.0, 10_000, 130.0, 2000));
        assert_eq!(control.window(), Some(15.0));
        assert!(!control.adapt(100.0, 10_000, 130.0, 2000));
        assert_eq!(control.window(), Some(7.5));
        // At the floor and still over: warn after 8 such GVTs, once.
        let warnings: usize = (0..20)
            .map(|_| usize::from(control.adapt(100.0, 10_000, 130.0, 2000)))
            .sum();
        assert_eq!(warnings, 1);
        assert_eq!(control.window(), Some(5.12));
        // Under 3/4 of the budget: widen by a quarter, and drop the window once it is far
        // wider than what runs.
        control.gauge(500, 1.0);
        assert!(!control.adapt(100.0, 10_000, 110.0, 500));
        assert_eq!(control.window(), Some(6.4));
        for _ in 0..20 {
            control.adapt(100.0, 10_000, 110.0, 500);
        }
        assert_eq!(control.window(), None);
    }
}
