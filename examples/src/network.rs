//! Example: a network with two kinds of LP and a watchdog. Routers on a ring pass packets to
//! their successor; now and then a router fails for a while (it drops packets and falls
//! silent). Every router sends the watchdog a heartbeat at a fixed period; the watchdog keeps
//! one timeout per router in a [`KeyedTimers`] — a heartbeat pushes it back, a timeout raises
//! an alarm, the next heartbeat after it re-arms it.
//!
//! The two kinds have their own message types, joined by [`model_kinds!`]; a router's
//! message sent to the watchdog would not compile ([`Addr`] is typed).
//!
//! ```
//! use warpsim_core::{Kernel, RunConfig, Sequential};
//! use warpsim_examples::network::{NetOutput, NetworkParams};
//!
//! let params = NetworkParams { end: 300.0, ..NetworkParams::default() };
//! let mut outputs = Vec::new();
//! Sequential::new(RunConfig::new(4).end_time(params.end))
//!     .run(params.build().unwrap(), &mut outputs)
//!     .unwrap();
//! let alarms = outputs.iter().filter(|c| matches!(c.output, NetOutput::Alarm { .. })).count();
//! assert!(alarms > 0, "some router failed long enough to be noticed");
//! ```

use warpsim_core::blocks::KeyedTimers;
use warpsim_core::prelude::{Distribution, Exp};
use warpsim_core::{Addr, Ctx, FinishCtx, Kind, model_kinds};

use crate::{ParamError, positive};

/// The network's parameters.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkParams {
    /// Routers on the ring.
    pub routers: u32,
    /// Packets each router starts with.
    pub packets: u32,
    /// Mean time a packet takes to the next router (exponential).
    pub mean_hop: f64,
    /// Period of a router's heartbeats.
    pub beat_every: f64,
    /// Silence after which the watchdog raises an alarm.
    pub timeout: f64,
    /// Mean time between a router's failures (exponential).
    pub mean_up: f64,
    /// Mean time a failure lasts (exponential).
    pub mean_down: f64,
    /// Time simulated.
    pub end: f64,
}

impl Default for NetworkParams {
    fn default() -> Self {
        NetworkParams {
            routers: 8,
            packets: 4,
            mean_hop: 1.0,
            beat_every: 1.0,
            timeout: 3.5,
            mean_up: 60.0,
            mean_down: 8.0,
            end: 1_000.0,
        }
    }
}

impl NetworkParams {
    /// The LPs: routers `0..routers`, then the watchdog.
    ///
    /// # Errors
    ///
    /// [`ParamError`] for a time that is not positive or fewer than one router.
    pub fn build(&self) -> Result<Vec<Network>, ParamError> {
        let exp = |param, mean: f64| {
            Exp::new(1.0 / positive(param, mean)?).map_err(|error| ParamError {
                param,
                message: error.to_string(),
            })
        };
        if self.routers == 0 {
            return Err(ParamError {
                param: "routers",
                message: "must be at least 1".into(),
            });
        }
        positive("end", self.end)?;
        let watchdog = Addr::new(self.routers);
        let mut lps: Vec<Network> = (0..self.routers)
            .map(|r| {
                Ok(Network::from(Router {
                    me: Addr::new(r),
                    next: Addr::new((r + 1) % self.routers),
                    watchdog,
                    hop: exp("mean_hop", self.mean_hop)?,
                    up_time: exp("mean_up", self.mean_up)?,
                    down_time: exp("mean_down", self.mean_down)?,
                    beat_every: positive("beat_every", self.beat_every)?,
                    packets: self.packets,
                    up: true,
                    forwarded: 0,
                    dropped: 0,
                }))
            })
            .collect::<Result<_, ParamError>>()?;
        lps.push(Network::from(Watchdog {
            routers: self.routers,
            timeout: positive("timeout", self.timeout)?,
            timers: KeyedTimers::new(),
            alarms: 0,
        }));
        Ok(lps)
    }
}

model_kinds! {
    /// The network: routers and a watchdog.
    #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
    pub enum Network { Router(Router), Watchdog(Watchdog) }
    events: NetworkEvent,
    output: NetOutput,
}

/// What the network reports.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum NetOutput {
    /// The watchdog heard nothing from `router` for the timeout.
    Alarm {
        /// The silent router.
        router: u32,
    },
    /// A router's counts at the end.
    Router {
        /// Packets it passed on.
        forwarded: u64,
        /// Packets that reached it while it was down.
        dropped: u64,
    },
    /// The watchdog's count at the end.
    Watchdog {
        /// Alarms raised.
        alarms: u64,
    },
}

/// A router on the ring.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Router {
    me: Addr<Router>,
    next: Addr<Router>,
    watchdog: Addr<Watchdog>,
    hop: Exp<f64>,
    up_time: Exp<f64>,
    down_time: Exp<f64>,
    beat_every: f64,
    packets: u32,
    up: bool,
    forwarded: u64,
    dropped: u64,
}

/// A router's messages.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum RouterMsg {
    /// A packet to pass on.
    Packet,
    /// Time for a heartbeat (to itself).
    Beat,
    /// It fails (to itself).
    Fail,
    /// It is repaired (to itself).
    Repair,
}

impl Kind for Router {
    type Model = Network;
    type Msg = RouterMsg;

    fn init(&mut self, ctx: &mut Ctx<Network>) {
        for _ in 0..self.packets {
            let delay = self.hop.sample(ctx.rng());
            ctx.send_to(self.next, delay, RouterMsg::Packet);
        }
        ctx.send_to(self.me, self.beat_every, RouterMsg::Beat);
        let up = self.up_time.sample(ctx.rng());
        ctx.send_to(self.me, up, RouterMsg::Fail);
    }

    fn on_message(&mut self, msg: RouterMsg, ctx: &mut Ctx<Network>) {
        match msg {
            RouterMsg::Packet if self.up => {
                self.forwarded += 1;
                let delay = self.hop.sample(ctx.rng());
                ctx.send_to(self.next, delay, RouterMsg::Packet);
            }
            RouterMsg::Packet => self.dropped += 1,
            RouterMsg::Beat => {
                if self.up {
                    ctx.send_to(
                        self.watchdog,
                        0.0,
                        WatchdogMsg::Heartbeat(self.me.id().get()),
                    );
                }
                ctx.send_to(self.me, self.beat_every, RouterMsg::Beat);
            }
            RouterMsg::Fail => {
                self.up = false;
                let down = self.down_time.sample(ctx.rng());
                ctx.send_to(self.me, down, RouterMsg::Repair);
            }
            RouterMsg::Repair => {
                self.up = true;
                let up = self.up_time.sample(ctx.rng());
                ctx.send_to(self.me, up, RouterMsg::Fail);
            }
        }
    }

    fn finish(&mut self, ctx: &mut FinishCtx<Network>) {
        ctx.emit(NetOutput::Router {
            forwarded: self.forwarded,
            dropped: self.dropped,
        });
    }
}

/// The watchdog: one timeout per router.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Watchdog {
    routers: u32,
    timeout: f64,
    timers: KeyedTimers<u32>,
    alarms: u64,
}

/// The watchdog's messages.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum WatchdogMsg {
    /// A router is alive.
    Heartbeat(u32),
    /// A router's timeout (to itself).
    Timeout(u32),
}

impl Kind for Watchdog {
    type Model = Network;
    type Msg = WatchdogMsg;

    fn init(&mut self, ctx: &mut Ctx<Network>) {
        for router in 0..self.routers {
            let event = Watchdog::event(WatchdogMsg::Timeout(router));
            self.timers.set(ctx, router, self.timeout, event);
        }
    }

    fn on_message(&mut self, msg: WatchdogMsg, ctx: &mut Ctx<Network>) {
        match msg {
            WatchdogMsg::Heartbeat(router) => {
                if !self.timers.push_back(ctx, &router, self.timeout) {
                    // Heard again after an alarm: watch it again.
                    let event = Watchdog::event(WatchdogMsg::Timeout(router));
                    self.timers.set(ctx, router, self.timeout, event);
                }
            }
            WatchdogMsg::Timeout(router) => {
                self.timers.fired(&router);
                self.alarms += 1;
                ctx.emit(NetOutput::Alarm { router });
            }
        }
    }

    fn finish(&mut self, ctx: &mut FinishCtx<Network>) {
        ctx.emit(NetOutput::Watchdog {
            alarms: self.alarms,
        });
    }
}
