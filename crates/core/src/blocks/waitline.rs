//! A first-come, first-served wait line whose members may run out of patience.

use std::collections::VecDeque;

use crate::model::{Ctx, EventHandle, LogicalProcess};
use crate::time::Time;

use super::stats::{Tally, TimeAverage};

/// Names one member of a [`WaitLine`]: what a renege event carries back.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Ticket(u64);

impl Ticket {
    /// The ticket's number (tickets are numbered from 0 in joining order).
    pub fn get(self) -> u64 {
        self.0
    }
}

/// A member that left the line to be served.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Served<T> {
    /// What joined.
    pub item: T,
    /// Its ticket.
    pub ticket: Ticket,
    /// How long it waited.
    pub waited: f64,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Waiting<T> {
    ticket: Ticket,
    item: T,
    joined: Time,
    /// The renege event, when the member's patience is finite.
    renege: Option<EventHandle>,
}

/// A FIFO line inside an LP where members wait to be served and may give up: joining with a
/// finite patience schedules a renege event (built by the model from the member's
/// [`Ticket`]); serving the member cancels it; when the event comes, the model calls
/// [`WaitLine::renege`] to take the member out. Keeps its own statistics: the waits of those
/// served ([`WaitLine::waits`]), how many reneged, and the time-average length.
///
/// Plain `Clone` data (the renege events are named by [`EventHandle`]s, which are data too),
/// so it rolls back with the LP on an optimistic kernel.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use warpsim_core::blocks::{Ticket, WaitLine};
/// use warpsim_core::{Ctx, FinishCtx, Kernel, LogicalProcess, RunConfig, Sequential};
///
/// #[derive(Clone, Serialize, Deserialize)]
/// enum Ev { Arrive(u32), GiveUp(Ticket), Serve }
///
/// #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
/// struct Desk { line: WaitLine<u32> }
///
/// impl LogicalProcess for Desk {
///     type Event = Ev;
///     type Output = (u64, u64, f64);
///     fn init(&mut self, ctx: &mut Ctx<Self>) {
///         // Three arrivals at 1, 2, 3, each with patience 2.5; service opens at 4.
///         for who in 0..3 { ctx.schedule(f64::from(who + 1), Ev::Arrive(who)); }
///         ctx.schedule(4.0, Ev::Serve);
///     }
///     fn on_event(&mut self, event: Ev, ctx: &mut Ctx<Self>) {
///         match event {
///             Ev::Arrive(who) => { self.line.join(ctx, who, 2.5, Ev::GiveUp); }
///             Ev::GiveUp(ticket) => { self.line.renege(ctx, ticket); }
///             Ev::Serve => while self.line.serve(ctx).is_some() {},
///         }
///     }
///     fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
///         ctx.emit((self.line.waits().count(), self.line.reneged(), self.line.mean_length(ctx.now())));
///     }
/// }
///
/// let mut outputs = Vec::new();
/// Sequential::new(RunConfig::new(1).end_time(10.0)).run(vec![Desk::default()], &mut outputs).unwrap();
/// // The first gave up at 3.5; the others were served at 4 (after waiting 2 and 1).
/// let (served, reneged, mean_length) = outputs[0].output;
/// assert_eq!((served, reneged), (2, 1));
/// // Length 1 on [1, 2), 2 on [2, 3), 3 on [3, 3.5), 2 on [3.5, 4): 5.5 over 10.
/// assert!((mean_length - 0.55).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct WaitLine<T> {
    waiting: VecDeque<Waiting<T>>,
    next_ticket: u64,
    length: TimeAverage,
    waits: Tally,
    reneged: u64,
}

impl<T> Default for WaitLine<T> {
    fn default() -> Self {
        WaitLine::new()
    }
}

impl<T> WaitLine<T> {
    /// An empty line (its length averaged from time 0).
    pub fn new() -> WaitLine<T> {
        WaitLine {
            waiting: VecDeque::new(),
            next_ticket: 0,
            length: TimeAverage::default(),
            waits: Tally::new(),
            reneged: 0,
        }
    }

    /// `item` joins the end of the line. With a finite `patience` it reneges `patience`
    /// from now unless served first: the LP is sent `renege(ticket)` then, and must call
    /// [`WaitLine::renege`] with the ticket. An infinite patience never reneges. A NaN or
    /// negative patience stops the run with [`SimError::BadDelay`](crate::SimError::BadDelay),
    /// as any bad delay does.
    pub fn join<M: LogicalProcess>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        item: T,
        patience: f64,
        renege: impl FnOnce(Ticket) -> M::Event,
    ) -> Ticket {
        let ticket = Ticket(self.next_ticket);
        self.next_ticket += 1;
        let timer = if patience == f64::INFINITY {
            None
        } else {
            Some(ctx.schedule(patience, renege(ticket)))
        };
        self.length.add(ctx.now(), 1.0);
        self.waiting.push_back(Waiting {
            ticket,
            item,
            joined: ctx.now(),
            renege: timer,
        });
        ticket
    }

    /// Takes the member at the head of the line to be served (cancelling its renege event)
    /// and records its wait; `None` when the line is empty.
    pub fn serve<M: LogicalProcess>(&mut self, ctx: &mut Ctx<'_, M>) -> Option<Served<T>> {
        let member = self.waiting.pop_front()?;
        Some(self.leave(ctx, member))
    }

    fn leave<M: LogicalProcess>(&mut self, ctx: &mut Ctx<'_, M>, member: Waiting<T>) -> Served<T> {
        if let Some(timer) = member.renege {
            ctx.cancel(timer);
        }
        let now = ctx.now();
        self.length.add(now, -1.0);
        let waited = now.as_f64() - member.joined.as_f64();
        self.waits.record(waited);
        Served {
            item: member.item,
            ticket: member.ticket,
            waited,
        }
    }

    /// The member with `ticket` gives up: it leaves the line and is counted as reneged.
    /// Returns it, or `None` when it is no longer in line (already served or reneged).
    pub fn renege<M: LogicalProcess>(&mut self, ctx: &mut Ctx<'_, M>, ticket: Ticket) -> Option<T> {
        let index = self.position(ticket)?;
        let member = self.waiting.remove(index)?;
        self.length.add(ctx.now(), -1.0);
        self.reneged += 1;
        Some(member.item)
    }

    /// Takes the member with `ticket` out of the line to be served, wherever it stands
    /// (priority service), cancelling its renege event; `None` when it is not in line.
    pub fn serve_ticket<M: LogicalProcess>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        ticket: Ticket,
    ) -> Option<Served<T>> {
        let index = self.position(ticket)?;
        let member = self.waiting.remove(index)?;
        Some(self.leave(ctx, member))
    }

    /// Members stand in ticket order, so a binary search finds one.
    fn position(&self, ticket: Ticket) -> Option<usize> {
        self.waiting
            .binary_search_by_key(&ticket, |member| member.ticket)
            .ok()
    }

    /// How many are waiting.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether nobody is waiting.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The waiting members, head first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.waiting.iter().map(|member| &member.item)
    }

    /// The waits of the members served so far.
    pub fn waits(&self) -> &Tally {
        &self.waits
    }

    /// How many reneged so far.
    pub fn reneged(&self) -> u64 {
        self.reneged
    }

    /// The line's length over time.
    pub fn length(&self) -> &TimeAverage {
        &self.length
    }

    /// The time-average length from time 0 to `now`.
    pub fn mean_length(&self, now: Time) -> f64 {
        self.length.mean(now)
    }
}
