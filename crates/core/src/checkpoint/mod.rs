//! Checkpoints: the committed state of a run at a boundary, to continue from later, on any
//! kernel.
//!
//! # Ground rules
//!
//! - A checkpoint is taken at a *boundary key* `B`: every event with a key below `B` is
//!   committed and none at or above it (a pause at time `T` is the boundary of the first
//!   key at `T`). Every event a handler sends has a key above its own, so a run that starts
//!   from the checkpoint's pending events never needs an event below `B`, on any kernel.
//! - It holds exactly what the rest of the run depends on: each LP's state and [`LpMeta`]
//!   (its random stream and its record of cancelled and moved sends), the pending events
//!   with their full [`EventKey`]s, and the counters the report sums (events committed, the
//!   trace and content hashes so far). Nothing kernel-specific: queue handles are not saved
//!   (a kernel that resumes finds an event again by its key).
//! - Where the outputs stood is the caller's to say: the sink is the caller's, so the
//!   checkpoint carries an opaque [`Checkpoint::attachment`] (the CLI keeps the outputs
//!   delivered so far in it, and replays them into its sink on resume).
//! - Model states are serialised only when a checkpoint is written or read: the bounds
//!   (`Serialize`, `DeserializeOwned`) are on [`Checkpoint::write_to`] and
//!   [`Checkpoint::read_from`], not on [`LogicalProcess`].

mod file;

pub use file::{
    CheckpointError, CheckpointHeader, FORMAT_VERSION, read_header as read_checkpoint_header,
};

use crate::error::SimError;
use crate::finish::{Finished, finish_time, run_finish};
use crate::model::{Committed, LogicalProcess, LpMeta, OutputSink, deliver_guarded};
use crate::report::{Report, TraceHash};
use crate::time::{EventKey, LpId};

/// Who wrote a checkpoint and for what: checked when it is read back, so that a checkpoint
/// is never continued by another model or with other parameters.
///
/// ```
/// use warpsim_core::CheckpointLabel;
/// let label = CheckpointLabel::new("phold", "{\"lps\":64}");
/// assert_eq!(label.model, "phold");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct CheckpointLabel {
    /// The model's name.
    pub model: String,
    /// The model's parameters, in any stable text form (the CLI uses their JSON).
    pub params: String,
    /// The command line that started the run (for `warpsim resume`), if any.
    pub command: Vec<String>,
}

impl CheckpointLabel {
    /// A label for model `model` with parameters `params` and no command line.
    pub fn new(model: impl Into<String>, params: impl Into<String>) -> CheckpointLabel {
        CheckpointLabel {
            model: model.into(),
            params: params.into(),
            command: Vec::new(),
        }
    }

    /// Stores the command line that started the run.
    pub fn command(mut self, command: Vec<String>) -> CheckpointLabel {
        self.command = command;
        self
    }
}

/// One pending event of a checkpoint.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PendingEvent<E> {
    /// Its key.
    pub key: EventKey,
    /// Its destination.
    pub dest: LpId,
    /// The event.
    pub event: E,
}

/// The report's running totals at the boundary.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Counters {
    pub(crate) seed: u64,
    pub(crate) committed: u64,
    /// Time of the last committed event (0 before any).
    pub(crate) last_time: f64,
    pub(crate) trace: (u64, u64),
    pub(crate) content: Option<(u64, u64)>,
    pub(crate) peak_pending: u64,
}

/// The committed state of a run at a boundary (see the module's ground rules): what
/// [`Sequential::run_from`](crate::Sequential::run_from) (and the Time Warp kernels) hand
/// back when a run pauses or is interrupted, and start from to continue it.
///
/// ```
/// use warpsim_core::{Ctx, Discard, Ending, Kernel, LogicalProcess, RunConfig, Sequential, Start};
/// #[derive(Clone)]
/// struct Clock;
/// impl LogicalProcess for Clock {
///     type Event = ();
///     type Output = ();
///     fn init(&mut self, ctx: &mut Ctx<Self>) { ctx.schedule(1.0, ()); }
///     fn on_event(&mut self, _: (), ctx: &mut Ctx<Self>) { ctx.schedule(1.0, ()); }
/// }
/// let whole = Sequential::new(RunConfig::new(1).end_time(10.0)).run(vec![Clock; 3], &mut Discard).unwrap();
/// // The same run, paused at time 4 and continued from the checkpoint.
/// let kernel = Sequential::new(RunConfig::new(1).end_time(10.0).pause_at(4.0));
/// let Ending::Paused(checkpoint, _) = kernel.run_from(Start::Init(vec![Clock; 3]), &mut Discard).unwrap()
///     else { panic!("no pause") };
/// assert_eq!(checkpoint.events_committed(), 9);
/// let rest = Sequential::new(RunConfig::new(1).end_time(10.0));
/// let Ending::Finished(done) = rest.run_from(Start::Resume(checkpoint), &mut Discard).unwrap()
///     else { panic!("paused again") };
/// assert_eq!(done.report.trace_hash, whole.trace_hash);
/// assert_eq!(done.report.events_committed, whole.events_committed);
/// ```
#[derive(Clone)]
pub struct Checkpoint<M: LogicalProcess> {
    pub(crate) label: CheckpointLabel,
    /// The kernel that wrote it (for messages).
    pub(crate) kernel: String,
    pub(crate) states: Vec<M>,
    pub(crate) metas: Vec<LpMeta>,
    /// In key order.
    pub(crate) pending: Vec<PendingEvent<M::Event>>,
    pub(crate) counters: Counters,
    pub(crate) attachment: Vec<u8>,
}

impl<M: LogicalProcess> std::fmt::Debug for Checkpoint<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoint")
            .field("label", &self.label)
            .field("kernel", &self.kernel)
            .field("lps", &self.states.len())
            .field("pending", &self.pending.len())
            .field("events_committed", &self.counters.committed)
            .finish_non_exhaustive()
    }
}

/// Where a run starts: from every LP's `init`, or from a checkpoint.
#[derive(Debug)]
pub enum Start<M: LogicalProcess> {
    /// A fresh run of these LPs (each one's `init` runs first).
    Init(Vec<M>),
    /// The continuation of a run from its checkpoint (no `init` runs).
    Resume(Box<Checkpoint<M>>),
}

/// How a run started with [`Start`] ended.
#[derive(Debug)]
pub enum Ending<M: LogicalProcess> {
    /// It ran to its end; `finish` ran on every LP.
    Finished(Finished<M>),
    /// It paused or was interrupted ([`StopReason::Paused`](crate::StopReason::Paused) or
    /// [`StopReason::Interrupted`](crate::StopReason::Interrupted) in the report, which
    /// counts everything up to the boundary): `finish` did not run, and the checkpoint
    /// continues it ([`Checkpoint::finish`] ends it there instead).
    Paused(Box<Checkpoint<M>>, Report),
}

impl<M: LogicalProcess> Checkpoint<M> {
    /// Assembles a checkpoint (kernels only). `pending` must be in key order.
    pub(crate) fn assemble(
        kernel: &str,
        states: Vec<M>,
        metas: Vec<LpMeta>,
        pending: Vec<PendingEvent<M::Event>>,
        counters: Counters,
    ) -> Checkpoint<M> {
        Checkpoint {
            label: CheckpointLabel::default(),
            kernel: kernel.to_string(),
            states,
            metas,
            pending,
            counters,
            attachment: Vec::new(),
        }
    }

    /// Assembles a checkpoint from a kernel outside this crate (Time Warp): the states and
    /// [`LpMeta`]s by LP id, the pending events (any order), and the report's running
    /// totals at the boundary.
    pub fn from_parts(
        kernel: &str,
        states: Vec<M>,
        metas: Vec<LpMeta>,
        mut pending: Vec<PendingEvent<M::Event>>,
        report: &Report,
    ) -> Checkpoint<M> {
        pending.sort_unstable_by_key(|event| event.key);
        Checkpoint::assemble(
            kernel,
            states,
            metas,
            pending,
            Counters {
                seed: report.seed,
                committed: report.events_committed,
                last_time: report.end_time,
                trace: report.trace_hash.parts(),
                content: report.content_hash.map(|hash| hash.parts()),
                peak_pending: report.peak_pending as u64,
            },
        )
    }

    /// Takes the checkpoint apart for a kernel outside this crate: states, metas and
    /// pending events (in key order).
    pub fn into_parts(self) -> (Vec<M>, Vec<LpMeta>, Vec<PendingEvent<M::Event>>) {
        (self.states, self.metas, self.pending)
    }

    /// A report holding the checkpoint's running totals, for a kernel that resumes from it
    /// (which then adds what it commits).
    pub fn resumed_report(&self, kernel: &'static str) -> Report {
        let mut report = Report::new(kernel, self.counters.seed, self.lps());
        report.events_committed = self.counters.committed;
        report.events_processed = self.counters.committed;
        report.end_time = self.counters.last_time;
        report.trace_hash = self.trace_hash();
        report.content_hash = self.content_hash();
        report.peak_pending = self.counters.peak_pending as usize;
        report
    }

    /// Checks that a run with `config` can continue from this checkpoint: the same seed,
    /// the content hash only if it was kept, no critical-path analysis (whose running
    /// totals a checkpoint does not keep).
    ///
    /// # Errors
    ///
    /// [`SimError::Config`] saying what differs.
    pub fn check_config(&self, config: &crate::RunConfig) -> Result<(), SimError> {
        if config.seed != self.counters.seed {
            return Err(SimError::Config(format!(
                "the checkpoint is of a run with seed {}, not {}",
                self.counters.seed, config.seed
            )));
        }
        if config.content_hash && self.counters.content.is_none() {
            return Err(SimError::Config(
                "the checkpoint's run kept no content hash, so its continuation cannot".into(),
            ));
        }
        if config.critical_path.is_some() {
            return Err(SimError::Config(
                "critical-path analysis cannot continue from a checkpoint".into(),
            ));
        }
        if self.states.is_empty() || self.states.len() != self.metas.len() {
            return Err(SimError::NoLps);
        }
        Ok(())
    }

    /// The label checked when the checkpoint is read back.
    pub fn label(&self) -> &CheckpointLabel {
        &self.label
    }

    /// Sets the label (see [`CheckpointLabel`]).
    pub fn set_label(&mut self, label: CheckpointLabel) {
        self.label = label;
    }

    /// The caller's own data stored with the checkpoint (e.g. where its outputs stood).
    pub fn attachment(&self) -> &[u8] {
        &self.attachment
    }

    /// Stores the caller's own data with the checkpoint.
    pub fn set_attachment(&mut self, attachment: Vec<u8>) {
        self.attachment = attachment;
    }

    /// The kernel that took it.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }

    /// How many LPs the model has.
    pub fn lps(&self) -> u32 {
        u32::try_from(self.states.len()).unwrap_or(u32::MAX)
    }

    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.counters.seed
    }

    /// Events committed before the boundary.
    pub fn events_committed(&self) -> u64 {
        self.counters.committed
    }

    /// The time of the last committed event before the boundary.
    pub fn last_time(&self) -> f64 {
        self.counters.last_time
    }

    /// The pending events, in key order.
    pub fn pending(&self) -> &[PendingEvent<M::Event>] {
        &self.pending
    }

    /// The LPs' states, by LP id.
    pub fn states(&self) -> &[M] {
        &self.states
    }

    /// The trace hash of the events committed before the boundary.
    pub fn trace_hash(&self) -> TraceHash {
        TraceHash::from_parts(self.counters.trace.0, self.counters.trace.1)
    }

    /// The content hash so far, when the run kept one.
    pub fn content_hash(&self) -> Option<TraceHash> {
        self.counters
            .content
            .map(|(sum, count)| TraceHash::from_parts(sum, count))
    }

    /// Ends the run at the boundary instead of continuing it: `finish` on every LP (in LP
    /// order, at the time of the last committed event, as after an event limit), its outputs
    /// to `sink`, and the final states with `report` (the report of the run that paused).
    ///
    /// # Errors
    ///
    /// A panicking `finish` or sink, with the report.
    pub fn finish<S: OutputSink<M::Output>>(
        self,
        mut report: Report,
        sink: &mut S,
    ) -> Result<Finished<M>, crate::RunError> {
        let n_lps = self.lps();
        let at = finish_time(f64::INFINITY, true, self.counters.last_time);
        let mut states = self.states;
        let mut metas = self.metas;
        let mut outputs = Vec::new();
        for (index, (model, meta)) in states.iter_mut().zip(metas.iter_mut()).enumerate() {
            let lp = LpId::new(index as u32);
            let key = EventKey::finish(lp, at);
            let delivered = run_finish(model, meta, lp, n_lps, at, &mut outputs).and_then(|()| {
                outputs
                    .drain(..)
                    .try_for_each(|output| deliver_guarded(sink, Committed { key, lp, output }))
            });
            if let Err(error) = delivered {
                report.stop_reason = crate::StopReason::Error;
                return Err(crate::RunError {
                    error,
                    partial: Box::new(report),
                });
            }
        }
        Ok(Finished::new(report, states))
    }
}
