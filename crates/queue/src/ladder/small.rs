//! The ladder queue's small mode: up to `SMALL_MAX` entries in one sorted array of 16-byte
//! `(priority, slot, stamp)` entries, and the switches between it and the tiers.

use super::rungs::Slim;
use super::{LadderQueue, SMALL_MAX, SMALL_WINDOW, is_current_slim};
use crate::Key;

impl<K: Key, V> LadderQueue<K, V> {
    /// Inserts into the small-mode ring, keeping it sorted; a ring that outgrows `SMALL_MAX`
    /// moves into the ladder's tiers.
    #[inline]
    pub(super) fn insert_small(&mut self, p: f64, slot: u32, stamp: u32) {
        let slim = Slim { p, slot, stamp };
        let head = self.small_head;
        let len = self.small.len();
        // A new event is most often the latest pending one (a simulation schedules ahead of
        // what it already scheduled): then it is appended. Equal keys: the new entry goes
        // after them (any order of equal keys is allowed).
        let pos = match self.small.last() {
            Some(last) if len > head && last.p >= p => {
                // Otherwise it is usually among the latest few (a model's delays differ by
                // kind, as meals and repairs do). Counting the later entries of the last
                // `SMALL_WINDOW` has no branch that depends on the data, where a scan that
                // stops at the place costs a mispredicted branch per insertion (feeding pets,
                // issue 16: about one per event).
                let start = len.saturating_sub(SMALL_WINDOW).max(head);
                let later = self.small[start..len].iter().filter(|e| e.p > p).count();
                let at = len - later;
                if later < len - start || start == head {
                    // Entries of equal priority sit just before `at`; they are ordered by key.
                    if at > head && self.small[at - 1].p == p {
                        self.tied_place(head, slot, p)
                    } else {
                        at
                    }
                } else {
                    // Earlier than the whole window: a binary search of the rest, by priority
                    // (the small mode holds every entry in priority order).
                    let at = head + self.small[head..start].partition_point(|e| e.p < p);
                    if self.small.get(at).is_some_and(|e| e.p == p) {
                        self.tied_place(head, slot, p)
                    } else {
                        at
                    }
                }
            }
            _ => len,
        };
        self.small.insert(pos, slim);
        if self.small.len() - self.small_head > SMALL_MAX {
            self.leave_small_mode();
        } else if self.small_head >= SMALL_MAX {
            self.small.drain(..self.small_head);
            self.small_head = 0;
        }
    }

    /// Where the entry of slab slot `slot` (its key is there already), of priority `p`, goes in
    /// the small-mode ring when another entry there has priority `p` too: after the last entry
    /// that does not come after it.
    /// Equal priorities are ordered by key, read from the slab; a stale entry's slot may hold
    /// another key by now, so stale entries of priority `p` are passed over (their place
    /// among the live ones does not matter).
    #[cold]
    #[inline(never)]
    fn tied_place(&self, head: usize, slot: u32, p: f64) -> usize {
        let key_of = |slot: u32| self.slots[slot as usize].data.as_ref().map(|(k, _)| k);
        let key = key_of(slot);
        let mut pos = self.small.len();
        while pos > head {
            let e = &self.small[pos - 1];
            let after =
                e.p > p || (e.p == p && (!is_current_slim(&self.slots, e) || key_of(e.slot) > key));
            if !after {
                break;
            }
            pos -= 1;
        }
        pos
    }

    /// Moves the small-mode ring into Top, from where the next refill spreads it over a rung.
    #[cold]
    fn leave_small_mode(&mut self) {
        debug_assert!(self.top.is_empty() && self.bottom.is_empty() && self.ladder.n_rungs == 0);
        self.small_mode = false;
        self.top_start = f64::NEG_INFINITY;
        let head = std::mem::take(&mut self.small_head);
        for entry in self.small.drain(..).skip(head) {
            self.top_min = self.top_min.min(entry.p);
            self.top_max = self.top_max.max(entry.p);
            self.top.push(entry);
        }
    }

    /// Moves Top, which the caller knows to be small and the only non-empty tier, into the
    /// small-mode ring.
    #[cold]
    pub(super) fn enter_small_mode(&mut self) {
        debug_assert!(self.bottom.is_empty() && self.spill.is_empty() && self.ladder.n_rungs == 0);
        debug_assert!(self.small.is_empty() && self.small_head == 0);
        let slots = &self.slots;
        let before = self.top.len();
        self.small
            .extend(self.top.drain(..).filter(|e| is_current_slim(slots, e)));
        // Stale entries are dropped on the way.
        self.stored -= before - self.small.len();
        // By key, from the slab (every entry left is current, so its slot holds one).
        self.small
            .sort_unstable_by_key(|e| slots[e.slot as usize].data.as_ref().map(|(key, _)| *key));
        self.small_mode = true;
        self.top_min = f64::INFINITY;
        self.top_max = f64::NEG_INFINITY;
        self.top_start = f64::NEG_INFINITY;
    }
}
