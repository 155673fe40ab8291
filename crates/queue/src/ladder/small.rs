//! The ladder queue's small mode: up to `SMALL_MAX` entries as the leaves of a tournament
//! (winner) tree, and the switches between it and the tiers.
//!
//! # Why a tournament tree
//!
//! The small mode used to be a sorted array: a pop advanced its head, a push counted the later
//! entries among the last 16 and shifted them. For the feeding pets (about 14 pending events,
//! one push and one pop an event; issue 16) that push cost about 150 instructions (the count,
//! a call to `memmove` for the shift, and the checks around them) and, with the shift's
//! length and the append-or-not test depending on the data, about 0.8 mispredicted branches
//! an event (`valgrind --tool=cachegrind --branch-sim=yes`: 4.08 M against 2.73 M for the
//! whole run now). A winner tree over 16 leaves replays one path of four levels, each a
//! compare and two conditional moves with no branch that depends on the data, and moves no
//! memory; a pop and the push after it share one replay (see [`Tree::hole`]), so both
//! together cost less than the array's push alone (715 → 664 instructions an event for the
//! whole run). (A binary heap would be as short, but its sift-down takes a
//! data-dependent branch at every level; an unsorted array with a cached minimum pays a scan
//! of every entry at each pop.)

use super::rungs::Slim;
use super::{LadderQueue, SMALL_MAX, Slot, is_current_slim};
use crate::{Key, NONE};

/// A tree's first size (a power of two): it doubles when full, up to `SMALL_MAX`.
const SMALL_FIRST: usize = 16;

/// Length of the tree's arrays: positions are `u8`s, inner nodes `1..cap` and leaves
/// `cap..2·cap` (0 unused), so an access needs neither a bounds check nor a mask.
const POSITIONS: usize = 256;
const _: () = assert!(SMALL_MAX.is_power_of_two() && 2 * SMALL_MAX <= POSITIONS);

/// The small mode's entries: the leaves of a tournament tree of `cap` leaves (a power of
/// two, 16 to `SMALL_MAX`). Position `n` (`1 ≤ n < cap`) is an inner node with children `2n`
/// and `2n + 1`; position `cap + i` is leaf `i`. Each position records the rank and leaf of
/// its subtree's winner, the entry that pops first: smallest priority, then, among equal
/// priorities, stale entries first and then live ones by key (read from the slab; see
/// [`Tree::tie`]).
///
/// Ranks are priorities mapped to integers in the same order ([`rank`]), and a free leaf `i`
/// ranks [`free_rank`]`(i)`, above every priority and unlike any other leaf's. So equal ranks
/// mean equal priorities of two stored entries, the one case that needs the slab, and a
/// match is an integer compare and two conditional moves, with no branch that depends on
/// the data (as `f64` compares, with +∞ for free leaves, the compiler turned the selects
/// into branches, and two free leaves tied). Keeping the winner's rank at every position,
/// not only its leaf, makes a match one load of the sibling, with no indirection through
/// the leaves. (A 4-ary tree, half the levels, cost more: its four-player matches took 46
/// instructions a level against 13–17 for a binary one.)
struct Tree {
    /// Winner's rank at each position.
    rank: [u64; POSITIONS],
    /// Winner's leaf at each position.
    w: [u8; POSITIONS],
    /// Priority, slab slot and stamp of each leaf's entry (the priority as given, for the
    /// stale check).
    meta: [Slim; SMALL_MAX],
    /// The free leaves below `cap`: `free[..n_free]`.
    free: [u8; SMALL_MAX],
    n_free: usize,
    /// The number of leaves, a power of two.
    cap: usize,
    /// A leaf taken out by a pop whose path is not replayed yet ([`NO_HOLE`] if none): the
    /// nodes on that path are stale until it is. It is also the top of the free list, so the
    /// next push fills it and replays the path once, for both (see [`Small::take_front`]).
    hole: u8,
}

/// [`Tree::hole`] when there is none.
const NO_HOLE: u8 = u8::MAX;

/// A priority as an integer of the same order: the sign bit flipped for positive numbers,
/// every bit for negative ones (−0 counts as +0, which it equals).
#[inline(always)]
fn rank(p: f64) -> u64 {
    let bits = (p + 0.0).to_bits();
    bits ^ ((((bits as i64) >> 63) as u64) | (1 << 63))
}

/// The rank of free leaf `leaf`: above [`rank`] of every finite priority (those stay below
/// `rank(+∞) = 0xFFF0…`), and distinct for every leaf.
#[inline(always)]
fn free_rank(leaf: usize) -> u64 {
    u64::MAX - leaf as u64
}

/// Ranks at or above this are free leaves'.
const FREE: u64 = u64::MAX - SMALL_MAX as u64 + 1;

/// See [`Tree`]; boxed, so that a queue carries one pointer to it and the event loop's code
/// reaches every array from one base register.
pub(super) struct Small(Box<Tree>);

impl Small {
    /// An empty tree of `SMALL_FIRST` leaves.
    pub(super) fn new() -> Small {
        let mut tree = Box::new(Tree {
            rank: [0; POSITIONS],
            w: [0; POSITIONS],
            meta: [Slim {
                p: f64::INFINITY,
                slot: NONE,
                stamp: 0,
            }; SMALL_MAX],
            free: [0; SMALL_MAX],
            n_free: 0,
            cap: SMALL_FIRST,
            hole: NO_HOLE,
        });
        tree.reset(SMALL_FIRST);
        Small(tree)
    }

    /// Entries stored (live or stale).
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.0.cap - self.0.n_free
    }

    /// The entry that pops next (live or stale), if any is stored.
    #[inline(always)]
    pub(super) fn front<K: Key, V>(&mut self, slots: &[Slot<K, V>]) -> Option<Slim> {
        let tree = &mut *self.0;
        if tree.hole != NO_HOLE {
            tree.settle(slots);
        }
        let entry = tree.meta[usize::from(tree.w[1]) & (SMALL_MAX - 1)];
        (tree.rank[1] < FREE).then_some(entry)
    }

    /// [`front`](Self::front) without changing anything: `None` while a pop's path is not
    /// replayed yet (a hint may be missing).
    #[inline]
    pub(super) fn front_hint(&self) -> Option<Slim> {
        let tree = &*self.0;
        let entry = tree.meta[usize::from(tree.w[1]) & (SMALL_MAX - 1)];
        (tree.rank[1] < FREE && tree.hole == NO_HOLE).then_some(entry)
    }

    /// Every stored entry (live or stale), in leaf order.
    pub(super) fn entries(&self) -> impl Iterator<Item = Slim> + '_ {
        let tree = &*self.0;
        let leaves = tree.rank[tree.cap..2 * tree.cap].iter().zip(&tree.meta);
        leaves
            .filter(|(rank, _)| **rank < FREE)
            .map(|(_, entry)| *entry)
    }

    /// Empties the tree, keeping its size when it holds nothing already.
    pub(super) fn clear(&mut self) {
        if self.0.n_free != self.0.cap || self.0.cap != SMALL_FIRST {
            self.0.reset(SMALL_FIRST);
        }
    }

    /// Stores an entry; `false` (nothing stored) when all `SMALL_MAX` leaves are in use.
    #[inline(always)]
    pub(super) fn insert<K: Key, V>(&mut self, slots: &[Slot<K, V>], entry: Slim) -> bool {
        let tree = &mut *self.0;
        if tree.n_free == 0 && !tree.grow(slots) {
            return false;
        }
        // The top of the free list: the last pop's leaf when its path is not replayed yet (the
        // hole), so that one replay serves that pop and this push (a simulation's handler
        // usually sends after its event popped). The replay reads only the siblings, so the
        // path may be stale; either way no hole is left.
        tree.n_free -= 1;
        let leaf = tree.free[tree.n_free & (SMALL_MAX - 1)];
        debug_assert!(tree.hole == NO_HOLE || tree.hole == leaf);
        tree.hole = NO_HOLE;
        tree.meta[usize::from(leaf) & (SMALL_MAX - 1)] = entry;
        tree.replay(slots, leaf, rank(entry.p));
        true
    }

    /// Takes out the entry that pops next (live or stale), if any is stored.
    #[inline(always)]
    pub(super) fn take_front<K: Key, V>(&mut self, slots: &[Slot<K, V>]) -> Option<Slim> {
        let entry = self.front(slots)?;
        self.remove_front();
        Some(entry)
    }

    /// Takes out the entry [`front`](Self::front) just returned. Its leaf becomes the hole:
    /// freed, ranked free, its path replayed only by the next operation (a push fills the
    /// hole and replays once for both).
    #[inline(always)]
    pub(super) fn remove_front(&mut self) {
        let tree = &mut *self.0;
        debug_assert!(tree.hole == NO_HOLE && tree.rank[1] < FREE);
        let leaf = tree.w[1];
        tree.free[tree.n_free & (SMALL_MAX - 1)] = leaf;
        tree.n_free += 1;
        tree.rank[usize::from(tree.cap as u8 + leaf)] = free_rank(usize::from(leaf));
        tree.hole = leaf;
    }

    /// Fills an empty tree with `entries` (at most `SMALL_MAX`).
    pub(super) fn fill<K: Key, V>(&mut self, slots: &[Slot<K, V>], entries: &[Slim]) {
        let tree = &mut *self.0;
        debug_assert!(tree.n_free == tree.cap && entries.len() <= SMALL_MAX);
        let cap = entries.len().next_power_of_two().max(SMALL_FIRST);
        tree.reset(cap);
        for (leaf, entry) in entries.iter().enumerate() {
            tree.rank[cap + leaf] = rank(entry.p);
            tree.meta[leaf] = *entry;
        }
        tree.n_free = cap - entries.len();
        tree.list_free(entries.len());
        tree.rebuild(slots);
    }

    /// Drops every stale entry.
    pub(super) fn retain_current<K: Key, V>(&mut self, slots: &[Slot<K, V>]) {
        let tree = &mut *self.0;
        let mut dropped = 0;
        for leaf in 0..tree.cap {
            let position = tree.cap + leaf;
            if tree.rank[position] < FREE && !is_current_slim(slots, &tree.meta[leaf]) {
                tree.rank[position] = free_rank(leaf);
                tree.free[tree.n_free] = leaf as u8;
                tree.n_free += 1;
                dropped += 1;
            }
        }
        if dropped > 0 {
            tree.rebuild(slots);
        }
    }
}

impl Tree {
    /// Replays the hole's path (see [`Tree::hole`]).
    #[inline(never)]
    fn settle<K: Key, V>(&mut self, slots: &[Slot<K, V>]) {
        let leaf = self.hole;
        self.hole = NO_HOLE;
        self.replay(slots, leaf, free_rank(usize::from(leaf)));
    }

    /// Gives `leaf` rank `r` and replays its path: at each level the winner is the
    /// sibling's unless the path's own is earlier. Reads only the siblings, so the path's
    /// own nodes may be stale.
    #[inline(always)]
    fn replay<K: Key, V>(&mut self, slots: &[Slot<K, V>], leaf: u8, r: u64) {
        // One unrolled pass per size (the size rarely changes, so this branch is predicted).
        match self.cap {
            SMALL_FIRST => self.replay_levels::<K, V, 4>(slots, leaf, r),
            32 => self.replay_levels::<K, V, 5>(slots, leaf, r),
            _ => self.replay_levels::<K, V, 6>(slots, leaf, r),
        }
    }

    /// [`replay`](Self::replay) in a tree of `2^LEVELS` leaves.
    #[inline(always)]
    fn replay_levels<K: Key, V, const LEVELS: u32>(
        &mut self,
        slots: &[Slot<K, V>],
        leaf: u8,
        r: u64,
    ) {
        debug_assert_eq!(self.cap, 1 << LEVELS);
        let mut pos = (1u8 << LEVELS) + leaf;
        let (mut r, mut w) = (r, leaf);
        self.rank[usize::from(pos)] = r;
        for _ in 0..LEVELS {
            let sibling = usize::from(pos ^ 1);
            let (sr, sw) = (self.rank[sibling], self.w[sibling]);
            let sibling_wins = if sr == r {
                self.tie(slots, sw, w)
            } else {
                sr < r
            };
            r = if sibling_wins { sr } else { r };
            w = if sibling_wins { sw } else { w };
            pos >>= 1;
            self.rank[usize::from(pos)] = r;
            self.w[usize::from(pos)] = w;
        }
    }

    /// Empties the tree and gives it `cap` leaves.
    fn reset(&mut self, cap: usize) {
        debug_assert!(cap.is_power_of_two() && (SMALL_FIRST..=SMALL_MAX).contains(&cap));
        self.cap = cap;
        for leaf in 0..cap {
            self.rank[cap + leaf] = free_rank(leaf);
        }
        self.n_free = cap;
        self.list_free(0);
        // Nothing is stored, so no match needs the slab.
        self.rebuild::<u64, ()>(&[]);
    }

    /// Lists leaves `from..cap` as free (`free[..n_free]`, which the caller has sized), the
    /// lowest handed out first.
    fn list_free(&mut self, from: usize) {
        debug_assert_eq!(self.n_free, self.cap - from);
        for (i, free) in self.free[..self.n_free].iter_mut().enumerate() {
            *free = (self.cap - 1 - i) as u8;
        }
    }

    /// Whether leaf `a` pops before leaf `b`, two stored entries of equal priority: a stale
    /// entry first (its place among live entries does not matter, and putting it first keeps
    /// the recorded winners right as entries go stale: one only ever moves earlier), else the
    /// smaller key (`a` on equal keys, which may pop in any order).
    #[cold]
    #[inline(never)]
    fn tie<K: Key, V>(&self, slots: &[Slot<K, V>], a: u8, b: u8) -> bool {
        let key_of = |leaf: u8| {
            let entry = &self.meta[usize::from(leaf) & (SMALL_MAX - 1)];
            if is_current_slim(slots, entry) {
                slots[entry.slot as usize]
                    .data
                    .as_ref()
                    .map(|(key, _)| *key)
            } else {
                None
            }
        };
        match (key_of(a), key_of(b)) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(ka), Some(kb)) => ka <= kb,
        }
    }

    /// Recomputes every inner node (after leaves changed wholesale).
    fn rebuild<K: Key, V>(&mut self, slots: &[Slot<K, V>]) {
        self.hole = NO_HOLE;
        for leaf in 0..self.cap {
            self.w[self.cap + leaf] = leaf as u8;
        }
        for pos in (1..self.cap).rev() {
            let (left, right) = (2 * pos, 2 * pos + 1);
            let (lr, rr) = (self.rank[left], self.rank[right]);
            let right_wins = if lr == rr {
                !self.tie(slots, self.w[left], self.w[right])
            } else {
                rr < lr
            };
            let from = if right_wins { right } else { left };
            self.rank[pos] = self.rank[from];
            self.w[pos] = self.w[from];
        }
    }

    /// Doubles a full tree, unless it has `SMALL_MAX` leaves already.
    #[cold]
    #[inline(never)]
    fn grow<K: Key, V>(&mut self, slots: &[Slot<K, V>]) -> bool {
        if self.cap == SMALL_MAX {
            return false;
        }
        let old = self.cap;
        let cap = 2 * old;
        // The leaves move from positions old..2·old to cap..cap + old.
        self.rank.copy_within(old..2 * old, cap);
        for leaf in old..cap {
            self.rank[cap + leaf] = free_rank(leaf);
        }
        self.cap = cap;
        self.n_free = old;
        self.list_free(old);
        self.rebuild(slots);
        true
    }
}

impl<K: Key, V> LadderQueue<K, V> {
    /// Inserts into the small mode's tree; a tree that is full moves into the ladder's tiers
    /// and the entry goes there.
    #[inline(always)]
    pub(super) fn insert_small(&mut self, p: f64, slot: u32, stamp: u32) {
        let entry = Slim { p, slot, stamp };
        if !self.small.insert(&self.slots, entry) {
            self.leave_small_mode();
            self.insert_tiers(p, slot, stamp);
        }
    }

    /// Moves the small mode's entries into Top, from where the next refill spreads them over
    /// a rung.
    #[cold]
    #[inline(never)]
    fn leave_small_mode(&mut self) {
        debug_assert!(self.top.is_empty() && self.bottom.is_empty() && self.ladder.n_rungs == 0);
        self.small_mode = false;
        self.top_start = f64::NEG_INFINITY;
        for entry in self.small.entries() {
            self.top_min = self.top_min.min(entry.p);
            self.top_max = self.top_max.max(entry.p);
            self.top.push(entry);
        }
        self.small.clear();
    }

    /// Moves Top, which the caller knows to be small and the only non-empty tier, into the
    /// small mode's tree.
    #[cold]
    pub(super) fn enter_small_mode(&mut self) {
        debug_assert!(self.bottom.is_empty() && self.spill.is_empty() && self.ladder.n_rungs == 0);
        debug_assert!(self.small.len() == 0);
        let slots = &self.slots;
        let before = self.top.len();
        // Stale entries are dropped on the way.
        self.top.retain(|e| is_current_slim(slots, e));
        self.stored -= before - self.top.len();
        self.small.fill(slots, &self.top);
        self.top.clear();
        self.small_mode = true;
        self.top_min = f64::INFINITY;
        self.top_max = f64::NEG_INFINITY;
        self.top_start = f64::NEG_INFINITY;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use crate::{Handle, LadderQueue, PendingSet};

    /// The tree against a sorted set, with what makes it subtle: many equal priorities (ties
    /// go to the slab's keys), negative ones (ranks), cancels and reschedules (stale leaves
    /// that win ties), pops and pushes in every order (the hole), and sizes across 16, 32 and
    /// 64 leaves and the switch to the tiers.
    #[test]
    fn the_tree_pops_in_key_order() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for round in 0..400 {
            let mut queue: LadderQueue<(i64, u32), u32> = LadderQueue::new();
            let mut shadow = BTreeSet::new();
            let mut handles: Vec<(Handle, (i64, u32))> = Vec::new();
            let target = [4, 15, 17, 40, 66][round % 5];
            for step in 0..3_000u32 {
                let roll = next(100);
                if roll < 45 || shadow.len() < target / 2 {
                    let key = (next(7) as i64 - 3, step);
                    handles.push((queue.push(key, step).unwrap(), key));
                    shadow.insert(key);
                } else if roll < 85 {
                    let popped = queue.pop().map(|(key, _)| key);
                    assert_eq!(popped, shadow.pop_first(), "round {round}, step {step}");
                } else if !handles.is_empty() {
                    let index = next(handles.len() as u64) as usize;
                    let (handle, key) = handles.swap_remove(index);
                    if roll < 93 {
                        assert_eq!(queue.cancel(handle).is_some(), shadow.remove(&key));
                    } else if shadow.remove(&key) {
                        let moved = (next(7) as i64 - 3, key.1);
                        queue.reschedule(handle, moved).unwrap();
                        shadow.insert(moved);
                        handles.push((handle, moved));
                    }
                }
                assert_eq!(queue.len(), shadow.len());
            }
            while let Some(key) = shadow.pop_first() {
                assert_eq!(queue.pop().map(|(key, _)| key), Some(key));
            }
            assert!(queue.pop().is_none());
        }
    }
}
