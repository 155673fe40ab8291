//! The ladder queue's [`PendingSet`] operations: push, pop, peek, cancel, reschedule and
//! look-ups by handle, over the tiers and the small mode of `mod.rs`.

use prefetch_index::prefetch_index;

use super::{LadderQueue, PREFETCH_AHEAD, Slot, SlotData, is_current, is_current_slim};
use crate::{Handle, Key, NONE, PendingSet, PushError, PushErrorKind, RescheduleError, check_key};

impl<K: Key, V> PendingSet<K, V> for LadderQueue<K, V> {
    // `#[inline(always)]`, like `pop`: for a handful of pending events (the small mode) the
    // call, and moving the key, value and result through memory across it, cost about as much
    // as the push itself (feeding pets, issue 16). The tiers' insertion stays out of line.
    #[inline(always)]
    fn push(&mut self, key: K, value: V) -> Result<Handle, PushError<K, V>> {
        let p = key.priority();
        if !p.is_finite() {
            return Err(PushError {
                kind: PushErrorKind::NonFiniteKey,
                key,
                value,
            });
        }
        if self.live == 0 {
            self.reset_if_idle();
        }
        let slot = if self.free_head != NONE {
            let slot = self.free_head;
            let entry = &mut self.slots[slot as usize];
            self.free_head = entry.data.next_free();
            entry.data = SlotData::Occupied(key, value);
            slot
        } else {
            if self.slots.len() >= NONE as usize {
                return Err(PushError {
                    kind: PushErrorKind::Full,
                    key,
                    value,
                });
            }
            self.slots.push(Slot {
                generation: 0,
                stamp: 0,
                data: SlotData::Occupied(key, value),
            });
            (self.slots.len() - 1) as u32
        };
        self.live += 1;
        let (generation, stamp) = {
            let s = &self.slots[slot as usize];
            (s.generation, s.stamp)
        };
        self.insert(slot, stamp, p);
        Ok(Handle::new(slot, generation))
    }

    // Inlined into the caller, the sequential kernel's event loop (which calls it once per
    // event): without the hint the compiler stopped inlining it as that loop's function grew
    // (issue 15 measured +6 % instructions per PHOLD event from the call). Only the two fast
    // paths are inlined: the next entry of the small mode, or the end of Bottom, when live;
    // everything else is `next_slot`. Both end in one `release`.
    #[inline(always)]
    fn pop(&mut self) -> Option<(K, V)> {
        let slot = if self.small_mode
            && let Some(entry) = self.small.front(&self.slots)
            && is_current_slim(&self.slots, &entry)
        {
            self.small.remove_front();
            self.stored -= 1;
            entry.slot
        } else if !self.small_mode
            && self.spill.is_empty()
            && let Some(&entry) = self.bottom.last()
            && is_current(&self.slots, &entry)
        {
            self.bottom.pop();
            if let Some(ahead) = self.bottom.len().checked_sub(PREFETCH_AHEAD) {
                prefetch_index(&self.slots, self.bottom[ahead].slot as usize);
            }
            self.stored -= 1;
            entry.slot
        } else {
            self.next_slot()?
        };
        self.release(slot as usize)
    }

    #[inline]
    fn peek(&mut self) -> Option<(K, &V)> {
        let slot = loop {
            if self.small_mode {
                let entry = self.small.front(&self.slots)?;
                if is_current_slim(&self.slots, &entry) {
                    break entry.slot;
                }
                self.small.remove_front();
                self.stored -= 1;
                continue;
            }
            let Some((entry, from_spill)) = self.front() else {
                if self.refill() || self.small_mode {
                    continue;
                }
                return None;
            };
            if is_current(&self.slots, &entry) {
                break entry.slot;
            }
            self.remove_front(from_spill);
        };
        self.slots[slot as usize]
            .data
            .as_ref()
            .map(|(k, v)| (*k, v))
    }

    fn cancel(&mut self, handle: Handle) -> Option<(K, V)> {
        let slot = self.live_slot(handle)?;
        let data = self.release(slot);
        self.maybe_purge();
        data
    }

    fn reschedule(&mut self, handle: Handle, new_key: K) -> Result<K, RescheduleError> {
        let slot = self.live_slot(handle).ok_or(RescheduleError::StaleHandle)?;
        check_key(&new_key).map_err(RescheduleError::KeyRejected)?;
        let entry = &mut self.slots[slot];
        let (key, _) = entry.data.as_mut().expect("live slot has data");
        let old_key = std::mem::replace(key, new_key);
        if old_key == new_key {
            // The stored entry is still in the right place.
            return Ok(old_key);
        }
        entry.stamp = entry.stamp.wrapping_add(1);
        let stamp = entry.stamp;
        self.insert(slot as u32, stamp, new_key.priority());
        self.maybe_purge();
        Ok(old_key)
    }

    fn get(&self, handle: Handle) -> Option<(K, &V)> {
        let slot = self.live_slot(handle)?;
        self.slots[slot].data.as_ref().map(|(k, v)| (*k, v))
    }

    fn get_mut(&mut self, handle: Handle) -> Option<(K, &mut V)> {
        let slot = self.live_slot(handle)?;
        self.slots[slot].data.as_mut().map(|(k, v)| (*k, v))
    }

    #[inline]
    fn prefetch(&self, handle: Handle) {
        prefetch_index(&self.slots, handle.slot() as usize);
    }

    fn len(&self) -> usize {
        self.live
    }
}
