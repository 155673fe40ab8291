//! The ladder queue (temporary stand-in while being written).

use crate::{Handle, IndexedHeap, Key, PendingSet, PushError, RescheduleError};

/// Ladder queue (stand-in).
pub struct LadderQueue<K, V>(IndexedHeap<K, V>);

impl<K: Key, V> LadderQueue<K, V> {
    /// New.
    pub fn new() -> Self {
        LadderQueue(IndexedHeap::new())
    }
}
impl<K: Key, V> Default for LadderQueue<K, V> {
    fn default() -> Self {
        Self::new()
    }
}
impl<K: Key, V> PendingSet<K, V> for LadderQueue<K, V> {
    fn push(&mut self, key: K, value: V) -> Result<Handle, PushError<K, V>> { self.0.push(key, value) }
    fn pop(&mut self) -> Option<(K, V)> { self.0.pop() }
    fn peek(&mut self) -> Option<(K, &V)> { self.0.peek() }
    fn cancel(&mut self, h: Handle) -> Option<(K, V)> { self.0.cancel(h) }
    fn reschedule(&mut self, h: Handle, k: K) -> Result<K, RescheduleError> { self.0.reschedule(h, k) }
    fn get(&self, h: Handle) -> Option<(K, &V)> { self.0.get(h) }
    fn get_mut(&mut self, h: Handle) -> Option<(K, &mut V)> { self.0.get_mut(h) }
    fn len(&self) -> usize { self.0.len() }
}
