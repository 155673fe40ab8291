//! The pending set behind the manager: an indexed heap or a ladder queue from `warpsim-queue`.

use warpsim_queue::{Handle, IndexedHeap, LadderQueue, PendingSet};

use crate::time::QueueKey;

/// Which pending-event set a [`Timers`](crate::Timers) keeps its scheduled timers in.
///
/// Both give the same results — the same callbacks in the same order — and differ only in
/// speed; see `BENCHMARKS.md` (section *Game-loop timers*) for measurements.
///
/// ```
/// use warpsim_timers::{TimerQueue, Timers};
///
/// let mut timers = Timers::<u32>::builder().queue(TimerQueue::Heap).build();
/// timers.add(1.0, |n, _| *n += 1)?;
/// let mut n = 0;
/// timers.advance(1.0, &mut n)?;
/// assert_eq!(n, 1);
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimerQueue {
    /// The ladder queue (Tang, Goh & Thng 2005): amortised O(1) add, cancel, change and fire,
    /// sorting only the timers about to come due. The default: the faster of the two for every
    /// operation measured. Its cost is amortised, though: timers added in bulk are spread over
    /// its buckets in one O(n) pass the first time the queue is looked at, so after adding very
    /// many timers at once call [`Scheduler::next_due`](crate::Scheduler::next_due) outside a
    /// frame (during loading) to pay it there.
    #[default]
    Ladder,
    /// The indexed 4-ary heap: O(log n) everything, no amortisation, so no frame ever pays for
    /// an earlier one's additions.
    Heap,
}

/// The chosen pending set. Each method is one predictable branch plus the set's own work.
pub(crate) enum Queue {
    Heap(IndexedHeap<QueueKey, u32>),
    Ladder(LadderQueue<QueueKey, u32>),
}

impl Queue {
    pub(crate) fn new(kind: TimerQueue, capacity: usize) -> Self {
        match kind {
            TimerQueue::Heap => Queue::Heap(IndexedHeap::with_capacity(capacity)),
            TimerQueue::Ladder => Queue::Ladder(LadderQueue::with_capacity(capacity)),
        }
    }

    pub(crate) fn kind(&self) -> TimerQueue {
        match self {
            Queue::Heap(_) => TimerQueue::Heap,
            Queue::Ladder(_) => TimerQueue::Ladder,
        }
    }

    /// Pushes slot `idx` under `key`; `None` only if the set is full (it never is: the
    /// manager holds fewer slots than the set's limit).
    #[inline]
    pub(crate) fn push(&mut self, key: QueueKey, idx: u32) -> Option<Handle> {
        match self {
            Queue::Heap(q) => q.push(key, idx).ok(),
            Queue::Ladder(q) => q.push(key, idx).ok(),
        }
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(QueueKey, u32)> {
        match self {
            Queue::Heap(q) => q.pop(),
            Queue::Ladder(q) => q.pop(),
        }
    }

    /// The slot of the earliest entry.
    #[inline]
    pub(crate) fn peek_slot(&mut self) -> Option<u32> {
        match self {
            Queue::Heap(q) => q.peek().map(|(_, &idx)| idx),
            Queue::Ladder(q) => q.peek().map(|(_, &idx)| idx),
        }
    }

    /// The due time of the earliest entry.
    #[inline]
    pub(crate) fn peek_time(&mut self) -> Option<f64> {
        match self {
            Queue::Heap(q) => q.peek().map(|((t, _), _)| t.get()),
            Queue::Ladder(q) => q.peek().map(|((t, _), _)| t.get()),
        }
    }

    /// Starts loading the queue's memory of `handle`'s entry (a hint; see
    /// [`PendingSet::prefetch`]).
    #[inline]
    pub(crate) fn prefetch(&self, handle: Handle) {
        match self {
            Queue::Heap(q) => q.prefetch(handle),
            Queue::Ladder(q) => q.prefetch(handle),
        }
    }

    #[inline]
    pub(crate) fn cancel(&mut self, handle: Handle) -> bool {
        match self {
            Queue::Heap(q) => q.cancel(handle).is_some(),
            Queue::Ladder(q) => q.cancel(handle).is_some(),
        }
    }

    #[inline]
    pub(crate) fn reschedule(&mut self, handle: Handle, key: QueueKey) -> bool {
        match self {
            Queue::Heap(q) => q.reschedule(handle, key).is_ok(),
            Queue::Ladder(q) => q.reschedule(handle, key).is_ok(),
        }
    }
}
