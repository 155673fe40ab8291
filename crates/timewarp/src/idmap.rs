//! Where a worker's pending events are, by their causal identity.
//!
//! A worker keeps all its LPs' pending events in one [`LadderQueue`](warpsim_queue::LadderQueue)
//! (see `worker/store.rs`). Most messages only add an event; antimessages, cancels and moves
//! name theirs by its key. An LP's first two pending events are found through its own record
//! (`worker/store.rs`, `Slots`); this map finds the slot in the queue of the others, those of
//! LPs that hold more: `EventKey::id`, the send's causal identity, is already a well-mixed
//! 64-bit hash, so a plain open-addressing table keyed by it costs one probe (and a cache
//! line) per insert and removal.
//!
//! Hand-written rather than a `HashMap<u64, u32>`: an entry is 8 bytes, 32 bits of the
//! identity and the queue slot (the caller checks a candidate's full key in the queue, which
//! it must do anyway, since two identities can collide, about 2⁻⁶⁴ a pair, and then both
//! entries are kept and told apart by their keys); removal shifts entries back instead of
//! leaving tombstones, so a long run never degrades. At ten million pending events the
//! table is 128 MiB where 16-byte entries took twice that (issue 13: memory per LP).

/// The slot that marks a vacant entry (the queue's own "no slot").
const VACANT: u32 = u32::MAX;

/// The table grows when more than this many eighths of it are used, to half of that: at
/// most half full, an insert or a removal touches one or two entries on average (at three
/// quarters, backward-shift removals cost about 65 instructions each in PHOLD, measured).
const MAX_LOAD_EIGHTHS: usize = 4;

/// The part of an identity an entry keeps: the top 32 bits of the identity mixed once more
/// (identities of one handler's sends are consecutive, `h + i`). An entry's home is the
/// tag's top bits, so the table can move entries without the whole identity, and the bits
/// below tell most candidates apart before the queue is read.
#[inline]
fn tag(id: u64) -> u32 {
    (id.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as u32
}

/// A vacant entry of an [`IdMap`], found by [`IdMap::vacancy`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Vacancy(usize);

/// A multimap from 64-bit identities to queue slots.
#[derive(Debug)]
pub(crate) struct IdMap {
    /// `(tag, slot)`.
    entries: Vec<(u32, u32)>,
    /// `32 - log2(entries.len())`: the home of a tag is its top bits.
    shift: u32,
    len: usize,
}

impl Default for IdMap {
    fn default() -> IdMap {
        IdMap::with_capacity(0)
    }
}

impl IdMap {
    /// A map that holds `n` entries without growing.
    pub(crate) fn with_capacity(n: usize) -> IdMap {
        let size = (n * 8 / MAX_LOAD_EIGHTHS + 1)
            .next_power_of_two()
            .clamp(16, 1 << 32);
        IdMap {
            entries: vec![(0, VACANT); size],
            shift: 32 - size.trailing_zeros(),
            len: 0,
        }
    }

    /// Entries held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Bytes of the table (for the memory account).
    pub(crate) fn bytes(&self) -> u64 {
        (self.entries.len() * size_of::<(u32, u32)>()) as u64
    }

    #[inline]
    fn mask(&self) -> usize {
        self.entries.len() - 1
    }

    /// Where the probe sequence of an entry with `tag` starts.
    #[inline]
    fn home(&self, tag: u32) -> usize {
        (tag >> self.shift) as usize
    }

    /// Adds an entry (an existing one under the same id stays).
    #[cfg(test)]
    pub(crate) fn insert(&mut self, id: u64, slot: u32) {
        if let Ok(vacancy) = self.vacancy(id, |_| false) {
            self.fill(vacancy, id, slot);
        }
    }

    /// Where an entry under `id` would go, after checking in the same walk that no entry
    /// that may be under `id` holds a slot that `taken` accepts (`Err` then). Nothing changes
    /// but the table's size; the place stays valid until the map next changes
    /// ([`IdMap::fill`] takes it).
    #[inline]
    pub(crate) fn vacancy(
        &mut self,
        id: u64,
        mut taken: impl FnMut(u32) -> bool,
    ) -> Result<Vacancy, ()> {
        if (self.len + 1) * 8 > self.entries.len() * MAX_LOAD_EIGHTHS {
            self.grow();
        }
        let mask = self.mask();
        let tag = tag(id);
        let mut at = self.home(tag);
        loop {
            let (other, slot) = self.entries[at];
            if slot == VACANT {
                return Ok(Vacancy(at));
            }
            if other == tag && taken(slot) {
                return Err(());
            }
            at = (at + 1) & mask;
        }
    }

    /// Adds an entry at the place [`IdMap::vacancy`] found.
    #[inline]
    pub(crate) fn fill(&mut self, vacancy: Vacancy, id: u64, slot: u32) {
        debug_assert_ne!(slot, VACANT);
        debug_assert_eq!(self.entries[vacancy.0].1, VACANT);
        self.entries[vacancy.0] = (tag(id), slot);
        self.len += 1;
    }

    /// The first slot, among the entries that may be under `id`, that `matches` accepts.
    #[inline]
    pub(crate) fn find(&self, id: u64, mut matches: impl FnMut(u32) -> bool) -> Option<u32> {
        self.position(id, &mut matches).map(|at| self.entries[at].1)
    }

    #[inline]
    fn position(&self, id: u64, matches: &mut impl FnMut(u32) -> bool) -> Option<usize> {
        let mask = self.mask();
        let tag = tag(id);
        let mut at = self.home(tag);
        loop {
            let (other, slot) = self.entries[at];
            if slot == VACANT {
                return None;
            }
            if other == tag && matches(slot) {
                return Some(at);
            }
            at = (at + 1) & mask;
        }
    }

    /// Removes the first entry that may be under `id` whose slot `matches` accepts, and
    /// returns the slot.
    #[inline]
    pub(crate) fn remove(&mut self, id: u64, mut matches: impl FnMut(u32) -> bool) -> Option<u32> {
        let at = self.position(id, &mut matches)?;
        let slot = self.entries[at].1;
        self.vacate(at);
        Some(slot)
    }

    /// Empties entry `at` and moves later entries of its cluster back where their probe
    /// sequences still find them (backward-shift deletion: no tombstones).
    fn vacate(&mut self, mut at: usize) {
        let mask = self.mask();
        self.len -= 1;
        let mut next = at;
        loop {
            next = (next + 1) & mask;
            let (tag, slot) = self.entries[next];
            if slot == VACANT {
                break;
            }
            let home = self.home(tag);
            // The entry at `next` may move to `at` unless its home lies cyclically in
            // `(at, next]` (then `at` is before its home, where a probe never looks).
            let stays = if at <= next {
                at < home && home <= next
            } else {
                at < home || home <= next
            };
            if !stays {
                self.entries[at] = self.entries[next];
                at = next;
            }
        }
        self.entries[at] = (0, VACANT);
    }

    fn grow(&mut self) {
        let size = self.entries.len() * 2;
        let old = std::mem::replace(&mut self.entries, vec![(0, VACANT); size]);
        self.shift = 32 - size.trailing_zeros();
        let mask = self.mask();
        for (tag, slot) in old {
            if slot != VACANT {
                let mut at = self.home(tag);
                while self.entries[at].1 != VACANT {
                    at = (at + 1) & mask;
                }
                self.entries[at] = (tag, slot);
            }
        }
    }

    /// Empties the map, keeping its memory.
    pub(crate) fn clear(&mut self) {
        self.entries.fill((0, VACANT));
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Against a `HashMap<u64, Vec<u32>>`, with ids drawn from a small range (so that many
    /// share a home and an id, and clusters wrap around the end), growth and removals.
    #[test]
    fn behaves_like_a_multimap() {
        for range in [8u64, 64, 1 << 20] {
            let mut map = IdMap::with_capacity(4);
            let mut reference: HashMap<u64, Vec<u32>> = HashMap::new();
            let mut state = 0x1234_5678u64 ^ range;
            let mut next_value = 0u32;
            for step in 0..200_000u64 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let id = if range == 8 {
                    // Ids that all land in one place, and the largest id.
                    [0, 1, u64::MAX, 1 << 63][(state % 4) as usize].wrapping_add(state % range)
                } else {
                    (state >> 8) % range
                };
                // Phases that fill and drain, so the table grows and empties.
                let filling = (step / 5_000) % 2 == 0;
                match (state >> 60) % 4 {
                    0..=2 if filling => {
                        next_value += 1;
                        map.insert(id, next_value);
                        reference.entry(id).or_default().push(next_value);
                    }
                    _ => {
                        // Remove one particular value under this id, if any.
                        let pick = reference.get(&id).and_then(|values| {
                            values
                                .get((state >> 20) as usize % values.len().max(1))
                                .copied()
                        });
                        let removed = map.remove(id, |value| Some(value) == pick);
                        assert_eq!(removed, pick);
                        if let Some(value) = pick {
                            let values = reference.get_mut(&id).unwrap();
                            values.retain(|other| *other != value);
                            if values.is_empty() {
                                reference.remove(&id);
                            }
                        }
                    }
                }
                assert_eq!(map.len(), reference.values().map(Vec::len).sum::<usize>());
                let mut found = Vec::new();
                let mut seen = |value| {
                    found.push(value);
                    false
                };
                assert_eq!(map.find(id, &mut seen), None);
                found.sort_unstable();
                // Entries keep only a tag of their identity: a lookup also meets the entries of
                // identities with the same tag (which the queue's keys then tell apart).
                let mut expected: Vec<u32> = reference
                    .iter()
                    .filter(|(other, _)| tag(**other) == tag(id))
                    .flat_map(|(_, values)| values.iter().copied())
                    .collect();
                expected.sort_unstable();
                assert_eq!(found, expected, "step {step}");
            }
            map.clear();
            assert_eq!(map.len(), 0);
            assert_eq!(map.find(1, |_| true), None);
        }
    }
}
