//! The timer operations shared by the game loop and by callbacks.
//!
//! # Ground rules
//!
//! These invariants hold between any two public calls, and every private helper keeps them:
//!
//! 1. A slot is *live* iff its state is not [`State::Free`]; `live` counts live slots. A
//!    [`TimerId`] is valid iff its generation equals its slot's and the slot is live.
//! 2. A slot is in the queue iff its state is [`State::Scheduled`], under the key
//!    `(slot.time, slot.seq)`, filed under the slot's index (the queue finds it by index).
//! 3. [`State::Parked`] exists only while an advance runs (`in_advance`); every parked slot has
//!    an entry `(slot, generation)` in `parked` (stale entries are allowed and skipped), and the
//!    end of the advance moves every parked slot into the queue.
//! 4. [`State::Firing`] marks a one-shot timer whose callback is running (its callback is out
//!    of the slot). When the callback returns, a still-firing slot is released as finished; one
//!    that the callback re-armed (`set_time`, `delay`) keeps its callback.
//! 5. A slot with `has_owner` is listed in its owner's `timers` at the position recorded in
//!    `owner_links` (the link is kept beside the slots, which only owned timers need).
//! 6. A milestone in state `Waiting(Some(id))` has exactly one live internal timer, `id`, whose
//!    callback fires that milestone.
//! 7. `next_due` is at most the earliest due time in the queue (`+∞` only if it is empty): a
//!    lower bound kept on every push and refreshed when the queue is looked at, so that an
//!    advance with nothing due is one comparison and never touches the queue.
//! 8. A slot is free iff its bit in `pages` is set; the slot array is `pages`' pages, whole.

mod changing;
mod meters;
mod owners;
mod pages;

use std::fmt;

use pages::{MAX_TIMERS, PAGE, Pages};

use crate::builder::TimerBuilder;
use crate::ctx::TimerCtx;
use crate::error::{AddError, TimerError};
use crate::id::{OwnerId, TimerId};
use crate::meter::Meter;
use crate::queue::{Queue, TimerQueue};
use crate::time::TimeKey;

/// A boxed timer callback: the context `C` and the timer context.
pub(crate) type BoxedCallback<C> = Box<dyn FnMut(&mut C, &mut TimerCtx<'_, C>) + Send>;

/// A boxed owner observer.
type Observer = Box<dyn FnMut(TimerId, RemovalReason) + Send>;

/// Marks "no owner" in an [`OwnerLink`].
const NO_OWNER: u32 = u32::MAX;

/// Slot indices stay below this, so the queue (which reserves `u32::MAX`) is never full before
/// the manager is.
const MAX_SLOTS: usize = u32::MAX as usize - 1;

/// What a repeating timer does when one advance spans several of its periods.
///
/// ```
/// use warpsim_timers::{CatchUp, Timers};
///
/// let mut timers = Timers::<Vec<(f64, u64)>>::new();
/// let log_all = |log: &mut Vec<(f64, u64)>, ctx: &mut warpsim_timers::TimerCtx<'_, _>| {
///     log.push((ctx.scheduled(), ctx.occurrences()))
/// };
/// timers.timer(1.0).repeat(1.0).catch_up(CatchUp::FireAll).build(log_all)?;
/// let mut log = Vec::new();
/// timers.advance(3.5, &mut log)?;
/// assert_eq!(log, [(1.0, 1), (2.0, 1), (3.0, 1)]);
///
/// let mut timers = Timers::<Vec<(f64, u64)>>::new();
/// timers.timer(1.0).repeat(1.0).catch_up(CatchUp::FireOnce).build(log_all)?;
/// let mut log = Vec::new();
/// timers.advance(3.5, &mut log)?;
/// assert_eq!(log, [(1.0, 3)]); // once, standing for three occurrences
/// timers.advance(0.5, &mut log)?;
/// assert_eq!(log, [(1.0, 3), (4.0, 1)]); // and the schedule did not drift
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CatchUp {
    /// Fire once for every missed occurrence, each with its own scheduled time, in time order
    /// with the other timers. The default.
    #[default]
    FireAll,
    /// Fire once (at the first missed occurrence) and skip ahead to the first occurrence after
    /// the end of the advance. [`TimerCtx::occurrences`] says how many occurrences the call
    /// stands for.
    FireOnce,
}

/// Why an owner is told that one of its timers was removed.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use warpsim_timers::{RemovalReason, Timers};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let mut timers = Timers::<()>::new();
/// let owner = timers.add_owner({
///     let seen = Arc::clone(&seen);
///     move |_id, reason| seen.lock().unwrap().push(reason)
/// });
/// let a = timers.timer(1.0).owner(owner).build(|_, _| {})?;
/// timers.timer(2.0).owner(owner).replacing(a).build(|_, _| {})?;
/// timers.timer(0.5).owner(owner).build(|_, _| {})?;
/// timers.advance(1.0, &mut ())?;
/// drop(timers);
/// assert_eq!(
///     *seen.lock().unwrap(),
///     [RemovalReason::Replaced, RemovalReason::Finished, RemovalReason::ManagerDropped]
/// );
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RemovalReason {
    /// Removed by `cancel`, `cancel_owner` or `remove_owner`.
    Cancelled,
    /// Removed because a new timer was built with `.replacing(id)`.
    Replaced,
    /// A one-shot timer fired and its callback returned without re-arming it.
    Finished,
    /// The manager was dropped with the timer still live.
    ManagerDropped,
}

/// Where a timer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Not a timer: the slot is free (see `pages`).
    Free,
    /// In the queue under `(time, seq)`.
    Scheduled,
    /// Due at `time` but held back until the running advance ends (see ground rule 3).
    Parked,
    /// Paused with `time` left to run.
    Paused,
    /// A one-shot timer whose callback is running.
    Firing,
}

/// One timer: one 64-byte cache line, because firing a timer touches its slot at a random
/// place in a large array. What only repeating or owned timers need is kept elsewhere.
#[repr(align(64))]
pub(crate) struct Slot<C> {
    pub(crate) generation: u32,
    pub(crate) state: State,
    pub(crate) has_owner: bool,
    /// Insertion sequence number: the tie-break between equal times.
    pub(crate) seq: u64,
    /// Scheduled or parked: the due time. Paused: the time left. Firing: the scheduled time of
    /// the occurrence running.
    pub(crate) time: f64,
    /// `None` only while the callback runs (or after it panicked).
    pub(crate) callback: Option<BoxedCallback<C>>,
    pub(crate) repeat: Option<Box<Repeat>>,
    /// The user's word of data, handed to the callback ([`TimerCtx::payload`]).
    pub(crate) payload: u64,
}

/// The schedule of a repeating timer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Repeat {
    pub(crate) period: f64,
    /// Occurrence `k` is due at `anchor + k · period`, computed from the anchor each time
    /// rather than accumulated, so the schedule never drifts.
    pub(crate) anchor: f64,
    pub(crate) occurrences: u64,
    pub(crate) catch_up: CatchUp,
}

/// Where an owned timer sits in its owner's list.
#[derive(Debug, Clone, Copy)]
struct OwnerLink {
    owner: u32,
    pos: u32,
}

/// A registered owner.
struct OwnerSlot {
    generation: u32,
    /// `None` while the slot is free.
    observer: Option<Observer>,
    timers: Vec<u32>,
}

/// Where a milestone stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MilestoneState {
    /// The value reached the level and the callback ran (or is running); nothing is pending
    /// until the value drops below the level again.
    Fired,
    /// Not reached yet: pending as the given internal timer, or `None` when the meter can
    /// never get there as things stand (above the cap).
    Waiting(Option<TimerId>),
}

pub(crate) struct Milestone<C> {
    pub(crate) level: f64,
    pub(crate) state: MilestoneState,
    pub(crate) callback: Option<BoxedCallback<C>>,
}

pub(crate) struct MeterSlot<C> {
    pub(crate) generation: u32,
    /// `None` while the slot is free.
    pub(crate) meter: Option<Meter>,
    pub(crate) milestones: Vec<Milestone<C>>,
}

/// The timer operations available both to the game loop (through [`Timers`](crate::Timers))
/// and to callbacks while an advance runs (through [`TimerCtx`]).
///
/// There is no way to make one directly: every `Scheduler` lives inside a `Timers`, which
/// derefs to it, and a callback reaches the same one through its `TimerCtx`. What a callback
/// cannot do is advance time, which is why `advance` lives on `Timers` only.
///
/// Times are plain `f64`s in whatever unit the game uses (seconds by convention).
///
/// ```
/// use warpsim_timers::{Scheduler, Timers};
///
/// // Code that only schedules can take a `&mut Scheduler` and serve both callers.
/// fn arm_torch(timers: &mut Scheduler<u32>, burn_time: f64) {
///     timers.add(burn_time, |lit, _| *lit -= 1).unwrap();
/// }
/// let mut timers = Timers::new();
/// let mut lit = 2;
/// arm_torch(&mut timers, 1.0);
/// timers.add(0.5, |_, ctx| arm_torch(ctx, 0.25))?; // from inside a callback
/// timers.advance(1.0, &mut lit)?;
/// assert_eq!(lit, 0);
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
pub struct Scheduler<C> {
    /// The clock. While an advance runs it is the time of the event being fired.
    pub(crate) now: f64,
    pub(crate) time_scale: f64,
    pub(crate) queue: Queue,
    /// A lower bound of the earliest due time in the queue (ground rule 7).
    pub(crate) next_due: f64,
    pub(crate) slots: Vec<Slot<C>>,
    /// Parallel to `slots`; meaningful where `has_owner` is set.
    owner_links: Vec<OwnerLink>,
    /// Which slots are free, by page (see [`pages`]).
    pages: Pages,
    live: usize,
    next_seq: u64,
    pub(crate) in_advance: bool,
    parked: Vec<(u32, u32)>,
    /// The timer whose callback is running, so a panic in it can be cleaned up.
    pub(crate) firing: Option<TimerId>,
    owners: Vec<OwnerSlot>,
    free_owners: Vec<u32>,
    pub(crate) meters: Vec<MeterSlot<C>>,
    free_meters: Vec<u32>,
}

impl<C> Scheduler<C> {
    pub(crate) fn new(queue: TimerQueue, capacity: usize) -> Self {
        Scheduler {
            now: 0.0,
            time_scale: 1.0,
            queue: Queue::new(queue, capacity),
            next_due: f64::INFINITY,
            slots: Vec::with_capacity(capacity),
            owner_links: Vec::new(),
            pages: Pages::new(),
            live: 0,
            next_seq: 0,
            in_advance: false,
            parked: Vec::new(),
            firing: None,
            owners: Vec::new(),
            free_owners: Vec::new(),
            meters: Vec::new(),
            free_meters: Vec::new(),
        }
    }

    // ----- clock ---------------------------------------------------------------------------

    /// The current game time. Inside a callback it is the time of the event being fired (the
    /// later of its scheduled time and the time the advance started from).
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<Vec<f64>>::new();
    /// timers.add(0.25, |log, ctx| log.push(ctx.now()))?;
    /// let mut log = Vec::new();
    /// timers.advance(1.0, &mut log)?;
    /// assert_eq!((log[0], timers.now()), (0.25, 1.0));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn now(&self) -> f64 {
        self.now
    }

    /// The factor `advance(dt)` multiplies `dt` by (default `1`).
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// assert_eq!(Timers::<()>::new().time_scale(), 1.0);
    /// ```
    pub fn time_scale(&self) -> f64 {
        self.time_scale
    }

    /// Sets the manager-wide time scale: `advance(dt)` moves the clock by `dt × scale`. `0`
    /// pauses everything; `0.5` is slow motion. Set from a callback, it applies from the next
    /// `advance`.
    ///
    /// # Errors
    ///
    /// [`TimerError::InvalidTimeScale`] for NaN, infinite or negative scales.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// timers.set_time_scale(0.5)?;
    /// timers.advance(1.0, &mut ())?;
    /// assert_eq!(timers.now(), 0.5);
    /// assert!(timers.set_time_scale(f64::NAN).is_err());
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn set_time_scale(&mut self, scale: f64) -> Result<(), TimerError> {
        if scale.is_finite() && scale >= 0.0 {
            self.time_scale = scale + 0.0;
            Ok(())
        } else {
            Err(TimerError::InvalidTimeScale(scale))
        }
    }

    /// Number of live timers (scheduled, paused or firing), milestone timers included.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// timers.add(1.0, |_, _| {})?;
    /// assert_eq!(timers.len(), 1);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.live
    }

    /// `true` when no timer is live.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// assert!(Timers::<()>::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    // ----- adding --------------------------------------------------------------------------

    /// Starts building a timer that fires `delay` after now; see [`TimerBuilder`] for repeat,
    /// catch-up, owner and replacement. Nothing is checked until
    /// [`build`](TimerBuilder::build).
    ///
    /// ```
    /// use warpsim_timers::{CatchUp, Timers};
    /// let mut timers = Timers::<u32>::new();
    /// let id = timers.timer(0.5).repeat(1.0).catch_up(CatchUp::FireOnce).build(|n, _| *n += 1)?;
    /// assert_eq!(timers.remaining(id), Some(0.5));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn timer(&mut self, delay: f64) -> TimerBuilder<'_, C> {
        TimerBuilder::new(self, delay)
    }

    /// Adds a one-shot timer that calls `callback` once, `delay` after now. Inside a callback,
    /// a zero delay means "in the next advance".
    ///
    /// # Errors
    ///
    /// [`TimerError::InvalidDelay`] for a NaN, infinite or negative delay,
    /// [`TimerError::TimeOverflow`] when `now + delay` overflows, [`TimerError::Full`].
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<bool>::new();
    /// timers.add(2.0, |done, _| *done = true)?;
    /// let mut done = false;
    /// timers.advance(1.0, &mut done)?;
    /// assert!(!done);
    /// timers.advance(1.0, &mut done)?;
    /// assert!(done);
    /// assert!(timers.add(-1.0, |_, _| {}).is_err());
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn add<F>(&mut self, delay: f64, callback: F) -> Result<TimerId, AddError<F>>
    where
        F: FnMut(&mut C, &mut TimerCtx<'_, C>) + Send + 'static,
    {
        self.timer(delay).build(callback)
    }

    /// Adds a repeating timer: first `first_delay` after now, then every `period`, catching up
    /// with [`CatchUp::FireAll`].
    ///
    /// # Errors
    ///
    /// As [`add`](Self::add), plus [`TimerError::InvalidPeriod`] for a zero, negative, NaN or
    /// infinite period.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<Vec<f64>>::new();
    /// timers.add_repeating(0.5, 1.0, |log, ctx| log.push(ctx.scheduled()))?;
    /// let mut log = Vec::new();
    /// timers.advance(3.0, &mut log)?;
    /// assert_eq!(log, [0.5, 1.5, 2.5]);
    /// assert!(timers.add_repeating(0.5, 0.0, |_, _| {}).is_err());
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn add_repeating<F>(
        &mut self,
        first_delay: f64,
        period: f64,
        callback: F,
    ) -> Result<TimerId, AddError<F>>
    where
        F: FnMut(&mut C, &mut TimerCtx<'_, C>) + Send + 'static,
    {
        self.timer(first_delay).repeat(period).build(callback)
    }

    /// Checks that `n_timers` more timers fit before anything is changed, so a full manager
    /// fails cleanly.
    pub(crate) fn check_room(&self, n_timers: usize) -> Result<(), TimerError> {
        if n_timers <= MAX_TIMERS - self.live.min(MAX_TIMERS) {
            Ok(())
        } else {
            Err(TimerError::Full)
        }
    }

    /// Creates a live, unscheduled timer (state `Firing`, which `place` replaces) and returns
    /// its slot. The caller has called [`check_room`](Self::check_room).
    pub(crate) fn alloc(
        &mut self,
        due: f64,
        callback: BoxedCallback<C>,
        repeat: Option<Box<Repeat>>,
        payload: u64,
    ) -> u32 {
        let seq = self.next_seq;
        self.next_seq += 1;
        let (idx, new_page) = self.pages.alloc(due, self.live);
        self.live += 1;
        if new_page {
            self.slots.extend((0..PAGE).map(|_| Slot {
                generation: 0,
                state: State::Free,
                has_owner: false,
                seq: 0,
                time: 0.0,
                callback: None,
                repeat: None,
                payload: 0,
            }));
        }
        if let Some(next) = self.pages.next_after(idx) {
            prefetch_index::prefetch_index(&self.slots, next as usize);
            self.queue.prefetch(next);
        }
        let slot = &mut self.slots[idx as usize];
        *slot = Slot {
            generation: slot.generation,
            state: State::Firing,
            has_owner: false,
            seq,
            time: 0.0,
            callback: Some(callback),
            repeat,
            payload,
        };
        idx
    }

    /// The owner link of slot `idx`, growing the side table on first use.
    fn owner_link(&mut self, idx: usize) -> &mut OwnerLink {
        if self.owner_links.len() <= idx {
            self.owner_links.resize(
                self.slots.len(),
                OwnerLink {
                    owner: NO_OWNER,
                    pos: 0,
                },
            );
        }
        &mut self.owner_links[idx]
    }

    /// Links slot `idx` to `owner`, which the caller has checked.
    pub(crate) fn link_owner(&mut self, idx: u32, owner: OwnerId) {
        let list = &mut self.owners[owner.slot as usize].timers;
        list.push(idx);
        let pos = (list.len() - 1) as u32;
        *self.owner_link(idx as usize) = OwnerLink {
            owner: owner.slot,
            pos,
        };
        self.slots[idx as usize].has_owner = true;
    }

    /// `true` when `owner` names a registered owner.
    pub(crate) fn owner_is_live(&self, owner: OwnerId) -> bool {
        self.owners
            .get(owner.slot as usize)
            .is_some_and(|o| o.generation == owner.generation && o.observer.is_some())
    }

    // ----- scheduling core -----------------------------------------------------------------

    /// Starts loading the queue's record of the timer in slot `idx` (a hint: harmless for a
    /// slot with nothing pending) before its slot is read, so that at 10⁶ timers the two
    /// misses overlap instead of following each other.
    #[inline]
    fn prefetch_entry(&self, idx: u32) {
        self.queue.prefetch(idx);
    }

    /// The slot index of a live timer, or `None` for a stale id.
    #[inline]
    pub(crate) fn live_slot(&self, id: TimerId) -> Option<usize> {
        let slot = self.slots.get(id.slot as usize)?;
        (slot.generation == id.generation && slot.state != State::Free).then_some(id.slot as usize)
    }

    /// Puts slot `idx` at `due`. While an advance runs, a due time at or before `park_limit` is
    /// held back until the advance ends (ground rule 3): that is what makes a zero delay
    /// inside a callback mean "next advance", so a callback that re-adds itself cannot hang a
    /// frame. User changes pass the clock as the limit; a repeating timer's own next
    /// occurrence passes the occurrence just fired, so catch-up of past occurrences still
    /// happens within one advance.
    pub(crate) fn place(&mut self, idx: u32, due: f64, park_limit: f64) {
        let i = idx as usize;
        let park = self.in_advance && due <= park_limit;
        let key = (TimeKey::new(due), self.slots[i].seq);
        let state = self.slots[i].state;
        let new_state = match (state, park) {
            (State::Scheduled, false) => {
                let rescheduled = self.queue.reschedule(idx, key);
                debug_assert!(rescheduled, "ground rule 2");
                State::Scheduled
            }
            (State::Scheduled, true) => {
                let cancelled = self.queue.cancel(idx);
                debug_assert!(cancelled, "ground rule 2");
                self.parked.push((idx, self.slots[i].generation));
                State::Parked
            }
            (State::Parked, true) => State::Parked,
            (_, true) => {
                self.parked.push((idx, self.slots[i].generation));
                State::Parked
            }
            (_, false) => {
                if self.queue.push(key, idx) {
                    State::Scheduled
                } else {
                    // Unreachable: the queue holds at most `MAX_SLOTS` entries and accepts
                    // every finite key. Parking keeps the timer consistent if it ever happened.
                    self.parked.push((idx, self.slots[i].generation));
                    State::Parked
                }
            }
        };
        if new_state == State::Scheduled && due < self.next_due {
            self.next_due = due;
        }
        let slot = &mut self.slots[i];
        slot.state = new_state;
        slot.time = due;
    }

    /// Takes slot `idx` out of the queue (if it is there) and leaves it unscheduled.
    fn unschedule(&mut self, idx: usize) {
        if self.slots[idx].state == State::Scheduled {
            let cancelled = self.queue.cancel(idx as u32);
            debug_assert!(cancelled, "ground rule 2");
        }
    }

    /// Removes the live timer in slot `idx`: out of the queue, off its owner's list (telling
    /// the owner why, when `reason` is given), generation bumped, slot freed.
    pub(crate) fn release(&mut self, idx: usize, reason: Option<RemovalReason>) {
        self.unschedule(idx);
        let slot = &mut self.slots[idx];
        let id = TimerId {
            slot: idx as u32,
            generation: slot.generation,
        };
        slot.generation = slot.generation.wrapping_add(1);
        slot.state = State::Free;
        let callback = slot.callback.take();
        let repeat = slot.repeat.take();
        let has_owner = std::mem::replace(&mut slot.has_owner, false);
        self.pages.release(idx as u32);
        self.live -= 1;
        if has_owner {
            let OwnerLink { owner, pos } = self.owner_links[idx];
            let owner_pos = pos as usize;
            let owner_slot = &mut self.owners[owner as usize];
            owner_slot.timers.swap_remove(owner_pos);
            if let Some(&moved) = owner_slot.timers.get(owner_pos) {
                self.owner_links[moved as usize].pos = pos;
            }
            if let (Some(reason), Some(observer)) = (reason, owner_slot.observer.as_mut()) {
                observer(id, reason);
            }
        }
        // Dropped last: a callback's destructor runs after the manager is consistent again.
        drop((callback, repeat));
    }

    /// Frees the slot of a one-shot timer whose callback returned without re-arming it (state
    /// `Firing`, callback out of the slot): [`release`](Self::release) inlined for the common
    /// end of a firing — no owner to tell, no repeat schedule — and `release` itself otherwise.
    #[inline]
    pub(crate) fn finish(&mut self, idx: usize) {
        let slot = &mut self.slots[idx];
        if slot.has_owner || slot.repeat.is_some() || slot.callback.is_some() {
            self.release(idx, Some(RemovalReason::Finished));
            return;
        }
        debug_assert_eq!(slot.state, State::Firing, "ground rule 4");
        slot.generation = slot.generation.wrapping_add(1);
        slot.state = State::Free;
        self.pages.release(idx as u32);
        self.live -= 1;
    }

    /// Ends an advance at `target`: the clock moves there and parked timers join the queue.
    pub(crate) fn finish_advance(&mut self, target: f64) {
        self.in_advance = false;
        self.firing = None;
        if target > self.now {
            self.now = target;
        }
        let mut parked = std::mem::take(&mut self.parked);
        for &(idx, generation) in &parked {
            let slot = &self.slots[idx as usize];
            if slot.generation == generation && slot.state == State::Parked {
                self.place(idx, slot.time, f64::NEG_INFINITY);
            }
        }
        parked.clear();
        self.parked = parked;
    }

    /// Cleans up after a callback that panicked during the previous advance: its timer lost
    /// its callback, so it is removed; the advance is closed where the clock stopped.
    #[cold]
    pub(crate) fn recover(&mut self) {
        if let Some(id) = self.firing.take()
            && let Some(idx) = self.live_slot(id)
            && self.slots[idx].callback.is_none()
        {
            self.release(idx, Some(RemovalReason::Cancelled));
        }
        let now = self.now;
        self.finish_advance(now);
    }
}

impl<C> fmt::Debug for Scheduler<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scheduler")
            .field("now", &self.now)
            .field("time_scale", &self.time_scale)
            .field("timers", &self.live)
            .field("owners", &(self.owners.len() - self.free_owners.len()))
            .field("meters", &(self.meters.len() - self.free_meters.len()))
            .finish_non_exhaustive()
    }
}

// See `Slot`.
const _: () = assert!(std::mem::size_of::<Slot<()>>() == 64);
