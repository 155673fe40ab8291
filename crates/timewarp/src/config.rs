//! The kernel's settings: [`TimeWarp`] and its knobs.

use std::time::Duration;

use warpsim_core::{RunConfig, SimError};

use crate::watch::WarningHook;

/// How antimessages are sent when an LP rolls back.
///
/// ```
/// use warpsim_timewarp::Cancellation;
/// assert_eq!("lazy".parse::<Cancellation>().unwrap(), Cancellation::Lazy);
/// assert_eq!(Cancellation::default(), Cancellation::Lazy);
/// assert!("eager".parse::<Cancellation>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[non_exhaustive]
pub enum Cancellation {
    /// Every message sent by an undone event is cancelled at once by an antimessage.
    Aggressive,
    /// Cancellation waits until the undone event runs again: a regenerated message identical
    /// to the one already sent is kept, and its antimessage is never sent (the default).
    #[default]
    Lazy,
}

impl std::str::FromStr for Cancellation {
    type Err = String;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "aggressive" => Ok(Cancellation::Aggressive),
            "lazy" => Ok(Cancellation::Lazy),
            other => Err(format!(
                "unknown cancellation `{other}` (expected aggressive or lazy)"
            )),
        }
    }
}

impl std::fmt::Display for Cancellation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Cancellation::Aggressive => "aggressive",
            Cancellation::Lazy => "lazy",
        })
    }
}

/// Which worker thread owns which LP.
///
/// ```
/// use warpsim_timewarp::Partition;
/// assert_eq!(Partition::Block.owner(5, 10, 2), 1);
/// assert_eq!(Partition::RoundRobin.owner(5, 10, 2), 1);
/// assert_eq!(Partition::RoundRobin.owner(4, 10, 2), 0);
/// assert_eq!(Partition::Map(vec![1, 0]).owner(0, 2, 2), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[non_exhaustive]
pub enum Partition {
    /// LP `i` of `n` goes to worker `i * threads / n`: contiguous blocks of equal size (the
    /// default; it keeps neighbouring LPs, which models usually make talk most, together).
    #[default]
    Block,
    /// LP `i` goes to worker `i % threads`.
    RoundRobin,
    /// LP `i` goes to worker `map[i]` (one entry per LP, each below the thread count).
    #[cfg_attr(feature = "clap", value(skip))]
    Map(Vec<usize>),
}

impl Partition {
    /// The worker that owns LP `lp` of `n_lps` with `threads` workers. For a map, an LP
    /// without an entry goes to worker 0 (the kernel refuses such maps before running).
    pub fn owner(&self, lp: usize, n_lps: usize, threads: usize) -> usize {
        match self {
            Partition::Block => (lp as u128 * threads as u128 / n_lps.max(1) as u128) as usize,
            Partition::RoundRobin => lp % threads,
            Partition::Map(map) => map.get(lp).copied().unwrap_or(0),
        }
    }
}

impl std::str::FromStr for Partition {
    type Err = String;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "block" => Ok(Partition::Block),
            "round-robin" => Ok(Partition::RoundRobin),
            other => Err(format!(
                "unknown partition `{other}` (expected block or round-robin)"
            )),
        }
    }
}

/// Parses a byte count: plain bytes (`1048576`) or a number with a binary or decimal unit
/// (`512KiB`, `2GiB`, `1.5MB`, `64k`).
///
/// ```
/// use warpsim_timewarp::parse_bytes;
/// assert_eq!(parse_bytes("2GiB").unwrap(), 2 << 30);
/// assert_eq!(parse_bytes("512 MiB").unwrap(), 512 << 20);
/// assert_eq!(parse_bytes("1000").unwrap(), 1000);
/// assert_eq!(parse_bytes("1.5KB").unwrap(), 1500);
/// assert!(parse_bytes("lots").is_err());
/// ```
///
/// # Errors
///
/// A message naming the refused text when it is not a non-negative number with a known unit.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a byte count (e.g. 2GiB, 512MiB, 1000000)"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "kb" => 1e3,
        "m" | "mib" => 1024.0 * 1024.0,
        "mb" => 1e6,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "gb" => 1e9,
        "t" | "tib" => 1024.0f64.powi(4),
        "tb" => 1e12,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{text}` (use B, KiB, MiB, GiB, KB, MB, GB)"
            ));
        }
    };
    let bytes = value * scale;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(bytes.round() as u64)
}

/// The optimistic kernel on threads. Configure it with the methods below (each returns the
/// kernel), then run it with [`Kernel::run`](warpsim_core::Kernel::run) or
/// [`TimeWarp::run_with_stats`].
///
/// ```
/// use warpsim_core::{Discard, Kernel, RunConfig};
/// use warpsim_models::phold::PholdParams;
/// use warpsim_timewarp::{Cancellation, TimeWarp};
///
/// let params = PholdParams { lps: 64, end: 20.0, ..PholdParams::default() };
/// let kernel = TimeWarp::new(RunConfig::new(7).end_time(params.end))
///     .threads(2)
///     .cancellation(Cancellation::Aggressive)
///     .checkpoint_interval(2);
/// let report = kernel.run(params.build().unwrap(), &mut Discard).unwrap();
/// assert!(report.events_committed > 1000);
/// assert!(report.events_processed >= report.events_committed);
/// ```
#[derive(Debug, Clone)]
pub struct TimeWarp {
    pub(crate) config: RunConfig,
    pub(crate) threads: usize,
    pub(crate) partition: Partition,
    pub(crate) cancellation: Cancellation,
    pub(crate) checkpoint_interval: u32,
    pub(crate) adaptive_checkpoint: bool,
    pub(crate) window: Option<f64>,
    pub(crate) adaptive_window: bool,
    pub(crate) load_balancing: bool,
    pub(crate) give_way: Option<f64>,
    pub(crate) safe_events: bool,
    pub(crate) memory: Option<u64>,
    pub(crate) gvt_interval: u64,
    pub(crate) warnings: Warnings,
    pub(crate) progress: crate::progress::ProgressSlot,
}

/// Where warnings go and when a stall is one (see [`TimeWarp::on_warning`]).
#[derive(Clone)]
pub(crate) struct Warnings {
    pub(crate) hook: Option<WarningHook>,
    pub(crate) slow_handler: Duration,
}

impl std::fmt::Debug for Warnings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Warnings")
            .field("hook", &self.hook.as_ref().map(|_| "custom"))
            .field("slow_handler", &self.slow_handler)
            .finish()
    }
}

impl TimeWarp {
    /// A kernel with the defaults: 1 thread, block partition, lazy cancellation, adaptive
    /// state saves (from one before every event), an adaptive window, no memory budget, a
    /// GVT round every 2048 events.
    pub fn new(config: RunConfig) -> TimeWarp {
        TimeWarp {
            config,
            threads: 1,
            partition: Partition::Block,
            cancellation: Cancellation::Lazy,
            checkpoint_interval: 1,
            adaptive_checkpoint: true,
            window: None,
            adaptive_window: true,
            load_balancing: false,
            give_way: Some(0.4),
            safe_events: true,
            memory: None,
            gvt_interval: 2048,
            warnings: Warnings {
                hook: None,
                slow_handler: Duration::from_secs(5),
            },
            progress: crate::progress::ProgressSlot::default(),
        }
    }

    /// Number of worker threads (at least 1). A run never starts more threads than it has
    /// LPs (more could only idle); [`TimeWarpStats::threads`](crate::TimeWarpStats::threads)
    /// says how many it used.
    pub fn threads(mut self, threads: usize) -> TimeWarp {
        self.threads = threads;
        self
    }

    /// How LPs are spread over the workers.
    pub fn partition(mut self, partition: Partition) -> TimeWarp {
        self.partition = partition;
        self
    }

    /// Aggressive or lazy cancellation.
    pub fn cancellation(mut self, cancellation: Cancellation) -> TimeWarp {
        self.cancellation = cancellation;
        self
    }

    /// Save an LP's state before every `k`-th event (at least 1), instead of adapting the
    /// interval. A rollback restores the last save at or before its target and re-runs
    /// ("coasts forward" through) the events in between, so a larger `k` trades memory and
    /// copying for re-execution. By default each worker adapts `k` at every GVT, from 1 up
    /// to 32: from timed samples of a save and of an event, and its rollbacks per event, it
    /// takes the `k` that costs least per event (a model whose state is large to copy and
    /// that seldom rolls back saves seldom). Results do not depend on `k`, only speed.
    pub fn checkpoint_interval(mut self, k: u32) -> TimeWarp {
        self.checkpoint_interval = k;
        self.adaptive_checkpoint = false;
        self
    }

    /// Optimism window: no event later than `GVT + window` runs. Progress is guaranteed
    /// because the event at GVT always may. A fixed window turns the adaptive one off.
    pub fn window(mut self, window: Option<f64>) -> TimeWarp {
        self.window = window;
        self
    }

    /// Whether, with no fixed [`window`](TimeWarp::window), each worker throttles itself
    /// (on by default). At every GVT it weighs the events it rolled back against those it
    /// ran, both decayed by half per GVT. Above a quarter it halves its window (starting
    /// from how far past GVT it had run) and remembers where it thrashed; below 2% it grows
    /// it by a quarter, but to no more than three quarters of where it last thrashed, a
    /// mark that fades by 2% per calm GVT. The window never narrows below a span that holds
    /// about 512 of the worker's own events (or GVT rounds, not rollbacks, would set the
    /// pace), and never wider than one that holds about 8,192 of them, even in a run that
    /// does not thrash: further ahead, nothing is wasted, but every record stays uncommitted
    /// and the worker's memory grows (on a shared machine, while its peer is descheduled).
    /// What a checkpoint taken in place rolls back at its pause is not counted as waste.
    /// Results do not depend on it, only speed.
    pub fn adaptive_window(mut self, on: bool) -> TimeWarp {
        self.adaptive_window = on;
        self
    }

    /// Whether a worker runs the events that no rollback can reach any more without
    /// optimism's costs (on by default): an event below every key that another worker could
    /// still send it (known at each GVT, lowered by the worker's own sends to the others)
    /// is run as the sequential kernel runs it, with no state save, record or effect log,
    /// and commits at once. On one thread almost every event is such a *safe* event; on
    /// several, mostly the events of a worker that lags behind the others, or, when the
    /// model declares a lookahead (`RunConfig::lookahead`), every event within it of what
    /// the others may still send.
    /// [`TimeWarpStats::safe_events`](crate::TimeWarpStats::safe_events) counts them. A stop
    /// or periodic checkpoint asked for while the run runs pauses past the times reserved
    /// for them, at most about twice the span the run runs ahead of GVT. Not used across
    /// processes (`run_cluster`). Results do not depend on it, only speed: turn it off to
    /// measure the optimistic machinery alone.
    pub fn safe_events(mut self, on: bool) -> TimeWarp {
        self.safe_events = on;
        self
    }

    /// Dynamic load balancing on threads (off by default): every 16 GVTs, if the busiest
    /// worker committed more than 1.15 times the mean since the last look, the most loaded
    /// of its LPs (by events committed) move, with their whole Time Warp state, to the least
    /// busy worker, while every worker pauses at that GVT. Results do not depend on it. Not
    /// used across processes (`run_cluster`).
    pub fn load_balancing(mut self, on: bool) -> TimeWarp {
        self.load_balancing = on;
        self
    }

    /// Threads that wait for a core give their LPs away (on by default, at `Some(0.4)`). On
    /// a machine where other processes take cores, a thread that is descheduled holds the
    /// others back: they run up to what it may still send them and then wait for it. Every
    /// 5 ms the kernel reads how long each thread has waited for a core (Linux's
    /// `/proc/thread-self/schedstat`; elsewhere nothing is measured and nothing moves).
    /// When one waited more than `share` of the last 120 ms, every thread with LPs more
    /// than three quarters of `share`, and other processes (`/proc/stat`) kept at least
    /// three quarters of a core busy in each half of that span, all its LPs move to the thread
    /// that waited least, as a load-balancing migration does, and it idles, outside the GVT
    /// protocol, until other processes ran less than 0.35 of a core in each half of 60 ms:
    /// then it takes the later half of those LPs back. On
    /// this project's 2-core machine, with another process keeping a core busy, each of 2
    /// threads waits 44–70 % of the time; left alone, one waits up to 39 % of 120 ms and
    /// the other up to 30 % (more while a program reading the run's output starts up).
    /// Results do not depend on it. `None` never moves LPs for this; `Some(0.0)` moves them
    /// at the first look and half of them back at the next, once (for tests). Not used across
    /// processes (`run_cluster`).
    pub fn give_way(mut self, share: Option<f64>) -> TimeWarp {
        self.give_way = share;
        self
    }

    /// Memory budget in bytes for the kernel's event, state-save and log storage (an
    /// estimate, see the crate docs, "Memory"). Over budget, each worker narrows its
    /// optimism window (halving it at every GVT while the run is over budget, down to a
    /// span of a few hundred of its own events) and collects fossils eagerly; under budget
    /// the window widens again. The budget only throttles: a run that fits at the start
    /// never fails because of it, so the same command always ends the same way. When even
    /// the narrowest window cannot keep the budget the run goes on and a
    /// [`Warning::MemoryBudgetExceeded`](crate::Warning::MemoryBudgetExceeded) says so.
    ///
    /// # Errors
    ///
    /// The run stops before it starts, with [`SimError::MemoryBudget`], when the events
    /// pending after `init` alone need more than the budget.
    pub fn memory(mut self, bytes: Option<u64>) -> TimeWarp {
        self.memory = bytes;
        self
    }

    /// Events a worker executes between the GVT rounds it starts (at least 1). Idle and
    /// throttled workers start rounds sooner.
    pub fn gvt_interval(mut self, events: u64) -> TimeWarp {
        self.gvt_interval = events;
        self
    }

    /// Sends the run's [`Warning`](crate::Warning)s to `hook` instead of standard error
    /// (the default prints each as one line starting with `warning: `). The hook runs on
    /// the kernel's threads, so it must be cheap and must not panic.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use warpsim_core::{Discard, Kernel, RunConfig};
    /// use warpsim_models::phold::PholdParams;
    /// use warpsim_timewarp::{TimeWarp, Warning};
    ///
    /// let warnings = Arc::new(Mutex::new(Vec::new()));
    /// let seen = warnings.clone();
    /// let params = PholdParams { lps: 16, end: 5.0, ..PholdParams::default() };
    /// TimeWarp::new(RunConfig::new(1).end_time(params.end))
    ///     .on_warning(Arc::new(move |warning: &Warning| seen.lock().unwrap().push(warning.to_string())))
    ///     .run(params.build().unwrap(), &mut Discard)
    ///     .unwrap();
    /// assert!(warnings.lock().unwrap().is_empty());
    /// ```
    pub fn on_warning(mut self, hook: WarningHook) -> TimeWarp {
        self.warnings.hook = Some(hook);
        self
    }

    /// Shows `hook` the run's [`Progress`](crate::Progress) (GVT, events committed and
    /// processed) about every tenth of a second, for a progress bar. Runs over MPI do not
    /// call it.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use warpsim_core::{Discard, Kernel, RunConfig};
    /// use warpsim_models::phold::PholdParams;
    /// use warpsim_timewarp::{Progress, TimeWarp};
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let shown = seen.clone();
    /// let params = PholdParams { lps: 16, end: 5.0, ..PholdParams::default() };
    /// let report = TimeWarp::new(RunConfig::new(1).end_time(params.end))
    ///     .threads(2)
    ///     .on_progress(Arc::new(move |progress: &Progress| shown.lock().unwrap().push(*progress)))
    ///     .run(params.build().unwrap(), &mut Discard)
    ///     .unwrap();
    /// // The last report is the run's end.
    /// let last = *seen.lock().unwrap().last().unwrap();
    /// assert_eq!(last.committed, report.events_committed);
    /// assert_eq!(last.gvt, params.end);
    /// ```
    pub fn on_progress(mut self, hook: crate::ProgressHook) -> TimeWarp {
        self.progress = crate::progress::ProgressSlot(Some(hook));
        self
    }

    /// How long a handler must run on a speculative state before
    /// [`Warning::SlowSpeculativeHandler`](crate::Warning::SlowSpeculativeHandler) reports
    /// it (5 s by default; also at least 1000 times the mean event time so far).
    pub fn slow_handler_after(mut self, after: Duration) -> TimeWarp {
        self.warnings.slow_handler = after;
        self
    }

    /// The run configuration.
    pub fn config(&self) -> &RunConfig {
        &self.config
    }

    /// The worker threads a run over `n_lps` LPs uses: never more than it has LPs, nor, with
    /// a partition map, than the map names.
    pub(crate) fn effective_threads(&self, n_lps: usize) -> usize {
        let useful = match &self.partition {
            Partition::Map(map) => map.iter().max().map_or(1, |&last| last + 1),
            _ => n_lps,
        };
        self.threads.min(useful.max(1))
    }

    /// Checks the settings for `n_lps` LPs.
    pub(crate) fn validate(&self, n_lps: usize) -> Result<(), SimError> {
        self.config.validate()?;
        let refuse = |message: String| Err(SimError::Config(message));
        if cfg!(panic = "abort") {
            // A handler may panic on a state that a rollback will undo; the kernel must catch
            // that panic, and with `panic = "abort"` the process dies instead.
            return refuse(
                "the timewarp kernel needs panics to unwind, but this program was built with panic = \"abort\"; build it with panic = \"unwind\" (the default)".into(),
            );
        }
        if self.config.max_events.is_some() {
            return refuse(
                "an event limit is not supported by the timewarp kernel; use an end time".into(),
            );
        }
        if self.config.critical_path.is_some() {
            return refuse(
                "critical-path analysis is not supported by the timewarp kernel; run it on the sequential kernel (it gives the same committed events)".into(),
            );
        }
        if self.threads == 0 {
            return refuse("the thread count must be at least 1".into());
        }
        if self.checkpoint_interval == 0 {
            return refuse("the checkpoint interval must be at least 1".into());
        }
        if self.gvt_interval == 0 {
            return refuse("the GVT interval must be at least 1".into());
        }
        if let Some(window) = self.window
            && !(window.is_finite() && window >= 0.0)
        {
            return refuse(format!(
                "the optimism window must be a non-negative number, got {window}"
            ));
        }
        if let Some(share) = self.give_way
            && !(0.0..=1.0).contains(&share)
        {
            return refuse(format!(
                "the share of time a thread may wait for a core must be between 0 and 1, got {share}"
            ));
        }
        if let Partition::Map(map) = &self.partition {
            if map.len() != n_lps {
                return refuse(format!(
                    "the partition map has {} entries for {n_lps} LPs",
                    map.len()
                ));
            }
            if let Some(bad) = map.iter().find(|&&worker| worker >= self.threads) {
                return refuse(format!(
                    "the partition map names worker {bad}, but there are {} threads",
                    self.threads
                ));
            }
        }
        Ok(())
    }
}
