//! The worker's pending events: one ladder queue for all its LPs, popped in key order, and
//! for each LP the list of where its events are in the queue ([`Slots`], kept in the LP's
//! record), for the messages that name an event by its key (antimessages, cancels, moves).
//!
//! One queue per worker rather than a set per LP under a queue of LPs: an event costs one
//! push and one pop of the kind the sequential kernel does, instead of an insert into its
//! LP's set plus a re-queue of the LP, and an LP record no longer carries a pending set.
//! (BENCHMARKS.md, "One pending set per worker", has the measurements that chose it.)
//!
//! Why an LP's first events are found through its own record rather than through one map
//! from causal identity to slot for the whole worker: every push and pop already reads the
//! LP's record (a message checks whether it rolls the LP back, an event runs on it), so two
//! entries kept there cost no cache miss, where a map of a million entries cost one on every
//! push and every pop (22 % of a Time Warp run of PHOLD with a million LPs went to
//! `Store::push`). Most LPs hold one or two pending events (PHOLD with population 1 holds
//! one). An LP that holds more (a Sharks World sector, about fifty) keeps the rest in the
//! worker's [`IdMap`], where a search costs one probe instead of a scan of the LP's events.

use warpsim_core::EventKey;
use warpsim_queue::{Handle, LadderQueue, PendingSet};

use crate::idmap::IdMap;

/// How many of an LP's pending events its record lists; the rest are in the worker's map.
const INLINE: usize = 2;

/// `Ev::at` of an event listed in the worker's map rather than in its LP's record.
const MAPPED: u32 = u32::MAX;

/// Where one LP's pending events are in its worker's queue: the first [`INLINE`] by entries
/// kept here (a 32-bit tag of the event's causal identity in the high half, its queue slot
/// in the low half), and how many more the worker's map holds. Kept in the LP's record.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    entries: [u64; INLINE],
    len: u32,
    mapped: u32,
}

impl Slots {
    /// Forgets every entry (the store was drained, or the LP leaves the worker).
    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.mapped = 0;
    }

    #[inline]
    fn listed(&self) -> &[u64] {
        &self.entries[..self.len as usize]
    }
}

/// The tag of a causal identity in an LP's own entries: its low half (the identities of one
/// handler's sends are consecutive, `h + i`, so these bits tell them apart; the identity is
/// a mixed hash).
#[inline]
fn tag(id: u64) -> u64 {
    id & u64::from(u32::MAX)
}

/// A pending event in the worker's queue: the index of its LP in the worker, where its entry
/// is in that LP's [`Slots`] ([`MAPPED`]: in the worker's map), and the event.
#[derive(Debug)]
pub(crate) struct Ev<E> {
    pub(super) lp: u32,
    at: u32,
    pub(super) event: E,
}

/// The queue slot a handle names.
#[inline]
fn slot_of(handle: Handle) -> u32 {
    handle.into_raw() as u32
}

/// Whether the queue's slot `slot` holds LP `l`'s event under `key`.
#[inline]
fn is<E>(queue: &LadderQueue<EventKey, Ev<E>>, slot: u32, l: u32, key: &EventKey) -> bool {
    queue
        .handle_at(slot)
        .and_then(|handle| queue.get(handle))
        .is_some_and(|(other, ev)| other == *key && ev.lp == l)
}

/// All pending events of a worker's LPs that may run (an LP that may not, a failed or held
/// one, parks its events in its record: see [`Rare::parked`](super::lp::Rare)). Every method
/// that adds or removes LP `l`'s event takes `l`'s [`Slots`] (after [`pop`](Self::pop) the
/// caller hands the popped event's [`Unlist`] to [`unlist`](Self::unlist) with them; after
/// [`drain`](Self::drain) it clears every LP's).
#[derive(Debug)]
pub(crate) struct Store<E> {
    queue: LadderQueue<EventKey, Ev<E>>,
    ids: IdMap,
}

/// What [`Store::unlist`] needs of an event just popped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unlist {
    id: u64,
    at: u32,
}

impl<E> Store<E> {
    /// A store for about `events` pending events.
    pub(crate) fn with_capacity(events: usize) -> Store<E> {
        Store {
            queue: LadderQueue::with_capacity(events),
            // Only LPs with more than `INLINE` pending events use it: it grows when they do.
            ids: IdMap::with_capacity(0),
        }
    }

    /// Pending events.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Bytes of the identity map (the queue's are counted per event by the caller).
    pub(super) fn index_bytes(&self) -> u64 {
        self.ids.bytes()
    }

    /// The handle of LP `l`'s pending event under `key`, whose LP's entries are `slots`.
    // Always inlined: on every push, and its call cost more than its work (callgrind).
    #[inline(always)]
    fn locate(&self, slots: &Slots, l: u32, key: &EventKey) -> Option<Handle> {
        let queue = &self.queue;
        let tag = tag(key.id);
        // Plain loops, not iterator adapters: `Option::or_else` here was not inlined and cost
        // about 20 instructions per push (callgrind).
        for &entry in slots.listed() {
            if entry >> 32 == tag && is(queue, entry as u32, l, key) {
                return queue.handle_at(entry as u32);
            }
        }
        if slots.mapped == 0 {
            return None;
        }
        let slot = self.ids.find(key.id, |slot| is(queue, slot, l, key))?;
        queue.handle_at(slot)
    }

    /// Adds an event for LP `l`, whose entries are `slots`. When `l` already has an event
    /// under `key` (a collision of causal identities, see [`EventKey`]), the new event is
    /// handed back and nothing changes.
    #[inline]
    pub(crate) fn push(
        &mut self,
        l: u32,
        slots: &mut Slots,
        key: EventKey,
        event: E,
    ) -> Result<(), E> {
        let tag = tag(key.id);
        if (slots.len as usize) < INLINE {
            if self.locate(slots, l, &key).is_some() {
                return Err(event);
            }
            let at = slots.len;
            let slot = self.enqueue(key, Ev { lp: l, at, event });
            slots.entries[at as usize] = (tag << 32) | u64::from(slot);
            slots.len += 1;
            return Ok(());
        }
        let queue = &self.queue;
        if slots
            .listed()
            .iter()
            .any(|&entry| entry >> 32 == tag && is(queue, entry as u32, l, &key))
        {
            return Err(event);
        }
        let vacancy = if slots.mapped > 0 {
            self.ids.vacancy(key.id, |slot| is(queue, slot, l, &key))
        } else {
            self.ids.vacancy(key.id, |_| false)
        };
        let Ok(vacancy) = vacancy else {
            return Err(event);
        };
        let slot = self.enqueue(
            key,
            Ev {
                lp: l,
                at: MAPPED,
                event,
            },
        );
        self.ids.fill(vacancy, key.id, slot);
        slots.mapped += 1;
        Ok(())
    }

    /// Puts an event in the queue; returns its slot.
    #[inline(always)]
    fn enqueue(&mut self, key: EventKey, ev: Ev<E>) -> u32 {
        match self.queue.push(key, ev) {
            Ok(handle) => slot_of(handle),
            // Keys are finite times, so only a queue of 2³² events refuses one: memory runs
            // out long before. A panic here is caught around the worker and stops the run
            // with an internal error.
            Err(error) => panic!(
                "the worker's event queue refused an event: {:?}",
                error.kind
            ),
        }
    }

    /// The key and LP of the first event (in key order).
    #[inline]
    pub(super) fn peek(&mut self) -> Option<(EventKey, u32)> {
        self.queue.peek().map(|(key, ev)| (key, ev.lp))
    }

    /// The LP of the event that most likely comes next (a hint, for prefetching).
    #[inline]
    pub(super) fn next_hint(&self) -> Option<u32> {
        self.queue.next_hint().map(|ev| ev.lp)
    }

    /// Removes the first event: its key, its LP's index, what [`unlist`](Self::unlist)
    /// needs, and the event. The caller then hands that and the LP's [`Slots`] to `unlist`.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(EventKey, u32, Unlist, E)> {
        let (key, ev) = self.queue.pop()?;
        let unlist = Unlist {
            id: key.id,
            at: ev.at,
        };
        Some((key, ev.lp, unlist, ev.event))
    }

    /// Drops the entry of an event that has left the queue from `slots` or from the map.
    /// An entry of the LP's own moves into the place it leaves, and its event is told where
    /// it now is.
    #[inline]
    pub(super) fn unlist(&mut self, slots: &mut Slots, gone: Unlist) {
        if gone.at == MAPPED {
            let queue = &self.queue;
            // Every entry of the map names a queued event but this one, gone.
            self.ids
                .remove(gone.id, |slot| queue.handle_at(slot).is_none());
            slots.mapped -= 1;
            return;
        }
        let at = gone.at as usize;
        slots.len -= 1;
        let last = slots.len as usize;
        if at < last {
            let moved = slots.entries[last];
            slots.entries[at] = moved;
            if let Some(handle) = self.queue.handle_at(moved as u32)
                && let Some((_, ev)) = self.queue.get_mut(handle)
            {
                ev.at = at as u32;
            }
        }
    }

    /// Removes LP `l`'s event under `key`.
    pub(super) fn take(&mut self, l: u32, slots: &mut Slots, key: &EventKey) -> Option<E> {
        let handle = self.locate(slots, l, key)?;
        let (key, ev) = self.queue.cancel(handle)?;
        self.unlist(
            slots,
            Unlist {
                id: key.id,
                at: ev.at,
            },
        );
        Some(ev.event)
    }

    /// Whether LP `l` has an event under `key`.
    pub(super) fn contains(&self, l: u32, slots: &Slots, key: &EventKey) -> bool {
        self.locate(slots, l, key).is_some()
    }

    /// Every pending event (LP index and event), in no particular order, leaving the store
    /// as it is: a checkpoint's copy taken while the run goes on.
    pub(super) fn iter(&self) -> impl Iterator<Item = (EventKey, u32, &E)> + '_ {
        self.queue.iter().map(|(key, ev)| (key, ev.lp, &ev.event))
    }

    /// Removes every event, in key order (one at a time: at the end of a run with millions
    /// of pending events, a list of them all would raise the run's peak memory). The caller
    /// clears every LP's [`Slots`].
    pub(super) fn drain(&mut self) -> impl Iterator<Item = (EventKey, u32, E)> + '_ {
        self.ids.clear();
        std::iter::from_fn(|| self.queue.pop().map(|(key, ev)| (key, ev.lp, ev.event)))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::{RngExt, SeedableRng};
    use warpsim_core::{EventKey, LpId, Time};

    use super::{Slots, Store};

    /// A key of LP `l`'s (keys of different LPs never tie, as in a run).
    fn key(l: usize, time: u32, id: u64) -> EventKey {
        let time = Time::new(f64::from(time)).unwrap();
        EventKey::new(time, 0, LpId::new(l as u32), Time::ZERO, id)
    }

    /// Pushes, pops, takes and look-ups on a few LPs, against a map per LP: every LP crosses
    /// between its own entries and the worker's map many times (so the moves of entries and
    /// the events told where they now are get exercised), and identities collide on purpose
    /// (distinct keys, one identity) to check that events are told apart by their keys.
    #[test]
    fn the_store_agrees_with_a_map_per_lp() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let lps = 4;
        let mut store: Store<u64> = Store::with_capacity(0);
        let mut slots: Vec<Slots> = (0..lps).map(|_| Slots::default()).collect();
        let mut oracle: Vec<BTreeMap<EventKey, u64>> = vec![BTreeMap::new(); lps];
        for step in 0..200_000u64 {
            let l = rng.random_range(0..lps);
            let held = oracle[l].len();
            match rng.random_range(0..10) {
                // Push; one identity in eight is the same (distinct keys, one identity).
                0..=3 => {
                    let id = if rng.random_range(0..8) == 0 {
                        42
                    } else {
                        step
                    };
                    let k = key(l, rng.random_range(0..1000), id);
                    let taken = oracle[l].contains_key(&k);
                    let pushed = store.push(l as u32, &mut slots[l], k, step);
                    assert_eq!(pushed.is_err(), taken, "step {step}");
                    if !taken {
                        oracle[l].insert(k, step);
                    }
                }
                4..=5 if held > 0 => {
                    let k = *oracle[l].keys().nth(rng.random_range(0..held)).unwrap();
                    assert!(store.contains(l as u32, &slots[l], &k));
                    let event = store.take(l as u32, &mut slots[l], &k);
                    assert_eq!(event, oracle[l].remove(&k), "step {step}");
                    assert!(!store.contains(l as u32, &slots[l], &k));
                }
                6..=7 => {
                    let first = oracle
                        .iter()
                        .enumerate()
                        .filter_map(|(l, map)| map.first_key_value().map(|(k, _)| (*k, l)))
                        .min();
                    let popped = store.pop();
                    match (first, popped) {
                        (None, None) => {}
                        (Some((k, owner)), Some((key, lp, gone, event))) => {
                            assert_eq!((key, lp as usize), (k, owner), "step {step}");
                            assert_eq!(Some(event), oracle[owner].remove(&k));
                            store.unlist(&mut slots[owner], gone);
                        }
                        (expected, got) => panic!(
                            "step {step}: expected {expected:?}, popped {:?}",
                            got.map(|(key, lp, _, _)| (key, lp))
                        ),
                    }
                }
                _ => {
                    let k = key(l, rng.random_range(0..1000), step);
                    assert_eq!(
                        store.contains(l as u32, &slots[l], &k),
                        oracle[l].contains_key(&k)
                    );
                }
            }
            assert_eq!(store.len(), oracle.iter().map(BTreeMap::len).sum::<usize>());
        }
    }
}
