//! Meters and their milestones.

use super::{BoxedCallback, MAX_SLOTS, MeterSlot, Milestone, MilestoneState, Scheduler, State};
use crate::ctx::TimerCtx;
use crate::error::TimerError;
use crate::id::{MeterId, MilestoneId, TimerId};
use crate::meter::Meter;

impl<C> Scheduler<C> {
    // ----- meters --------------------------------------------------------------------------

    /// Hands a meter to the manager, which restarts it at the current time with the value it
    /// was built with. Add milestones to it with [`add_milestone`](Self::add_milestone).
    ///
    /// # Errors
    ///
    /// [`TimerError::Full`] when `u32::MAX − 1` meters are live.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter, Timers};
    /// let mut timers = Timers::<()>::new();
    /// timers.advance(10.0, &mut ())?;
    /// let mana = timers.add_meter(Meter::builder(Linear::new(1.0)?).value(5.0).build()?)?;
    /// timers.advance(1.0, &mut ())?;
    /// assert_eq!(timers.meter_value(mana), Some(6.0));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn add_meter(&mut self, mut meter: Meter) -> Result<MeterId, TimerError> {
        let value = meter.base_value();
        meter.rebase(self.now, value);
        if let Some(idx) = self.free_meters.pop() {
            let slot = &mut self.meters[idx as usize];
            slot.meter = Some(meter);
            return Ok(MeterId {
                slot: idx,
                generation: slot.generation,
            });
        }
        if self.meters.len() >= MAX_SLOTS {
            return Err(TimerError::Full);
        }
        self.meters.push(MeterSlot {
            generation: 0,
            meter: Some(meter),
            milestones: Vec::new(),
        });
        Ok(MeterId {
            slot: (self.meters.len() - 1) as u32,
            generation: 0,
        })
    }

    /// The slot of a live meter.
    fn meter_slot(&self, id: MeterId) -> Option<&MeterSlot<C>> {
        self.meters
            .get(id.slot as usize)
            .filter(|m| m.generation == id.generation && m.meter.is_some())
    }

    /// A live meter, to read its value at any time or its reach times.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter, Timers};
    /// let mut timers = Timers::<()>::new();
    /// let mana = timers.add_meter(Meter::builder(Linear::new(2.0)?).build()?)?;
    /// assert_eq!(timers.meter(mana).unwrap().reach_time(10.0), Some(5.0));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn meter(&self, id: MeterId) -> Option<&Meter> {
        self.meter_slot(id)?.meter.as_ref()
    }

    /// The meter's value now, or `None` for a stale id.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter, Timers};
    /// let mut timers = Timers::<()>::new();
    /// let mana = timers.add_meter(Meter::builder(Linear::new(2.0)?).build()?)?;
    /// timers.advance(1.5, &mut ())?;
    /// assert_eq!(timers.meter_value(mana), Some(3.0));
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn meter_value(&self, id: MeterId) -> Option<f64> {
        Some(self.meter(id)?.value_at(self.now))
    }

    /// Removes a meter and its milestones (their pending callbacks never run). Returns `false`
    /// for a stale id. From inside a milestone callback, removing the callback's own meter is
    /// allowed.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter, Timers};
    /// let mut timers = Timers::<()>::new();
    /// let mana = timers.add_meter(Meter::builder(Linear::new(1.0)?).build()?)?;
    /// timers.add_milestone(mana, 5.0, |_, _| panic!("never"))?;
    /// assert!(timers.remove_meter(mana));
    /// timers.advance(10.0, &mut ())?;
    /// assert!(timers.is_empty());
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn remove_meter(&mut self, id: MeterId) -> bool {
        if self.meter_slot(id).is_none() {
            return false;
        }
        let slot = &mut self.meters[id.slot as usize];
        slot.generation = slot.generation.wrapping_add(1);
        let meter = slot.meter.take();
        let milestones = std::mem::take(&mut slot.milestones);
        self.free_meters.push(id.slot);
        for milestone in &milestones {
            if let MilestoneState::Waiting(Some(timer)) = milestone.state
                && let Some(idx) = self.live_slot(timer)
            {
                self.release(idx, None);
            }
        }
        drop((meter, milestones));
        true
    }

    /// Adds a threshold to a meter: `callback` runs when the value reaches `level`, at the
    /// time computed from the curve. If the value is already there it runs in the next
    /// advance. Each time the value drops below `level` and comes back, it runs again — once
    /// per crossing, never twice for one, never skipped. Inside the callback, the meter's
    /// value is at least `level` and [`TimerCtx::milestone`] names the milestone.
    ///
    /// # Errors
    ///
    /// [`TimerError::StaleMeter`], [`TimerError::InvalidParameter`] for a NaN or infinite
    /// level, [`TimerError::Full`].
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter, Timers};
    /// let mut timers = Timers::<Vec<f64>>::new();
    /// let mana = timers.add_meter(Meter::builder(Linear::new(2.0)?).value(5.0).build()?)?;
    /// timers.add_milestone(mana, 35.0, |log, ctx| log.push(ctx.now()))?;
    /// let mut log = Vec::new();
    /// timers.advance(20.0, &mut log)?;
    /// assert_eq!(log, [15.0]);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn add_milestone<F>(
        &mut self,
        meter: MeterId,
        level: f64,
        callback: F,
    ) -> Result<MilestoneId, TimerError>
    where
        F: FnMut(&mut C, &mut TimerCtx<'_, C>) + Send + 'static,
    {
        if self.meter_slot(meter).is_none() {
            return Err(TimerError::StaleMeter(meter));
        }
        if !level.is_finite() {
            return Err(TimerError::InvalidParameter {
                name: "level",
                value: level,
                expected: "a finite number",
            });
        }
        self.check_room(1)?;
        let milestones = &mut self.meters[meter.slot as usize].milestones;
        if milestones.len() >= MAX_SLOTS {
            return Err(TimerError::Full);
        }
        milestones.push(Milestone {
            level,
            state: MilestoneState::Waiting(None),
            callback: Some(Box::new(callback)),
        });
        let id = MilestoneId {
            meter,
            index: (milestones.len() - 1) as u32,
        };
        self.refresh_milestone(id);
        Ok(id)
    }

    /// The time a milestone will fire, or `None` when it has fired for the current crossing,
    /// cannot be reached (above the cap), or its meter is gone.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter, Timers};
    /// let mut timers = Timers::<()>::new();
    /// let mana = timers.add_meter(Meter::builder(Linear::new(1.0)?).max(10.0).build()?)?;
    /// let low = timers.add_milestone(mana, 4.0, |_, _| {})?;
    /// let high = timers.add_milestone(mana, 40.0, |_, _| {})?;
    /// assert_eq!(timers.milestone_time(low), Some(4.0));
    /// assert_eq!(timers.milestone_time(high), None); // above the cap
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn milestone_time(&self, milestone: MilestoneId) -> Option<f64> {
        let slot = self.meter_slot(milestone.meter)?;
        match slot.milestones.get(milestone.index as usize)?.state {
            MilestoneState::Waiting(Some(timer)) => self.due_time(timer),
            _ => None,
        }
    }

    /// Spends `amount` from a meter (a spell is cast) and returns the new value. Every
    /// milestone is recomputed: those now out of reach wait for the value to come back, those
    /// still ahead move to their new times.
    ///
    /// # Errors
    ///
    /// [`TimerError::StaleMeter`]; [`TimerError::InvalidParameter`] for a NaN, infinite or
    /// negative amount; [`TimerError::Insufficient`] when the value would drop below the
    /// meter's minimum (nothing is spent).
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter, TimerError, Timers};
    /// let mut timers = Timers::<()>::new();
    /// let mana = timers.add_meter(Meter::builder(Linear::new(1.0)?).value(10.0).build()?)?;
    /// assert_eq!(timers.spend(mana, 4.0)?, 6.0);
    /// assert!(matches!(timers.spend(mana, 7.0), Err(TimerError::Insufficient { .. })));
    /// # Ok::<(), TimerError>(())
    /// ```
    pub fn spend(&mut self, meter: MeterId, amount: f64) -> Result<f64, TimerError> {
        let current = self.meter(meter).ok_or(TimerError::StaleMeter(meter))?;
        if !(amount.is_finite() && amount >= 0.0) {
            return Err(TimerError::InvalidParameter {
                name: "amount",
                value: amount,
                expected: "a finite, non-negative number",
            });
        }
        let value = current.value_at(self.now);
        let available = value - current.min();
        if amount > available {
            return Err(TimerError::Insufficient {
                requested: amount,
                available,
            });
        }
        let new_value = (value - amount).max(current.min());
        self.change_meter(meter, new_value)?;
        Ok(new_value)
    }

    /// Sets a meter's value (a potion, a drain) and recomputes its milestones. Raising the
    /// value past a milestone runs it in the next advance.
    ///
    /// # Errors
    ///
    /// [`TimerError::StaleMeter`], [`TimerError::InvalidParameter`] when the value is not
    /// finite or lies outside the meter's `[min, max]`.
    ///
    /// ```
    /// use warpsim_timers::{Linear, Meter, Timers};
    /// let mut timers = Timers::<u32>::new();
    /// let mana = timers.add_meter(Meter::builder(Linear::new(1.0)?).max(100.0).build()?)?;
    /// timers.add_milestone(mana, 50.0, |n, _| *n += 1)?;
    /// timers.set_meter_value(mana, 60.0)?;
    /// let mut n = 0;
    /// timers.advance(0.0, &mut n)?;
    /// assert_eq!(n, 1);
    /// # Ok::<(), warpsim_timers::TimerError>(())
    /// ```
    pub fn set_meter_value(&mut self, meter: MeterId, value: f64) -> Result<(), TimerError> {
        let current = self.meter(meter).ok_or(TimerError::StaleMeter(meter))?;
        let value = current.check_value(value)?;
        self.change_meter(meter, value)
    }

    /// Restarts a live meter at `value` now and recomputes all its milestones.
    fn change_meter(&mut self, meter: MeterId, value: f64) -> Result<(), TimerError> {
        self.check_room(self.meters[meter.slot as usize].milestones.len())?;
        let now = self.now;
        let slot = &mut self.meters[meter.slot as usize];
        if let Some(m) = slot.meter.as_mut() {
            m.rebase(now, value);
        }
        for index in 0..slot.milestones.len() {
            self.refresh_milestone(MilestoneId {
                meter,
                index: index as u32,
            });
        }
        Ok(())
    }

    /// Brings one milestone's timer in line with its meter's current value (ground rule 6).
    fn refresh_milestone(&mut self, id: MilestoneId) {
        let now = self.now;
        let Some(slot) = self.meter_slot(id.meter) else {
            return;
        };
        let Some(meter) = slot.meter.as_ref() else {
            return;
        };
        let Some(milestone) = slot.milestones.get(id.index as usize) else {
            return;
        };
        let reached = meter.value_at(now) >= milestone.level;
        let target = if reached {
            Some(now)
        } else {
            meter.reach_time(milestone.level)
        };
        // A milestone reached right now (a spend inside a callback brought the value down to
        // exactly its level, or the meter was just set above it) fires in this very advance,
        // at this time, instead of being held back to the next frame (ground rule 3). That
        // cannot loop: a milestone fires once per crossing, and it can only be crossed again
        // after the value dropped below its level, which takes regeneration time.
        let park_limit = if reached { f64::NEG_INFINITY } else { now };
        let pending = match milestone.state {
            MilestoneState::Fired if reached => return,
            MilestoneState::Fired => None,
            MilestoneState::Waiting(timer) => timer.and_then(|t| self.live_slot(t)),
        };
        let new_state = match (pending, target) {
            (Some(idx), Some(at)) => {
                let slot = &mut self.slots[idx];
                if slot.state == State::Paused {
                    slot.state = State::Firing; // unscheduled; `place` puts it back
                }
                self.place(idx as u32, at, park_limit);
                return;
            }
            (Some(idx), None) => {
                self.release(idx, None);
                MilestoneState::Waiting(None)
            }
            (None, Some(at)) => {
                // Every caller has checked the room with `check_room`.
                let callback: BoxedCallback<C> = Box::new(move |context, ctx| {
                    crate::timers::fire_milestone(ctx, id, context);
                });
                let idx = self.alloc(at, callback, None, 0);
                self.place(idx, at, park_limit);
                MilestoneState::Waiting(Some(TimerId {
                    slot: idx,
                    generation: self.slots[idx as usize].generation,
                }))
            }
            (None, None) => MilestoneState::Waiting(None),
        };
        self.meters[id.meter.slot as usize].milestones[id.index as usize].state = new_state;
    }
}
