//! Where a new timer's slot goes: beside the slots of timers due at about the same time.
//!
//! # Why
//!
//! Firing a timer reads its 64-byte slot, and at 10⁶ timers the slots (64 MB) are far out of
//! cache. A frame fires the timers due in one short stretch of time; if their slots lie at
//! random across the array, every firing is a DRAM miss on a page of its own, and under a
//! hypervisor a TLB miss is a long two-dimensional page walk on top. Measured with the
//! torches frame (10⁶ torches, 1,667 firings a frame, `benches/examples/torch_probe.rs`):
//! slots in random order 0.13–0.19 ms a frame, the same torches added so that the slots of
//! each 16 ms of expiries are together 0.09–0.12 ms, slots in exact expiry order 0.06 ms.
//! The price is paid by the add instead, which now writes a slot beside other timers of its
//! window rather than reusing the slot freed last (still in cache): see `BENCHMARKS.md`.
//!
//! # How
//!
//! Slots are grouped in pages of [`PAGE`] (64 slots, 4 KB). A new timer due at `t` takes a
//! slot from the page open for `t`'s window (2⁻⁴ time units, 62.5 ms when the unit is the
//! second: four frames at 60 fps), one of the pages open at once, chosen by the window number
//! modulo their count. A page that fills, or whose cell another window takes, closes; a
//! closed page is reused (reopened for some window) once at least half its slots are free
//! again, before the slot array grows. So every page that is neither open nor waiting to be
//! reused holds more live timers than free slots, and the array never holds more than about
//! twice the live timers plus the open pages.
//!
//! There is about one open page per 256 live timers (rounded up to a power of two, at most
//! [`MAX_CELLS`]: 4,096 cells cover 256 s of windows), so their unused slots cost at most half
//! the live ones' memory. Below [`GROUP_FROM`] live timers the slots fit in cache anyway, and a handful
//! of timers due in many windows would each open a page of their own: there every timer
//! takes its slot from one open page, in order.

/// Slots per page: 64 slots of 64 bytes, one 4 KB memory page, and one `u64` of free bits.
pub(crate) const PAGE: usize = 64;
/// The most pages open at once for new timers, one per window (modulo their count).
const MAX_CELLS: usize = 4096;
/// Live timers per open page.
const LIVE_PER_CELL: usize = 256;
/// Windows per unit of game time. 16 rather than 64 (a frame's worth at 60 fps), measured:
/// the frame is as fast, and with 4,096 cells covering 256 s instead of 64, timers due
/// further ahead do not take each other's cells (the bench's adds at 1–101 s took 190–240 ns
/// with 64, 90–140 ns with 16).
const WINDOWS_PER_UNIT: f64 = 16.0;
/// A closed page is reused once this many of its slots are free.
const REOPEN_AT: u32 = PAGE as u32 / 2;
/// Slots are grouped by due time from this many live timers on.
const GROUP_FROM: usize = 1 << 14;
/// No page is open in a cell.
const NONE: u32 = u32::MAX;
/// The most live timers: the slot array (at most twice the live timers, plus the open
/// pages) stays indexable by `u32`.
pub(crate) const MAX_TIMERS: usize = (u32::MAX as usize - PAGE * (MAX_CELLS + 2)) / 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PageState {
    /// In a cell of `open`: new timers take its free slots.
    Open,
    /// Closed with at least half its slots free: in `reusable`.
    Reusable,
    /// Closed with fewer free slots than that.
    Closed,
}

/// The free slots of the timer slot array, by page (see the module docs).
#[derive(Debug)]
pub(crate) struct Pages {
    /// Per page: which of its slots are free (bit `i` for slot `64 · page + i`).
    free: Vec<u64>,
    state: Vec<PageState>,
    /// Per cell: the window it is open for and its page (`NONE` for none).
    open: Vec<(u64, u32)>,
    /// Cells in use: a power of two.
    cells: usize,
    /// Closed pages with at least half their slots free.
    reusable: Vec<u32>,
}

impl Pages {
    pub(crate) fn new() -> Self {
        Pages {
            free: Vec::new(),
            state: Vec::new(),
            open: vec![(0, NONE); MAX_CELLS],
            cells: 1,
            reusable: Vec::new(),
        }
    }

    /// Takes a free slot for a timer due at `due`, `live` timers being live before it. The
    /// second value is `true` when the slot is on a new page: the caller then appends the
    /// page's [`PAGE`] slots, all free, to its array.
    #[inline]
    pub(crate) fn alloc(&mut self, due: f64, live: usize) -> (u32, bool) {
        let (window, cells) = if live >= GROUP_FROM {
            // Saturating: a negative time is window 0, a very late one the last.
            let cells = (live / LIVE_PER_CELL).next_power_of_two().min(MAX_CELLS);
            ((due * WINDOWS_PER_UNIT) as u64, cells)
        } else {
            (0, 1)
        };
        if cells != self.cells {
            self.resize(cells);
        }
        let cell = window as usize & (cells - 1);
        let (open_for, page) = self.open[cell];
        let mut new_page = false;
        let page = if page != NONE && open_for == window && self.free[page as usize] != 0 {
            page
        } else {
            if page != NONE {
                self.close(page);
            }
            let page = match self.reusable.pop() {
                Some(page) => page,
                None => {
                    new_page = true;
                    self.free.push(u64::MAX);
                    self.state.push(PageState::Open);
                    (self.free.len() - 1) as u32
                }
            };
            self.state[page as usize] = PageState::Open;
            self.open[cell] = (window, page);
            page
        };
        let free = &mut self.free[page as usize];
        let bit = free.trailing_zeros();
        *free &= *free - 1;
        (page * PAGE as u32 + bit, new_page)
    }

    /// Uses `cells` cells from now on, closing the pages of the cells given up.
    #[cold]
    fn resize(&mut self, cells: usize) {
        for cell in cells..self.cells {
            let (_, page) = std::mem::replace(&mut self.open[cell], (0, NONE));
            if page != NONE {
                self.close(page);
            }
        }
        self.cells = cells;
    }

    /// The slot the next timer for the same window will take from `idx`'s page, if it has a
    /// free one (a hint: the manager prefetches it, so that the next add writes a slot in
    /// cache, as an add that reused a just-freed slot did before slots were grouped).
    #[inline]
    pub(crate) fn next_after(&self, idx: u32) -> Option<u32> {
        let page = idx / PAGE as u32;
        let free = self.free[page as usize];
        (free != 0).then(|| page * PAGE as u32 + free.trailing_zeros())
    }

    /// Takes `page` out of its cell.
    fn close(&mut self, page: u32) {
        let p = page as usize;
        if self.free[p].count_ones() >= REOPEN_AT {
            self.state[p] = PageState::Reusable;
            self.reusable.push(page);
        } else {
            self.state[p] = PageState::Closed;
        }
    }

    /// Gives slot `idx` back.
    #[inline]
    pub(crate) fn release(&mut self, idx: u32) {
        let p = idx as usize / PAGE;
        let free = &mut self.free[p];
        debug_assert_eq!(*free & (1 << (idx % PAGE as u32)), 0, "a slot freed twice");
        *free |= 1 << (idx % PAGE as u32);
        if self.state[p] == PageState::Closed && free.count_ones() >= REOPEN_AT {
            self.state[p] = PageState::Reusable;
            self.reusable.push(p as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    use super::*;

    /// Random allocations and releases at sizes below and above the grouping threshold: no
    /// slot is handed out twice, every slot handed out lies in a page the caller created,
    /// and the array grows only while it holds at most twice the live slots plus the open
    /// pages (so a run that shrinks and grows again reuses its pages).
    #[test]
    fn slots_are_unique_and_memory_is_bounded() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut pages = Pages::new();
        let mut n_slots = 0usize;
        let mut live: Vec<u32> = Vec::new();
        let mut held = HashSet::new();
        let target = if cfg!(debug_assertions) {
            40_000
        } else {
            200_000
        };
        for step in 0..5 * target {
            // Grow towards `target` live, shrink, hover, then grow back.
            let phase = step / target;
            let grow = [0.9, 0.2, 0.5, 0.8, 0.5][phase];
            if live.is_empty() || rng.random_bool(grow) {
                let due = rng.random_range(0.0..100.0);
                let (idx, new_page) = pages.alloc(due, live.len());
                if new_page {
                    assert!(
                        n_slots <= 2 * live.len() + PAGE * (MAX_CELLS + 2),
                        "a page added to {n_slots} slots for {} live",
                        live.len()
                    );
                    n_slots += PAGE;
                }
                assert!((idx as usize) < n_slots, "slot {idx} beyond the array");
                assert!(held.insert(idx), "slot {idx} handed out twice");
                live.push(idx);
            } else {
                let victim = live.swap_remove(rng.random_range(0..live.len()));
                held.remove(&victim);
                pages.release(victim);
            }
        }
    }

    /// Above the threshold, timers due in the same window share pages.
    #[test]
    fn timers_due_together_share_pages() {
        let mut pages = Pages::new();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        let mut by_window: Vec<Vec<u32>> = vec![Vec::new(); 640];
        for i in 0..200_000 {
            let due = rng.random_range(0.0..10.0);
            let (idx, _) = pages.alloc(due, 1_000_000 + i);
            by_window[(due * WINDOWS_PER_UNIT) as usize].push(idx);
        }
        for slots in &by_window {
            let distinct: HashSet<u32> = slots.iter().map(|&s| s / PAGE as u32).collect();
            assert!(
                distinct.len() <= slots.len().div_ceil(PAGE) + 1,
                "{distinct:?}"
            );
        }
    }
}
