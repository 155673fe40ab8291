//! The kernel's pending-event set: one of `warpsim-queue`'s queues, chosen at run time.

use warpsim_queue::{Handle, IndexedHeap, LadderQueue, PendingSet, PushError, RescheduleError};

use crate::time::{EventKey, LpId};

/// Which pending-event set a kernel uses.
///
/// ```
/// use warpsim_core::QueueKind;
/// assert_eq!("heap".parse::<QueueKind>().unwrap(), QueueKind::Heap);
/// assert!("splay".parse::<QueueKind>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[non_exhaustive]
pub enum QueueKind {
    /// Indexed 4-ary heap: O(log n), best for small pending sets.
    Heap,
    /// Ladder queue: amortised O(1), best for large pending sets.
    #[default]
    Ladder,
}

impl std::str::FromStr for QueueKind {
    type Err = String;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "heap" => Ok(QueueKind::Heap),
            "ladder" => Ok(QueueKind::Ladder),
            other => Err(format!("unknown queue `{other}` (expected heap or ladder)")),
        }
    }
}

impl std::fmt::Display for QueueKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            QueueKind::Heap => "heap",
            QueueKind::Ladder => "ladder",
        })
    }
}

/// A pending event as the kernel stores it.
#[derive(Debug)]
pub(crate) struct Pending<E> {
    pub(crate) dest: LpId,
    /// Always [`Live::Yes`]: a byte with 255 impossible values in the padding after `dest`,
    /// where the ladder queue's slab keeps whether a slot is vacant instead of in a tag of
    /// its own (`SlotData`'s niche): 8 bytes less per pending event when the model's event
    /// has no niche of its own (PHOLD's `()`: 64 → 56 bytes per slot; issue 16's memory
    /// target at 10M LPs).
    #[expect(dead_code, reason = "never read: it is there for its niche")]
    pub(crate) live: Live,
    /// Critical time of the sending event (critical-path analysis; 0 when off).
    pub(crate) crit: f64,
    pub(crate) event: E,
}

/// The one value of [`Pending::live`]: `repr(u8)` gives it a whole byte whose other 255
/// values are a niche for enclosing enums.
#[derive(Debug, Clone, Copy)]
#[repr(u8)]
pub(crate) enum Live {
    Yes = 1,
}

/// Enum dispatch over the queues: the model API's [`Ctx`](crate::Ctx) is one concrete type,
/// so the queue cannot be a type parameter of it; a two-way match is cheaper than `dyn` and
/// perfectly predicted within a run.
pub(crate) enum PendingQueue<T> {
    Heap(IndexedHeap<EventKey, T>),
    Ladder(LadderQueue<EventKey, T>),
}

impl<T> std::fmt::Debug for PendingQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            PendingQueue::Heap(_) => QueueKind::Heap,
            PendingQueue::Ladder(_) => QueueKind::Ladder,
        };
        f.debug_struct("PendingQueue")
            .field("kind", &kind)
            .field("len", &self.len())
            .finish()
    }
}

macro_rules! dispatch {
    ($self:ident, $queue:ident => $body:expr) => {
        match $self {
            PendingQueue::Heap($queue) => $body,
            PendingQueue::Ladder($queue) => $body,
        }
    };
}

/// The heap's `push`, out of line (see [`PendingQueue::push_with`]).
#[inline(never)]
fn push_out_of_line<T>(
    queue: &mut IndexedHeap<EventKey, T>,
    key: EventKey,
    value: T,
) -> Result<Handle, PushError<EventKey, T>> {
    queue.push(key, value)
}

impl<T> PendingQueue<T> {
    /// A queue of the given kind with room for `capacity` events before it reallocates.
    /// Reserved memory that is never written costs no physical memory, and a queue that does
    /// not grow by doubling never holds its old and new buffers at once (the peak that a
    /// million events scheduled at start-up would otherwise pay).
    pub(crate) fn with_capacity(kind: QueueKind, capacity: usize) -> Self {
        match kind {
            QueueKind::Heap => PendingQueue::Heap(IndexedHeap::with_capacity(capacity)),
            QueueKind::Ladder => PendingQueue::Ladder(LadderQueue::with_capacity(capacity)),
        }
    }

    #[inline]
    pub(crate) fn push(
        &mut self,
        key: EventKey,
        value: T,
    ) -> Result<Handle, PushError<EventKey, T>> {
        self.push_with(|| (key, value))
    }

    /// [`push`](Self::push) of the key and value `make` builds. Each arm builds its own: when
    /// both shared them, the heap (which takes them by reference) made them a copy in memory,
    /// and the ladder's inlined push read them back from there in 16-byte loads of fields just
    /// written by narrower stores, a failed store-to-load forward on every send (feeding pets,
    /// issue 16, `perf annotate`). Built in the ladder's arm, the fields go from registers
    /// straight into the slab.
    #[inline(always)]
    pub(crate) fn push_with(
        &mut self,
        make: impl FnOnce() -> (EventKey, T),
    ) -> Result<Handle, PushError<EventKey, T>> {
        match self {
            PendingQueue::Heap(queue) => {
                let (key, value) = make();
                push_out_of_line(queue, key, value)
            }
            PendingQueue::Ladder(queue) => {
                let (key, value) = make();
                queue.push(key, value)
            }
        }
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(EventKey, T)> {
        dispatch!(self, queue => queue.pop())
    }

    pub(crate) fn get(&self, handle: Handle) -> Option<(EventKey, &T)> {
        dispatch!(self, queue => queue.get(handle))
    }

    pub(crate) fn get_mut(&mut self, handle: Handle) -> Option<(EventKey, &mut T)> {
        dispatch!(self, queue => queue.get_mut(handle))
    }

    pub(crate) fn cancel(&mut self, handle: Handle) -> Option<(EventKey, T)> {
        dispatch!(self, queue => queue.cancel(handle))
    }

    pub(crate) fn reschedule(
        &mut self,
        handle: Handle,
        key: EventKey,
    ) -> Result<EventKey, RescheduleError> {
        dispatch!(self, queue => queue.reschedule(handle, key))
    }

    /// The next event (the smallest key), without removing it.
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<(EventKey, &T)> {
        dispatch!(self, queue => queue.peek())
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        dispatch!(self, queue => queue.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LpMeta;

    /// The memory of a million LPs (issue 16) rests on these layouts: a pending event's
    /// `live` byte is a niche that an enclosing enum (the ladder's slab slot) uses for its
    /// tag, and an LP's kernel-side record stays small.
    #[test]
    fn pending_has_a_niche_and_lp_meta_is_small() {
        use std::mem::size_of;
        assert_eq!(
            size_of::<Option<(EventKey, Pending<()>)>>(),
            size_of::<(EventKey, Pending<()>)>()
        );
        assert_eq!(size_of::<Pending<()>>(), 16);
        // Stream 32, seed 8, retraction log 8.
        assert_eq!(size_of::<LpMeta>(), 48);
    }
}
