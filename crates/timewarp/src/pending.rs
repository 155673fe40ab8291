//! An LP's pending events: an ordered map by key whose smallest entry sits inline.
//!
//! Most LPs hold one or a few pending events at a time (PHOLD with population 1 holds
//! exactly one), and every execution takes the smallest. A `BTreeMap` allocates a node for
//! its first entry and frees it when the last one leaves — a `malloc`, a `free` and a cold
//! cache line per event. Keeping the smallest entry in the LP record itself means an LP with
//! one pending event never touches the allocator or a separate node; the others sit in a
//! small sorted `Vec` that keeps its capacity, and move to a `BTreeMap` only when there are
//! more than [`SMALL`] of them (so an LP with many pending events stays logarithmic).

use std::collections::BTreeMap;

use warpsim_core::EventKey;

/// Above this many events besides the smallest, they move from the sorted `Vec` to a map.
const SMALL: usize = 32;

/// An ordered map from [`EventKey`] to events. Invariants: `first` is `None` only when the
/// rest is empty; every other key is greater than `first`'s; `small` (sorted by descending
/// key, so the smallest is last) is empty whenever `big` is there; `big` is there only when it
/// holds something (boxed, so that the many LPs without one pay a word for it, not three).
#[derive(Debug)]
pub(crate) struct Pending<E> {
    first: Option<(EventKey, E)>,
    small: Vec<(EventKey, E)>,
    // Boxed on purpose: an empty `BTreeMap` is three words in every LP's record, the box one;
    // the extra allocation happens only for the few LPs with more than `SMALL` events.
    #[allow(clippy::box_collection)]
    big: Option<Box<BTreeMap<EventKey, E>>>,
}

impl<E> Default for Pending<E> {
    fn default() -> Self {
        Pending {
            first: None,
            small: Vec::new(),
            big: None,
        }
    }
}

impl<E> From<BTreeMap<EventKey, E>> for Pending<E> {
    fn from(map: BTreeMap<EventKey, E>) -> Self {
        let mut pending = Pending::default();
        for (key, event) in map {
            let _ = pending.insert(key, event);
        }
        pending
    }
}

impl<E> Pending<E> {
    /// Number of events.
    pub(crate) fn len(&self) -> usize {
        usize::from(self.first.is_some())
            + self.small.len()
            + self.big.as_ref().map_or(0, |big| big.len())
    }

    /// Where `key` is (`Ok`) or would go (`Err`) in `small`.
    #[inline]
    fn search(&self, key: &EventKey) -> Result<usize, usize> {
        self.small.binary_search_by(|(other, _)| key.cmp(other))
    }

    #[inline]
    fn rest_insert(&mut self, key: EventKey, event: E) -> bool {
        if let Some(big) = &mut self.big {
            if big.contains_key(&key) {
                return true;
            }
            big.insert(key, event);
            return false;
        }
        match self.search(&key) {
            Ok(_) => return true,
            Err(_) if self.small.len() >= SMALL => {
                let mut big: BTreeMap<EventKey, E> = self.small.drain(..).collect();
                big.insert(key, event);
                self.big = Some(Box::new(big));
            }
            Err(index) => self.small.insert(index, (key, event)),
        }
        false
    }

    #[inline]
    fn rest_pop_first(&mut self) -> Option<(EventKey, E)> {
        let Some(big) = &mut self.big else {
            return self.small.pop();
        };
        let first = big.pop_first();
        if big.is_empty() {
            self.big = None;
        }
        first
    }

    fn rest_remove(&mut self, key: &EventKey) -> Option<E> {
        if let Some(big) = &mut self.big {
            let removed = big.remove(key);
            if big.is_empty() {
                self.big = None;
            }
            return removed;
        }
        let index = self.search(key).ok()?;
        Some(self.small.remove(index).1)
    }

    fn rest_contains(&self, key: &EventKey) -> bool {
        match &self.big {
            None => self.search(key).is_ok(),
            Some(big) => big.contains_key(key),
        }
    }

    /// Asks the hardware to load the entry that becomes the smallest when the smallest
    /// leaves (it lives outside the LP's record).
    #[inline]
    pub(crate) fn warm_rest(&self) {
        if self.big.is_none()
            && let Some(last) = self.small.len().checked_sub(1)
        {
            prefetch_index::prefetch_index(&self.small, last);
        }
    }

    /// The smallest key.
    #[inline]
    pub(crate) fn first_key(&self) -> Option<EventKey> {
        self.first.as_ref().map(|(key, _)| *key)
    }

    /// Inserts an event. Returns `true`, keeping the event already there and dropping the
    /// new one, when `key` is taken: two events with one key are a collision of causal
    /// identities (see [`EventKey`]), which the caller reports.
    #[inline]
    #[must_use]
    pub(crate) fn insert(&mut self, key: EventKey, event: E) -> bool {
        match &mut self.first {
            None => {
                self.first = Some((key, event));
                false
            }
            Some((first, _)) if key == *first => true,
            Some((first, _)) if key < *first => {
                if let Some((old_key, old_event)) = self.first.replace((key, event)) {
                    // Smaller than the old first, so the new key is not among the rest.
                    let _ = self.rest_insert(old_key, old_event);
                }
                false
            }
            Some(_) => self.rest_insert(key, event),
        }
    }

    /// Removes and returns the smallest entry.
    #[inline]
    pub(crate) fn pop_first(&mut self) -> Option<(EventKey, E)> {
        let first = self.first.take();
        if first.is_some() {
            self.first = self.rest_pop_first();
        }
        first
    }

    /// Removes the event under `key`.
    pub(crate) fn remove(&mut self, key: &EventKey) -> Option<E> {
        match &self.first {
            Some((first, _)) if first == key => self.pop_first().map(|(_, event)| event),
            Some((first, _)) if key > first => self.rest_remove(key),
            _ => None,
        }
    }

    /// The event under `key`.
    pub(crate) fn get(&self, key: &EventKey) -> Option<&E> {
        match &self.first {
            Some((first, event)) if first == key => Some(event),
            Some((first, _)) if key > first => match &self.big {
                None => {
                    let index = self.search(key).ok()?;
                    Some(&self.small[index].1)
                }
                Some(big) => big.get(key),
            },
            _ => None,
        }
    }

    /// Whether an event is pending under `key`.
    pub(crate) fn contains_key(&self, key: &EventKey) -> bool {
        match &self.first {
            Some((first, _)) if first == key => true,
            Some((first, _)) if key > first => self.rest_contains(key),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpsim_core::{LpId, Time};

    fn key(time: f64, seq: u64) -> EventKey {
        EventKey::new(Time::new(time).unwrap(), 0, LpId::new(0), Time::ZERO, seq)
    }

    #[test]
    fn behaves_like_a_btreemap() {
        let mut pending = Pending::default();
        let mut reference = BTreeMap::new();
        // A fixed pseudo-random sequence of inserts, removes and pops.
        let mut state = 12345u64;
        for step in 0..20_000u64 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = key(((state >> 33) % 256) as f64, (state >> 20) % 3);
            // Phases that grow the map past `SMALL` and shrink it back to empty.
            let shrink = (step / 1000) % 2 == 1;
            match ((state >> 60) % 4, shrink) {
                (0, _) | (1, false) => {
                    // A taken key is refused (and kept), where the map would replace it.
                    let taken = reference.contains_key(&k);
                    assert_eq!(pending.insert(k, step), taken);
                    if !taken {
                        reference.insert(k, step);
                    }
                }
                (1, true) | (2, false) => assert_eq!(pending.remove(&k), reference.remove(&k)),
                _ => assert_eq!(pending.pop_first(), reference.pop_first()),
            }
            assert_eq!(pending.len(), reference.len());
            assert_eq!(pending.first_key(), reference.keys().next().copied());
            assert_eq!(pending.contains_key(&k), reference.contains_key(&k));
            assert_eq!(pending.get(&k), reference.get(&k));
        }
    }
}
