//! An LP's pending events while a run is set up (`init`'s effects, a checkpoint's events):
//! an ordered map by key whose smallest entry sits inline. The workers then move them into
//! their stores.
//!
//! Most LPs hold one or a few pending events at a time (PHOLD with population 1 holds
//! exactly one), and every execution takes the smallest. A `BTreeMap` allocates a node for
//! its first entry and frees it when the last one leaves — a `malloc`, a `free` and a cold
//! cache line per event. Keeping the smallest entry in the LP record itself means an LP with
//! one pending event never touches the allocator or a separate node; the others sit in a
//! sorted `VecDeque` that keeps its capacity, and move to a `BTreeMap` only when there are
//! more than [`small_limit`] of them (so an LP with very many pending events stays
//! logarithmic).
//!
//! Why a sorted `VecDeque` for up to a few hundred: an LP of Sharks World holds about fifty
//! events of about ninety bytes, and a `BTreeMap`'s node shifts moved whole events on every
//! insert and removal (about 700 instructions per event, 40 % of what Time Warp added to the
//! sequential kernel's cost there). The deque pops its smallest without moving anything,
//! finds a key by binary search, and an insert moves the shorter side of the entries — one
//! `memmove`. Tried and measured against it (BENCHMARKS.md, "The pending set of an LP with
//! many events"): a binary heap with its events inline (a pop moves an entry per level, two
//! or three copies each, and finding a key is a scan) and a heap or map of slots over a slab
//! of events (a dependent load per pop, which cost more wall time than it saved).

use std::collections::{BTreeMap, VecDeque};

use warpsim_core::EventKey;

/// Above this many events besides the smallest, they move from the sorted `VecDeque` to a
/// map: about 64 KiB of entries (so an insert moves at most about 32 KiB, a quarter of that
/// on average), between 32 and 1,024.
const fn small_limit<E>() -> usize {
    let fit = 65536 / size_of::<(EventKey, E)>();
    if fit < 32 {
        32
    } else if fit > 1024 {
        1024
    } else {
        fit
    }
}

/// An ordered map from [`EventKey`] to events. Invariants: `first` is `None` only when the
/// rest is empty; every other key is greater than `first`'s; `small` (sorted by ascending
/// key) is empty whenever `big` is there; `big` is there only when it
/// holds something (boxed, so that the many LPs without one pay a word for it, not three).
#[derive(Debug)]
pub(crate) struct Pending<E> {
    first: Option<(EventKey, E)>,
    small: VecDeque<(EventKey, E)>,
    // Boxed on purpose: an empty `BTreeMap` is three words in every LP's record, the box one;
    // the extra allocation happens only for the few LPs with more than `small_limit` events.
    #[allow(clippy::box_collection)]
    big: Option<Box<BTreeMap<EventKey, E>>>,
}

impl<E> Default for Pending<E> {
    fn default() -> Self {
        Pending {
            first: None,
            small: VecDeque::new(),
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
        // A new event is most often the latest: one comparison, no search.
        match self.small.back() {
            None => Err(0),
            Some((last, _)) if key > last => Err(self.small.len()),
            Some(_) => self.small.binary_search_by(|(other, _)| other.cmp(key)),
        }
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
            Err(_) if self.small.len() >= small_limit::<E>() => {
                let mut big: BTreeMap<EventKey, E> = self.small.drain(..).collect();
                big.insert(key, event);
                self.big = Some(Box::new(big));
            }
            Err(index) if index == self.small.len() => self.small.push_back((key, event)),
            Err(index) => self.small.insert(index, (key, event)),
        }
        false
    }

    #[inline]
    fn rest_pop_first(&mut self) -> Option<(EventKey, E)> {
        let Some(big) = &mut self.big else {
            return self.small.pop_front();
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
        self.small.remove(index).map(|(_, event)| event)
    }

    #[cfg(test)]
    fn rest_contains(&self, key: &EventKey) -> bool {
        match &self.big {
            None => self.search(key).is_ok(),
            Some(big) => big.contains_key(key),
        }
    }

    /// The smallest key.
    #[cfg(test)]
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
    #[cfg(test)]
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
    #[cfg(test)]
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
            // Phases that grow the map past `small_limit` and shrink it back to empty.
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
