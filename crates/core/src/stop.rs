//! Asking a running kernel, from another thread, to stop or to pause at its next safe point.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A handle that asks a running kernel to end early, from any thread: [`StopHandle::stop`]
/// ends the run at the next safe point (between two events on the sequential kernel, at the
/// next GVT on Time Warp) with [`StopReason::Interrupted`](crate::StopReason::Interrupted);
/// [`StopHandle::pause`] ends the current stretch of the run with a
/// [`Checkpoint`](crate::Checkpoint) to continue from (a periodic checkpoint).
///
/// The library handles no signals: a program that wants SIGINT to stop a run registers its
/// handler on the flag it gives to [`StopHandle::with_flag`] (the `warpsim` binary does
/// this with `signal-hook`, storing the signal's number).
///
/// ```
/// use warpsim_core::{Ctx, Kernel, LogicalProcess, RunConfig, Sequential, StopHandle, StopReason};
/// #[derive(Clone)]
/// struct Forever;
/// impl LogicalProcess for Forever {
///     type Event = ();
///     type Output = ();
///     fn init(&mut self, ctx: &mut Ctx<Self>) { ctx.schedule(1.0, ()); }
///     fn on_event(&mut self, _: (), ctx: &mut Ctx<Self>) { ctx.schedule(1.0, ()); }
/// }
/// let stop = StopHandle::new();
/// stop.stop(); // as if a signal had come before the run started
/// let report = Sequential::new(RunConfig::new(1).stop_handle(stop.clone()))
///     .run(vec![Forever], &mut warpsim_core::Discard)
///     .unwrap();
/// assert_eq!(report.stop_reason, StopReason::Interrupted);
/// ```
#[derive(Clone, Debug, Default)]
pub struct StopHandle {
    /// Non-zero once a stop was asked for (the value says by what, e.g. a signal number).
    stop: Arc<AtomicUsize>,
    pause: Arc<AtomicBool>,
}

impl PartialEq for StopHandle {
    /// Two handles are equal when they are clones of one another.
    fn eq(&self, other: &StopHandle) -> bool {
        Arc::ptr_eq(&self.stop, &other.stop) && Arc::ptr_eq(&self.pause, &other.pause)
    }
}

impl StopHandle {
    /// A handle nobody has used yet.
    pub fn new() -> StopHandle {
        StopHandle::default()
    }

    /// A handle whose stop flag is `flag`: any non-zero value asks for a stop. A signal
    /// handler can store its signal's number there.
    pub fn with_flag(flag: Arc<AtomicUsize>) -> StopHandle {
        StopHandle {
            stop: flag,
            pause: Arc::default(),
        }
    }

    /// Asks the run to stop at its next safe point.
    pub fn stop(&self) {
        let _ = self
            .stop
            .compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Whether a stop was asked for.
    #[inline]
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0
    }

    /// The value of the stop flag: 0 when no stop was asked for, else what asked (1 for
    /// [`StopHandle::stop`], a signal's number for a signal handler).
    pub fn stop_value(&self) -> usize {
        self.stop.load(Ordering::Relaxed)
    }

    /// Asks the run to pause at its next safe point and hand back a checkpoint (used for
    /// periodic checkpoints; the caller resumes from it). The request is consumed by the
    /// pause it causes.
    pub fn pause(&self) {
        self.pause.store(true, Ordering::Relaxed);
    }

    /// Takes a pending pause request (kernels only).
    pub fn take_pause(&self) -> bool {
        self.pause.load(Ordering::Relaxed) && self.pause.swap(false, Ordering::Relaxed)
    }

    /// Whether a stop or a pause was asked for (kernels only).
    #[inline]
    pub fn requested(&self) -> bool {
        self.stop_requested() || self.pause.load(Ordering::Relaxed)
    }
}
