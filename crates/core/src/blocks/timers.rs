//! Timers named by a key (a watchdog per neighbour, a timeout per request).

use std::collections::BTreeMap;

use crate::model::{Ctx, EventHandle, LogicalProcess};
use crate::time::Time;

/// Timers of one LP named by a key: [`set`](KeyedTimers::set),
/// [`push_back`](KeyedTimers::push_back) and [`clear`](KeyedTimers::clear) by key, without
/// keeping event handles in the model. Each timer is an event the LP sends itself; when it
/// arrives the handler calls [`fired`](KeyedTimers::fired) with its key.
///
/// Plain `Clone` data (a `BTreeMap` from key to handle), so it rolls back with the LP.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use warpsim_core::blocks::KeyedTimers;
/// use warpsim_core::{Ctx, Kernel, LogicalProcess, RunConfig, Sequential};
///
/// #[derive(Clone, Serialize, Deserialize)]
/// enum Ev { Heartbeat(u8), Timeout(u8) }
///
/// /// A watchdog over two peers: a heartbeat pushes a peer's timeout back by 3.
/// #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
/// struct Watchdog { timers: KeyedTimers<u8> }
///
/// impl LogicalProcess for Watchdog {
///     type Event = Ev;
///     type Output = (u8, f64);
///     fn init(&mut self, ctx: &mut Ctx<Self>) {
///         for peer in [0, 1] { self.timers.set(ctx, peer, 3.0, Ev::Timeout(peer)); }
///         // Peer 0 beats at 1, 2, 3, 4; peer 1 never does.
///         for at in 1..=4 { ctx.schedule(f64::from(at), Ev::Heartbeat(0)); }
///     }
///     fn on_event(&mut self, event: Ev, ctx: &mut Ctx<Self>) {
///         match event {
///             Ev::Heartbeat(peer) => { self.timers.push_back(ctx, &peer, 3.0); }
///             Ev::Timeout(peer) => {
///                 self.timers.fired(&peer);
///                 ctx.emit((peer, ctx.now().as_f64()));
///             }
///         }
///     }
/// }
///
/// let mut outputs = Vec::new();
/// Sequential::new(RunConfig::new(1)).run(vec![Watchdog::default()], &mut outputs).unwrap();
/// let timeouts: Vec<(u8, f64)> = outputs.iter().map(|c| c.output).collect();
/// assert_eq!(timeouts, [(1, 3.0), (0, 7.0)]);
/// ```
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(bound(
    serialize = "K: serde::Serialize",
    deserialize = "K: Ord + serde::Deserialize<'de>"
))]
pub struct KeyedTimers<K> {
    timers: BTreeMap<K, EventHandle>,
}

impl<K> Default for KeyedTimers<K> {
    fn default() -> Self {
        KeyedTimers {
            timers: BTreeMap::new(),
        }
    }
}

impl<K: Ord> KeyedTimers<K> {
    /// No timers.
    pub fn new() -> KeyedTimers<K> {
        KeyedTimers::default()
    }

    /// Sets timer `key` to send the LP `event` `delay` from now, replacing (cancelling) the
    /// timer of that key if there is one. Returns whether one was replaced. A bad delay stops
    /// the run as in [`Ctx::send`].
    pub fn set<M: LogicalProcess>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        key: K,
        delay: f64,
        event: M::Event,
    ) -> bool {
        let handle = ctx.schedule(delay, event);
        match self.timers.insert(key, handle) {
            Some(old) => ctx.cancel(old),
            None => false,
        }
    }

    /// Moves timer `key` to `delay` from now (earlier or later). Returns `false` (and
    /// forgets the key) when no such timer is pending.
    pub fn push_back<M: LogicalProcess>(
        &mut self,
        ctx: &mut Ctx<'_, M>,
        key: &K,
        delay: f64,
    ) -> bool {
        let Some(handle) = self.timers.get_mut(key) else {
            return false;
        };
        if ctx.reschedule(handle, delay) {
            true
        } else {
            self.timers.remove(key);
            false
        }
    }

    /// Cancels timer `key`. Returns whether one was pending.
    pub fn clear<M: LogicalProcess>(&mut self, ctx: &mut Ctx<'_, M>, key: &K) -> bool {
        match self.timers.remove(key) {
            Some(handle) => ctx.cancel(handle),
            None => false,
        }
    }

    /// Timer `key`'s event has arrived: forgets it. Returns whether it was set (call it from
    /// the handler of the timer's event).
    pub fn fired(&mut self, key: &K) -> bool {
        self.timers.remove(key).is_some()
    }

    /// When timer `key` fires, if it is set.
    pub fn deadline(&self, key: &K) -> Option<Time> {
        self.timers.get(key).map(EventHandle::time)
    }

    /// Whether timer `key` is set.
    pub fn is_set(&self, key: &K) -> bool {
        self.timers.contains_key(key)
    }

    /// How many timers are set.
    pub fn len(&self) -> usize {
        self.timers.len()
    }

    /// Whether no timer is set.
    pub fn is_empty(&self) -> bool {
        self.timers.is_empty()
    }
}
