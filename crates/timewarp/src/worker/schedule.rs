//! Which LP runs next: the slice loop within the window and memory budget, the lazy LP
//! heap's first valid entry, and prefetching the next LP's record.

use warpsim_core::LogicalProcess;

use super::{SLICE, Worker};
use crate::control::MemoryControl;

impl<M: LogicalProcess> Worker<'_, M> {
    /// Executes up to [`SLICE`] events, in key order, within the window and memory budget.
    pub(super) fn execute_slice(&mut self) -> u32 {
        self.update_gauge();
        let mut executed = 0;
        while executed < SLICE {
            if !self.mail.local.is_empty() {
                self.drain_local();
            }
            let Some((time, l)) = self.next_lp() else {
                break;
            };
            if time >= self.end_time {
                break;
            }
            if let Some(window) = self.window.window()
                && time > self.gvt.time.as_f64() + window
            {
                self.counters.window_stalls += 1;
                break;
            }
            if let Some(window) = self.memory.as_ref().and_then(MemoryControl::window)
                && time > self.gvt.time.as_f64() + window
            {
                self.counters.memory_stalls += 1;
                break;
            }
            self.window.ran(time);
            self.heap.pop();
            self.lps[l].queued = None;
            // The next LP to run is most likely the heap's new first, and the one after it
            // its second: start loading their records while this one runs, and the next
            // one's second event, which lives outside its record — that record was asked
            // for one event ago (as the second), so reading it here rarely waits.
            if let Some((_, _, next)) = self.heap.peek() {
                self.warm(next as usize);
                if let Some(after) = self.heap.peek_second() {
                    self.warm(after as usize);
                }
                self.lps[next as usize].pending.warm_rest();
            }
            self.execute(l);
            executed += 1;
        }
        self.since_gvt_start += u64::from(executed);
        executed
    }

    /// The first LP with an executable event and that event's time, after dropping the
    /// scheduler's stale entries (see [`LpQueue`](crate::lpqueue::LpQueue)); the LP's entry stays first.
    pub(super) fn next_lp(&mut self) -> Option<(f64, usize)> {
        loop {
            let (time, age, l) = self.heap.peek()?;
            let l = l as usize;
            let lp = &self.lps[l];
            if lp.queued != Some((time, age)) {
                self.heap.pop();
                continue;
            }
            let runnable = lp.failed().is_none()
                && lp.pending.first_key().is_some_and(|key| {
                    (key.time.as_f64().to_bits(), key.age) == (time, age)
                        && !(lp.hold() == Some(key.time) && key > self.gvt)
                });
            if runnable {
                return Some((f64::from_bits(time), l));
            }
            // The LP's first event moved later (or it cannot run): queue it where it is now.
            self.heap.pop();
            self.lps[l].queued = None;
            self.resched(l);
        }
    }

    /// Asks the hardware to load the parts of LP `l`'s record that running it or handing it
    /// a message reads. With thousands of LPs per worker a record is rarely in the cache,
    /// and its misses, taken one after another, are much of an event's cost.
    #[inline]
    pub(super) fn warm(&self, l: usize) {
        let lp = &self.lps[l];
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.queued), 0);
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.pending), 0);
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.processed), 0);
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.meta), 0);
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.model), 0);
    }

    /// Puts LP `l` in the scheduler under its smallest pending key (or takes it out).
    #[inline]
    pub(super) fn resched(&mut self, l: usize) {
        let lp = &mut self.lps[l];
        let mut top = if lp.failed().is_some() {
            None
        } else {
            lp.pending.first_key()
        };
        if let (Some(hold), Some(key)) = (lp.hold(), top)
            && key.time == hold
            && key > self.gvt
        {
            top = None;
            if !lp.in_held {
                lp.in_held = true;
                self.lists.held.push(l as u32);
            }
        }
        match top {
            Some(key) => {
                let want = (key.time.as_f64().to_bits(), key.age);
                // A later key keeps the entry there is: it surfaces early and is fixed then.
                if lp.queued.is_none_or(|queued| want < queued) {
                    lp.queued = Some(want);
                    self.heap.push(l as u32, want.0, want.1);
                }
            }
            None => lp.queued = None,
        }
    }
}
