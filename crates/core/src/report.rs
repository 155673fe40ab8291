//! What a run reports: counts, speed, the trace hash and the critical path.

use std::fmt;

use crate::time::{EventKey, LpId};

/// A 64-bit fingerprint of the committed events: every committed event's key and destination.
///
/// Two runs committed the same events exactly when (up to a 2⁻⁶⁴ chance) their hashes are
/// equal; this is how every kernel is proven equal to the sequential one.
///
/// # Implementation
///
/// Each event is hashed on its own (its key's fields and the destination folded into one word
/// by multiply-xor steps, then one SplitMix64 finaliser) and the event hashes are combined by
/// wrapping addition, then mixed with the count. Because event keys are unique, the set of committed events fixes their key order, so
/// this equals a hash "of the sequence in key order" in power while letting parallel kernels
/// commit in any order without sorting.
///
/// ```
/// use warpsim_core::{EventKey, LpId, Time, TraceHash};
/// let k1 = EventKey::new(Time::new(1.0).unwrap(), 0, LpId::new(0), Time::ZERO, 0);
/// let k2 = EventKey::new(Time::new(2.0).unwrap(), 0, LpId::new(1), Time::ZERO, 0);
/// let (mut a, mut b) = (TraceHash::default(), TraceHash::default());
/// a.add(&k1, LpId::new(1));
/// a.add(&k2, LpId::new(0));
/// b.add(&k2, LpId::new(0));
/// b.add(&k1, LpId::new(1));
/// assert_eq!(a, b);
/// assert_eq!(a.to_string().len(), 16);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TraceHash {
    sum: u64,
    count: u64,
}

const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One committed event's key and destination folded into a word, before the finaliser.
///
/// Each step multiplies by an odd constant (a bijection, which carries every bit of what came
/// before into the higher bits) and xors the next field in, so two events differ here unless
/// a later field's difference cancels exactly what the multiplications made of an earlier
/// one; the finaliser then spreads every bit over the word. It replaced five full finaliser
/// rounds, one per field (issue 16: 57 → about 20 instructions per committed event, on every
/// kernel alike; checkpoint format 2, because a resumed run adds to the saved sum).
#[inline(always)]
fn fold(key: &EventKey, dest: LpId, seed: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = key.time.as_f64().to_bits() ^ seed;
    h = h.wrapping_mul(K) ^ ((key.age as u64) << 32 | key.src.get() as u64);
    h = h.wrapping_mul(K) ^ key.sent.as_f64().to_bits();
    h = h.wrapping_mul(K) ^ key.id;
    h.wrapping_mul(K) ^ dest.get() as u64
}

impl TraceHash {
    /// Adds one committed event.
    #[inline]
    pub fn add(&mut self, key: &EventKey, dest: LpId) {
        let h = mix(fold(key, dest, 0x2545_f491_4f6c_dd1d));
        self.sum = self.sum.wrapping_add(h);
        self.count += 1;
    }

    /// Adds one committed event with its contents, `bytes` (its encoding; see
    /// [`RunConfig::content_hash`](crate::RunConfig::content_hash)).
    ///
    /// ```
    /// use warpsim_core::{EventKey, LpId, TraceHash};
    /// let key = EventKey::init(LpId::new(0));
    /// let (mut a, mut b) = (TraceHash::default(), TraceHash::default());
    /// a.add_content(&key, LpId::new(1), &[1, 2, 3]);
    /// b.add_content(&key, LpId::new(1), &[1, 2, 4]);
    /// assert_ne!(a, b);
    /// ```
    #[inline]
    pub fn add_content(&mut self, key: &EventKey, dest: LpId, bytes: &[u8]) {
        let mut h = mix(fold(key, dest, 0x5851_f42d_4c95_7f2d));
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            h = mix(h ^ u64::from_le_bytes(word));
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        h = mix(h ^ u64::from_le_bytes(tail) ^ ((bytes.len() as u64) << 56));
        self.sum = self.sum.wrapping_add(h);
        self.count += 1;
    }

    /// Merges the hash of another, disjoint set of committed events (from another thread).
    pub fn merge(&mut self, other: &TraceHash) {
        self.sum = self.sum.wrapping_add(other.sum);
        self.count += other.count;
    }

    /// Takes out the hash of a set of events merged (or added) earlier: a kernel that counted
    /// events as committed before it knew where the run would stop.
    ///
    /// ```
    /// use warpsim_core::{EventKey, LpId, TraceHash};
    /// let (first, second) = (EventKey::init(LpId::new(1)), EventKey::init(LpId::new(2)));
    /// let (mut both, mut one, mut other) = (TraceHash::default(), TraceHash::default(), TraceHash::default());
    /// both.add(&first, LpId::new(1));
    /// both.add(&second, LpId::new(2));
    /// one.add(&first, LpId::new(1));
    /// other.add(&second, LpId::new(2));
    /// both.remove(&other);
    /// assert_eq!(both, one);
    /// ```
    pub fn remove(&mut self, other: &TraceHash) {
        self.sum = self.sum.wrapping_sub(other.sum);
        self.count -= other.count;
    }

    /// The hash's internal state `(sum, count)`, for a kernel that carries partial hashes
    /// between processes; [`TraceHash::from_parts`] rebuilds it.
    pub fn parts(&self) -> (u64, u64) {
        (self.sum, self.count)
    }

    /// Rebuilds a hash from [`TraceHash::parts`].
    ///
    /// ```
    /// use warpsim_core::{EventKey, LpId, TraceHash};
    /// let mut hash = TraceHash::default();
    /// hash.add(&EventKey::init(LpId::new(1)), LpId::new(1));
    /// let (sum, count) = hash.parts();
    /// assert_eq!(TraceHash::from_parts(sum, count), hash);
    /// ```
    pub fn from_parts(sum: u64, count: u64) -> TraceHash {
        TraceHash { sum, count }
    }

    /// The 64-bit value.
    pub fn value(&self) -> u64 {
        mix(self.sum ^ mix(self.count))
    }
}

impl fmt::Display for TraceHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.value())
    }
}

impl fmt::Debug for TraceHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TraceHash({self})")
    }
}

impl serde::Serialize for TraceHash {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The next pending event was at or after the end time.
    EndTime,
    /// The event limit was reached.
    EventLimit,
    /// No events were left.
    Drained,
    /// An error stopped the run.
    Error,
    /// A [`StopHandle`](crate::StopHandle) (a signal, in the CLI) stopped the run early:
    /// what it committed is exact, the rest did not run.
    Interrupted,
    /// The run paused for a checkpoint ([`RunConfig::pause_at`](crate::RunConfig::pause_at)
    /// and friends) and goes on from it.
    Paused,
}

/// How the critical-path analysis prices one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[non_exhaustive]
pub enum CostModel {
    /// Every event costs 1: the path length is counted in events.
    Unit,
    /// Every event costs the nanoseconds its handler call took (`Instant` around exactly the
    /// call, so the handler's sends are included and the kernel's queue work between events
    /// is not). The sequential kernel runs the model three times and prices each event at
    /// the fastest of its three timings, so that preemptions and interrupts, which the
    /// longest chain would otherwise collect, drop out. Measured, so not bit-reproducible:
    /// `scripts/critical-path-stability.sh` measures how much it varies.
    #[cfg_attr(feature = "clap", value(name = "ns"))]
    Nanos,
}

/// The critical path of the committed events and the parallelism it allows.
///
/// Each event's critical time is `max(critical time of its LP's previous event, critical time
/// of the event that sent it) + cost`. The largest critical time is the critical path: no
/// parallel execution of this model (with these LPs) can finish in less, so
/// `total_cost / length` bounds the speedup of any kernel (TWSIM's analysis in the Sharks World
/// paper).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CriticalPath {
    /// How events were priced.
    pub cost_model: CostModel,
    /// Sum of all event costs.
    pub total_cost: f64,
    /// Length of the critical path, in the same unit.
    pub length: f64,
    /// `total_cost / length`: the largest speedup any parallel kernel can reach.
    pub parallelism: f64,
}

/// Statistics of one run. Kernels fill in what they know; the sequential kernel processes each
/// event once, so its `events_processed` equals `events_committed`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct Report {
    /// Which kernel ran: `sequential`, `timewarp`, …
    pub kernel: &'static str,
    /// The run's base seed.
    pub seed: u64,
    /// Number of LPs.
    pub lps: u32,
    /// Events committed (executed for good).
    pub events_committed: u64,
    /// Events executed, including those later rolled back.
    pub events_processed: u64,
    /// Simulation time reached: the configured end time if events remained past it, else the
    /// time of the last committed event.
    pub end_time: f64,
    /// Why the run stopped.
    pub stop_reason: StopReason,
    /// Wall-clock seconds spent in the kernel (initialisation included).
    pub wall_seconds: f64,
    /// `events_committed / wall_seconds`.
    pub events_per_second: f64,
    /// Fingerprint of the committed events (keys and destinations).
    pub trace_hash: TraceHash,
    /// Fingerprint of the committed events with their contents, when the run was asked for
    /// it ([`RunConfig::content_hash`](crate::RunConfig::content_hash)).
    pub content_hash: Option<TraceHash>,
    /// Largest number of events pending at once.
    pub peak_pending: usize,
    /// Events still pending when the run stopped.
    pub pending_at_end: usize,
    /// Of those, the events due at exactly the end time: the end is exclusive, so they did
    /// not run (an event meant to run at the end must come before it, or be done in
    /// [`LogicalProcess::finish`](crate::LogicalProcess::finish)).
    pub pending_at_end_time: usize,
    /// Critical-path analysis, when asked for.
    pub critical_path: Option<CriticalPath>,
}

impl Report {
    /// An empty report for a run of `kernel` over `lps` LPs.
    pub fn new(kernel: &'static str, seed: u64, lps: u32) -> Report {
        Report {
            kernel,
            seed,
            lps,
            events_committed: 0,
            events_processed: 0,
            end_time: 0.0,
            stop_reason: StopReason::Drained,
            wall_seconds: 0.0,
            events_per_second: 0.0,
            trace_hash: TraceHash::default(),
            content_hash: None,
            peak_pending: 0,
            pending_at_end: 0,
            pending_at_end_time: 0,
            critical_path: None,
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "kernel            {}", self.kernel)?;
        writeln!(f, "seed              {}", self.seed)?;
        writeln!(f, "LPs               {}", self.lps)?;
        writeln!(f, "events committed  {}", self.events_committed)?;
        if self.events_processed != self.events_committed {
            writeln!(f, "events processed  {}", self.events_processed)?;
        }
        writeln!(
            f,
            "end time          {} ({})",
            self.end_time,
            match self.stop_reason {
                StopReason::EndTime => "end time reached",
                StopReason::EventLimit => "event limit reached",
                StopReason::Drained => "no events left",
                StopReason::Error => "stopped by an error",
                StopReason::Interrupted => "interrupted",
                StopReason::Paused => "paused for a checkpoint",
            }
        )?;
        writeln!(f, "wall time         {:.3} s", self.wall_seconds)?;
        writeln!(
            f,
            "speed             {:.3} M events/s",
            self.events_per_second / 1e6
        )?;
        writeln!(f, "peak pending      {}", self.peak_pending)?;
        if self.pending_at_end_time > 0 {
            writeln!(
                f,
                "at end time       {} events due at exactly the end time did not run (the end is exclusive)",
                self.pending_at_end_time
            )?;
        }
        if let Some(cp) = &self.critical_path {
            let unit = match cp.cost_model {
                CostModel::Unit => "events",
                CostModel::Nanos => "ns",
            };
            writeln!(
                f,
                "critical path     {:.0} {unit} of {:.0} (available parallelism {:.2})",
                cp.length, cp.total_cost, cp.parallelism
            )?;
        }
        write!(f, "trace hash        {}", self.trace_hash)?;
        if let Some(content) = &self.content_hash {
            write!(f, "\ncontent hash      {content}")?;
        }
        Ok(())
    }
}
