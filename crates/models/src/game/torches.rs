//! Torches: per-frame polling against event-based timers, over the same torches.
//!
//! Every torch burns for a random time. The chapter's Listing 3 updates each torch every
//! frame — subtract the frame time, test, and turn it off when its life is spent — so a frame
//! costs O(torches) whether or not anything happens. The event-based version schedules one
//! timer per torch at its burn time, and a frame costs O(torches that go out in it).
//!
//! [`run`] builds both from the same random burn times, then runs the game loop: each frame
//! first polls every torch, then advances the timers by the same frame time, and the wall time
//! of each half is recorded. Both must put out exactly the same torches.
//!
//! ```
//! use warpsim_models::game::torches::{TorchesParams, run};
//!
//! let params = TorchesParams { n: 10_000, seconds: 2.0, ..TorchesParams::default() };
//! let report = run(&params).unwrap();
//! assert_eq!(report.frames, 120);
//! assert_eq!(report.extinguished_polling, report.extinguished_events);
//! assert!(report.extinguished_events > 0);
//! ```

use std::time::Instant;

use rand::{RngExt, SeedableRng};
use warpsim_core::LpRng;
use warpsim_timers::{Budget, Timers};

use super::sliced::Sliced;
pub use super::sliced::{SlicedReport, TimeSlice};

use crate::{ParamError, check_range};

/// The torches demo's parameters. The defaults are the CLI scenario.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TorchesParams {
    /// Number of torches.
    pub n: u32,
    /// Length of the run in game seconds.
    pub seconds: f64,
    /// Frames per second (the frame time is `1 / fps`).
    pub fps: f64,
    /// Seed of the burn times.
    pub seed: u64,
    /// Shortest burn time, in seconds (greater than zero).
    pub burn_min: f64,
    /// Longest burn time, in seconds: burn times are uniform in `[burn_min, burn_max)`.
    pub burn_max: f64,
    /// The slice of the chapter's time-sliced update (Listing 2), run beside the other two;
    /// `None` leaves it out.
    pub slice: Option<TimeSlice>,
    /// A per-frame budget of callbacks for a third, budgeted run of the timers
    /// ([`Timers::advance_within`]); `None` leaves it out.
    pub budget: Option<u32>,
}

impl Default for TorchesParams {
    fn default() -> Self {
        TorchesParams {
            n: 1_000_000,
            seconds: 10.0,
            fps: 60.0,
            seed: 7,
            burn_min: 1.0,
            burn_max: 20.0,
            slice: Some(TimeSlice::default()),
            budget: None,
        }
    }
}

impl TorchesParams {
    /// Checks every parameter.
    ///
    /// # Errors
    ///
    /// A [`ParamError`] naming the first bad parameter: no torches, a non-finite or
    /// non-positive length or frame rate, a run of no frames, or burn times that are not
    /// `0 < burn_min < burn_max`.
    ///
    /// ```
    /// use warpsim_models::game::torches::TorchesParams;
    /// let bad = TorchesParams { fps: 0.0, ..TorchesParams::default() };
    /// assert_eq!(bad.validate().unwrap_err().param, "fps");
    /// ```
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.n == 0 {
            return Err(ParamError::new("n", "must be at least 1 (got 0)"));
        }
        check_range("seconds", self.seconds, 0.0, f64::MAX)?;
        check_range("fps", self.fps, 0.0, f64::MAX)?;
        if self.fps == 0.0 {
            return Err(ParamError::new("fps", "must be positive (got 0)"));
        }
        let frames = self.seconds * self.fps;
        if frames.round() < 1.0 || frames > 1e9 {
            return Err(ParamError::new(
                "seconds",
                format!("seconds × fps must be between 1 and 10⁹ frames (got {frames})"),
            ));
        }
        check_range("burn_min", self.burn_min, 0.0, f64::MAX)?;
        if self.burn_min == 0.0 {
            return Err(ParamError::new("burn_min", "must be positive (got 0)"));
        }
        check_range("burn_max", self.burn_max, 0.0, f64::MAX)?;
        if self.burn_max <= self.burn_min {
            return Err(ParamError::new(
                "burn_max",
                format!(
                    "must be greater than burn_min {} (got {})",
                    self.burn_min, self.burn_max
                ),
            ));
        }
        if self.budget == Some(0) {
            return Err(ParamError::new(
                "budget",
                "must be at least 1 callback per frame (got 0)",
            ));
        }
        match self.slice {
            Some(TimeSlice::Millis(ms)) if !(ms.is_finite() && ms > 0.0) => {
                return Err(ParamError::new(
                    "slice_ms",
                    format!("must be a positive number of milliseconds (got {ms})"),
                ));
            }
            Some(TimeSlice::Torches(0)) => {
                return Err(ParamError::new(
                    "slice_torches",
                    "must be at least 1 (got 0)",
                ));
            }
            _ => {}
        }
        Ok(())
    }

    /// Bytes a run allocates per torch, at least: its burn time, its polled copy and its `lit`
    /// flag, and its timer (a 64-byte slot of the timer manager and a 24-byte queue entry).
    /// Callers multiply by `n` to check a run against the memory available before starting it.
    ///
    /// ```
    /// use warpsim_models::game::torches::TorchesParams;
    /// assert!(TorchesParams::bytes_per_torch() >= 100);
    /// ```
    pub fn bytes_per_torch() -> u64 {
        (std::mem::size_of::<f64>() + std::mem::size_of::<PolledTorch>() + 1 + 64 + 24) as u64
    }

    /// Number of frames the run has.
    fn frames(&self) -> u64 {
        (self.seconds * self.fps).round() as u64
    }
}

/// Wall-clock cost of one frame's work, over all frames of a run, in nanoseconds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FrameCost {
    /// Mean over frames.
    pub mean_ns: f64,
    /// 99th percentile over frames.
    pub p99_ns: f64,
    /// Worst frame.
    pub max_ns: f64,
}

impl FrameCost {
    pub(crate) fn from_samples(mut samples: Vec<u64>) -> FrameCost {
        samples.sort_unstable();
        let n = samples.len().max(1);
        let mean = samples.iter().map(|&s| s as f64).sum::<f64>() / n as f64;
        // Nearest-rank percentile.
        let rank = ((0.99 * n as f64).ceil() as usize).clamp(1, n) - 1;
        FrameCost {
            mean_ns: mean,
            p99_ns: samples.get(rank).copied().unwrap_or(0) as f64,
            max_ns: samples.last().copied().unwrap_or(0) as f64,
        }
    }
}

/// What a torches run measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TorchesReport {
    /// The parameters of the run.
    pub params: TorchesParams,
    /// Frames run.
    pub frames: u64,
    /// Per-frame cost of the polling loop (Listing 3 over every torch).
    pub polling: FrameCost,
    /// Per-frame cost of `Timers::advance`.
    pub events: FrameCost,
    /// `polling.mean_ns / events.mean_ns`: how many times cheaper an event-based frame is.
    pub mean_ratio: f64,
    /// `polling.p99_ns / events.p99_ns`.
    pub p99_ratio: f64,
    /// Torches the polling loop put out.
    pub extinguished_polling: u64,
    /// Torches the timers put out.
    pub extinguished_events: u64,
    /// Wall time to schedule the timers of all torches and prime the queue, in milliseconds
    /// (paid once, before the first frame; the polling loop has no such cost).
    pub setup_ms: f64,
    /// Wall time of all polling frames together, in milliseconds.
    pub polling_total_ms: f64,
    /// Wall time of all timer frames together, in milliseconds.
    pub events_total_ms: f64,
    /// Timers still scheduled at the end: the torches still burning.
    pub pending_at_end: u64,
    /// The chapter's time-sliced update over the same torches, if it ran.
    pub sliced: Option<SlicedReport>,
    /// The timers under a per-frame budget, if one was given.
    pub budgeted: Option<BudgetedReport>,
}

/// The timers run with a per-frame budget of callbacks ([`Timers::advance_within`]): frames
/// no longer spike, and what that costs is lateness.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BudgetedReport {
    /// Most callbacks per frame.
    pub budget: u32,
    /// Per-frame cost.
    pub cost: FrameCost,
    /// Torches put out (those carried past the last frame are still burning).
    pub extinguished: u64,
    /// Callbacks that ran in a later frame than the one they were due in.
    pub late: u64,
    /// The largest lateness, in game seconds: from a callback's due time to the start of the
    /// frame that ran it.
    pub max_lateness_s: f64,
    /// Frames that ended with due callbacks still waiting.
    pub frames_carrying_over: u64,
}

/// A torch as the chapter writes it: a life span, decremented every frame.
#[derive(Debug, Clone, Copy)]
struct PolledTorch {
    life_span: f64,
    lit: bool,
}

impl PolledTorch {
    /// The chapter's Listing 3 (`Torch::Update`). Returns `true` when the torch goes out.
    #[inline]
    fn update(&mut self, delta: f64) -> bool {
        if self.life_span > 0.0 {
            self.life_span -= delta;
            if self.life_span <= 0.0 {
                self.lit = false;
                return true;
            }
        }
        false
    }
}

/// The event-based side's world: which torches are lit.
#[derive(Debug)]
struct TorchWorld {
    lit: Vec<bool>,
    extinguished: u64,
}

/// Runs both loops over the same torches and measures each frame.
///
/// # Errors
///
/// A [`ParamError`] from [`TorchesParams::validate`].
pub fn run(params: &TorchesParams) -> Result<TorchesReport, ParamError> {
    params.validate()?;
    let n = params.n as usize;
    let mut rng = LpRng::seed_from_u64(params.seed);
    let burn_times: Vec<f64> = (0..n)
        .map(|_| rng.random_range(params.burn_min..params.burn_max))
        .collect();

    let mut polled: Vec<PolledTorch> = burn_times
        .iter()
        .map(|&life_span| PolledTorch {
            life_span,
            lit: true,
        })
        .collect();

    let setup = Instant::now();
    let mut timers = torch_timers(&burn_times)?;
    let setup_ms = setup.elapsed().as_secs_f64() * 1e3;
    let mut world = TorchWorld {
        lit: vec![true; n],
        extinguished: 0,
    };
    let mut sliced = params.slice.map(|slice| Sliced::new(&burn_times, slice));
    let budgeted = match params.budget {
        Some(_) => Some(torch_timers(&burn_times)?),
        None => None,
    };
    drop(burn_times);

    let frames = params.frames();
    let dt = 1.0 / params.fps;
    let mut polling_ns = Vec::with_capacity(frames as usize);
    let mut events_ns = Vec::with_capacity(frames as usize);
    let mut sliced_ns = Vec::new();
    // Frame (1-based) in which polling put each torch out: the yardstick of the sliced run.
    let mut polled_out_frame = vec![0u32; if sliced.is_some() { n } else { 0 }];
    let mut extinguished_polling = 0u64;
    for frame in 1..=frames {
        let start = Instant::now();
        let mut out = 0u64;
        for torch in &mut polled {
            out += u64::from(torch.update(dt));
        }
        polling_ns.push(elapsed_ns(start));
        extinguished_polling += out;
        if out > 0 && !polled_out_frame.is_empty() {
            // Untimed bookkeeping for the sliced run's report.
            for (i, torch) in polled.iter().enumerate() {
                if !torch.lit && polled_out_frame[i] == 0 {
                    polled_out_frame[i] = frame as u32;
                }
            }
        }

        let start = Instant::now();
        timers
            .advance(dt, &mut world)
            .map_err(|e| ParamError::new("fps", e.to_string()))?;
        events_ns.push(elapsed_ns(start));

        if let Some(sliced) = &mut sliced {
            let start = Instant::now();
            sliced.frame(frame as u32, dt);
            sliced_ns.push(elapsed_ns(start));
        }
    }
    // Both sides agree torch by torch, not just in number.
    debug_assert!(polled.iter().zip(&world.lit).all(|(p, &lit)| p.lit == lit));
    drop(polled);
    let sliced = sliced.map(|sliced| sliced.report(&polled_out_frame, frames, dt, sliced_ns));
    let budgeted = match (budgeted, params.budget) {
        (Some(timers), Some(budget)) => Some(run_budgeted(timers, n, frames, dt, budget)?),
        _ => None,
    };

    let polling_total_ms = polling_ns.iter().sum::<u64>() as f64 / 1e6;
    let events_total_ms = events_ns.iter().sum::<u64>() as f64 / 1e6;
    let polling = FrameCost::from_samples(polling_ns);
    let events = FrameCost::from_samples(events_ns);
    Ok(TorchesReport {
        params: params.clone(),
        frames,
        mean_ratio: polling.mean_ns / events.mean_ns.max(1.0),
        p99_ratio: polling.p99_ns / events.p99_ns.max(1.0),
        polling,
        events,
        extinguished_polling,
        extinguished_events: world.extinguished,
        setup_ms,
        polling_total_ms,
        events_total_ms,
        pending_at_end: timers.len() as u64,
        sliced,
        budgeted,
    })
}

/// One timer per torch, at its burn time, primed with `next_due` as a game would during
/// loading (the ladder queue spreads timers added in bulk over its buckets the first time it
/// is looked at; the default timing wheel files them as they are added and only looks into
/// its first bucket).
fn torch_timers(burn_times: &[f64]) -> Result<Timers<TorchWorld>, ParamError> {
    let mut timers = Timers::with_capacity(burn_times.len());
    for (i, &burn_time) in burn_times.iter().enumerate() {
        // The torch's index rides in the payload, so the callback captures nothing and the
        // million timers cost no allocation.
        timers
            .timer(burn_time)
            .payload(i as u64)
            .build(|world: &mut TorchWorld, ctx| {
                world.lit[ctx.payload() as usize] = false;
                world.extinguished += 1;
            })
            .map_err(|e| ParamError::new("burn_max", e.to_string()))?;
    }
    timers.next_due();
    Ok(timers)
}

/// The same frames with at most `budget` callbacks each.
fn run_budgeted(
    mut timers: Timers<TorchWorld>,
    n: usize,
    frames: u64,
    dt: f64,
    budget: u32,
) -> Result<BudgetedReport, ParamError> {
    let mut world = TorchWorld {
        lit: vec![true; n],
        extinguished: 0,
    };
    let mut samples = Vec::with_capacity(frames as usize);
    let (mut late, mut max_lateness, mut carrying) = (0u64, 0.0f64, 0u64);
    for _ in 0..frames {
        let start = Instant::now();
        let report = timers
            .advance_within(dt, &mut world, Budget::callbacks(budget as usize))
            .map_err(|e| ParamError::new("fps", e.to_string()))?;
        samples.push(elapsed_ns(start));
        late += report.late as u64;
        max_lateness = max_lateness.max(report.max_lateness);
        carrying += u64::from(report.carried_over);
    }
    Ok(BudgetedReport {
        budget,
        cost: FrameCost::from_samples(samples),
        extinguished: world.extinguished,
        late,
        max_lateness_s: max_lateness,
        frames_carrying_over: carrying,
    })
}

fn elapsed_ns(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_loops_put_out_the_same_torches() {
        for seed in 0..4 {
            let params = TorchesParams {
                n: 20_000,
                seconds: 5.0,
                fps: 60.0,
                seed,
                burn_min: 0.5,
                burn_max: 8.0,
                slice: Some(TimeSlice::Torches(5_000)),
                budget: Some(200),
            };
            let report = run(&params).unwrap();
            assert_eq!(report.frames, 300);
            assert_eq!(report.extinguished_polling, report.extinguished_events);
            // The torches still burning are exactly the timers still scheduled.
            assert_eq!(report.pending_at_end, 20_000 - report.extinguished_events);
            // 5,000 of 20,000 torches per frame: each is updated every 4th frame with one
            // frame's step, so it burns about 4 times as long, and fewer go out.
            let sliced = report.sliced.as_ref().unwrap();
            assert_eq!(sliced.max_gap_frames, 4);
            assert_eq!(sliced.mean_updates_per_frame, 5_000.0);
            assert!(sliced.extinguished + sliced.missed == report.extinguished_polling);
            assert!(
                sliced.missed > report.extinguished_polling / 2,
                "{sliced:?}"
            );
            assert!(sliced.mean_extra_burn_s > 0.5, "{sliced:?}");
            // At most 200 callbacks a frame: about 40 fall due per frame, bursts are spread,
            // and nothing is lost or early.
            let budgeted = report.budgeted.as_ref().unwrap();
            assert!(budgeted.extinguished <= report.extinguished_events);
            assert!(budgeted.cost.max_ns > 0.0);
            // About (5 − 0.5) / (8 − 0.5) = 60% of the torches go out.
            let expected = 20_000.0 * 4.5 / 7.5;
            assert!((report.extinguished_events as f64 - expected).abs() < 500.0);
        }
    }

    #[test]
    fn odd_frame_rates_agree_too() {
        let params = TorchesParams {
            n: 5_000,
            seconds: 3.0,
            fps: 29.97,
            ..TorchesParams::default()
        };
        let report = run(&params).unwrap();
        assert_eq!(report.extinguished_polling, report.extinguished_events);
        assert!(report.polling.p99_ns >= report.polling.mean_ns * 0.5);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let ok = TorchesParams::default();
        let cases = [
            (TorchesParams { n: 0, ..ok.clone() }, "n"),
            (
                TorchesParams {
                    fps: 0.0,
                    ..ok.clone()
                },
                "fps",
            ),
            (
                TorchesParams {
                    fps: f64::NAN,
                    ..ok.clone()
                },
                "fps",
            ),
            (
                TorchesParams {
                    fps: -60.0,
                    ..ok.clone()
                },
                "fps",
            ),
            (
                TorchesParams {
                    seconds: f64::INFINITY,
                    ..ok.clone()
                },
                "seconds",
            ),
            (
                TorchesParams {
                    seconds: 0.0,
                    ..ok.clone()
                },
                "seconds",
            ),
            (
                TorchesParams {
                    burn_min: 0.0,
                    ..ok.clone()
                },
                "burn_min",
            ),
            (
                TorchesParams {
                    burn_max: 0.5,
                    ..ok.clone()
                },
                "burn_max",
            ),
            (
                TorchesParams {
                    burn_max: f64::NAN,
                    ..ok.clone()
                },
                "burn_max",
            ),
        ];
        for (params, name) in cases {
            assert_eq!(run(&params).unwrap_err().param, name, "{params:?}");
        }
    }

    #[test]
    fn frame_cost_percentiles() {
        let cost = FrameCost::from_samples((1..=100).collect());
        assert_eq!(
            (cost.mean_ns, cost.p99_ns, cost.max_ns),
            (50.5, 99.0, 100.0)
        );
    }
}
