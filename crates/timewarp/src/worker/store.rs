//! The worker's pending events: one ladder queue for all its LPs, popped in key order, and
//! for each LP the list of where its events are in the queue ([`Slots`], one dense array
//! here), for the messages that name an event by its key (antimessages, cancels, moves).
//!
//! One queue per worker rather than a set per LP under a queue of LPs: an event costs one
//! push and one pop of the kind the sequential kernel does, instead of an insert into its
//! LP's set plus a re-queue of the LP, and an LP record no longer carries a pending set.
//! (BENCHMARKS.md, "One pending set per worker", has the measurements that chose it.)
//!
//! Why an LP's first events are found through entries of its own rather than through one
//! map from causal identity to slot for the whole worker: a map of a million entries cost a
//! cache miss on every push and every pop (22 % of a Time Warp run of PHOLD with a million
//! LPs went to `Store::push`), and most events are never looked up at all (see below). Most
//! LPs hold one or two pending events (PHOLD with population 1 holds one). An LP that holds
//! more (a Sharks World sector, about fifty) keeps the rest in the worker's [`IdMap`], where
//! a search costs one probe instead of a scan of the LP's events.
//!
//! # Listing later
//!
//! The entries ([`Slots`]) are one dense array here, not in the LP records. And most events
//! are never looked up by key: a message that rolls nothing back ([`Store::send`], which the
//! worker uses when the event is later than anything its LPs have run) goes into the queue
//! *unlisted*, touching nothing of its LP, as the sequential kernel's send does. A look-up by
//! key after that ([`Store::take`], [`Store::contains`]) either searches the queue for its
//! key (see "Finding or listing") or lists every unlisted event in one pass over the queue,
//! and the sends after a pass list at once until as many have gone by as the pass visited,
//! so that passes cost at most about one listing per send even when look-ups are frequent.
//! Without this, a send read its destination's entry, a cache miss per send with thousands
//! of LPs, which the sequential kernel does not take (BENCHMARKS.md, "Sends that touch
//! nothing of their LP").
//!
//! # Finding or listing
//!
//! A pass lists every unlisted event, and the eager sends after it each touch their LP's
//! entries, then again when they pop: two likely cache misses per event with thousands of
//! LPs. When look-ups are rare (an antimessage now and then: over MPI at 32,768 LPs, one per
//! about 1,150 events, yet listing took a tenth of a worker's time), a look-up instead asks
//! the queue for its key ([`LadderQueue::find`]: a binary search, or a scan of one rung
//! bucket or of Top), and nothing is listed. Once look-ups come more often than one per
//! [`FIND_EVERY`] unlisted sends, the next one lists as above, and the pass pays off.
//!
//! A listing checks that the LP has no other event under the key (a collision of causal
//! identities); a search that finds two makes the pass that reports them. An event that is
//! never listed is not checked there: the worker checks every event it runs against the one
//! its LP ran last (`LpState::last_key`), which catches twins the way the sequential kernel
//! does, when they run one after the other.

use warpsim_core::EventKey;
use warpsim_queue::{Handle, LadderQueue, PendingSet};

use crate::idmap::IdMap;

/// How many of an LP's pending events its entries list; the rest are in the worker's map.
const INLINE: usize = 2;

/// `Ev::at` of an event listed in the worker's map rather than in its LP's entries.
const MAPPED: u32 = u32::MAX;

/// `Ev::at` of an event not listed (see "Listing later").
const UNLISTED: u32 = u32::MAX - 1;

/// A look-up searches the queue for its key rather than listing every unlisted event while
/// look-ups are rarer than one per this many unlisted sends (see "Finding or listing").
const FIND_EVERY: usize = 64;

/// The fewest sends that list at once after a pass (a pass over a nearly empty queue
/// should not make the next sends unlisted again at once).
const EAGER_MIN: usize = 64;

/// Where one LP's pending events are in its worker's queue: the first [`INLINE`] by entries
/// kept here (a 32-bit tag of the event's causal identity in the high half, its queue slot
/// in the low half), and how many more the worker's map holds.
#[derive(Debug, Default)]
struct Slots {
    entries: [u64; INLINE],
    len: u32,
    mapped: u32,
}

impl Slots {
    /// Forgets every entry (the store was drained).
    fn clear(&mut self) {
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
/// one, parks its events in its record: see [`Rare::parked`](super::lp::Rare)), and where
/// each LP's are. LPs are named by their index in the worker; the caller says how many there
/// are ([`fit`](Self::fit)).
#[derive(Debug)]
pub(crate) struct Store<E> {
    queue: LadderQueue<EventKey, Ev<E>>,
    ids: IdMap,
    /// Each LP's entries, by index.
    slots: Vec<Slots>,
    /// Events in the queue that are not listed (see "Listing later").
    unlisted: usize,
    /// Sends left that list at once, after a pass.
    eager: usize,
    /// Look-ups that searched the queue ([`LadderQueue::find`]) and unlisted sends, since the
    /// last pass (see "Finding or listing").
    finds: usize,
    sent_unlisted: usize,
    /// Look-ups that searched the queue, in all (the tests check which way they went).
    #[cfg(test)]
    searched: usize,
    /// Two events of one LP found under one key: the LP and the key (the worker stops the
    /// run, see [`collision`](Self::collision)). The later one was dropped.
    collisions: Vec<(u32, EventKey)>,
    /// A pass's handles (kept for the next pass).
    pass: Vec<Handle>,
}

impl<E> Store<E> {
    /// A store for `lps` LPs and about `events` pending events.
    pub(crate) fn with_capacity(events: usize, lps: usize) -> Store<E> {
        Store {
            queue: LadderQueue::with_capacity(events),
            // Only LPs with more than `INLINE` pending events use it: it grows when they do.
            ids: IdMap::with_capacity(0),
            slots: (0..lps).map(|_| Slots::default()).collect(),
            unlisted: 0,
            eager: 0,
            finds: 0,
            sent_unlisted: 0,
            #[cfg(test)]
            searched: 0,
            collisions: Vec::new(),
            pass: Vec::new(),
        }
    }

    /// Makes room for exactly `lps` LPs, after the worker's LPs changed (a migration): LPs
    /// that arrived are added after the others, and a worker whose LPs left (whose indices
    /// change) drained the store first.
    pub(super) fn fit(&mut self, lps: usize) {
        self.slots.resize_with(lps, Slots::default);
        self.slots.truncate(lps);
    }

    /// Pending events.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Bytes of the identity map and the LPs' entries (the queue's are counted per event by
    /// the caller).
    pub(super) fn index_bytes(&self) -> u64 {
        self.ids.bytes() + (self.slots.capacity() * std::mem::size_of::<Slots>()) as u64
    }

    /// Two events of one LP under one key, if the store met them since the last call: the
    /// run must stop (see [`EventKey`], "Uniqueness").
    #[cold]
    pub(super) fn collision(&mut self) -> Option<(u32, EventKey)> {
        self.collisions.pop()
    }

    /// Whether a collision waits for [`collision`](Self::collision).
    #[inline]
    pub(super) fn collided(&self) -> bool {
        !self.collisions.is_empty()
    }

    /// The handle of LP `l`'s listed pending event under `key`, whose LP's entries are
    /// `slots`.
    // Always inlined: on every push, and its call cost more than its work (callgrind).
    #[inline(always)]
    fn locate(
        queue: &LadderQueue<EventKey, Ev<E>>,
        ids: &IdMap,
        slots: &Slots,
        l: u32,
        key: &EventKey,
    ) -> Option<Handle> {
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
        let slot = ids.find(key.id, |slot| is(queue, slot, l, key))?;
        queue.handle_at(slot)
    }

    /// Adds an event for LP `l` and lists it. When `l` already has a listed event under
    /// `key` (a collision of causal identities, see [`EventKey`]), the new event is handed
    /// back and nothing changes.
    #[inline]
    pub(crate) fn push(&mut self, l: u32, key: EventKey, event: E) -> Result<(), E> {
        let tag = tag(key.id);
        let slots = &mut self.slots[l as usize];
        if (slots.len as usize) < INLINE {
            if Self::locate(&self.queue, &self.ids, slots, l, &key).is_some() {
                return Err(event);
            }
            let at = slots.len;
            let slot = slot_of(enqueue(&mut self.queue, key, Ev { lp: l, at, event }));
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
        let slot = slot_of(enqueue(
            &mut self.queue,
            key,
            Ev {
                lp: l,
                at: MAPPED,
                event,
            },
        ));
        self.ids.fill(vacancy, key.id, slot);
        slots.mapped += 1;
        Ok(())
    }

    /// Adds an event for LP `l`, unlisted unless a pass was recent (see "Listing later"):
    /// for a message that needs nothing else of its LP.
    #[inline]
    pub(crate) fn send(&mut self, l: u32, key: EventKey, event: E) {
        if self.eager > 0 {
            self.eager -= 1;
            if self.push(l, key, event).is_err() {
                self.collisions.push((l, key));
            }
            return;
        }
        enqueue(
            &mut self.queue,
            key,
            Ev {
                lp: l,
                at: UNLISTED,
                event,
            },
        );
        self.unlisted += 1;
        self.sent_unlisted += 1;
    }

    /// Lists every unlisted event now (the tests' way to make a pass).
    #[cfg(test)]
    fn list(&mut self) {
        if self.unlisted > 0 {
            self.list_all();
        }
    }

    /// Lists every unlisted event (see "Listing later"). One whose LP already has an event
    /// under its key is dropped and noted for [`collision`](Self::collision).
    #[inline(never)]
    fn list_all(&mut self) {
        self.finds = 0;
        self.sent_unlisted = 0;
        let mut pass = std::mem::take(&mut self.pass);
        pass.clear();
        pass.extend(self.queue.handles());
        for &handle in &pass {
            let Some((key, ev)) = self.queue.get(handle) else {
                continue;
            };
            if ev.at != UNLISTED {
                continue;
            }
            let l = ev.lp;
            let slots = &mut self.slots[l as usize];
            if Self::locate(&self.queue, &self.ids, slots, l, &key).is_some() {
                self.queue.cancel(handle);
                self.collisions.push((l, key));
                continue;
            }
            let slot = slot_of(handle);
            let at = if (slots.len as usize) < INLINE {
                let at = slots.len;
                slots.entries[at as usize] = (tag(key.id) << 32) | u64::from(slot);
                slots.len += 1;
                at
            } else {
                // `locate` found no event under `key`: nothing in the map is taken.
                let Ok(vacancy) = self.ids.vacancy(key.id, |_| false) else {
                    unreachable!("a vacancy is refused only for a taken entry")
                };
                self.ids.fill(vacancy, key.id, slot);
                slots.mapped += 1;
                MAPPED
            };
            if let Some((_, ev)) = self.queue.get_mut(handle) {
                ev.at = at;
            }
        }
        self.pass = pass;
        self.unlisted = 0;
        self.eager = self.queue.len().max(EAGER_MIN);
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

    /// Removes the first event: its key, its LP's index and the event.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(EventKey, u32, E)> {
        let (key, ev) = self.queue.pop()?;
        let l = ev.lp;
        self.unlist(l, key.id, ev.at);
        Some((key, l, ev.event))
    }

    /// Drops the entry of LP `l`'s event (identity `id`, entry `at`) that has left the
    /// queue. An entry of the LP's own moves into the place it leaves, and its event is told
    /// where it now is.
    #[inline]
    fn unlist(&mut self, l: u32, id: u64, at: u32) {
        if at == UNLISTED {
            self.unlisted -= 1;
            return;
        }
        let slots = &mut self.slots[l as usize];
        if at == MAPPED {
            let queue = &self.queue;
            // Every entry of the map names a queued event but this one, gone.
            self.ids.remove(id, |slot| queue.handle_at(slot).is_none());
            slots.mapped -= 1;
            return;
        }
        let at = at as usize;
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
    pub(super) fn take(&mut self, l: u32, key: &EventKey) -> Option<E> {
        let handle = self.look_up(l, key)?;
        let (key, ev) = self.queue.cancel(handle)?;
        self.unlist(l, key.id, ev.at);
        Some(ev.event)
    }

    /// Moves LP `l`'s event under `from` to `to` (the same send, so the same causal
    /// identity) in place: the queue keeps its slot, so the LP's entry stays as it is.
    /// Returns whether the event was found. A timer pushed back on every event (a watchdog)
    /// costs one look-up and one re-insertion, as on the sequential kernel, rather than a
    /// removal, a push and the entry's update.
    pub(super) fn reschedule(&mut self, l: u32, from: &EventKey, to: EventKey) -> bool {
        debug_assert!(from.same_send(&to));
        let Some(handle) = self.look_up(l, from) else {
            return false;
        };
        if self
            .queue
            .get(handle)
            .is_some_and(|(_, ev)| ev.at == UNLISTED)
        {
            // Listed as it moves, so that its next move finds it at once.
            let Some((_, ev)) = self.queue.cancel(handle) else {
                return false;
            };
            self.unlisted -= 1;
            if self.push(l, to, ev.event).is_err() {
                self.collisions.push((l, to));
            }
            return true;
        }
        // Keys are finite times: the queue refuses none (see `enqueue`).
        self.queue.reschedule(handle, to).is_ok()
    }

    /// Whether LP `l` has an event under `key`.
    pub(super) fn contains(&mut self, l: u32, key: &EventKey) -> bool {
        self.look_up(l, key).is_some()
    }

    /// The handle of LP `l`'s event under `key` (see "Finding or listing").
    fn look_up(&mut self, l: u32, key: &EventKey) -> Option<Handle> {
        if self.unlisted > 0 {
            if self.finds * FIND_EVERY <= self.sent_unlisted {
                self.finds += 1;
                #[cfg(test)]
                {
                    self.searched += 1;
                }
                // Every event of the LP under the key, listed or not: two are a collision,
                // which a pass finds and reports as before.
                let mut found = 0;
                self.queue.find(key, |ev| {
                    found += usize::from(ev.lp == l);
                    false
                });
                match found {
                    0 => return None,
                    1 => return self.queue.find(key, |ev| ev.lp == l),
                    _ => {}
                }
            }
            self.list_all();
        }
        Self::locate(&self.queue, &self.ids, &self.slots[l as usize], l, key)
    }

    /// Every pending event (LP index and event), in no particular order, leaving the store
    /// as it is: a checkpoint's copy taken while the run goes on.
    pub(super) fn iter(&self) -> impl Iterator<Item = (EventKey, u32, &E)> + '_ {
        self.queue.iter().map(|(key, ev)| (key, ev.lp, &ev.event))
    }

    /// Removes every event, in key order (one at a time: at the end of a run with millions
    /// of pending events, a list of them all would raise the run's peak memory), and every
    /// LP's entries.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = (EventKey, u32, E)> + '_ {
        self.ids.clear();
        self.unlisted = 0;
        for slots in &mut self.slots {
            slots.clear();
        }
        std::iter::from_fn(|| self.queue.pop().map(|(key, ev)| (key, ev.lp, ev.event)))
    }
}

/// Puts an event in the queue; returns its handle.
#[inline(always)]
fn enqueue<E>(queue: &mut LadderQueue<EventKey, Ev<E>>, key: EventKey, ev: Ev<E>) -> Handle {
    match queue.push(key, ev) {
        Ok(handle) => handle,
        // Keys are finite times, so only a queue of 2³² events refuses one: memory runs out
        // long before. A panic here is caught around the worker and stops the run with an
        // internal error.
        Err(error) => panic!(
            "the worker's event queue refused an event: {:?}",
            error.kind
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::{RngExt, SeedableRng};
    use warpsim_core::{EventKey, LpId, Time};

    use super::Store;

    /// A key of LP `l`'s (keys of different LPs never tie, as in a run).
    fn key(l: usize, time: u32, id: u64) -> EventKey {
        let time = Time::new(f64::from(time)).unwrap();
        EventKey::new(time, 0, LpId::new(l as u32), Time::ZERO, id)
    }

    /// Pushes, sends (listed later), pops, takes and look-ups on a few LPs, against a map
    /// per LP: every LP crosses between its own entries and the worker's map many times (so
    /// the moves of entries and the events told where they now are get exercised), events
    /// are popped and taken before and after they are listed, and identities collide on
    /// purpose (distinct keys, one identity) to check that events are told apart by their
    /// keys.
    #[test]
    fn the_store_agrees_with_a_map_per_lp() {
        agrees_with_a_map_per_lp(0);
    }

    /// The same with look-ups rarer than one per [`FIND_EVERY`](super::FIND_EVERY) sends,
    /// so that most search the queue instead of listing.
    #[test]
    fn the_store_agrees_with_a_map_per_lp_when_look_ups_are_rare() {
        agrees_with_a_map_per_lp(2_000);
    }

    /// Runs the random operations; `quiet` more rolls in every 13 only pop or send an
    /// unlisted event, one of each in turn, so the store keeps its size.
    fn agrees_with_a_map_per_lp(quiet: u32) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let lps = 4;
        let mut store: Store<u64> = Store::with_capacity(0, lps);
        let mut oracle: Vec<BTreeMap<EventKey, u64>> = vec![BTreeMap::new(); lps];
        let (mut sent, mut collisions) = (0, 0);
        for step in 0..300_000u64 {
            let l = rng.random_range(0..lps);
            let held = oracle[l].len();
            let mut roll = rng.random_range(0..14 + quiet);
            if roll >= 14 {
                // Quiet: a pop, or a send of a new key (an unlisted event).
                if roll % 2 == 0 {
                    roll = 8;
                } else {
                    let k = key(l, rng.random_range(0..1000), step);
                    sent += 1;
                    store.send(l as u32, k, step);
                    oracle[l].insert(k, step);
                    continue;
                }
            }
            match roll {
                // Push or send; one identity in eight is the same (distinct keys, one
                // identity), and one key in a few dozen is taken already.
                0..=5 => {
                    let id = if rng.random_range(0..8) == 0 {
                        42
                    } else {
                        step
                    };
                    // (Not when quiet: a push is checked against listed events only, and
                    // most are unlisted then; `a_pass_finds_an_unlisted_twin` covers that.)
                    let k = if quiet == 0 && held > 0 && rng.random_range(0..40) == 0 {
                        *oracle[l].keys().nth(rng.random_range(0..held)).unwrap()
                    } else {
                        key(l, rng.random_range(0..1000), id)
                    };
                    let taken = oracle[l].contains_key(&k);
                    if rng.random_range(0..2) == 0 {
                        let pushed = store.push(l as u32, k, step);
                        assert_eq!(pushed.is_err(), taken, "step {step}");
                    } else {
                        sent += 1;
                        store.send(l as u32, k, step);
                        if taken {
                            // Found when listed: the later event is dropped.
                            store.list();
                            assert_eq!(store.collision(), Some((l as u32, k)), "step {step}");
                            collisions += 1;
                        }
                    }
                    if !taken {
                        oracle[l].insert(k, step);
                    }
                }
                6..=7 if held > 0 => {
                    let k = *oracle[l].keys().nth(rng.random_range(0..held)).unwrap();
                    assert!(store.contains(l as u32, &k));
                    let event = store.take(l as u32, &k);
                    assert_eq!(event, oracle[l].remove(&k), "step {step}");
                    assert!(!store.contains(l as u32, &k));
                }
                8..=10 => {
                    let first = oracle
                        .iter()
                        .enumerate()
                        .filter_map(|(l, map)| map.first_key_value().map(|(k, _)| (*k, l)))
                        .min();
                    let popped = store.pop();
                    match (first, popped) {
                        (None, None) => {}
                        (Some((k, owner)), Some((key, lp, event))) => {
                            assert_eq!((key, lp as usize), (k, owner), "step {step}");
                            assert_eq!(Some(event), oracle[owner].remove(&k));
                        }
                        (expected, got) => panic!(
                            "step {step}: expected {expected:?}, popped {:?}",
                            got.map(|(key, lp, _)| (key, lp))
                        ),
                    }
                }
                11 => store.list(),
                // A move: the same send (identity) at another time, as a rescheduled timer.
                12 if held > 0 => {
                    let from = *oracle[l].keys().nth(rng.random_range(0..held)).unwrap();
                    let to = key(l, rng.random_range(0..1000), from.id);
                    if oracle[l].contains_key(&to) {
                        continue;
                    }
                    assert!(store.reschedule(l as u32, &from, to), "step {step}");
                    let event = oracle[l].remove(&from).unwrap();
                    oracle[l].insert(to, event);
                    assert!(!store.contains(l as u32, &from) || from == to);
                    assert!(store.contains(l as u32, &to));
                }
                12 => {
                    let absent = key(l, rng.random_range(0..1000), u64::MAX - step);
                    let to = key(l, 0, absent.id);
                    assert!(!store.reschedule(l as u32, &absent, to), "step {step}");
                }
                _ => {
                    let k = key(l, rng.random_range(0..1000), step);
                    assert_eq!(store.contains(l as u32, &k), oracle[l].contains_key(&k));
                }
            }
            assert!(!store.collided(), "step {step}");
            assert_eq!(store.len(), oracle.iter().map(BTreeMap::len).sum::<usize>());
        }
        assert!(
            sent > 50_000 && (collisions > 100 || quiet > 0),
            "{sent} sends, {collisions} collisions"
        );
        let searched = store.searched;
        assert!(
            (quiet == 0 || searched > 500) && (quiet > 0 || searched < 500),
            "{searched} look-ups searched the queue"
        );
    }

    /// An unlisted event with the key of a listed one: the next look-up's pass finds them,
    /// keeps the listed one and reports the other.
    #[test]
    fn a_pass_finds_an_unlisted_twin() {
        let mut store: Store<u64> = Store::with_capacity(0, 2);
        let k = key(1, 5, 9);
        store.send(0, key(0, 7, 1), 0);
        store.send(1, k, 1);
        assert_eq!(store.push(1, k, 2), Ok(()));
        assert!(!store.collided());
        assert!(store.contains(1, &k));
        assert_eq!(store.collision(), Some((1, k)));
        assert_eq!(store.collision(), None);
        assert_eq!(store.len(), 2);
        assert_eq!(store.take(1, &k), Some(2));
        assert!(!store.contains(1, &k));
        assert!(store.contains(0, &key(0, 7, 1)));
    }
}
