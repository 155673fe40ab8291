//! A service station: servers and the line in front of them, the most common pair in a
//! queueing model (a bank's tellers, a clinic's doctors, an M/M/c queue).

use crate::model::{Ctx, LogicalProcess};
use crate::time::Time;

use super::resource::Resource;
use super::stats::Tally;
use super::waitline::{Ticket, WaitLine};

/// How long a member joining a [`Station`]'s line waits before giving up: a fixed time
/// (`f64::INFINITY` never gives up) or a distribution, drawn from the LP's random stream only
/// when the member has to wait.
pub trait Patience {
    /// The patience of one member that joins the line.
    fn draw<M: LogicalProcess>(&self, ctx: &mut Ctx<'_, M>) -> f64;
}

impl Patience for f64 {
    fn draw<M: LogicalProcess>(&self, _: &mut Ctx<'_, M>) -> f64 {
        *self
    }
}

impl<D: rand_distr::Distribution<f64>> Patience for &D {
    fn draw<M: LogicalProcess>(&self, ctx: &mut Ctx<'_, M>) -> f64 {
        self.sample(ctx.rng())
    }
}

/// `servers` identical servers and a first-come, first-served [`WaitLine`] in front of them,
/// with the statistics every queueing model reports ([`Station::summary`]). An arrival is
/// served at once when a server is free and joins the line otherwise (reneging when its
/// [`Patience`] runs out); a server that finishes takes the head of the line or becomes free.
/// The methods that start a service return the member being served, so the model schedules
/// the end of its service (the one thing it decides).
///
/// Plain `Clone` + serde data, like the blocks it is made of, so it rolls back (and is
/// saved) with the LP.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use warpsim_core::blocks::{Station, StationSummary, Ticket};
/// use warpsim_core::{Ctx, FinishCtx, Kernel, LogicalProcess, RunConfig, Sequential};
///
/// #[derive(Clone, Serialize, Deserialize)]
/// enum Ev { Arrive, Done, GiveUp(Ticket) }
///
/// /// One server; customers at 0, 1, 2 each need 3, and give up after waiting 2.5.
/// #[derive(Clone, Serialize, Deserialize)]
/// struct Shop { desk: Station<()> }
///
/// impl LogicalProcess for Shop {
///     type Event = Ev;
///     type Output = StationSummary;
///     fn init(&mut self, ctx: &mut Ctx<Self>) {
///         for at in 0..3 { ctx.schedule(f64::from(at), Ev::Arrive); }
///     }
///     fn on_event(&mut self, event: Ev, ctx: &mut Ctx<Self>) {
///         let started = match event {
///             Ev::Arrive => self.desk.arrive(ctx, (), 2.5, Ev::GiveUp),
///             Ev::Done => self.desk.depart(ctx),
///             Ev::GiveUp(ticket) => {
///                 self.desk.renege(ctx, ticket);
///                 None
///             }
///         };
///         if started.is_some() { ctx.schedule(3.0, Ev::Done); }
///     }
///     fn finish(&mut self, ctx: &mut FinishCtx<Self>) {
///         ctx.emit(self.desk.summary(ctx.now()));
///     }
/// }
///
/// let mut outputs = Vec::new();
/// let shop = Shop { desk: Station::new(1) };
/// Sequential::new(RunConfig::new(1).end_time(10.0)).run(vec![shop], &mut outputs).unwrap();
/// let summary = outputs[0].output;
/// // The first is served at 0, the second at 3 (after waiting 2); the third gives up at 4.5.
/// assert_eq!((summary.arrived, summary.served, summary.reneged), (3, 2, 1));
/// assert_eq!(summary.mean_wait, 1.0);
/// assert_eq!(summary.utilisation, 0.6);
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Station<T> {
    servers: Resource,
    line: WaitLine<T>,
    waits: Tally,
}

impl<T> Station<T> {
    /// `servers` free servers and an empty line (averages taken from time 0).
    pub fn new(servers: u32) -> Station<T> {
        Station {
            servers: Resource::new(servers),
            line: WaitLine::new(),
            waits: Tally::new(),
        }
    }

    /// `item` arrives: it takes a free server — returned, to be served — or joins the line
    /// (`None`) with a patience drawn from `patience`, reneging by the event
    /// `renege(ticket)` unless served first (the model then calls [`Station::renege`]).
    pub fn arrive<M: LogicalProcess>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        item: T,
        patience: impl Patience,
        renege: impl FnOnce(Ticket) -> M::Event,
    ) -> Option<T> {
        if self.servers.try_acquire(ctx.now()) {
            self.waits.record(0.0);
            return Some(item);
        }
        let patience = patience.draw(ctx);
        self.line.join(ctx, item, patience, renege);
        None
    }

    /// A server finishes: it takes the head of the line — returned, to be served — or
    /// becomes free (`None`).
    pub fn depart<M: LogicalProcess>(&mut self, ctx: &mut Ctx<'_, M>) -> Option<T> {
        match self.line.serve(ctx) {
            Some(next) => {
                self.waits.record(next.waited);
                Some(next.item)
            }
            None => {
                self.servers.release(ctx.now());
                None
            }
        }
    }

    /// The member with `ticket` gives up waiting; returns it, or `None` when it is no longer
    /// in line.
    pub fn renege<M: LogicalProcess>(&mut self, ctx: &mut Ctx<'_, M>, ticket: Ticket) -> Option<T> {
        self.line.renege(ctx, ticket)
    }

    /// The servers.
    pub fn servers(&self) -> &Resource {
        &self.servers
    }

    /// The line.
    pub fn line(&self) -> &WaitLine<T> {
        &self.line
    }

    /// The waits of every member served (0 for those served at once).
    pub fn waits(&self) -> &Tally {
        &self.waits
    }

    /// The station's figures from time 0 to `now`.
    pub fn summary(&self, now: Time) -> StationSummary {
        let served = self.waits.count();
        let reneged = self.line.reneged();
        let arrived = served + reneged + self.line.len() as u64;
        StationSummary {
            arrived,
            served,
            mean_wait: self.waits.mean(),
            reneged,
            fraction_reneged: if arrived == 0 {
                0.0
            } else {
                reneged as f64 / arrived as f64
            },
            mean_line: self.line.mean_length(now),
            utilisation: self.servers.utilisation(now),
        }
    }
}

/// What a [`Station`] did: counts, the mean wait, the time averages.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct StationSummary {
    /// Members that arrived.
    pub arrived: u64,
    /// Members that started service.
    pub served: u64,
    /// Their mean wait in line (0 for those served at once; NaN when none was served).
    pub mean_wait: f64,
    /// Members that gave up waiting.
    pub reneged: u64,
    /// `reneged / arrived` (0 before any arrival).
    pub fraction_reneged: f64,
    /// Time-average number in line.
    pub mean_line: f64,
    /// Time-average fraction of the servers busy.
    pub utilisation: f64,
}

impl StationSummary {
    /// Several stations' figures as one: counts add up, the mean wait is weighted by the
    /// members served, the fraction reneged is taken over all arrivals, and the time averages
    /// are averaged over the stations (per station).
    ///
    /// ```
    /// use warpsim_core::blocks::StationSummary;
    /// let a = StationSummary { arrived: 10, served: 8, mean_wait: 1.0, reneged: 2, fraction_reneged: 0.2, mean_line: 1.0, utilisation: 0.5 };
    /// let b = StationSummary { arrived: 30, served: 24, mean_wait: 3.0, reneged: 6, fraction_reneged: 0.2, mean_line: 3.0, utilisation: 0.7 };
    /// let both = StationSummary::pool([&a, &b]);
    /// assert_eq!((both.arrived, both.served, both.reneged), (40, 32, 8));
    /// assert_eq!(both.mean_wait, 2.5);
    /// assert_eq!((both.mean_line, both.utilisation), (2.0, 0.6));
    /// ```
    pub fn pool<'a>(summaries: impl IntoIterator<Item = &'a StationSummary>) -> StationSummary {
        let mut pooled = StationSummary::default();
        let (mut stations, mut wait_sum) = (0u32, 0.0);
        for summary in summaries {
            stations += 1;
            pooled.arrived += summary.arrived;
            pooled.served += summary.served;
            pooled.reneged += summary.reneged;
            if summary.served > 0 {
                wait_sum += summary.mean_wait * summary.served as f64;
            }
            pooled.mean_line += summary.mean_line;
            pooled.utilisation += summary.utilisation;
        }
        let stations = f64::from(stations.max(1));
        pooled.mean_wait = if pooled.served == 0 {
            f64::NAN
        } else {
            wait_sum / pooled.served as f64
        };
        if pooled.arrived > 0 {
            pooled.fraction_reneged = pooled.reneged as f64 / pooled.arrived as f64;
        }
        pooled.mean_line /= stations;
        pooled.utilisation /= stations;
        pooled
    }
}
