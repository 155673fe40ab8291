//! The chapter's time-sliced update (its Listing 2), measured for the three flaws the chapter
//! names: torches burn longer than intended, starvation, and a cost that is only spread.
//!
//! Each frame updates torches in list order, from where the previous frame stopped, until the
//! frame's slice is used up or the list ends (then the next frame starts over at the first
//! torch). A visited torch runs the chapter's Listing 3 with the *frame's* time step, as
//! Listing 2 passes `deltaMs` to every update: a torch that is visited every `k` frames loses
//! only one frame's worth of life per `k` frames, so it burns about `k` times longer.

use std::time::{Duration, Instant};

/// How long a frame of the time-sliced update may run.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeSlice {
    /// Until this many milliseconds of wall time have gone into the frame (the chapter's
    /// `kTimeSlice = 2.f`). The clock is read every 64 torches. Results then depend on the
    /// machine's speed, as they do in a game.
    Millis(f64),
    /// At most this many torches per frame: the same shape with a deterministic slice, for
    /// tests and for comparing machines.
    Torches(u32),
}

impl Default for TimeSlice {
    /// The chapter's 2 ms.
    fn default() -> Self {
        TimeSlice::Millis(2.0)
    }
}

/// What the time-sliced update did, next to full polling of the same torches.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SlicedReport {
    /// The slice per frame.
    pub slice: TimeSlice,
    /// Per-frame cost.
    pub cost: super::torches::FrameCost,
    /// Wall time of all frames together, in milliseconds: time slicing spreads the polling
    /// cost over frames but does not reduce it (the chapter's third flaw).
    pub total_ms: f64,
    /// Torches it put out.
    pub extinguished: u64,
    /// Torches that full polling put out during the run but the time-sliced update did not
    /// (they burn on, starved of updates).
    pub missed: u64,
    /// Among torches both put out: how much longer they burned than under full polling, in
    /// game seconds, on average and at most (the chapter's first flaw).
    pub mean_extra_burn_s: f64,
    /// The largest of those.
    pub max_extra_burn_s: f64,
    /// The longest a torch went without an update, in frames (the chapter's second flaw:
    /// starvation). Full polling: 1.
    pub max_gap_frames: u64,
    /// Updates made per frame, on average (full polling makes `n`).
    pub mean_updates_per_frame: f64,
}

/// The time-sliced loop's state across frames: the torches' remaining lives, the index that
/// persists between calls (the chapter's `static size_t index`), and what is measured.
#[derive(Debug)]
pub(crate) struct Sliced {
    life: Vec<f64>,
    index: usize,
    slice: TimeSlice,
    /// Frame (1-based) in which each torch went out, 0 while lit.
    out_frame: Vec<u32>,
    /// Frame of each torch's last update (0: never updated).
    last_visit: Vec<u32>,
    max_gap: u64,
    updates: u64,
    extinguished: u64,
}

impl Sliced {
    pub(crate) fn new(burn_times: &[f64], slice: TimeSlice) -> Sliced {
        Sliced {
            life: burn_times.to_vec(),
            index: 0,
            slice,
            out_frame: vec![0; burn_times.len()],
            last_visit: vec![0; burn_times.len()],
            max_gap: 0,
            updates: 0,
            extinguished: 0,
        }
    }

    /// One frame of Listing 2 (`frame` counts from 1).
    pub(crate) fn frame(&mut self, frame: u32, delta: f64) {
        let n = self.life.len();
        let (limit, deadline) = match self.slice {
            TimeSlice::Torches(count) => (count as usize, None),
            TimeSlice::Millis(ms) => (
                usize::MAX,
                Some((Instant::now(), Duration::from_secs_f64(ms / 1e3))),
            ),
        };
        let mut done = 0usize;
        while self.index < n && done < limit {
            if done.is_multiple_of(64)
                && let Some((started, slice)) = deadline
                && started.elapsed() >= slice
            {
                break;
            }
            let i = self.index;
            // Listing 3 with the frame's step, as Listing 2 calls it.
            if self.life[i] > 0.0 {
                self.life[i] -= delta;
                if self.life[i] <= 0.0 {
                    self.out_frame[i] = frame;
                    self.extinguished += 1;
                }
            }
            let gap = u64::from(frame - self.last_visit[i]);
            self.max_gap = self.max_gap.max(gap);
            self.last_visit[i] = frame;
            self.index += 1;
            done += 1;
        }
        self.updates += done as u64;
        if self.index >= n {
            self.index = 0;
        }
    }

    /// The report, given the frame (1-based, 0 = still lit) in which full polling put out
    /// each torch and the per-frame costs measured by the caller.
    pub(crate) fn report(
        self,
        polled_out_frame: &[u32],
        frames: u64,
        delta: f64,
        samples: Vec<u64>,
    ) -> SlicedReport {
        let mut missed = 0u64;
        let mut extra_sum = 0.0f64;
        let mut extra_max = 0.0f64;
        let mut both = 0u64;
        for (&polled, &sliced) in polled_out_frame.iter().zip(&self.out_frame) {
            match (polled, sliced) {
                (0, _) => {}
                (_, 0) => missed += 1,
                (p, s) => {
                    let extra = f64::from(s.saturating_sub(p)) * delta;
                    extra_sum += extra;
                    extra_max = extra_max.max(extra);
                    both += 1;
                }
            }
        }
        // A torch never visited by the end has gone `frames` frames without an update.
        let never = self.last_visit.contains(&0);
        let tail = self
            .last_visit
            .iter()
            .map(|&v| frames.saturating_sub(u64::from(v)))
            .max()
            .unwrap_or(0);
        let total_ms = samples.iter().sum::<u64>() as f64 / 1e6;
        SlicedReport {
            slice: self.slice,
            cost: super::torches::FrameCost::from_samples(samples),
            total_ms,
            extinguished: self.extinguished,
            missed,
            mean_extra_burn_s: if both > 0 {
                extra_sum / both as f64
            } else {
                0.0
            },
            max_extra_burn_s: extra_max,
            max_gap_frames: if never {
                frames
            } else {
                self.max_gap.max(tail)
            },
            mean_updates_per_frame: self.updates as f64 / frames.max(1) as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarter_of_the_torches_per_frame_burns_four_times_longer() {
        // 8 torches, 2 per frame: each is visited every 4th frame and loses one frame's step
        // per visit, so a torch of 1 s at 1 fps goes out at its 1st visit … but one of 2 s
        // needs 2 visits, i.e. 4 frames later than polling would put it out.
        let burn = [1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0];
        let mut sliced = Sliced::new(&burn, TimeSlice::Torches(2));
        let frames = 12u32;
        for frame in 1..=frames {
            sliced.frame(frame, 1.0);
        }
        // Full polling at 1 fps: 1 s torches go out in frame 1, 2 s ones in frame 2.
        let polled = [1, 2, 1, 2, 1, 2, 1, 2];
        let report = sliced.report(&polled, u64::from(frames), 1.0, vec![1; 12]);
        assert_eq!(report.extinguished, 8);
        assert_eq!(report.missed, 0);
        assert_eq!(report.max_gap_frames, 4);
        assert_eq!(report.mean_updates_per_frame, 2.0);
        // Torch i is first visited in frame i/2 + 1 and then every 4 frames.
        // 1 s torches (0, 2, 4, 6) go out at their first visit: frames 1, 2, 3, 4.
        // 2 s torches (1, 3, 5, 7) at their second: frames 5, 6, 7, 8.
        let extra: f64 = [0.0, 1.0, 2.0, 3.0, 3.0, 4.0, 5.0, 6.0].iter().sum();
        assert_eq!(report.mean_extra_burn_s, extra / 8.0);
        assert_eq!(report.max_extra_burn_s, 6.0);
    }

    #[test]
    fn a_slice_smaller_than_the_run_starves_the_tail() {
        let burn = vec![0.5; 100];
        let mut sliced = Sliced::new(&burn, TimeSlice::Torches(10));
        for frame in 1..=5 {
            sliced.frame(frame, 1.0);
        }
        let polled = vec![1; 100];
        let report = sliced.report(&polled, 5, 1.0, vec![1; 5]);
        // Only the first 50 torches were ever updated.
        assert_eq!(report.extinguished, 50);
        assert_eq!(report.missed, 50);
        assert_eq!(report.max_gap_frames, 5);
    }
}
