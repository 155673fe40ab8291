//! Test models and helpers shared by the integration tests: every scenario runs on the
//! sequential kernel and on Time Warp in many configurations, and the committed traces and
//! outputs must be identical.

#![allow(dead_code, unreachable_pub)]

pub mod paced;

use std::fmt::Debug;

use rand::RngExt;
use warpsim_core::{
    Committed, Ctx, EventHandle, Kernel, LogicalProcess, LpId, Report, RunConfig, RunError,
    Sequential,
};
use warpsim_timewarp::{Cancellation, Partition, TimeWarp, TimeWarpStats};

/// Seeds per scenario: at least 100 in release, fewer in debug builds.
pub fn seeds() -> u64 {
    if cfg!(debug_assertions) { 12 } else { 100 }
}

pub type Outputs<M> = Vec<Committed<<M as LogicalProcess>::Output>>;

pub fn sequential<M: LogicalProcess>(
    config: RunConfig,
    lps: Vec<M>,
) -> (Result<Report, RunError>, Outputs<M>) {
    let mut outputs = Vec::new();
    let result = Sequential::new(config).run(lps, &mut outputs);
    (result, outputs)
}

pub fn timewarp<M: LogicalProcess>(
    kernel: &TimeWarp,
    lps: Vec<M>,
) -> (Result<Report, RunError>, Outputs<M>, TimeWarpStats) {
    let mut outputs = Vec::new();
    let (result, stats) = kernel.run_with_stats(lps, &mut outputs);
    (result, outputs, stats)
}

/// The Time Warp configurations every equivalence test runs: 1–4 threads, both cancellation
/// modes, state saves every event, every third event and at the adaptive interval, plus a
/// tiny optimism window, a tiny memory budget and threads that give way at once. `seed` picks the partition and GVT interval, to vary them cheaply.
pub fn kernels(config: &RunConfig, seed: u64, memory: u64) -> Vec<TimeWarp> {
    let mut kernels = Vec::new();
    let partition = if seed.is_multiple_of(2) {
        Partition::Block
    } else {
        Partition::RoundRobin
    };
    let gvt_interval = [7, 64, 512][(seed % 3) as usize];
    for threads in 1..=4 {
        for cancellation in [Cancellation::Aggressive, Cancellation::Lazy] {
            for k in [Some(1), Some(3), None] {
                let kernel = TimeWarp::new(config.clone())
                    .threads(threads)
                    .partition(partition.clone())
                    .cancellation(cancellation)
                    .gvt_interval(gvt_interval);
                // `None`: the adaptive interval, the default. With a fixed interval of 3,
                // no safe events: every event takes the optimistic path, as it did before
                // safe events (on one thread, the default runs almost all of them safely).
                kernels.push(match k {
                    Some(3) => kernel.checkpoint_interval(3).safe_events(false),
                    Some(k) => kernel.checkpoint_interval(k),
                    None => kernel,
                });
            }
        }
    }
    kernels.push(
        TimeWarp::new(config.clone())
            .threads(3)
            .window(Some(0.05))
            .cancellation(Cancellation::Aggressive),
    );
    kernels.push(
        TimeWarp::new(config.clone())
            .threads(2)
            .checkpoint_interval(2)
            .memory(Some(memory)),
    );
    // Threads that give way at once (`TimeWarp::give_way`): all of one worker's LPs move at
    // the first GVT, and more every 5 ms, until one worker holds them all.
    kernels.push(
        TimeWarp::new(config.clone())
            .threads(3)
            .gvt_interval(gvt_interval)
            .give_way(Some(0.0)),
    );
    kernels
}

/// Runs `make()` on the sequential kernel and on every kernel of [`kernels`], and checks
/// that the trace hashes, counts and outputs agree. Returns the summed statistics' antimessage
/// and rollback counts, so tests can check the optimism was exercised.
pub fn check_equivalent<M, F>(name: &str, seed: u64, end: f64, memory: u64, make: F) -> (u64, u64)
where
    M: LogicalProcess,
    M::Output: PartialEq + Debug,
    F: Fn() -> Vec<M>,
{
    // The content hash too: the same events must have been handed the same contents.
    let config = RunConfig::new(seed).end_time(end).content_hash(true);
    check_equivalent_config(name, config, memory, make)
}

/// [`check_equivalent`] with the run's whole configuration (its seed picks the kernels).
pub fn check_equivalent_config<M, F>(
    name: &str,
    config: RunConfig,
    memory: u64,
    make: F,
) -> (u64, u64)
where
    M: LogicalProcess,
    M::Output: PartialEq + Debug,
    F: Fn() -> Vec<M>,
{
    let seed = config.seed;
    let (expected, expected_outputs) = sequential(config.clone(), make());
    let expected = expected.unwrap_or_else(|error| panic!("{name} seed {seed}: {error}"));
    assert!(expected.content_hash.is_some());
    let mut rollbacks = 0;
    let mut antimessages = 0;
    for kernel in kernels(&config, seed, memory) {
        let (result, outputs, stats) = timewarp(&kernel, make());
        let report =
            result.unwrap_or_else(|error| panic!("{name} seed {seed} {kernel:?}: {error}"));
        assert_eq!(
            report.trace_hash, expected.trace_hash,
            "{name} seed {seed}: trace differs on {kernel:?}\n{stats}"
        );
        assert_eq!(
            report.content_hash, expected.content_hash,
            "{name} seed {seed}: contents differ on {kernel:?}"
        );
        assert_eq!(
            report.events_committed, expected.events_committed,
            "{name} seed {seed} {kernel:?}"
        );
        assert_eq!(
            report.pending_at_end, expected.pending_at_end,
            "{name} seed {seed} {kernel:?}"
        );
        assert_eq!(
            report.pending_at_end_time, expected.pending_at_end_time,
            "{name} seed {seed} {kernel:?}"
        );
        assert_eq!(
            report.stop_reason, expected.stop_reason,
            "{name} seed {seed} {kernel:?}"
        );
        assert_eq!(
            report.end_time, expected.end_time,
            "{name} seed {seed} {kernel:?}"
        );
        assert!(
            outputs == expected_outputs,
            "{name} seed {seed}: outputs differ on {kernel:?}: {} vs {} outputs",
            outputs.len(),
            expected_outputs.len()
        );
        assert_eq!(stats.committed, report.events_committed);
        assert!(stats.processed >= stats.committed);
        rollbacks += stats.primary_rollbacks + stats.secondary_rollbacks;
        antimessages += stats.antimessages;
    }
    (rollbacks, antimessages)
}

/// Random sends, cancels and reschedules, with outputs: every cancel and reschedule reports
/// its result, and some events emit two outputs (their order within the event must hold).
#[derive(Clone, Default, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
pub struct Chaos {
    pending: Vec<EventHandle>,
    handled: u64,
    /// State mixed by every event (empty by default): with it, a state big enough that Time
    /// Warp keeps its last save across GVTs to coast from (see `Chaos::large`).
    ballast: Vec<u64>,
}

impl Chaos {
    /// A Chaos LP with two kilobytes of state that every event changes.
    pub fn large() -> Chaos {
        Chaos {
            ballast: vec![0; 256],
            ..Chaos::default()
        }
    }
}

impl LogicalProcess for Chaos {
    type Event = u32;
    type Output = (u8, bool, u64);
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        for _ in 0..3 {
            let delay = ctx.rng().random::<f64>();
            let handle = ctx.schedule(delay, 0);
            self.pending.push(handle);
        }
    }
    fn heap_bytes(&self) -> usize {
        self.ballast.capacity() * size_of::<u64>()
    }
    fn on_event(&mut self, tag: u32, ctx: &mut Ctx<Self>) {
        self.handled += 1;
        if !self.ballast.is_empty() {
            let at = (self.handled % self.ballast.len() as u64) as usize;
            self.ballast[at] = self.ballast[at]
                .wrapping_mul(31)
                .wrapping_add(u64::from(tag));
            if self.handled.is_multiple_of(4) {
                let sum = self
                    .ballast
                    .iter()
                    .fold(0u64, |sum, &x| sum.wrapping_add(x));
                ctx.emit((5, true, sum));
            }
        }
        let n = ctx.n_lps();
        let roll: f64 = ctx.rng().random();
        let mut sends = 1;
        if roll < 0.25 && !self.pending.is_empty() {
            let index = ctx.rng().random_range(0..self.pending.len());
            let handle = self.pending.swap_remove(index);
            let cancelled = ctx.cancel(handle);
            ctx.emit((0, cancelled, handle.key().id));
            if cancelled {
                sends = 2;
            }
        } else if roll < 0.5 && !self.pending.is_empty() {
            let index = ctx.rng().random_range(0..self.pending.len());
            let delay = ctx.rng().random::<f64>() * 2.0;
            let moved = ctx.reschedule(&mut self.pending[index], delay);
            ctx.emit((1, moved, self.pending[index].key().id));
            if tag.is_multiple_of(3) {
                // Move it again in the same handler.
                let again = ctx.reschedule(&mut self.pending[index], delay * 0.5);
                ctx.emit((2, again, u64::from(tag)));
            }
        }
        if roll > 0.9 {
            ctx.emit((3, true, self.handled));
        }
        for _ in 0..sends {
            let to = LpId::new(ctx.rng().random_range(0..n));
            let delay = if ctx.rng().random::<f64>() < 0.15 {
                0.0
            } else {
                ctx.rng().random::<f64>()
            };
            let handle = ctx.send(to, delay, tag.wrapping_add(1));
            if self.pending.len() < 8 {
                self.pending.push(handle);
            } else if ctx.rng().random::<f64>() < 0.3 {
                // Cancel what was just sent, in the same handler.
                let cancelled = ctx.cancel(handle);
                ctx.emit((4, cancelled, handle.key().id));
                let replacement = ctx.send(to, 0.5, tag);
                let _ = replacement;
            }
        }
    }
}

/// Zero-delay cascades across LPs: every event at a whole time sends a chain of zero-delay
/// events through random LPs, each emitting its position.
#[derive(Clone, Default)]
pub struct Cascade;

impl LogicalProcess for Cascade {
    type Event = u32;
    type Output = (u32, u32);
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        ctx.schedule(1.0, 0);
    }
    fn on_event(&mut self, depth: u32, ctx: &mut Ctx<Self>) {
        ctx.emit((ctx.me().get(), depth));
        let n = ctx.n_lps();
        if depth < 4 {
            let to = LpId::new(ctx.rng().random_range(0..n));
            ctx.send(to, 0.0, depth + 1);
        }
        if depth == 0 {
            ctx.schedule(1.0, 0);
        }
    }
}

/// The core tests' cancel/reschedule scenario with hand-checked answers.
#[derive(Clone, Default)]
pub struct Canceller {
    handles: Vec<EventHandle>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Cmd {
    Fire(u32),
    Act,
}

impl LogicalProcess for Canceller {
    type Event = Cmd;
    type Output = String;
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        if ctx.me().get() == 0 {
            for i in 0..4 {
                let handle = ctx.send(LpId::new(1), 10.0 + f64::from(i), Cmd::Fire(i));
                self.handles.push(handle);
            }
            ctx.schedule(5.0, Cmd::Act);
            ctx.schedule(12.5, Cmd::Act);
        }
    }
    fn on_event(&mut self, cmd: Cmd, ctx: &mut Ctx<Self>) {
        match cmd {
            Cmd::Fire(i) => ctx.emit(format!("fire {i} at {}", ctx.now())),
            Cmd::Act if ctx.now().as_f64() == 5.0 => {
                let first = ctx.cancel(self.handles[0]);
                let again = ctx.cancel(self.handles[0]);
                let mut moved = self.handles[1];
                let rescheduled = ctx.reschedule(&mut moved, 20.0);
                self.handles[1] = moved;
                let mut early = self.handles[3];
                let earlier = ctx.reschedule(&mut early, 1.0);
                self.handles[3] = early;
                ctx.emit(format!("{first} {again} {rescheduled} {earlier}"));
            }
            Cmd::Act => {
                let ran = ctx.cancel(self.handles[2]);
                let late = ctx.cancel(self.handles[1]);
                let moved_after_cancel = ctx.reschedule(&mut self.handles[1].clone(), 1.0);
                ctx.emit(format!("{ran} {late} {moved_after_cancel}"));
            }
        }
    }
}

/// Each LP passes a counter around a ring until it reaches zero: the run drains.
#[derive(Clone)]
pub struct Countdown {
    pub left: u32,
}

impl LogicalProcess for Countdown {
    type Event = u32;
    type Output = (u32, u32);
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        let left = self.left;
        ctx.schedule(ctx.me().get() as f64 * 0.1, left);
    }
    fn on_event(&mut self, left: u32, ctx: &mut Ctx<Self>) {
        if left.is_multiple_of(7) {
            ctx.emit((ctx.me().get(), left));
        }
        if left > 0 {
            let n = ctx.n_lps();
            let to = LpId::new(ctx.rng().random_range(0..n));
            let delay = ctx.rng().random::<f64>();
            ctx.send(to, delay, left - 1);
        }
    }
}

/// Runs `make()` as a distributed run over `ranks` loopback ranks; returns rank 0's result,
/// outputs and statistics, after checking every rank reached the same verdict.
pub fn cluster<M>(
    kernel: &TimeWarp,
    ranks: usize,
    make: &(dyn Fn() -> Vec<M> + Sync),
) -> (Result<Report, RunError>, Outputs<M>, TimeWarpStats)
where
    M: LogicalProcess,
    M::Event: serde::Serialize + serde::de::DeserializeOwned,
    M::Output: serde::Serialize + serde::de::DeserializeOwned,
{
    use std::time::Duration;
    use warpsim_timewarp::cluster::loopback;
    let transports = loopback(ranks, Duration::from_secs(120));
    let mut results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = transports
            .into_iter()
            .map(|mut transport| {
                scope.spawn(move || {
                    let mut outputs = Vec::new();
                    let (result, stats) =
                        kernel.run_cluster(make(), &mut outputs, &mut transport, 42);
                    (result, outputs, stats)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let first = results.remove(0);
    for (rank, (result, outputs, _)) in results.iter().enumerate() {
        assert!(outputs.is_empty(), "rank {} delivered outputs", rank + 1);
        assert_eq!(
            result.as_ref().err().map(|e| e.error.to_string()),
            first.0.as_ref().err().map(|e| e.error.to_string()),
            "rank {} reached another verdict",
            rank + 1
        );
    }
    first
}

/// Like [`check_equivalent`], over loopback clusters of 1–3 ranks × 1–2 threads.
pub fn check_cluster_equivalent<M, F>(name: &str, seed: u64, end: f64, make: F) -> u64
where
    M: LogicalProcess,
    M::Output: PartialEq + Debug + serde::Serialize + serde::de::DeserializeOwned,
    F: Fn() -> Vec<M> + Sync,
{
    let config = RunConfig::new(seed).end_time(end).content_hash(true);
    let (expected, expected_outputs) = sequential(config.clone(), make());
    let expected = expected.unwrap_or_else(|error| panic!("{name} seed {seed}: {error}"));
    let mut rollbacks = 0;
    for ranks in 1..=3 {
        for threads in 1..=2 {
            let cancellation = if (seed + ranks as u64 + threads as u64).is_multiple_of(2) {
                Cancellation::Lazy
            } else {
                Cancellation::Aggressive
            };
            let kernel = TimeWarp::new(config.clone())
                .threads(threads)
                .cancellation(cancellation)
                .checkpoint_interval(1 + (seed % 3) as u32)
                .gvt_interval([7, 64, 512][(seed % 3) as usize]);
            let (result, outputs, stats) = cluster(&kernel, ranks, &make);

            let what =
                format!("{name} seed {seed}, {ranks} ranks × {threads} threads, {cancellation}");
            let report = result.unwrap_or_else(|error| panic!("{what}: {error}"));
            assert_eq!(report.trace_hash, expected.trace_hash, "{what}\n{stats}");
            assert_eq!(report.content_hash, expected.content_hash, "{what}");
            assert_eq!(report.events_committed, expected.events_committed, "{what}");
            assert_eq!(report.pending_at_end, expected.pending_at_end, "{what}");
            assert_eq!(
                report.pending_at_end_time, expected.pending_at_end_time,
                "{what}"
            );
            assert_eq!(report.stop_reason, expected.stop_reason, "{what}");
            assert_eq!(report.end_time, expected.end_time, "{what}");
            assert!(
                outputs == expected_outputs,
                "{what}: outputs differ ({} vs {})",
                outputs.len(),
                expected_outputs.len()
            );
            // Never more workers than LPs: each rank runs at most its share.
            let per_rank = threads.min((expected.lps as usize / ranks).max(1));
            assert_eq!(stats.per_thread.len(), ranks * per_rank, "{what}");
            rollbacks += stats.primary_rollbacks + stats.secondary_rollbacks;
        }
    }
    rollbacks
}

/// Ticks once per time unit on every LP and pings a neighbour; at time 3 LP `bad` misbehaves
/// (a bad delay, or a panic).
#[derive(Clone)]
pub struct Misbehave {
    pub bad: u32,
    pub panic: bool,
}

impl LogicalProcess for Misbehave {
    type Event = u32;
    type Output = (u32, f64);
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        ctx.schedule(1.0, 0);
    }
    fn on_event(&mut self, hop: u32, ctx: &mut Ctx<Self>) {
        let me = ctx.me().get();
        ctx.emit((me, ctx.now().as_f64()));
        if me == self.bad && ctx.now().as_f64() == 3.0 && hop == 0 {
            if self.panic {
                panic!("model bug at {}", ctx.now());
            }
            ctx.schedule(f64::NAN, 0);
            return;
        }
        if hop == 0 {
            ctx.schedule(1.0, 0);
            let next = LpId::new((me + 1) % ctx.n_lps());
            ctx.send(next, 0.25, 1);
        }
    }
}
