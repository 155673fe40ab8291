//! Several kinds of LP in one model, each with its own message type, dispatched without a
//! hand-written match, and with a compile error for a message sent to a kind that cannot
//! take it.
//!
//! A kernel runs one LP type; a model with routers and a watchdog is an enum of the two.
//! [`model_kinds!`](crate::model_kinds) writes that enum, its event enum (one variant per
//! kind, carrying the kind's [`Kind::Msg`]) and the dispatch. Kinds address each other with
//! typed addresses, [`Addr<K>`]: [`Ctx::send_to`] takes an `Addr<K>` and a message that
//! converts into `K::Msg`, so sending a watchdog's message to a router does not compile —
//! the idea of nexosim's typed ports, with the address as the port.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use warpsim_core::{Addr, Ctx, Kernel, Kind, RunConfig, Sequential, model_kinds};
//!
//! /// Pings its partner three times.
//! #[derive(Clone)]
//! struct Pinger { partner: Addr<Ponger>, sent: u32 }
//! #[derive(Clone, Serialize, Deserialize)]
//! struct Pong;
//!
//! /// Answers every ping.
//! #[derive(Clone)]
//! struct Ponger { partner: Addr<Pinger> }
//! #[derive(Clone, Serialize, Deserialize)]
//! struct Ping(u32);
//!
//! impl Kind for Pinger {
//!     type Model = Game;
//!     type Msg = Pong;
//!     fn init(&mut self, ctx: &mut Ctx<Game>) { ctx.send_to(self.partner, 1.0, Ping(0)); }
//!     fn on_message(&mut self, _: Pong, ctx: &mut Ctx<Game>) {
//!         self.sent += 1;
//!         if self.sent < 3 { ctx.send_to(self.partner, 1.0, Ping(self.sent)); }
//!     }
//! }
//!
//! impl Kind for Ponger {
//!     type Model = Game;
//!     type Msg = Ping;
//!     fn on_message(&mut self, ping: Ping, ctx: &mut Ctx<Game>) {
//!         ctx.emit(ping.0);
//!         ctx.send_to(self.partner, 1.0, Pong);
//!     }
//! }
//!
//! model_kinds! {
//!     /// The model: one pinger, one ponger.
//!     #[derive(Clone)]
//!     pub enum Game { Pinger(Pinger), Ponger(Ponger) }
//!     events: GameEvent,
//!     output: u32,
//! }
//!
//! let lps = vec![
//!     Game::Pinger(Pinger { partner: Addr::new(1), sent: 0 }),
//!     Game::Ponger(Ponger { partner: Addr::new(0) }),
//! ];
//! let mut outputs = Vec::new();
//! Sequential::new(RunConfig::new(1)).run(lps, &mut outputs).unwrap();
//! let pings: Vec<u32> = outputs.iter().map(|c| c.output).collect();
//! assert_eq!(pings, [0, 1, 2]);
//! ```
//!
//! The same model with a ping sent to the pinger (which takes `Pong`s) does not compile:
//!
//! ```compile_fail,E0277
//! # use serde::{Deserialize, Serialize};
//! # use warpsim_core::{Addr, Ctx, Kind, model_kinds};
//! # #[derive(Clone)]
//! # struct Pinger { partner: Addr<Ponger> }
//! # #[derive(Clone, Serialize, Deserialize)]
//! # struct Pong;
//! # #[derive(Clone)]
//! # struct Ponger { partner: Addr<Pinger> }
//! # #[derive(Clone, Serialize, Deserialize)]
//! # struct Ping(u32);
//! impl Kind for Ponger {
//!     type Model = Game;
//!     type Msg = Ping;
//!     fn on_message(&mut self, ping: Ping, ctx: &mut Ctx<Game>) {
//!         ctx.send_to(self.partner, 1.0, Ping(ping.0)); // the pinger takes `Pong`, not `Ping`
//!     }
//! }
//! # impl Kind for Pinger {
//! #     type Model = Game;
//! #     type Msg = Pong;
//! #     fn on_message(&mut self, _: Pong, _: &mut Ctx<Game>) {}
//! # }
//! # model_kinds! {
//! #     #[derive(Clone)]
//! #     pub enum Game { Pinger(Pinger), Ponger(Ponger) }
//! #     events: GameEvent,
//! #     output: u32,
//! # }
//! ```
//!
//! An address names an LP by id; one made with [`Addr::new`] for an LP of another kind is
//! caught at run time: the message stops the run with [`SimError::Model`] naming both kinds.

use std::marker::PhantomData;

use crate::error::SimError;
use crate::model::{Ctx, EventHandle, LogicalProcess};
use crate::time::LpId;

/// One kind of LP in a model of several kinds (see the [module](crate::kinds) docs): its
/// message type and handlers. The model enum, written by
/// [`model_kinds!`](crate::model_kinds), implements [`LogicalProcess`] by calling these.
pub trait Kind: Clone + Send + 'static {
    /// The model enum this kind is part of.
    type Model: LogicalProcess + Member<Self>;
    /// The messages this kind takes (an enum for several).
    type Msg: Clone + Send + serde::Serialize + serde::de::DeserializeOwned + 'static;

    /// As [`LogicalProcess::init`].
    fn init(&mut self, ctx: &mut Ctx<'_, Self::Model>) {
        let _ = ctx;
    }

    /// Handles one message, as [`LogicalProcess::on_event`].
    fn on_message(&mut self, msg: Self::Msg, ctx: &mut Ctx<'_, Self::Model>);

    /// As [`LogicalProcess::finish`].
    fn finish(&mut self, ctx: &mut crate::FinishCtx<'_, Self::Model>) {
        let _ = ctx;
    }

    /// The model event carrying `msg` for this kind: what a block that schedules model
    /// events (a [`KeyedTimers`](crate::blocks::KeyedTimers) timer, a
    /// [`WaitLine`](crate::blocks::WaitLine)'s renege) is given.
    fn event(msg: impl Into<Self::Msg>) -> <Self::Model as LogicalProcess>::Event {
        <Self::Model as Member<Self>>::wrap(msg.into())
    }
}

/// A model enum that has kind `K` among its variants (written by
/// [`model_kinds!`](crate::model_kinds)): how a `K` message becomes a model event.
pub trait Member<K: Kind>: LogicalProcess {
    /// The model event carrying `msg` for a `K`.
    fn wrap(msg: K::Msg) -> Self::Event;
}

/// The address of an LP of kind `K`: an [`LpId`] that only takes `K`'s messages.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Addr<K> {
    id: LpId,
    #[serde(skip)]
    kind: PhantomData<fn() -> K>,
}

impl<K> Addr<K> {
    /// The address of LP `id`, which the model says is a `K` (checked when a message
    /// arrives: see the [module](crate::kinds) docs).
    pub fn new(id: impl Into<LpId>) -> Addr<K> {
        Addr {
            id: id.into(),
            kind: PhantomData,
        }
    }

    /// The LP id.
    pub fn id(self) -> LpId {
        self.id
    }
}

impl<K> Clone for Addr<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Addr<K> {}

impl<K> PartialEq for Addr<K> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl<K> Eq for Addr<K> {}

impl<K> std::fmt::Debug for Addr<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Addr<{}>({})", std::any::type_name::<K>(), self.id.get())
    }
}

impl<K> From<Addr<K>> for LpId {
    fn from(addr: Addr<K>) -> LpId {
        addr.id
    }
}

impl<M: LogicalProcess> Ctx<'_, M> {
    /// Sends `msg` to the LP at `to`, a `K`, `delay` from now: like [`Ctx::send`], typed —
    /// `msg` must convert into `K::Msg`, and `K` must be a kind of this model.
    pub fn send_to<K: Kind>(
        &mut self,
        to: Addr<K>,
        delay: f64,
        msg: impl Into<K::Msg>,
    ) -> EventHandle
    where
        M: Member<K>,
    {
        self.send(to.id, delay, M::wrap(msg.into()))
    }

    /// Sends `msg` to this LP itself, a `K`, `delay` from now.
    pub fn schedule_as<K: Kind>(&mut self, delay: f64, msg: impl Into<K::Msg>) -> EventHandle
    where
        M: Member<K>,
    {
        let me = self.me();
        self.send(me, delay, M::wrap(msg.into()))
    }

    /// Stops the run with [`SimError::Model`] carrying `message` once this handler
    /// returns (the event commits, with its outputs): for a state the model finds
    /// impossible, without a panic.
    pub fn stop_with(&mut self, message: impl Into<String>) {
        let error = SimError::Model {
            lp: self.me(),
            time: self.now(),
            message: message.into(),
        };
        self.refuse(error);
    }
}

/// Writes the enum of a model with several [`Kind`]s of LP, its event enum, and their
/// [`LogicalProcess`] and [`Member`] implementations (see the [module](crate::kinds) docs).
///
/// ```text
/// model_kinds! {
///     #[derive(Clone)]               // attributes of the model enum (Clone is needed)
///     pub enum Network { Router(Router), Watchdog(Watchdog) }
///     events: NetworkEvent,          // the event enum to write
///     output: Report,                // the model's output type
/// }
/// ```
///
/// Each variant is named after its kind and holds it. A message that reaches an LP of
/// another kind (an [`Addr`] made for the wrong id) stops the run with
/// [`SimError::Model`](crate::SimError::Model).
#[macro_export]
macro_rules! model_kinds {
    (
        $(#[$meta:meta])*
        $vis:vis enum $model:ident { $($variant:ident($kind:ty)),+ $(,)? }
        events: $event:ident,
        output: $output:ty $(,)?
    ) => {
        $(#[$meta])*
        $vis enum $model { $(#[doc = concat!("A [`", stringify!($kind), "`].")] $variant($kind)),+ }

        #[doc = concat!("The events of [`", stringify!($model), "`]: one variant per kind, with its message.")]
        #[derive(Clone, $crate::__private::serde::Serialize, $crate::__private::serde::Deserialize)]
        #[serde(crate = "warpsim_core::__private::serde")]
        $vis enum $event { $(#[doc = concat!("A message for a [`", stringify!($kind), "`].")] $variant(<$kind as $crate::Kind>::Msg)),+ }

        impl $crate::LogicalProcess for $model {
            type Event = $event;
            type Output = $output;
            fn init(&mut self, ctx: &mut $crate::Ctx<'_, Self>) {
                match self { $($model::$variant(lp) => $crate::Kind::init(lp, ctx)),+ }
            }
            #[allow(unreachable_patterns)]
            fn on_event(&mut self, event: $event, ctx: &mut $crate::Ctx<'_, Self>) {
                match (self, event) {
                    $(($model::$variant(lp), $event::$variant(msg)) => $crate::Kind::on_message(lp, msg, ctx),)+
                    (lp, event) => {
                        let is = match lp { $($model::$variant(_) => stringify!($variant)),+ };
                        let for_kind = match event { $($event::$variant(_) => stringify!($variant)),+ };
                        ctx.stop_with(format!("a message for a {for_kind} reached this LP, which is a {is} (an address made for the wrong LP?)"));
                    }
                }
            }
            fn finish(&mut self, ctx: &mut $crate::FinishCtx<'_, Self>) {
                match self { $($model::$variant(lp) => $crate::Kind::finish(lp, ctx)),+ }
            }
        }

        $(
            impl $crate::Member<$kind> for $model {
                fn wrap(msg: <$kind as $crate::Kind>::Msg) -> $event {
                    $event::$variant(msg)
                }
            }
            impl From<$kind> for $model {
                fn from(lp: $kind) -> $model {
                    $model::$variant(lp)
                }
            }
        )+
    };
}
