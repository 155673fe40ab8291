//! Owners: observers told when their timers go, removable as a group.

use super::{Observer, OwnerSlot, RemovalReason, Scheduler, State};
use crate::id::{OwnerId, TimerId};

impl<C> Scheduler<C> {
    // ----- owners --------------------------------------------------------------------------

    /// Registers an owner (observers, like callbacks, are `Send`, so the manager is): `observer` is told `(timer, reason)` whenever one of the owner's
    /// timers is removed — cancelled, replaced, finished, or dropped with the manager (the
    /// chapter's observer extension). The observer cannot reach the manager; it typically
    /// records the news somewhere the game reads later.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use warpsim_timers::Timers;
    ///
    /// let removed = Arc::new(AtomicU32::new(0));
    /// let mut timers = Timers::<()>::new();
    /// let owner = timers.add_owner({
    ///     let removed = Arc::clone(&removed);
    ///     move |_, _| {
    ///         removed.fetch_add(1, Ordering::Relaxed);
    ///     }
    /// });
    /// let id = timers.timer(1.0).owner(owner).build(|_, _| {})?;
    /// timers.cancel(id);
    /// assert_eq!(removed.load(Ordering::Relaxed), 1);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn add_owner<F>(&mut self, observer: F) -> OwnerId
    where
        F: FnMut(TimerId, RemovalReason) + Send + 'static,
    {
        let observer: Observer = Box::new(observer);
        if let Some(idx) = self.free_owners.pop() {
            let slot = &mut self.owners[idx as usize];
            slot.observer = Some(observer);
            OwnerId {
                slot: idx,
                generation: slot.generation,
            }
        } else {
            // More than 2³² owners cannot be addressed; reuse is the only sane fallback and
            // cannot happen before memory runs out.
            self.owners.push(OwnerSlot {
                generation: 0,
                observer: Some(observer),
                timers: Vec::new(),
            });
            OwnerId {
                slot: (self.owners.len() - 1) as u32,
                generation: 0,
            }
        }
    }

    /// Cancels every timer of `owner` at once (an object being destroyed) and returns how many
    /// there were, or `None` for a stale owner. The owner is told about each one and stays
    /// registered.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// let owner = timers.add_owner(|_, _| {});
    /// for delay in [1.0, 2.0, 3.0] {
    ///     timers.timer(delay).owner(owner).build(|_, _| {})?;
    /// }
    /// timers.add(1.0, |_, _| {})?;
    /// assert_eq!(timers.cancel_owner(owner), Some(3));
    /// assert_eq!(timers.len(), 1);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn cancel_owner(&mut self, owner: OwnerId) -> Option<usize> {
        if !self.owner_is_live(owner) {
            return None;
        }
        let mut n_cancelled = 0;
        while let Some(&idx) = self.owners[owner.slot as usize].timers.last() {
            self.release(idx as usize, Some(RemovalReason::Cancelled));
            n_cancelled += 1;
        }
        Some(n_cancelled)
    }

    /// Cancels every timer of `owner` (telling it about each) and unregisters it. Returns how
    /// many timers were cancelled, or `None` for a stale owner.
    ///
    /// ```
    /// use warpsim_timers::Timers;
    /// let mut timers = Timers::<()>::new();
    /// let owner = timers.add_owner(|_, _| {});
    /// timers.timer(1.0).owner(owner).build(|_, _| {})?;
    /// assert_eq!(timers.remove_owner(owner), Some(1));
    /// assert!(timers.timer(1.0).owner(owner).build(|_, _| {}).is_err());
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn remove_owner(&mut self, owner: OwnerId) -> Option<usize> {
        let n_cancelled = self.cancel_owner(owner)?;
        let slot = &mut self.owners[owner.slot as usize];
        slot.generation = slot.generation.wrapping_add(1);
        let observer = slot.observer.take();
        self.free_owners.push(owner.slot);
        drop(observer);
        Some(n_cancelled)
    }

    /// Tells every owner that its live timers go away with the manager.
    pub(crate) fn notify_dropped(&mut self) {
        for (idx, slot) in self.slots.iter().enumerate() {
            if slot.state == State::Free || !slot.has_owner {
                continue;
            }
            let owner = self.owner_links[idx].owner;
            let id = TimerId {
                slot: idx as u32,
                generation: slot.generation,
            };
            if let Some(observer) = self.owners[owner as usize].observer.as_mut() {
                observer(id, RemovalReason::ManagerDropped);
            }
        }
    }
}
