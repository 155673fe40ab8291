//! A resource with a capacity: servers, tellers, machines.

use crate::time::Time;

use super::stats::TimeAverage;

/// `capacity` identical units (tellers, machines) that are taken and given back, with the
/// time-average number in use (and so the utilisation). Waiting for a unit is the model's
/// choice: pair it with a [`WaitLine`](super::WaitLine).
///
/// ```
/// use warpsim_core::Time;
/// use warpsim_core::blocks::Resource;
/// let t = |x: f64| Time::new(x).unwrap();
/// let mut tellers = Resource::new(2);
/// assert!(tellers.try_acquire(t(0.0)));
/// assert!(tellers.try_acquire(t(1.0)));
/// assert!(!tellers.try_acquire(t(1.5)), "both busy");
/// assert!(tellers.release(t(2.0)));
/// // 1 in use on [0, 1), 2 on [1, 2), 1 on [2, 4): 5 unit-hours of 8.
/// assert_eq!(tellers.utilisation(t(4.0)), 5.0 / 8.0);
/// assert!(tellers.release(t(4.0)));
/// assert!(!tellers.release(t(4.0)), "nothing left to release");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Resource {
    capacity: u32,
    in_use: u32,
    usage: TimeAverage,
}

impl Resource {
    /// `capacity` free units (usage averaged from time 0).
    pub fn new(capacity: u32) -> Resource {
        Resource {
            capacity,
            in_use: 0,
            usage: TimeAverage::default(),
        }
    }

    /// Takes a unit at `now` if one is free; returns whether it did.
    pub fn try_acquire(&mut self, now: Time) -> bool {
        if self.in_use < self.capacity {
            self.in_use += 1;
            self.usage.set(now, f64::from(self.in_use));
            true
        } else {
            false
        }
    }

    /// Gives a unit back at `now`; returns `false` (and changes nothing) when none was in
    /// use.
    pub fn release(&mut self, now: Time) -> bool {
        if self.in_use == 0 {
            return false;
        }
        self.in_use -= 1;
        self.usage.set(now, f64::from(self.in_use));
        true
    }

    /// Units in use.
    pub fn in_use(&self) -> u32 {
        self.in_use
    }

    /// Free units.
    pub fn available(&self) -> u32 {
        self.capacity - self.in_use
    }

    /// The capacity.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The time-average number of units in use from time 0 to `now`.
    pub fn mean_in_use(&self, now: Time) -> f64 {
        self.usage.mean(now)
    }

    /// The fraction of the capacity in use on average from time 0 to `now` (0 for a
    /// resource of capacity 0).
    pub fn utilisation(&self, now: Time) -> f64 {
        if self.capacity == 0 {
            0.0
        } else {
            self.usage.mean(now) / f64::from(self.capacity)
        }
    }
}
