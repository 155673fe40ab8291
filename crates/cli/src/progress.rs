//! A progress bar on stderr for runs longer than about a second, only on a terminal.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use warpsim_core::{ProgressHook, Time};

/// Shows the bar only after this long, so that quick runs print nothing extra.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// A progress bar over simulated time `[0, end]` (or a spinner when there is no end time).
#[derive(Debug, Clone)]
pub(crate) struct Progress {
    bar: ProgressBar,
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
        Progress { bar }
    }

    /// The hook for a kernel.
    pub(crate) fn hook(&self, end: f64) -> ProgressHook {
        let bar = self.bar.clone();
        let started = Instant::now();
        let terminal = std::io::stderr().is_terminal();
        Arc::new(move |time: Time, events: u64| {
            if !terminal || started.elapsed() < SHOW_AFTER {
                return;
            }
            if bar.is_hidden() {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            if end.is_finite() && end > 0.0 {
                bar.set_position((time.as_f64() / end * 1000.0) as u64);
            }
            bar.set_message(format!("{:.4} ({events} events)", time.as_f64()));
        })
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
