//! The pending set behind the manager: the timing wheel of [`crate::wheel`], or an indexed
//! heap or a ladder queue from `warpsim-queue`.

use warpsim_queue::{Handle, IndexedHeap, LadderQueue, PendingSet};

use crate::time::QueueKey;
use crate::wheel::Wheel;

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
    /// A hierarchical timing wheel (eight levels of 256 buckets, ticks of 2⁻¹⁰ time units) that
    /// holds each timer's entry in the bucket of its due time and sorts a bucket only when the
    /// clock reaches it: O(1) add, cancel and change (a cancel marks the entry stale, touching
    /// nothing but a 4-byte tag of the timer), amortised O(1) firing plus the sort of
    /// each tick's few entries. The default: a frame reads its buckets sequentially and
    /// prefetches the timers it is about to fire. Ticks of 2⁻¹⁰ suit times in seconds; times
    /// in much smaller units still work, with more buckets per frame.
    #[default]
    Wheel,
    /// The ladder queue (Tang, Goh & Thng 2005): amortised O(1) add, cancel, change and fire,
    /// sorting only the timers about to come due. Its cost is amortised: timers added in bulk
    /// are spread over its buckets in one O(n) pass the first time the queue is looked at, so
    /// after adding very many timers at once call
    /// [`Scheduler::next_due`](crate::Scheduler::next_due) outside a frame (during loading) to
    /// pay it there.
    Ladder,
    /// The indexed 4-ary heap: O(log n) everything, no amortisation, so no frame ever pays for
    /// an earlier one's additions.
    Heap,
}

/// The chosen pending set, addressed by timer slot: a slot has at most one pending entry
/// (the manager's ground rule 2). Each method is one predictable branch plus the set's own
/// work.
///
/// The heap and the ladder find an entry through the handle they gave for it, kept here per
/// slot. The wheel needs none: its per-slot tag is the entry's identity, so a cancel or change
/// of a timer touches the wheel's 4-byte tag and nothing else of the queue's — no handle read
/// from a third array first (at 10⁶ timers that read was a miss of its own, before the tag's).
pub(crate) enum Queue {
    Wheel(Wheel),
    Heap(IndexedHeap<QueueKey, u32>, Handles),
    Ladder(LadderQueue<QueueKey, u32>, Handles),
}

/// The heap's or the ladder's handle of each slot's pending entry (meaningful while the slot
/// is scheduled).
pub(crate) struct Handles(Vec<Handle>);

impl Handles {
    #[inline]
    fn set(&mut self, idx: u32, handle: Handle) {
        let i = idx as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, Handle::from_raw(u64::MAX));
        }
        self.0[i] = handle;
    }

    #[inline]
    fn get(&self, idx: u32) -> Option<Handle> {
        self.0.get(idx as usize).copied()
    }
}

impl Queue {
    pub(crate) fn new(kind: TimerQueue, capacity: usize) -> Self {
        let handles = || Handles(Vec::with_capacity(capacity));
        match kind {
            TimerQueue::Wheel => Queue::Wheel(Wheel::with_capacity(capacity)),
            TimerQueue::Heap => Queue::Heap(IndexedHeap::with_capacity(capacity), handles()),
            TimerQueue::Ladder => Queue::Ladder(LadderQueue::with_capacity(capacity), handles()),
        }
    }

    pub(crate) fn kind(&self) -> TimerQueue {
        match self {
            Queue::Wheel(_) => TimerQueue::Wheel,
            Queue::Heap(..) => TimerQueue::Heap,
            Queue::Ladder(..) => TimerQueue::Ladder,
        }
    }

    /// Files slot `idx`, which has no pending entry, under `key`; `false` only if the set is
    /// full (it never is: the manager holds fewer slots than the set's limit).
    #[inline]
    pub(crate) fn push(&mut self, key: QueueKey, idx: u32) -> bool {
        let (handle, handles) = match self {
            Queue::Wheel(q) => {
                q.push(key, idx);
                return true;
            }
            Queue::Heap(q, handles) => (q.push(key, idx).ok(), handles),
            Queue::Ladder(q, handles) => (q.push(key, idx).ok(), handles),
        };
        handle.map(|handle| handles.set(idx, handle)).is_some()
    }

    /// Removes and returns the earliest entry if it is due at or before `target`.
    #[inline]
    pub(crate) fn pop_due(&mut self, target: f64) -> Option<(QueueKey, u32)> {
        match self {
            Queue::Wheel(q) => q.pop_due(target),
            Queue::Heap(q, _) => match q.peek() {
                Some(((t, _), _)) if t.get() <= target => q.pop(),
                _ => None,
            },
            Queue::Ladder(q, _) => match q.peek() {
                Some(((t, _), _)) if t.get() <= target => q.pop(),
                _ => None,
            },
        }
    }

    /// Whether an entry is due at or before `target`.
    #[inline]
    pub(crate) fn has_due(&mut self, target: f64) -> bool {
        match self {
            Queue::Wheel(q) => q.peek_due(target).is_some(),
            _ => self.peek_time().is_some_and(|t| t <= target),
        }
    }

    /// The slot of a timer about to fire, to prefetch: the next one for the heap and the
    /// ladder, the one [`AHEAD`](crate::wheel::AHEAD) places later for the wheel (whose
    /// sorted bucket says that far ahead).
    #[inline]
    pub(crate) fn upcoming_slot(&mut self) -> Option<u32> {
        match self {
            Queue::Wheel(q) => q.upcoming_slot(crate::wheel::AHEAD),
            Queue::Heap(q, _) => q.peek().map(|(_, &idx)| idx),
            Queue::Ladder(q, _) => q.peek().map(|(_, &idx)| idx),
        }
    }

    /// The due time of the earliest entry.
    #[inline]
    pub(crate) fn peek_time(&mut self) -> Option<f64> {
        match self {
            Queue::Wheel(q) => q.peek_time(),
            Queue::Heap(q, _) => q.peek().map(|((t, _), _)| t.get()),
            Queue::Ladder(q, _) => q.peek().map(|((t, _), _)| t.get()),
        }
    }

    /// A lower bound of the earliest due time (`+∞` when empty), cheaper than
    /// [`peek_time`](Self::peek_time) for the wheel.
    #[inline]
    pub(crate) fn lower_bound(&mut self) -> f64 {
        match self {
            Queue::Wheel(q) => q.lower_bound(),
            _ => self.peek_time().unwrap_or(f64::INFINITY),
        }
    }

    /// Starts loading the queue's memory of slot `idx`'s entry (a hint, harmless for a slot
    /// with none; see [`PendingSet::prefetch`]).
    #[inline]
    pub(crate) fn prefetch(&self, idx: u32) {
        match self {
            Queue::Wheel(q) => q.prefetch(idx),
            Queue::Heap(q, handles) => {
                if let Some(handle) = handles.get(idx) {
                    q.prefetch(handle);
                }
            }
            Queue::Ladder(q, handles) => {
                if let Some(handle) = handles.get(idx) {
                    q.prefetch(handle);
                }
            }
        }
    }

    /// Removes slot `idx`'s pending entry; `false` if it had none.
    #[inline]
    pub(crate) fn cancel(&mut self, idx: u32) -> bool {
        match self {
            Queue::Wheel(q) => q.cancel(idx),
            Queue::Heap(q, handles) => handles.get(idx).is_some_and(|h| q.cancel(h).is_some()),
            Queue::Ladder(q, handles) => handles.get(idx).is_some_and(|h| q.cancel(h).is_some()),
        }
    }

    /// Moves slot `idx`'s pending entry to `key`; `false` if it had none.
    #[inline]
    pub(crate) fn reschedule(&mut self, idx: u32, key: QueueKey) -> bool {
        match self {
            Queue::Wheel(q) => q.reschedule(idx, key),
            Queue::Heap(q, handles) => handles
                .get(idx)
                .is_some_and(|h| q.reschedule(h, key).is_ok()),
            Queue::Ladder(q, handles) => handles
                .get(idx)
                .is_some_and(|h| q.reschedule(h, key).is_ok()),
        }
    }
}
