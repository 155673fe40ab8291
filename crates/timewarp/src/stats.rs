//! What the optimistic machinery did: the statistics beside the common [`Report`].
//!
//! [`Report`]: warpsim_core::Report

use std::fmt;

use crate::config::Cancellation;

/// One worker thread's share of the work (the balance between threads).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct ThreadStats {
    /// LPs the thread owned.
    pub lps: usize,
    /// Events it committed.
    pub committed: u64,
    /// Events it executed, including those undone later.
    pub processed: u64,
    /// Events it undid.
    pub rolled_back: u64,
    /// Wall seconds it spent waiting for the other threads' promises before running an event
    /// safely (see [`TimeWarp::safe_events`](crate::TimeWarp::safe_events)): the price of
    /// keeping step, which a thread that runs ahead optimistically pays in rollbacks instead.
    pub waited_seconds: f64,
}

/// Statistics of a Time Warp run.
///
/// *Primary* rollbacks are caused by a straggler (a new event with a key below the LP's last
/// processed one); *secondary* rollbacks by anything that touches an already-processed event:
/// an antimessage, a withdrawal (model `cancel`), a restore or a move (model `reschedule`).
///
/// ```
/// use warpsim_timewarp::TimeWarpStats;
/// let stats = TimeWarpStats::default();
/// assert_eq!(stats.efficiency, 0.0);
/// assert!(stats.to_string().contains("rollbacks"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct TimeWarpStats {
    /// Worker threads (per rank in a distributed run).
    pub threads: usize,
    /// Processes of a distributed run (ranks); 1 on threads alone.
    pub ranks: usize,
    /// Cancellation mode.
    pub cancellation: Cancellation,
    /// A state save every this many events, or, with `checkpoint_auto`, the first interval
    /// before each worker adapts its own.
    pub checkpoint_interval: u32,
    /// Whether the state-save interval adapted (see
    /// [`TimeWarp::checkpoint_interval`](crate::TimeWarp::checkpoint_interval)).
    pub checkpoint_auto: bool,
    /// State saves made.
    pub saves: u64,
    /// Events committed.
    pub committed: u64,
    /// Events executed, including those undone (coasting re-runs not counted).
    pub processed: u64,
    /// Events undone by rollbacks.
    pub rolled_back: u64,
    /// `committed / processed`.
    pub efficiency: f64,
    /// Rollbacks caused by stragglers.
    pub primary_rollbacks: u64,
    /// Rollbacks caused by antimessages, withdrawals, restores and moves.
    pub secondary_rollbacks: u64,
    /// Of the secondary rollbacks, those caused by a model's `cancel` or `reschedule` (or
    /// their undoing) reaching an event its receiver had processed. A timeout that an LP
    /// keeps pushing back on itself never causes one: the moved event is pending.
    pub retraction_rollbacks: u64,
    /// Events re-run only to rebuild state after a rollback (checkpoint interval > 1).
    pub coasted: u64,
    /// Antimessages sent.
    pub antimessages: u64,
    /// Messages that lazy cancellation kept because re-execution sent them again (each is an
    /// antimessage and a message not sent).
    pub lazy_hits: u64,
    /// Retraction messages sent for model `cancel` and `reschedule`, and their undoing.
    pub retractions: u64,
    /// Antimessages that arrived before their message (kept until it came).
    pub early_antimessages: u64,
    /// GVT rounds completed.
    pub gvt_rounds: u64,
    /// Times a worker held back an event because of the optimism window.
    pub window_stalls: u64,
    /// Times a worker held back an event because of the memory budget.
    pub memory_stalls: u64,
    /// Largest estimated memory held by the kernel (the sum of each thread's peak, so an
    /// upper bound), in bytes.
    pub peak_memory_bytes: u64,
    /// Per-thread figures.
    pub per_thread: Vec<ThreadStats>,
    /// Migrations: load balancing (each moves LPs from the busiest worker to the idlest) and
    /// threads that gave way (each moves all of one worker's LPs; `TimeWarp::give_way`).
    pub migrations: u64,
    /// LPs moved by them.
    pub lps_migrated: u64,
    /// Events run as safe events: below every key another worker could still send, so run
    /// without state saves, records or effect logs (see
    /// [`TimeWarp::safe_events`](crate::TimeWarp::safe_events)).
    pub safe_events: u64,
}

impl fmt::Display for TimeWarpStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "time warp         {} threads, {} cancellation, ",
            self.threads, self.cancellation
        )?;
        if self.checkpoint_auto {
            writeln!(
                f,
                "adaptive state saves (one per {:.1} events)",
                self.processed as f64 / self.saves.max(1) as f64
            )?;
        } else {
            writeln!(f, "checkpoint every {}", self.checkpoint_interval)?;
        }
        writeln!(
            f,
            "processed         {} (rolled back {}, coasted {}, efficiency {:.1}%; safe {})",
            self.processed,
            self.rolled_back,
            self.coasted,
            self.efficiency * 100.0,
            self.safe_events
        )?;
        writeln!(
            f,
            "rollbacks         {} primary, {} secondary ({} by cancels and reschedules)",
            self.primary_rollbacks, self.secondary_rollbacks, self.retraction_rollbacks
        )?;
        writeln!(
            f,
            "antimessages      {} (lazy hits {}), retractions {}",
            self.antimessages, self.lazy_hits, self.retractions
        )?;
        writeln!(
            f,
            "GVT rounds        {} (stalls: window {}, memory {})",
            self.gvt_rounds, self.window_stalls, self.memory_stalls
        )?;
        writeln!(
            f,
            "peak memory       {:.1} MiB (estimate)",
            self.peak_memory_bytes as f64 / (1024.0 * 1024.0)
        )?;
        if self.migrations > 0 {
            // Load balancing, or threads that gave way (`TimeWarp::give_way`).
            writeln!(
                f,
                "migrations        {} ({} LPs moved)",
                self.migrations, self.lps_migrated
            )?;
        }
        let balance: Vec<String> = self
            .per_thread
            .iter()
            .map(|thread| format!("{}/{}", thread.committed, thread.processed))
            .collect();
        write!(
            f,
            "per thread        committed/processed {}",
            balance.join(" ")
        )?;
        if self
            .per_thread
            .iter()
            .any(|thread| thread.waited_seconds > 0.0)
        {
            let waited: Vec<String> = self
                .per_thread
                .iter()
                .map(|thread| format!("{:.3}", thread.waited_seconds))
                .collect();
            write!(f, "\nwaited for peers  {} s", waited.join(" "))?;
        }
        Ok(())
    }
}
