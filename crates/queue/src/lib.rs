//! Pending-event sets for discrete-event simulation.
//!
//! A *pending-event set* holds the events a simulation has scheduled but not yet executed and
//! hands them back smallest key first. Every implementation here sits behind one trait,
//! [`PendingSet`], so a kernel (or the game-loop timer manager) can pick one at run time:
//!
//! | type | pop / push | best for |
//! |---|---|---|
//! | [`IndexedHeap`] | O(log n) | general use; cancel and reschedule in O(log n) |
//! | [`LadderQueue`] | amortised O(1) | large pending sets (10⁴–10⁶+ events) |
//! | [`FifoQueue`] | O(1) | keys that never decrease (constant delays); a smaller key is an error |
//!
//! Every push returns a [`Handle`]. A handle names one pushed entry for as long as it is
//! pending; it is *generation-checked*, so a stale handle (its entry popped or cancelled and
//! the slot reused) is rejected and never touches another entry.
//!
//! # Example
//!
//! ```
//! use warpsim_queue::{IndexedHeap, PendingSet};
//!
//! let mut queue = IndexedHeap::new();
//! let a = queue.push(3u64, "c").unwrap();
//! queue.push(1u64, "a").unwrap();
//! let b = queue.push(2u64, "b").unwrap();
//! queue.reschedule(a, 0).unwrap();          // "c" now comes first
//! assert_eq!(queue.cancel(b), Some((2, "b")));
//! assert_eq!(queue.cancel(b), None);         // stale: already cancelled
//! assert_eq!(queue.pop(), Some((0, "c")));
//! assert_eq!(queue.pop(), Some((1, "a")));
//! assert!(queue.is_empty());
//! ```
//!
//! # Design
//!
//! Keys are totally ordered ([`Ord`]); equal keys pop in an unspecified but deterministic order,
//! so callers that need a tie-break (every simulation kernel does) put it in the key. The ladder
//! queue also needs a number to spread keys over buckets, which is [`Key::priority`].
//!
//! The crate has no `unsafe` code.

#![forbid(unsafe_code)]

mod fifo;
mod handle;
mod heap;
mod ladder;

pub use fifo::FifoQueue;
pub use handle::Handle;
pub use heap::IndexedHeap;
pub use ladder::LadderQueue;

use std::fmt::Debug;

/// A key of a pending-event set: totally ordered, cheap to copy, with a numeric priority.
///
/// # Contract
///
/// `priority` must be monotone with the order: `a < b` implies `a.priority() <= b.priority()`,
/// and it must be finite. Queues that bucket by priority (the [`LadderQueue`]) rely on it;
/// [`PendingSet::push`] rejects a non-finite priority with [`PushErrorKind::NonFiniteKey`].
///
/// ```
/// use warpsim_queue::Key;
/// assert_eq!(7u64.priority(), 7.0);
/// ```
pub trait Key: Copy + Ord + Debug {
    /// The key's position on the number line, used only to spread keys over buckets.
    fn priority(&self) -> f64;
}

impl Key for u64 {
    fn priority(&self) -> f64 {
        *self as f64
    }
}

impl Key for u128 {
    fn priority(&self) -> f64 {
        *self as f64
    }
}

impl Key for u32 {
    fn priority(&self) -> f64 {
        f64::from(*self)
    }
}

impl Key for i64 {
    fn priority(&self) -> f64 {
        *self as f64
    }
}

impl<A: Key, B: Copy + Ord + Debug> Key for (A, B) {
    fn priority(&self) -> f64 {
        self.0.priority()
    }
}

/// A set of pending entries, popped smallest key first.
///
/// ```
/// use warpsim_queue::{LadderQueue, PendingSet};
///
/// fn drain<Q: PendingSet<u64, char>>(mut queue: Q) -> String {
///     std::iter::from_fn(|| queue.pop().map(|(_, v)| v)).collect()
/// }
/// let mut queue = LadderQueue::new();
/// for (key, value) in [(5, 'o'), (2, 'e'), (9, '!'), (1, 'h'), (3, 'l'), (4, 'l')] {
///     queue.push(key, value).unwrap();
/// }
/// assert_eq!(drain(queue), "hello!");
/// ```
pub trait PendingSet<K: Key, V> {
    /// Inserts `value` under `key` and returns its handle.
    ///
    /// # Errors
    ///
    /// [`PushError`] hands `key` and `value` back when the key is not accepted (a non-finite
    /// priority, or for [`FifoQueue`] a key smaller than the last one pushed) or the set is
    /// full (more than `u32::MAX` live entries). The set is unchanged.
    fn push(&mut self, key: K, value: V) -> Result<Handle, PushError<K, V>>;

    /// Removes and returns the entry with the smallest key.
    fn pop(&mut self) -> Option<(K, V)>;

    /// The entry with the smallest key, without removing it. Takes `&mut self` because some
    /// implementations (the ladder queue) sort lazily.
    fn peek(&mut self) -> Option<(K, &V)>;

    /// Removes the entry named by `handle`. Returns `None`, and changes nothing, when the
    /// handle is stale (its entry was popped or cancelled).
    fn cancel(&mut self, handle: Handle) -> Option<(K, V)>;

    /// Moves the entry named by `handle` to `new_key` and returns its old key. The handle stays
    /// valid.
    ///
    /// # Errors
    ///
    /// [`RescheduleError::StaleHandle`] when the entry is gone, [`RescheduleError::KeyRejected`]
    /// when `new_key` is not accepted (see [`PendingSet::push`]); the set is unchanged.
    fn reschedule(&mut self, handle: Handle, new_key: K) -> Result<K, RescheduleError>;

    /// The key and value of a pending entry, or `None` for a stale handle.
    fn get(&self, handle: Handle) -> Option<(K, &V)>;

    /// The key and a mutable reference to the value of a pending entry, or `None` for a stale
    /// handle. (The key cannot be changed this way; use [`PendingSet::reschedule`].)
    fn get_mut(&mut self, handle: Handle) -> Option<(K, &mut V)>;

    /// Starts loading the memory of the entry named by `handle` into the cache, so that a
    /// `cancel`, `reschedule` or `get` of it soon after does not wait for it. A hint: it
    /// changes nothing, a stale handle is harmless, and the default does nothing. (The
    /// game-loop timers call it before they read their own record of the timer, so the two
    /// cache misses overlap.)
    ///
    /// ```
    /// use warpsim_queue::{LadderQueue, PendingSet};
    /// let mut queue = LadderQueue::new();
    /// let handle = queue.push(5u64, 'x').unwrap();
    /// queue.prefetch(handle);
    /// assert_eq!(queue.cancel(handle), Some((5, 'x')));
    /// ```
    #[inline]
    fn prefetch(&self, handle: Handle) {
        let _ = handle;
    }

    /// Number of pending entries.
    fn len(&self) -> usize;

    /// `true` when nothing is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Sentinel slot index: "no slot" (end of a free list). Slot indices stay below it.
pub(crate) const NONE: u32 = u32::MAX;

/// Accepts a key whose priority is finite; the reason for refusing it otherwise.
#[inline]
pub(crate) fn check_key<K: Key>(key: &K) -> Result<(), PushErrorKind> {
    if key.priority().is_finite() {
        Ok(())
    } else {
        Err(PushErrorKind::NonFiniteKey)
    }
}

/// Why a push was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PushErrorKind {
    /// The key's [`Key::priority`] is NaN or infinite.
    NonFiniteKey,
    /// A [`FifoQueue`] received a key smaller than the last key pushed.
    KeyDecreased,
    /// More than `u32::MAX` entries would be live at once.
    Full,
}

/// A refused push; carries the key and value back to the caller. The set is unchanged and
/// can still be used.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("push refused: {kind:?} (key {key:?})")]
pub struct PushError<K: Debug, V> {
    /// Why the push was refused.
    pub kind: PushErrorKind,
    /// The key that was passed in.
    pub key: K,
    /// The value that was passed in.
    pub value: V,
}

impl<K: Debug, V> Debug for PushError<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushError")
            .field("kind", &self.kind)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// A refused reschedule. The set is unchanged and can still be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RescheduleError {
    /// The handle's entry was popped or cancelled.
    #[error("stale handle: the entry was already popped or cancelled")]
    StaleHandle,
    /// The new key was refused, for the reason given.
    #[error("new key refused: {0:?}")]
    KeyRejected(PushErrorKind),
}
