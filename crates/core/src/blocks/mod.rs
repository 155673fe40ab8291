//! Building blocks for the state of an LP: statistics ([`Tally`], [`TimeAverage`],
//! [`Histogram`]), a wait line whose members may renege ([`WaitLine`]), timers named by a
//! key ([`KeyedTimers`]), a resource with a capacity ([`Resource`]), and a service station
//! made of the last two, servers and the line in front of them ([`Station`]).
//!
//! Every block is plain `Clone` data kept in the LP's own state, so an optimistic kernel
//! saves and restores it with the LP — rollback costs the model nothing. Blocks that schedule
//! (the wait line's patience, the timers) do so through the handler's [`Ctx`](crate::Ctx)
//! and keep the [`EventHandle`](crate::EventHandle)s themselves, so the model never does.
//!
//! See the `examples/` directory of the repository for models built from them (a reneging
//! bank, an M/M/c queue, a network with a watchdog).

mod resource;
mod station;
mod stats;
mod student;
mod timers;
mod waitline;

pub use resource::Resource;
pub use station::{Patience, Station, StationSummary};
pub use stats::{Histogram, StatsError, Tally, TimeAverage};
pub use student::student_t_quantile;
pub use timers::KeyedTimers;
pub use waitline::{Served, Ticket, WaitLine};
