//! What leaves a run: committed outputs, the sinks that receive them, and the helpers kernels
//! use to hand them over and to encode events.

use crate::time::{EventKey, LpId, Time};

/// An output that left the kernel: committed, so it will never be undone.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed<O> {
    /// Key of the event that emitted it.
    pub key: EventKey,
    /// The LP that emitted it.
    pub lp: LpId,
    /// The output.
    pub output: O,
}

impl<O> Committed<O> {
    /// Simulation time at which it was emitted.
    pub fn time(&self) -> Time {
        self.key.time
    }
}

/// Where committed outputs go: a `Vec`, a closure, or [`Discard`].
///
/// ```
/// use warpsim_core::{Committed, OutputSink};
/// let mut count = 0;
/// let mut sink = |_: Committed<u8>| count += 1;
/// # let key = warpsim_core::EventKey::init(warpsim_core::LpId::new(0));
/// sink.deliver(Committed { key, lp: warpsim_core::LpId::new(0), output: 1 });
/// assert_eq!(count, 1);
/// ```
pub trait OutputSink<O> {
    /// Receives one committed output; called in event-key order.
    fn deliver(&mut self, output: Committed<O>);
}

impl<O, F: FnMut(Committed<O>)> OutputSink<O> for F {
    fn deliver(&mut self, output: Committed<O>) {
        self(output)
    }
}

impl<O> OutputSink<O> for Vec<Committed<O>> {
    fn deliver(&mut self, output: Committed<O>) {
        self.push(output)
    }
}

/// Hands `output` to `sink`, turning a panic of the sink into
/// [`SimError::SinkPanic`](crate::SimError::SinkPanic): a sink is user code, and a kernel must
/// end with a typed error, never unwind through its own threads (kernels only; see
/// [`kernel_api`](crate::kernel_api)).
pub fn deliver_guarded<O, S: OutputSink<O> + ?Sized>(
    sink: &mut S,
    output: Committed<O>,
) -> Result<(), crate::SimError> {
    let (lp, time) = (output.lp, output.key.time);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink.deliver(output))).map_err(
        |payload| crate::SimError::SinkPanic {
            lp,
            time,
            message: crate::sequential::panic_message(payload.as_ref()),
        },
    )
}

/// Encodes `event` (its serde encoding, postcard) into `bytes`, cleared first: what lazy
/// cancellation compares and the content hash fingerprints (kernels only; see
/// [`kernel_api`](crate::kernel_api)). Returns `false` when the model's `Serialize` fails.
///
/// A `Serialize` that panics is an encoding that fails, too: it is user code, and an
/// encoding only ever decides whether two events are the same (never, then) or feeds a
/// fingerprint (of nothing, then), so failing safe is better than failing the run.
pub fn encode_event<E: serde::Serialize>(event: &E, bytes: &mut Vec<u8>) -> bool {
    bytes.clear();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        postcard::to_io(event, &mut *bytes).is_ok()
    }))
    .unwrap_or(false)
}

/// A sink that drops every output (for benchmarks).
#[derive(Debug, Clone, Copy, Default)]
pub struct Discard;

impl<O> OutputSink<O> for Discard {
    fn deliver(&mut self, _output: Committed<O>) {}
}
