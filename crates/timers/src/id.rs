//! Generation-checked ids for timers, owners, meters and milestones.

/// Names one timer while it is live.
///
/// An id is a slot index plus the slot's generation when the timer was added. Removing the
/// timer (it finished, was cancelled or replaced) bumps the generation, so an old id can never
/// reach the next timer that reuses the slot: every call with a stale id is a no-op that says
/// so (`false`, `None` or [`TimerError::StaleTimer`](crate::TimerError::StaleTimer)).
///
/// ```
/// use warpsim_timers::Timers;
///
/// let mut timers = Timers::<()>::new();
/// let old = timers.add(1.0, |_, _| {}).unwrap();
/// assert!(timers.cancel(old));
/// let new = timers.add(1.0, |_, _| {}).unwrap(); // reuses the slot
/// assert_ne!(old, new);
/// assert!(!timers.cancel(old)); // the stale id does not touch the new timer
/// assert!(timers.is_active(new));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimerId {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

/// Names one registered owner (an observer told when its timers are removed).
///
/// ```
/// use warpsim_timers::Timers;
///
/// let mut timers = Timers::<()>::new();
/// let owner = timers.add_owner(|_id, _reason| {});
/// assert_eq!(timers.remove_owner(owner), Some(0));
/// assert_eq!(timers.remove_owner(owner), None); // stale
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OwnerId {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

/// Names one meter held by the manager.
///
/// ```
/// use warpsim_timers::{Linear, Meter, Timers};
///
/// let mut timers = Timers::<()>::new();
/// let mana = timers.add_meter(Meter::builder(Linear::new(1.0)?).build()?)?;
/// assert!(timers.remove_meter(mana));
/// assert!(!timers.remove_meter(mana)); // stale
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MeterId {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

/// Names one milestone (a threshold with a callback) of a meter.
///
/// ```
/// use warpsim_timers::{Linear, Meter, Timers};
///
/// let mut timers = Timers::<()>::new();
/// let mana = timers.add_meter(Meter::builder(Linear::new(2.0)?).build()?)?;
/// let ready = timers.add_milestone(mana, 10.0, |_, _| {})?;
/// assert_eq!(ready.meter(), mana);
/// assert_eq!(timers.milestone_time(ready), Some(5.0));
/// # Ok::<(), warpsim_timers::TimerError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MilestoneId {
    pub(crate) meter: MeterId,
    pub(crate) index: u32,
}

impl MilestoneId {
    /// The meter this milestone belongs to.
    pub fn meter(self) -> MeterId {
        self.meter
    }
}
