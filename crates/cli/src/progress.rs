//! A progress bar on stderr for runs longer than about a second, only on a terminal: the
//! simulated time against the end, events committed and per second, Time Warp's commit
//! ratio, and when the last checkpoint was written.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use warpsim_core::{ProgressHook, Time};

/// Shows the bar only after this long, so that quick runs print nothing extra.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// A progress bar over simulated time `[0, end]` (or a spinner when there is no end time).
#[derive(Debug, Clone)]
pub(crate) struct Progress {
    bar: ProgressBar,
    end: f64,
    started: Instant,
    terminal: bool,
    shown: Arc<Mutex<Shown>>,
}

/// What the bar remembers between two updates.
#[derive(Debug, Default)]
struct Shown {
    /// The first update's events and when it came: events per second are counted from it
    /// (a resumed run's earlier events ran in another process).
    first: Option<(Instant, u64)>,
    /// The last checkpoint: its simulated time and when it was written.
    checkpoint: Option<(f64, Instant)>,
}

impl Progress {
    /// A bar that stays hidden unless stderr is a terminal and the run lasts over a second.
    pub(crate) fn new(end: f64) -> Progress {
        let bar = if end.is_finite() && end > 0.0 {
            let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::hidden());
            if let Ok(style) =
                ProgressStyle::with_template("{bar:40} sim time {msg} [{elapsed_precise}]")
            {
                bar.set_style(style);
            }
            bar
        } else {
            ProgressBar::hidden()
        };
        Progress {
            bar,
            end,
            started: Instant::now(),
            terminal: std::io::stderr().is_terminal(),
            shown: Arc::default(),
        }
    }

    /// The hook for the sequential kernel.
    pub(crate) fn hook(&self) -> ProgressHook {
        let progress = self.clone();
        Arc::new(move |time: Time, events: u64| {
            progress.show(time.as_f64(), events, None);
        })
    }

    /// The hook for the Time Warp kernel.
    pub(crate) fn timewarp_hook(&self) -> warpsim_timewarp::ProgressHook {
        let progress = self.clone();
        Arc::new(move |now: &warpsim_timewarp::Progress| {
            progress.show(now.gvt, now.committed, Some(now.commit_ratio()));
        })
    }

    /// Notes a checkpoint written at simulated time `time`, for the bar to show.
    pub(crate) fn checkpointed(&self, time: f64) {
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        shown.checkpoint = Some((time, Instant::now()));
    }

    fn show(&self, time: f64, events: u64, commit_ratio: Option<f64>) {
        let now = Instant::now();
        let message = {
            let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
            let (since, first_events) = *shown.first.get_or_insert((now, events));
            if !self.terminal || self.started.elapsed() < SHOW_AFTER {
                return;
            }
            message(
                time,
                events,
                rate(events - first_events.min(events), now - since),
                commit_ratio,
                shown.checkpoint.map(|(at, when)| (at, now - when)),
            )
        };
        if self.bar.is_hidden() {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        if self.end.is_finite() && self.end > 0.0 {
            self.bar
                .set_position((time.min(self.end) / self.end * 1000.0) as u64);
        }
        self.bar.set_message(message);
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Events per second over `elapsed` (none before a tenth of a second has passed).
fn rate(events: u64, elapsed: Duration) -> Option<f64> {
    let seconds = elapsed.as_secs_f64();
    (seconds >= 0.1).then(|| events as f64 / seconds)
}

/// The bar's message: `12.5 (1234567 events, 2.1M/s, commit ratio 0.93, checkpoint at 10 2m05s ago)`.
fn message(
    time: f64,
    events: u64,
    rate: Option<f64>,
    commit_ratio: Option<f64>,
    checkpoint: Option<(f64, Duration)>,
) -> String {
    let mut text = format!("{time:.4} ({events} events");
    if let Some(rate) = rate {
        text.push_str(&format!(", {}/s", si(rate)));
    }
    if let Some(ratio) = commit_ratio {
        text.push_str(&format!(", commit ratio {ratio:.2}"));
    }
    if let Some((at, ago)) = checkpoint {
        let ago = ago.as_secs();
        text.push_str(&format!(
            ", checkpoint at {at:.4} {}m{:02}s ago",
            ago / 60,
            ago % 60
        ));
    }
    text.push(')');
    text
}

/// A rate with an SI suffix: `950`, `12.3k`, `2.10M`.
fn si(value: f64) -> String {
    if value >= 1e9 {
        format!("{:.2}G", value / 1e9)
    } else if value >= 1e6 {
        format!("{:.2}M", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.1}k", value / 1e3)
    } else {
        format!("{value:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_shows_what_is_known() {
        assert_eq!(message(2.5, 10, None, None, None), "2.5000 (10 events)");
        assert_eq!(
            message(
                12.0,
                4_200_000,
                Some(2_100_000.0),
                Some(0.934),
                Some((10.0, Duration::from_secs(125)))
            ),
            "12.0000 (4200000 events, 2.10M/s, commit ratio 0.93, checkpoint at 10.0000 2m05s ago)"
        );
        assert_eq!(si(950.0), "950");
        assert_eq!(si(12_345.0), "12.3k");
        assert_eq!(si(3.2e9), "3.20G");
    }

    #[test]
    fn the_rate_counts_from_the_first_update() {
        assert_eq!(rate(100, Duration::from_millis(50)), None);
        assert_eq!(rate(1000, Duration::from_secs(2)), Some(500.0));
    }
}
