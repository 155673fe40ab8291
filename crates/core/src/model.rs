//! The model API: what a model implements ([`LogicalProcess`]) and what it can do while
//! handling an event ([`Ctx`]).

use thin_vec::ThinVec;
use warpsim_queue::Handle;

pub use crate::output::{Committed, Discard, OutputSink, deliver_guarded, encode_event};

use crate::error::{Breach, SimError};
use crate::pending::{Live, Pending, PendingQueue};
use crate::relocations::Relocations;
use crate::rng::LpRng;
use crate::time::{EventKey, LpId, Time};

/// A logical process: a piece of model state that changes only when it handles an event.
///
/// A model is a vector of LPs of one type (use an enum for several kinds). The same
/// implementation runs unchanged on every kernel, so it must follow three rules:
///
/// 1. **All state lives in `self`** (or in the LP's [`Ctx::rng`]). Optimistic kernels save and
///    restore LPs with [`Clone`] to undo events; state kept elsewhere (globals, `Rc`, files)
///    would not roll back.
/// 2. **Randomness comes from [`Ctx::rng`]**, the LP's own stream, derived from the run's seed
///    and the LP id and saved with the LP. Then every kernel draws the same numbers.
/// 3. **Results leave through [`Ctx::emit`]**, which delivers them only once the event is
///    committed, in event-key order — never by printing from a handler, which an optimistic
///    kernel may run and then undo.
///
/// # Example: a ping-pong model, run in a dozen lines
///
/// ```
/// use warpsim_core::{Ctx, LogicalProcess, LpId, RunConfig, Sequential, Kernel};
///
/// #[derive(Clone)]
/// struct Player { hits: u32 }
///
/// impl LogicalProcess for Player {
///     type Event = u32;           // the rally length so far
///     type Output = (u32, u32);   // (player, rally length) for every 10th hit
///     fn init(&mut self, ctx: &mut Ctx<Self>) {
///         if ctx.me() == LpId::new(0) { ctx.send(LpId::new(1), 1.0, 0); }
///     }
///     fn on_event(&mut self, rally: u32, ctx: &mut Ctx<Self>) {
///         self.hits += 1;
///         if rally % 10 == 9 { ctx.emit((ctx.me().get(), rally)); }
///         let other = LpId::new(1 - ctx.me().get());
///         ctx.send(other, 1.0, rally + 1);
///     }
/// }
///
/// let mut outputs = Vec::new();
/// let kernel = Sequential::new(RunConfig::new(42).end_time(50.5));
/// let report = kernel.run(vec![Player { hits: 0 }; 2], &mut outputs).unwrap();
/// assert_eq!(report.events_committed, 50);
/// assert_eq!(outputs.len(), 5);
/// assert_eq!(outputs[0].output, (0, 9));
/// assert_eq!(outputs[0].time().as_f64(), 10.0);
/// ```
pub trait LogicalProcess: Clone + Send + 'static {
    /// The events this LP receives (and sends: all LPs of a model share one event type).
    ///
    /// Events are plain data: `#[derive(Clone, Serialize, Deserialize)]` (serde) is all a
    /// model writes. The encoding is what lets an optimistic kernel with lazy cancellation
    /// recognise, *exactly*, that a re-executed event sent the message it sent before (a
    /// hand-written `PartialEq` could ignore a field and let a wrong message stand); it also
    /// carries events between processes (MPI) and into checkpoints, and feeds the optional
    /// content hash ([`RunConfig::content_hash`](crate::RunConfig::content_hash)).
    type Event: Clone + Send + serde::Serialize + serde::de::DeserializeOwned + 'static;
    /// What the model reports through [`Ctx::emit`].
    type Output: Send + 'static;

    /// Called once per LP at time 0, before any event, in LP-id order on the sequential kernel
    /// (other kernels may run inits in any order: they cannot see each other). Typically sends
    /// the first events.
    fn init(&mut self, ctx: &mut Ctx<'_, Self>) {
        let _ = ctx;
    }

    /// Handles one event. Called in event-key order at each LP.
    fn on_event(&mut self, event: Self::Event, ctx: &mut Ctx<'_, Self>);

    /// Called once per LP when the run ends without an error (end time reached, drained, or
    /// event limit), on its committed state, in LP-id order on the sequential kernel and on
    /// every kernel alike. A place for end-of-run statistics: emit them through
    /// [`FinishCtx::emit`](crate::FinishCtx::emit) (they are delivered after every event's
    /// outputs, by LP id); [`FinishCtx::now`](crate::FinishCtx::now) says when the run ended.
    /// The state it leaves is what [`Kernel::run_final`](crate::Kernel::run_final) hands back.
    fn finish(&mut self, ctx: &mut crate::FinishCtx<'_, Self>) {
        let _ = ctx;
    }

    /// An estimate of the heap memory this state owns (the contents of its `Vec`s, `Box`es,
    /// maps…), in bytes; `0` by default. A kernel with a memory budget asks once per state
    /// save it makes, so that a budget also covers saved copies of that heap; without it,
    /// only the state's own `size_of` is counted. Time Warp also asks at every GVT, for each
    /// LP whose events all committed: a state of a kilobyte or more keeps its last save to
    /// roll back from, where a smaller one is saved again at its next event (a model whose
    /// state lives mostly in `Vec`s runs faster on Time Warp with this). It need not be
    /// exact, and must be cheap (e.g. `self.items.capacity() * size_of::<Item>()`).
    fn heap_bytes(&self) -> usize {
        0
    }
}

/// Names an event an LP has sent, so that the same LP can later [`Ctx::cancel`] or
/// [`Ctx::reschedule`] it.
///
/// Handles are plain data: keep them in LP state. A handle of an event that was already
/// handled, or cancelled, is simply refused (`cancel` returns `false`). Two handles are equal
/// when they name the same event.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct EventHandle {
    key: EventKey,
    dest: LpId,
    /// Kernel-specific locator (the sequential kernel's queue handle). Never trusted alone:
    /// the kernel checks that it leads to the event with this key.
    locator: u64,
}

impl EventHandle {
    /// A handle that names no event (returned by a failed [`Ctx::send`]).
    pub const DEAD: EventHandle = EventHandle {
        key: EventKey::new(
            Time::ZERO,
            u32::MAX,
            LpId::new(u32::MAX),
            Time::ZERO,
            u64::MAX,
        ),
        dest: LpId::new(u32::MAX),
        locator: u64::MAX,
    };

    /// The event's current key (its time changes when it is rescheduled).
    pub fn key(&self) -> EventKey {
        self.key
    }

    /// The event's current time.
    pub fn time(&self) -> Time {
        self.key.time
    }

    /// The LP the event was sent to.
    pub fn dest(&self) -> LpId {
        self.dest
    }
}

impl PartialEq for EventHandle {
    fn eq(&self, other: &Self) -> bool {
        self.key.same_send(&other.key) && self.dest == other.dest
    }
}

impl Eq for EventHandle {}

impl std::fmt::Debug for EventHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventHandle")
            .field("key", &self.key)
            .field("dest", &self.dest)
            .finish_non_exhaustive()
    }
}

/// A send that was refused; hands the event back.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{error}")]
pub struct SendError<E> {
    /// Why the send was refused.
    pub error: SimError,
    /// The event that was not sent.
    pub event: E,
}

/// Kernel-side state of one LP that must roll back with it: its random stream and (for
/// buffered kernels) the record of the events it cancelled or moved.
///
/// Kernels save it beside the model state and restore both together.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LpMeta {
    pub(crate) rng: LpRng,
    /// The run's seed, for named streams ([`Ctx::stream`]).
    pub(crate) seed: u64,
    // The critical time of the LP's last event (critical-path analysis) is not here but in
    // the sequential kernel's own vector, allocated only when the analysis is on: 8 bytes
    // per LP less (issue 16), and an analysis never continues from a checkpoint anyway.
    pub(crate) retractions: RetractionLog,
}

impl LpMeta {
    /// The state of LP `lp` at the start of a run with seed `seed`.
    pub fn new(seed: u64, lp: LpId) -> LpMeta {
        LpMeta {
            rng: crate::rng::lp_rng(seed, lp.get()),
            seed,
            retractions: RetractionLog::default(),
        }
    }
}

/// What an LP has done to the events it sent (buffered kernels only): for each send (by its
/// causal identity) it cancelled or moved, the event's current key (or `None` once cancelled) and the
/// largest key any copy of its handle can carry. This lets `cancel` and `reschedule` answer
/// from the LP's own state, without asking the receiver — which an optimistic kernel cannot.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct RetractionLog {
    /// A `ThinVec`: its length and capacity live in its one allocation, and it allocates
    /// nothing while empty, so the log costs 8 bytes per LP (issue 16: bytes per LP at 10M
    /// LPs) and a look-up follows one pointer. The boxed `Vec` it replaced followed two, two
    /// dependent cache misses at every `reschedule` of a model with many LPs: a quarter of
    /// the sequential kernel's samples on PHOLD 16,384 with a watchdog (issue 13). It is
    /// saved as a plain sequence, as the `Vec` was, so checkpoints keep their format.
    entries: ThinVec<Retraction>,
}

#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct Retraction {
    /// The send's identity (`sent`, `id` of its key).
    sent: Time,
    id: u64,
    current: Option<EventKey>,
    /// Largest key the event ever had: once the LP is past it, no handle copy can name a
    /// pending event, and the entry can go.
    max_key: EventKey,
}

impl RetractionLog {
    /// The event's current key as far as this LP knows (`None`: cancelled).
    fn current(&self, handle: &EventHandle) -> Option<EventKey> {
        match self
            .entries
            .iter()
            .rev()
            .find(|entry| entry.sent == handle.key.sent && entry.id == handle.key.id)
        {
            Some(entry) => entry.current,
            None => Some(handle.key),
        }
    }

    fn record(&mut self, old: EventKey, new: Option<EventKey>, now: EventKey) {
        // Forget entries no handle can still use, so the log (cloned with every state save)
        // stays as small as the number of live moved or cancelled events. At every record,
        // not only past some length: a model that moves a timer on every event (a watchdog)
        // would otherwise carry up to that many dead entries into every save — on Time Warp
        // a kilobyte copied per event (issue 13) — and scan them on every move.
        self.entries.retain(|entry| entry.max_key > now);
        let max_key = new.map_or(old, |new| new.max(old));
        match self
            .entries
            .iter_mut()
            .find(|entry| entry.sent == old.sent && entry.id == old.id)
        {
            Some(entry) => {
                entry.current = new;
                entry.max_key = entry.max_key.max(max_key);
            }
            None => self.entries.push(Retraction {
                sent: old.sent,
                id: old.id,
                current: new,
                max_key,
            }),
        }
    }
}

/// One thing a handler did to the event set, in the order it did it (buffered kernels).
///
/// Deliberately not `#[non_exhaustive]`: every kernel matches it exhaustively, so a new kind
/// of effect fails to compile in each kernel until that kernel applies it, instead of being
/// dropped by a catch-all arm.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect<E> {
    /// A new event.
    Send {
        /// Its key.
        key: EventKey,
        /// Its destination.
        dest: LpId,
        /// The event.
        event: E,
    },
    /// The pending event with key `key` at `dest` was cancelled.
    Withdraw {
        /// Destination of the event.
        dest: LpId,
        /// Its key before the cancel.
        key: EventKey,
    },
    /// The pending event at `dest` with key `from` now has key `to` (the same send: same
    /// `src`, `sent` and `id`).
    Move {
        /// Destination of the event.
        dest: LpId,
        /// Its key before.
        from: EventKey,
        /// Its key after.
        to: EventKey,
    },
}

/// What an LP can see and do while it handles an event.
///
/// Sends, cancels and reschedules take effect at once in the kernel's pending set; outputs
/// are delivered once the event commits. A call with bad arguments (a NaN or negative delay,
/// an unknown LP) does not panic: the method returns a dead value and the kernel stops the
/// run with a typed [`SimError`] after the handler returns. Use the `try_*` forms to handle the
/// error in the model instead.
pub struct Ctx<'a, M: LogicalProcess> {
    pub(crate) key: EventKey,
    /// Sends this handler has made so far (the place of the next among them), and the
    /// identity of its first (computed at the first send).
    pub(crate) sends: u64,
    pub(crate) first_id: u64,
    pub(crate) me: LpId,
    pub(crate) n_lps: u32,
    /// The earliest time this handler may send, cancel or move another LP's event at: the
    /// event's time plus the run's lookahead (`RunConfig::lookahead`), computed once per event
    /// rather than once per send.
    pub(crate) horizon: f64,
    pub(crate) meta: &'a mut LpMeta,
    pub(crate) backend: Backend<'a, M::Event>,
    pub(crate) outputs: &'a mut Vec<M::Output>,
    pub(crate) error: &'a mut Option<SimError>,
}

/// Where a handler's sends, cancels and reschedules go. An enum rather than a trait object so
/// that the sequential kernel's hot path (a push into its queue) is a predictable branch,
/// not an indirect call.
pub(crate) enum Backend<'a, E> {
    /// The sequential kernel: straight into its pending set.
    Direct {
        queue: &'a mut PendingQueue<Pending<E>>,
        /// Record sent and rescheduled events in `sent` (critical-path analysis).
        track_sends: bool,
        sent: &'a mut Vec<Handle>,
        /// Where the events of a checkpoint went (a resumed run only).
        relocations: &'a Relocations,
    },
    /// Other kernels: into a buffer the kernel processes after the handler.
    Buffered(&'a mut Vec<Effect<E>>),
}

impl<M: LogicalProcess> std::fmt::Debug for Ctx<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("key", &self.key)
            .field("me", &self.me)
            .finish_non_exhaustive()
    }
}

impl<'a, M: LogicalProcess> Ctx<'a, M> {
    /// A context whose sends, cancels and reschedules are recorded in `effects`, for kernels
    /// outside this crate (Time Warp). `lp` runs the handler; `key` is the event being handled
    /// (for `init`, [`EventKey::init`]); `meta` is the LP's kernel-side state; `outputs`
    /// receives emitted outputs and `error` the first error of the handler.
    pub fn buffered(
        lp: LpId,
        key: EventKey,
        n_lps: u32,
        meta: &'a mut LpMeta,
        effects: &'a mut Vec<Effect<M::Event>>,
        outputs: &'a mut Vec<M::Output>,
        error: &'a mut Option<SimError>,
    ) -> Ctx<'a, M> {
        Ctx {
            key,
            sends: 0,
            first_id: 0,
            me: lp,
            n_lps,
            horizon: key.time.as_f64(),
            meta,
            backend: Backend::Buffered(effects),
            outputs,
            error,
        }
    }

    /// Sets the run's lookahead ([`RunConfig::lookahead`](crate::RunConfig::lookahead)),
    /// which this context then enforces. For kernels, as [`Ctx::buffered`] is.
    pub fn set_lookahead(&mut self, lookahead: f64) {
        self.horizon = self.key.time.as_f64() + lookahead;
    }
}

impl<M: LogicalProcess> Ctx<'_, M> {
    /// The current simulation time (the time of the event being handled; 0 in `init`).
    #[inline]
    pub fn now(&self) -> Time {
        self.key.time
    }

    /// The key of the event being handled.
    #[inline]
    pub fn key(&self) -> EventKey {
        self.key
    }

    /// This LP's id.
    #[inline]
    pub fn me(&self) -> LpId {
        self.me
    }

    /// How many LPs the model has (ids run from 0 to `n_lps() - 1`).
    #[inline]
    pub fn n_lps(&self) -> u32 {
        self.n_lps
    }

    /// This LP's random stream: derived from the run's seed and the LP id, saved and restored
    /// with the LP, so every kernel draws the same numbers.
    #[inline]
    pub fn rng(&mut self) -> &mut LpRng {
        &mut self.meta.rng
    }

    /// A new random stream named `name`, derived from the run's seed, this LP and the name
    /// only (see [`stream_rng`](crate::stream_rng)): several independent streams per LP,
    /// the same in every configuration of a model — common random numbers. Each call starts
    /// the stream afresh: make it once (in `init`) and keep it in the LP's state, where it
    /// rolls back with the LP.
    pub fn stream(&self, name: &str) -> LpRng {
        crate::rng::stream_rng(self.meta.seed, self.me, name)
    }

    pub(crate) fn refuse(&mut self, error: SimError) {
        // Keep the first error: it is the cause, later ones are consequences.
        if self.error.is_none() {
            *self.error = Some(error);
        }
    }

    /// Whether an event of LP `dest` at `at` is too close for this handler to send, cancel or
    /// move under the run's lookahead (events of the LP itself are free of it).
    #[inline]
    fn breaks_lookahead(&self, dest: LpId, at: Time) -> bool {
        // Three instructions on the hot path: an event at or after the horizon, which is
        // every event when there is no lookahead. Only one before it asks whose it is.
        at.as_f64() < self.horizon && self.not_mine(dest)
    }

    /// Whether `dest` is another LP (out of line, so that the common case above stays one
    /// comparison: the compiler otherwise computes both sides of the `&&` up front).
    #[cold]
    #[inline(never)]
    fn not_mine(&self, dest: LpId) -> bool {
        dest != self.me
    }

    #[cold]
    fn lookahead_error(&self, what: Breach, dest: LpId, at: Time) -> SimError {
        SimError::Lookahead {
            lp: self.me,
            time: self.key.time,
            what,
            dest,
            at: at.as_f64(),
            earliest: self.horizon,
        }
    }

    /// The (time, age) of an event `delay` from now for LP `dest`; `what` the handler does
    /// with it names the breach if it is too close under the lookahead.
    fn key_after(&self, delay: f64, dest: LpId, what: Breach) -> Result<(Time, u32), SimError> {
        let time = self
            .key
            .time
            .checked_add(delay)
            .map_err(|reason| SimError::BadDelay {
                lp: self.me,
                time: self.key.time,
                delay,
                reason,
            })?;
        if self.breaks_lookahead(dest, time) {
            return Err(self.lookahead_error(what, dest, time));
        }
        // An event at the sender's own time must still come after the event that caused it.
        let age = if time == self.key.time {
            self.key
                .age
                .checked_add(1)
                .ok_or(SimError::ZeroDelayChain { lp: self.me, time })?
        } else {
            0
        };
        Ok((time, age))
    }

    /// Sends `event` to LP `to`, to happen `delay` time units from now, and returns its handle.
    ///
    /// `delay` may be 0: the event then happens at the current time, after the current event.
    /// A NaN, negative or infinite delay, or an unknown LP, stops the run with a
    /// [`SimError`] once the handler returns (the returned handle names no event).
    ///
    /// `to` is an [`LpId`], a plain `u32` or a typed [`Addr`](crate::Addr).
    #[inline]
    pub fn send(&mut self, to: impl Into<LpId>, delay: f64, event: M::Event) -> EventHandle {
        match self.try_send(to, delay, event) {
            Ok(handle) => handle,
            Err(refused) => {
                self.refuse(refused.error);
                EventHandle::DEAD
            }
        }
    }

    /// Sends `event` to this LP itself, `delay` from now. Same as `send(ctx.me(), …)`.
    #[inline]
    pub fn schedule(&mut self, delay: f64, event: M::Event) -> EventHandle {
        self.send(self.me, delay, event)
    }

    /// Sends `event` to LP `to`, to happen at time `at` (at or after now; at now, after the
    /// current event). The event's time is exactly `at` (no `now + (at − now)` rounding).
    /// A time before now or not finite stops the run with [`SimError::BadDelay`], as a bad
    /// delay does.
    ///
    /// ```
    /// use warpsim_core::{Ctx, Kernel, LogicalProcess, RunConfig, Sequential, Time};
    /// #[derive(Clone)]
    /// struct Alarm;
    /// impl LogicalProcess for Alarm {
    ///     type Event = ();
    ///     type Output = f64;
    ///     fn init(&mut self, ctx: &mut Ctx<Self>) { ctx.schedule_at(0.1 + 0.2, ()); }
    ///     fn on_event(&mut self, _: (), ctx: &mut Ctx<Self>) { ctx.emit(ctx.now().as_f64()); }
    /// }
    /// let mut outputs = Vec::new();
    /// Sequential::new(RunConfig::new(1)).run(vec![Alarm], &mut outputs).unwrap();
    /// assert_eq!(outputs[0].output, 0.1 + 0.2);
    /// ```
    #[inline]
    pub fn send_at(&mut self, to: impl Into<LpId>, at: f64, event: M::Event) -> EventHandle {
        let to = to.into();
        let placed = if to.get() >= self.n_lps {
            Err(self.unknown(to))
        } else {
            self.key_at(at, to)
        };
        let sent = match placed {
            Ok((time, age)) => self.place(to, time, age, event),
            Err(error) => Err(SendError { error, event }),
        };
        match sent {
            Ok(handle) => handle,
            Err(refused) => {
                self.refuse(refused.error);
                EventHandle::DEAD
            }
        }
    }

    /// Sends `event` to this LP itself at time `at`; see [`Ctx::send_at`].
    #[inline]
    pub fn schedule_at(&mut self, at: f64, event: M::Event) -> EventHandle {
        self.send_at(self.me, at, event)
    }

    /// The (time, age) of an event at absolute time `at`.
    fn key_at(&self, at: f64, dest: LpId) -> Result<(Time, u32), SimError> {
        let now = self.key.time;
        let bad = |reason| SimError::BadDelay {
            lp: self.me,
            time: now,
            delay: at - now.as_f64(),
            reason,
        };
        let time = Time::new(at).map_err(bad)?;
        if time < now {
            return Err(bad(crate::TimeError::Past {
                at,
                now: now.as_f64(),
            }));
        }
        if self.breaks_lookahead(dest, time) {
            return Err(self.lookahead_error(Breach::Sent, dest, time));
        }
        let age = if time == now {
            self.key
                .age
                .checked_add(1)
                .ok_or(SimError::ZeroDelayChain { lp: self.me, time })?
        } else {
            0
        };
        Ok((time, age))
    }

    /// Like [`Ctx::send`], but hands a refused event back instead of stopping the run.
    ///
    /// # Errors
    ///
    /// [`SimError::BadDelay`], [`SimError::UnknownLp`], [`SimError::ZeroDelayChain`],
    /// [`SimError::Lookahead`] (another LP, sooner than the run's lookahead) or
    /// [`SimError::QueueFull`], with the event.
    #[inline]
    pub fn try_send(
        &mut self,
        to: impl Into<LpId>,
        delay: f64,
        event: M::Event,
    ) -> Result<EventHandle, SendError<M::Event>> {
        let to = to.into();
        if to.get() >= self.n_lps {
            let error = self.unknown(to);
            return Err(SendError { error, event });
        }
        let (time, age) = match self.key_after(delay, to, Breach::Sent) {
            Ok(time_age) => time_age,
            Err(error) => return Err(SendError { error, event }),
        };
        self.place(to, time, age, event)
    }

    /// The error of a send to `to`, which does not exist.
    fn unknown(&self, to: LpId) -> SimError {
        SimError::UnknownLp {
            lp: self.me,
            time: self.key.time,
            dest: to,
            n_lps: self.n_lps,
        }
    }

    /// Sends `event` to the existing LP `to` at `(time, age)`: its identity, then into the
    /// kernel's queue or effect buffer (the common tail of [`Ctx::try_send`] and
    /// [`Ctx::send_at`]).
    #[inline(always)]
    fn place(
        &mut self,
        to: LpId,
        time: Time,
        age: u32,
        event: M::Event,
    ) -> Result<EventHandle, SendError<M::Event>> {
        // The send's causal identity (see `EventKey`): only the event being handled and the
        // send's place among its sends.
        if self.sends == 0 {
            self.first_id = self.key.first_send_id();
        }
        let id = self.first_id.wrapping_add(self.sends);
        let key = EventKey::new(time, age, self.me, self.key.time, id);
        let locator = match &mut self.backend {
            Backend::Direct {
                queue,
                track_sends,
                sent,
                ..
            } => {
                let entry = move || {
                    let pending = Pending {
                        dest: to,
                        live: Live::Yes,
                        crit: 0.0,
                        event,
                    };
                    (key, pending)
                };
                match queue.push_with(entry) {
                    Ok(handle) => {
                        if *track_sends {
                            sent.push(handle);
                        }
                        handle.into_raw()
                    }
                    Err(refused) => {
                        return Err(SendError {
                            error: SimError::QueueFull,
                            event: refused.value.event,
                        });
                    }
                }
            }
            Backend::Buffered(effects) => {
                effects.push(Effect::Send {
                    key,
                    dest: to,
                    event,
                });
                u64::MAX
            }
        };
        self.sends += 1;
        Ok(EventHandle {
            key,
            dest: to,
            locator,
        })
    }

    /// The queue handle and current key of a still-pending event this LP sent, if `handle`
    /// names one (sequential kernel): where its locator says, or, in a resumed run, where
    /// the checkpoint's event went.
    fn locate(
        queue: &PendingQueue<Pending<M::Event>>,
        relocations: &Relocations,
        me: LpId,
        handle: &EventHandle,
    ) -> Option<(Handle, EventKey)> {
        if handle.key.src != me {
            return None;
        }
        let check = |queue_handle: Handle| match queue.get(queue_handle) {
            Some((key, pending)) if key.same_send(&handle.key) && pending.dest == handle.dest => {
                Some((queue_handle, key))
            }
            _ => None,
        };
        check(Handle::from_raw(handle.locator))
            .or_else(|| check(relocations.find(&handle.key, handle.dest)?))
    }

    /// The key a still-pending event this LP sent has now, from the LP's own record
    /// (buffered kernels). An event is pending exactly when its key is after the current
    /// event's and it was not cancelled: events run in key order on every kernel.
    fn pending_key(&self, handle: &EventHandle) -> Option<EventKey> {
        if handle.key.src != self.me || handle.dest.get() >= self.n_lps {
            return None;
        }
        self.meta
            .retractions
            .current(handle)
            .filter(|current| *current > self.key)
    }

    /// The current key of a still-pending event this LP sent, and (sequential kernel) its
    /// queue handle; `None` when `handle` names no such event (see [`Ctx::cancel`]).
    fn still_pending(&self, handle: &EventHandle) -> Option<(EventKey, Option<Handle>)> {
        match &self.backend {
            Backend::Direct {
                queue, relocations, ..
            } => Self::locate(queue, relocations, self.me, handle)
                .map(|(queue_handle, current)| (current, Some(queue_handle))),
            Backend::Buffered(_) => self.pending_key(handle).map(|current| (current, None)),
        }
    }

    /// Whether `what` on LP `dest`'s event at `at` breaks the run's lookahead; if so, the run
    /// stops with [`SimError::Lookahead`] once the handler returns.
    fn refuse_too_close(&mut self, what: Breach, dest: LpId, at: Time) -> bool {
        let too_close = self.breaks_lookahead(dest, at);
        if too_close {
            let error = self.lookahead_error(what, dest, at);
            self.refuse(error);
        }
        too_close
    }

    /// Cancels an event this LP sent. Returns `true` if the event was still pending and will
    /// now never happen; `false` if it already happened, was already cancelled, or was sent by
    /// another LP (only the sender may cancel). Under a lookahead
    /// ([`RunConfig::lookahead`](crate::RunConfig::lookahead)), cancelling another LP's event
    /// sooner than the lookahead from now stops the run with [`SimError::Lookahead`].
    pub fn cancel(&mut self, handle: EventHandle) -> bool {
        let Some((current, located)) = self.still_pending(&handle) else {
            return false;
        };
        if self.refuse_too_close(Breach::Cancelled, handle.dest, current.time) {
            return false;
        }
        // Kept by the sequential kernel too, so that a checkpoint of this run continues on any
        // kernel (which answers `cancel` from this record).
        let now = self.key;
        self.meta
            .retractions
            .record(handle.key.max(current), None, now);
        match &mut self.backend {
            Backend::Direct { queue, .. } => {
                located.is_some_and(|queue_handle| queue.cancel(queue_handle).is_some())
            }
            Backend::Buffered(effects) => {
                effects.push(Effect::Withdraw {
                    dest: handle.dest,
                    key: current,
                });
                true
            }
        }
    }

    /// Moves a pending event this LP sent to `delay` from now, and updates `handle` to match.
    /// Returns `false` (and changes nothing) when the event is no longer pending or was sent by
    /// another LP; see [`Ctx::cancel`]. A bad delay stops the run, as in [`Ctx::send`], and
    /// so does moving another LP's event from or to sooner than the run's lookahead.
    pub fn reschedule(&mut self, handle: &mut EventHandle, delay: f64) -> bool {
        let Some((current, located)) = self.still_pending(handle) else {
            return false;
        };
        // Under a lookahead, both where the event is and where it goes must be far enough.
        if self.refuse_too_close(Breach::Moved, handle.dest, current.time) {
            return false;
        }
        let (time, age) = match self.key_after(delay, handle.dest, Breach::Moved) {
            Ok(time_age) => time_age,
            Err(error) => {
                self.refuse(error);
                return false;
            }
        };
        let key = EventKey::new(time, age, handle.key.src, handle.key.sent, handle.key.id);
        let now = self.key;
        match &mut self.backend {
            Backend::Direct {
                queue,
                track_sends,
                sent,
                ..
            } => {
                let Some(queue_handle) = located else {
                    return false;
                };
                if queue.reschedule(queue_handle, key).is_err() {
                    return false;
                }
                if *track_sends {
                    sent.push(queue_handle);
                }
                handle.locator = queue_handle.into_raw();
                self.meta
                    .retractions
                    .record(handle.key.max(current), Some(key), now);
            }
            Backend::Buffered(effects) => {
                effects.push(Effect::Move {
                    dest: handle.dest,
                    from: current,
                    to: key,
                });
                self.meta
                    .retractions
                    .record(handle.key.max(current), Some(key), now);
            }
        }
        handle.key = key;
        true
    }

    /// Reports `output`. It reaches the run's sink once this event is committed, in event-key
    /// order (several outputs of one event keep their order).
    #[inline]
    pub fn emit(&mut self, output: M::Output) {
        self.outputs.push(output);
    }
}
