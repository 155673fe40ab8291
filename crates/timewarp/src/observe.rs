//! Showing a run's committed events to an observer ([`TimeWarp::run_observed`]): in key
//! order, each just before its own outputs, as the sequential kernel shows them.
//!
//! Workers hand the coordinator their committed events (cloned, only when observing) just
//! before the batch of outputs that covers them; the coordinator delivers through a sink
//! that also knows the observer ([`Observing`]), so the two streams interleave exactly as a
//! sequential run's do.
//!
//! [`TimeWarp::run_observed`]: crate::TimeWarp::run_observed

use std::any::Any;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};

use warpsim_core::kernel_api::panic_message;
use warpsim_core::{Committed, EventKey, LpId, OutputSink, SimError};

/// What the coordinator delivers to besides outputs: committed events for an observer.
pub(crate) trait Observe {
    /// A worker's batch of committed events (`Vec<(EventKey, LpId, E)>`, boxed).
    fn observed(&mut self, batch: Box<dyn Any + Send>);
    /// Shows every event with a key below `safe` (all below are in: every worker committed
    /// past it) not shown yet.
    fn show_below(&mut self, safe: EventKey);
    /// The observer's panic, once (the run then stops as on a panicking sink).
    fn take_failure(&mut self) -> Option<SimError>;
}

/// A run without an observer: the user's sink as it is.
pub(crate) struct Plain<'s, S>(pub(crate) &'s mut S);

impl<O, S: OutputSink<O>> OutputSink<O> for Plain<'_, S> {
    #[inline]
    fn deliver(&mut self, output: Committed<O>) {
        self.0.deliver(output);
    }
}

impl<S> Observe for Plain<'_, S> {
    fn observed(&mut self, _batch: Box<dyn Any + Send>) {}
    fn show_below(&mut self, _safe: EventKey) {}
    fn take_failure(&mut self) -> Option<SimError> {
        None
    }
}

/// The user's sink and observer, and the committed events not shown yet (in key order once
/// `sorted`).
pub(crate) struct Observing<'s, S, F, E> {
    sink: &'s mut S,
    observer: F,
    seen: VecDeque<(EventKey, LpId, E)>,
    sorted: bool,
    failure: Option<SimError>,
    failed: bool,
}

impl<'s, S, F, E> Observing<'s, S, F, E>
where
    F: FnMut(&EventKey, LpId, &E),
{
    pub(crate) fn new(sink: &'s mut S, observer: F) -> Self {
        Observing {
            sink,
            observer,
            seen: VecDeque::new(),
            sorted: true,
            failure: None,
            failed: false,
        }
    }

    /// Shows the events not shown yet that pass `show`, in key order.
    fn show_while(&mut self, show: impl Fn(&EventKey) -> bool) {
        if self.failed {
            self.seen.clear();
            return;
        }
        if !self.sorted {
            // Stable: events of one key (there is one) keep their order.
            self.seen.make_contiguous().sort_by_key(|(key, _, _)| *key);
            self.sorted = true;
        }
        while self.seen.front().is_some_and(|(key, _, _)| show(key)) {
            let Some((key, lp, event)) = self.seen.pop_front() else {
                break;
            };
            let observer = &mut self.observer;
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| observer(&key, lp, &event))) {
                self.failure = Some(SimError::SinkPanic {
                    lp,
                    time: key.time,
                    message: format!("in the observer: {}", panic_message(payload.as_ref())),
                });
                self.failed = true;
                self.seen.clear();
                return;
            }
        }
    }
}

impl<O, S, F, E> OutputSink<O> for Observing<'_, S, F, E>
where
    S: OutputSink<O>,
    F: FnMut(&EventKey, LpId, &E),
{
    fn deliver(&mut self, output: Committed<O>) {
        // An event is shown before its outputs (the sequential kernel shows it before its
        // handler runs).
        let key = output.key;
        self.show_while(|seen| *seen <= key);
        self.sink.deliver(output);
    }
}

impl<S, F, E> Observe for Observing<'_, S, F, E>
where
    F: FnMut(&EventKey, LpId, &E),
    E: 'static,
{
    fn observed(&mut self, batch: Box<dyn Any + Send>) {
        if let Ok(batch) = batch.downcast::<Vec<(EventKey, LpId, E)>>() {
            self.sorted &= batch.is_empty();
            self.seen.extend(*batch);
        }
    }

    fn show_below(&mut self, safe: EventKey) {
        self.show_while(|key| *key < safe);
    }

    fn take_failure(&mut self) -> Option<SimError> {
        self.failure.take()
    }
}
