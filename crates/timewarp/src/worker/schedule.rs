//! Which event runs next: the slice loop within the window and memory budget, events of LPs
//! that may not run parked in their records, and prefetching the next LP's record.

use warpsim_core::{EventKey, LogicalProcess};

use super::lp::{LpState, fingerprint};
use super::{SLICE, Worker};
use crate::control::MemoryControl;

/// Bytes of a worker's LP records from which [`Worker::warm`] prefetches them (see
/// [`Worker::warms`]): the L2 cache of a core, read once from Linux's sysfs (1 MiB assumed
/// where it cannot be read). Below it the records stay in the cache between two events of an
/// LP. Tuned first as a constant 2 MiB on a host with 1 MiB of L2; on a host with 512 KiB,
/// the two-thread PHOLD 16,384 row (1.2 MB of records a worker) ran 7–15 % less CPU with the
/// prefetch than without (BENCHMARKS.md, "The coordinator left asleep"). Then twice the L2,
/// until a host with 1 MiB showed that a worker whose records just fill its L2 (8,192 PHOLD
/// LPs, the same row) misses too: the other per-LP arrays, the queue and the logs share
/// the cache. There the prefetch took 15–20 % off that row's time (BENCHMARKS.md,
/// "Prefetching from one L2 of records"); at half an L2 of records it changes nothing.
fn warm_from_bytes() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| l2_bytes().unwrap_or(1 << 20))
}

/// The size of CPU 0's level-2 cache, from `/sys/devices/system/cpu/cpu0/cache`.
fn l2_bytes() -> Option<usize> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.flatten().find_map(|entry| {
        let read = |name: &str| std::fs::read_to_string(entry.path().join(name)).ok();
        let kind = read("type")?;
        if read("level")?.trim() != "2" || kind.trim() == "Instruction" {
            return None;
        }
        cache_size(&read("size")?)
    })
}

/// A cache size as sysfs writes it: `512K`, `2M` or bytes.
fn cache_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let (digits, unit) = match text.strip_suffix('K') {
        Some(digits) => (digits, 1 << 10),
        None => match text.strip_suffix('M') {
            Some(digits) => (digits, 1 << 20),
            None => (text, 1),
        },
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .filter(|&n| n > 0)
}

impl<M: LogicalProcess> Worker<'_, M> {
    /// Executes up to [`SLICE`] events, in key order, within the window and memory budget.
    pub(super) fn execute_slice(&mut self) -> u32 {
        self.update_gauge();
        let mut executed = 0;
        // The promises were read for the event in hand (at most once an event).
        let mut heard = false;
        // They were read this slice for an event that GVT had already made safe. Such events
        // need no promise, but this worker's own promise, `min(next, heard) + L`, stands
        // still while what it heard does: running below a GVT bound for 700 µs without a look
        // (PHOLD 16,384 LPs `--work 1000`), a worker held the other waiting for the whole
        // time, 86–130 ms a run (BENCHMARKS.md, "A promise that stood still"). One look a
        // slice keeps it moving.
        let mut refreshed = false;
        let warm = self.warms();
        while executed < SLICE {
            if !self.mail.local.is_empty() {
                self.drain_local();
            }
            // Popped before the checks and put back when it may not run yet (at most once a
            // slice): a look at the first event costs about what taking it does.
            let Some((key, l, mut event)) = self.store.pop() else {
                break;
            };
            let time = key.time.as_f64();
            if self.safe.promises.on {
                self.promise(time, false);
                if !heard
                    && (key >= self.safe.bound || !refreshed)
                    && time < self.end_time
                    && self.safe.promises.heard_min < time
                    && self.quiet()
                {
                    // The others have not promised enough for it to run safely, as far as
                    // this worker heard: it looks again, then waits a little for them
                    // (`promise.rs`).
                    heard = true;
                    refreshed = true;
                    let Some((_, _, held)) = self.glance(time, (l, key, event)) else {
                        continue;
                    };
                    event = held;
                    if key >= self.safe.bound {
                        match self.wait_for_promises(time, Some((l, key, event))) {
                            Some((_, _, back)) => event = back,
                            None if self.news() => break,
                            None => continue,
                        }
                    }
                }
            }
            let lp = &self.lps[l as usize];
            if time == lp.newest && fingerprint(&key) == lp.last_key {
                // Its LP ran an event with the same key last (see `store.rs`, "Listing
                // later"): two events under one key, as the sequential kernel finds them.
                self.collided(l as usize, key);
                break;
            }
            // A safe event is not optimism: no window, budget or cap holds it back.
            if time < self.end_time && self.is_safe(l as usize, key) {
                if warm && let Some(next) = self.store.next_hint() {
                    self.warm(next as usize);
                }
                self.execute_safe(l as usize, key, event);
                executed += 1;
                heard = false;
                continue;
            }
            let stall = if time >= self.end_time {
                Some(None)
            } else if self.logs.live_bound() >= self.records_max && time > self.gvt.time.as_f64() {
                // At the cap on live records, only the events at GVT's time still run: the
                // one GVT waits for may be below every record held (a straggler to an LP
                // with nothing later), and without it GVT, and so every commit that would
                // free records, waits forever. (By time, not key: a distributed run's GVT is
                // the smallest key at its time, below the event it waits for.)
                Some(Some(false))
            } else if let Some(window) = self.window.window()
                && time > self.gvt.time.as_f64() + window
            {
                Some(Some(false))
            } else if let Some(window) = self.memory.as_ref().and_then(MemoryControl::window)
                && time > self.gvt.time.as_f64() + window
            {
                Some(Some(true))
            } else {
                None
            };
            if let Some(why) = stall {
                match why {
                    Some(false) => self.counters.window_stalls += 1,
                    Some(true) => self.counters.memory_stalls += 1,
                    None => {}
                }
                if self.store.push(l, key, event).is_err() {
                    self.collided(l as usize, key);
                }
                break;
            }
            let l = l as usize;
            if self.lps[l].blocked(key, self.gvt) {
                self.park(l, key, event);
                continue;
            }
            self.window.ran(time);
            // The next event's LP record is most likely cold: start loading it while this
            // one runs.
            if warm && let Some(next) = self.store.next_hint() {
                self.warm(next as usize);
            }
            self.execute(l, key, event);
            executed += 1;
            heard = false;
        }
        self.since_gvt_start += u64::from(executed);
        executed
    }

    /// Whether this worker's LP records are too many for the cache, so that [`Worker::warm`]
    /// pays: looking up the next event's LP and prefetching its record costs about 26
    /// instructions an event (PHOLD). Measured on one thread on a host with 1 MiB of L2 (CPU
    /// time, medians of 11; 368-byte records): 4,096 LPs (1.5 MB of records) no faster with
    /// it, 8,192 LPs (3 MB) 12 % faster, 16,384 LPs 20 %. Checked once a slice: migration
    /// changes the count.
    #[inline]
    pub(super) fn warms(&self) -> bool {
        self.lps.len() * std::mem::size_of::<LpState<M>>() >= warm_from_bytes()
    }

    /// Asks the hardware to load the parts of LP `l`'s record that running it or handing it
    /// a message reads. With thousands of LPs per worker a record is rarely in the cache,
    /// and its misses, taken one after another, are much of an event's cost.
    #[inline]
    pub(super) fn warm(&self, l: usize) {
        // Every line of the record (see `LpState`): its start, the model, its meta and its
        // end are less than a line apart when the model fits in a line (a larger model's
        // middle is left to the hardware).
        let lp = &self.lps[l];
        prefetch_index::prefetch_index(&self.lps, l);
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.model), 0);
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.meta), 0);
        prefetch_index::prefetch_index(std::slice::from_ref(&lp.rare), 0);
    }

    /// Counts an event of LP `l` for load balancing, when the run balances: only it reads
    /// the counts (a worker that gives way hands over all its LPs, whatever their loads), and
    /// at thousands of LPs a worker's counts are one more array to miss in per event.
    #[inline]
    pub(super) fn count_load(&mut self, l: usize) {
        if self.settings.load_balancing {
            // Saturating: only the order of the loads matters, and 4·10⁹ events of one LP
            // between two migrations is not a run this worker could tell from a longer one.
            self.loads[l] = self.loads[l].saturating_add(1);
        }
    }

    /// Keeps LP `l`'s event out of the store while the LP may not run it (see
    /// [`LpState::blocked`](super::lp::LpState::blocked)).
    pub(super) fn park(&mut self, l: usize, key: EventKey, event: M::Event) {
        let held = self.lps[l].hold() == Some(key.time) && key > self.gvt;
        let lp = &mut self.lps[l];
        if lp.rare_mut().parked.insert(key, event).is_some() {
            self.collided(l, key);
            return;
        }
        let rare = self.lps[l].rare_mut();
        if held && !rare.in_held {
            rare.in_held = true;
            self.lists.held.push(l as u32);
            // Its parked events are pending below the store (see `safe.rs`, rule 2).
            self.void_safe();
        }
    }

    /// Puts LP `l`'s parked events back in the store (they park again when they come up if
    /// the LP still may not run them).
    pub(super) fn unpark(&mut self, l: usize) {
        let Some(rare) = self.lps[l].rare.as_mut() else {
            return;
        };
        let parked = std::mem::take(&mut rare.parked);
        for (key, event) in parked {
            if self.store.push(l as u32, key, event).is_err() {
                self.collided(l, key);
            }
        }
        self.lps[l].tidy();
    }

    /// Adds a pending event for LP `l` to the store (where it parks when it comes up, if the
    /// LP may not run it then).
    #[inline]
    pub(super) fn add_pending(&mut self, l: usize, key: EventKey, event: M::Event) {
        // (A key taken among the LP's parked events is found when they go back.)
        if self.store.push(l as u32, key, event).is_err() {
            self.collided(l, key);
        }
        self.count_pending();
    }

    /// Counts one more pending event.
    #[inline]
    pub(super) fn count_pending(&mut self) {
        self.sizes.pending += 1;
        self.counters.peak_pending = self.counters.peak_pending.max(self.sizes.pending);
    }

    /// Removes LP `l`'s pending event under `key`, from the store or its parked events.
    pub(super) fn take_pending(&mut self, l: usize, key: &EventKey) -> Option<M::Event> {
        let taken = match self.store.take(l as u32, key) {
            Some(event) => Some(event),
            None => self.lps[l].rare.as_mut()?.parked.remove(key),
        };
        if taken.is_some() {
            self.sizes.pending -= 1;
        }
        taken
    }

    /// Whether LP `l` has a pending event under `key`.
    pub(super) fn has_pending(&mut self, l: usize, key: &EventKey) -> bool {
        self.store.contains(l as u32, key) || self.lps[l].parked(key).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::cache_size;

    #[test]
    fn cache_sizes_read_as_sysfs_writes_them() {
        assert_eq!(cache_size("512K\n"), Some(512 << 10));
        assert_eq!(cache_size("2M"), Some(2 << 20));
        assert_eq!(cache_size("65536"), Some(65536));
        assert_eq!(cache_size("0K"), None);
        assert_eq!(cache_size("lots"), None);
        assert_eq!(cache_size(""), None);
    }
}
