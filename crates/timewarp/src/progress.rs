//! A run's progress as it goes, for progress bars: what the coordinator shows a
//! [`ProgressHook`] about every tenth of a second.

use std::sync::Arc;

/// How far a Time Warp run has got, shown to its [`ProgressHook`]: the GVT (every event
/// before it is committed) and the events committed and processed so far (a run continued
/// from a checkpoint counts the checkpoint's committed events too). The counts are those of
/// each worker's latest GVT, so they lag a little behind.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// The global virtual time (the run's end once it has ended).
    pub gvt: f64,
    /// Events committed.
    pub committed: u64,
    /// Events processed, rolled back ones included.
    pub processed: u64,
}

impl Progress {
    /// Committed ÷ processed (1 before anything ran).
    ///
    /// ```
    /// let progress = warpsim_timewarp::Progress::new(5.0, 80, 100);
    /// assert_eq!(progress.commit_ratio(), 0.8);
    /// ```
    pub fn commit_ratio(&self) -> f64 {
        if self.processed == 0 {
            1.0
        } else {
            self.committed as f64 / self.processed as f64
        }
    }

    /// A progress report (for tests of a hook).
    pub fn new(gvt: f64, committed: u64, processed: u64) -> Progress {
        Progress {
            gvt,
            committed,
            processed,
        }
    }
}

/// Called with the run's [`Progress`] about every tenth of a second, on the thread that
/// called the kernel (which delivers outputs): it must be cheap and must not panic. See
/// [`TimeWarp::on_progress`](crate::TimeWarp::on_progress).
pub type ProgressHook = Arc<dyn Fn(&Progress) + Send + Sync>;

/// A kernel's progress hook, if any (`Debug` for the kernel's derive).
#[derive(Clone, Default)]
pub(crate) struct ProgressSlot(pub(crate) Option<ProgressHook>);

impl std::fmt::Debug for ProgressSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Some(hook)"
        } else {
            "None"
        })
    }
}
