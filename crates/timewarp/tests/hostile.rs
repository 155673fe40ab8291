//! Hostile models: code the kernel calls outside a handler panics (`Clone` for state saves,
//! `PartialEq` for lazy cancellation, the output sink), events too large for a default
//! thread stack, handlers that stall only in speculative states. Every run must end, promptly,
//! with the sequential kernel's result or a typed error — never a hang, never an abort.
//!
//! Each run happens on a thread of its own, watched with a generous timeout: a hang fails the
//! test instead of blocking the suite (this is a hang detector, not a speed limit).

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::sequential;
use warpsim_core::{
    Committed, Ctx, Discard, Kernel, LogicalProcess, LpId, OutputSink, Report, RunConfig, RunError,
    Sequential, SimError,
};
use warpsim_timewarp::{Cancellation, Partition, TimeWarp, Warning};

/// Longer than any of these runs takes on a loaded machine, by far.
const HANG: Duration = Duration::from_secs(120);

/// A main thread's stack on Linux.
const MAIN_STACK: usize = 8 << 20;

/// Runs `run` on a thread with a main thread's stack and fails the test if it has not
/// returned after [`HANG`].
fn within<R: Send + 'static>(what: &str, run: impl FnOnce() -> R + Send + 'static) -> R {
    within_stack(what, MAIN_STACK, run)
}

/// How much more stack an unoptimised build needs than an optimised one for the same calls:
/// without optimisation every move of a large event is a copy of its own on the stack, so
/// the large-event tests overflowed a main thread's 8 MiB in `cargo test` without
/// `--release` (the sequential kernel's as much as Time Warp's).
const DEBUG_STACK_FACTOR: usize = if cfg!(debug_assertions) { 8 } else { 1 };

/// [`within`], on a stack of `stack` bytes (times [`DEBUG_STACK_FACTOR`]).
fn within_stack<R: Send + 'static>(
    what: &str,
    stack: usize,
    run: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(stack * DEBUG_STACK_FACTOR)
        .spawn(move || {
            let _ = tx.send(run());
        })
        .expect("spawn a test thread");
    rx.recv_timeout(HANG)
        .unwrap_or_else(|_| panic!("{what}: no result after {HANG:?} (hung, or panicked)"))
}

/// A ring of LPs passing tokens, which rolls back on more than one thread. `Clone` panics
/// once an LP has handled `clone_bomb` events (never, by default), and the event type's
/// `PartialEq` panics when `bomb` is set.
#[derive(Default)]
struct Ring {
    handled: u32,
    clone_bomb: Option<u32>,
}

impl Clone for Ring {
    fn clone(&self) -> Ring {
        if self.clone_bomb.is_some_and(|bomb| self.handled >= bomb) {
            panic!("clone bomb after {} events", self.handled);
        }
        Ring {
            handled: self.handled,
            clone_bomb: self.clone_bomb,
        }
    }
}

#[derive(Clone, Debug)]
struct Token {
    hops: u32,
    /// `Serialize` panics on this token (and `PartialEq` always does: no kernel may call it).
    bomb: bool,
}

impl PartialEq for Token {
    fn eq(&self, _: &Token) -> bool {
        panic!("PartialEq bomb: kernels must never compare events with it");
    }
}

impl serde::Serialize for Token {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.bomb {
            panic!("Serialize bomb");
        }
        serializer.serialize_u32(self.hops)
    }
}

impl<'de> serde::Deserialize<'de> for Token {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let hops = u32::deserialize(deserializer)?;
        Ok(Token { hops, bomb: false })
    }
}

impl LogicalProcess for Ring {
    type Event = Token;
    type Output = u32;
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        for _ in 0..4 {
            let delay = ctx.rng().random_range(0.1..1.0);
            let bomb = false;
            ctx.schedule(delay, Token { hops: 0, bomb });
        }
    }
    fn on_event(&mut self, token: Token, ctx: &mut Ctx<Self>) {
        self.handled += 1;
        if token.hops.is_multiple_of(16) {
            ctx.emit(token.hops);
        }
        let n_lps = ctx.n_lps();
        let next = LpId::new(ctx.rng().random_range(0..n_lps));
        let delay = ctx.rng().random_range(0.0..1.0);
        ctx.send(
            next,
            delay,
            Token {
                hops: token.hops + 1,
                ..token
            },
        );
    }
}

use rand::RngExt;

fn ring(n: usize, clone_bomb: Option<u32>) -> Vec<Ring> {
    (0..n)
        .map(|_| Ring {
            handled: 0,
            clone_bomb,
        })
        .collect()
}

fn kernel(threads: usize) -> TimeWarp {
    kernel_with(RunConfig::new(5).end_time(40.0), threads)
}

/// A kernel that clones every LP's state before every event: no safe events, which save
/// nothing (a model whose `Clone` panics fails on Time Warp exactly when the kernel copies
/// it, which safe events would make depend on the threads' timing).
fn saving_kernel(threads: usize) -> TimeWarp {
    kernel(threads).safe_events(false)
}

fn kernel_with(config: RunConfig, threads: usize) -> TimeWarp {
    TimeWarp::new(config)
        .threads(threads)
        .partition(Partition::RoundRobin)
        .checkpoint_interval(1)
}

#[test]
fn a_clone_that_panics_ends_the_run_with_a_typed_error() {
    // Every LP's first state save panics: the error is real once GVT reaches the first
    // event, and it is the same on every thread count.
    for threads in [1, 2, 4] {
        let error = within("clone bomb", move || {
            saving_kernel(threads)
                .run(ring(16, Some(0)), &mut Discard)
                .unwrap_err()
        });
        match &error.error {
            SimError::ModelPanic { message, .. } => {
                assert!(message.contains("Clone"), "{threads} threads: {message}");
                assert!(
                    message.contains("clone bomb"),
                    "{threads} threads: {message}"
                );
            }
            other => panic!("{threads} threads: {other:?}"),
        }
    }
}

#[test]
fn a_clone_that_panics_late_reports_the_first_failing_save_on_every_thread_count() {
    // Saves panic once an LP has handled 5 events. A state save before an event is a real
    // state when that event commits, so the first such event in key order is the error, on
    // every thread count (state saves every event, so every event saves).
    let mut seen: Option<String> = None;
    for threads in [1, 2, 4] {
        let error = within("late clone bomb", move || {
            saving_kernel(threads)
                .run(ring(16, Some(5)), &mut Discard)
                .unwrap_err()
        });
        let text = error.to_string();
        assert!(text.contains("clone bomb after 5"), "{text}");
        match &seen {
            Some(first) => assert_eq!(&text, first, "{threads} threads"),
            None => seen = Some(text),
        }
    }
}

#[test]
fn a_serialize_that_panics_never_hangs_nor_changes_the_run() {
    // Lazy cancellation compares a re-sent event's encoding with the one sent before, and
    // the content hash encodes every committed event: a `Serialize` that panics counts as an
    // encoding that fails — never equal to anything (an antimessage and a fresh send, as in
    // aggressive mode), hashed as empty on every kernel. The run matches the sequential
    // kernel, contents fingerprint included; and `PartialEq`, which panics too, is never
    // called.
    let config = RunConfig::new(5).end_time(40.0).content_hash(true);
    let (expected, expected_outputs) = sequential(config.clone(), eq_ring(16));
    let expected = expected.unwrap();
    let mut compared = false;
    for threads in [1, 2, 4] {
        for _ in 0..3 {
            let config = config.clone();
            let (result, outputs, stats) = within("Serialize bomb", move || {
                let mut outputs = Vec::new();
                let (result, stats) = kernel_with(config, threads)
                    .cancellation(Cancellation::Lazy)
                    .run_with_stats(eq_ring(16), &mut outputs);
                (result, outputs, stats)
            });
            let report = result.unwrap();
            assert_eq!(report.trace_hash, expected.trace_hash);
            assert_eq!(report.content_hash, expected.content_hash);
            assert_eq!(outputs, expected_outputs);
            compared |= stats.rolled_back > 0;
        }
    }
    // Rollbacks happened, so re-sent events were compared (not only runs that never did).
    assert!(compared);
}

/// The ring, with tokens whose `Serialize` (and `PartialEq`) panic.
#[derive(Clone, Default)]
struct EqRing(Ring);

impl LogicalProcess for EqRing {
    type Event = Token;
    type Output = u32;
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        for _ in 0..4 {
            let delay = ctx.rng().random_range(0.1..1.0);
            ctx.schedule(
                delay,
                Token {
                    hops: 0,
                    bomb: true,
                },
            );
        }
    }
    fn on_event(&mut self, token: Token, ctx: &mut Ctx<Self>) {
        self.0.handled += 1;
        if token.hops.is_multiple_of(16) {
            ctx.emit(token.hops);
        }
        let n_lps = ctx.n_lps();
        let next = LpId::new(ctx.rng().random_range(0..n_lps));
        let delay = ctx.rng().random_range(0.0..1.0);
        ctx.send(
            next,
            delay,
            Token {
                hops: token.hops + 1,
                ..token
            },
        );
    }
}

fn eq_ring(n: usize) -> Vec<EqRing> {
    (0..n).map(|_| EqRing(Ring::default())).collect()
}

/// An output sink that panics at its `n`-th output.
struct BrokenSink {
    left: usize,
    delivered: Arc<AtomicUsize>,
}

impl<O> OutputSink<O> for BrokenSink {
    fn deliver(&mut self, _: Committed<O>) {
        if self.left == 0 {
            panic!("the disk is on fire");
        }
        self.left -= 1;
        self.delivered.fetch_add(1, Ordering::Relaxed);
    }
}

fn expect_sink_error(what: &str, result: Result<Report, RunError>, delivered: usize) {
    let error = result.expect_err(what);
    match &error.error {
        SimError::SinkPanic { message, .. } => {
            assert!(message.contains("the disk is on fire"), "{what}: {message}")
        }
        other => panic!("{what}: {other:?}"),
    }
    assert_eq!(delivered, 10, "{what}: outputs before the panic");
}

#[test]
fn a_sink_that_panics_ends_the_run_with_a_typed_error_on_every_kernel() {
    let delivered = Arc::new(AtomicUsize::new(0));
    let count = delivered.clone();
    let result = within("sequential sink", move || {
        let mut sink = BrokenSink {
            left: 10,
            delivered: count,
        };
        Sequential::new(RunConfig::new(5).end_time(40.0)).run(ring(16, None), &mut sink)
    });
    expect_sink_error("sequential", result, delivered.load(Ordering::Relaxed));
    for threads in [1, 2, 4] {
        let delivered = Arc::new(AtomicUsize::new(0));
        let count = delivered.clone();
        let result = within("timewarp sink", move || {
            let mut sink = BrokenSink {
                left: 10,
                delivered: count,
            };
            kernel(threads).run(ring(16, None), &mut sink)
        });
        expect_sink_error(
            &format!("{threads} threads"),
            result,
            delivered.load(Ordering::Relaxed),
        );
    }
}

/// An LP whose events carry `N` words by value.
#[derive(Clone, Default)]
struct Heavy<const N: usize> {
    sum: u64,
}

#[derive(Clone, PartialEq, Debug)]
struct Payload<const N: usize>([u64; N]);

// By hand: serde's derive does not cover arrays this long.
impl<const N: usize> serde::Serialize for Payload<N> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter())
    }
}

impl<'de, const N: usize> serde::Deserialize<'de> for Payload<N> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let words = Vec::<u64>::deserialize(deserializer)?;
        let words: [u64; N] = words
            .try_into()
            .map_err(|_| serde::de::Error::custom("wrong number of words"))?;
        Ok(Payload(words))
    }
}

impl<const N: usize> LogicalProcess for Heavy<N> {
    type Event = Payload<N>;
    type Output = u64;
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        let first = ctx.me().get() as u64;
        ctx.schedule(1.0, Payload([first; N]));
    }
    fn on_event(&mut self, event: Payload<N>, ctx: &mut Ctx<Self>) {
        self.sum = self.sum.wrapping_add(event.0[N - 1]);
        ctx.emit(self.sum);
        let next = LpId::new((ctx.me().get() + 1) % ctx.n_lps());
        let mut words = event.0;
        words[N - 1] = words[N - 1].wrapping_mul(31).wrapping_add(7);
        ctx.send(next, 1.0, Payload(words));
    }
}

/// Events of `N` words run on Time Warp (1, 2 and 4 threads, both cancellations) wherever
/// they run on the sequential kernel: with the caller on a stack of `stack` bytes, as the
/// sequential run was.
fn large_events_run_as_sequentially<const N: usize>(stack: usize) {
    let config = RunConfig::new(3).end_time(12.0);
    let lps = || vec![Heavy::<N>::default(); 6];
    let (expected, expected_outputs) = {
        let config = config.clone();
        within_stack("sequential, large events", stack, move || {
            sequential(config, lps())
        })
    };
    let expected = expected.unwrap();
    for threads in [1, 2, 4] {
        for cancellation in [Cancellation::Aggressive, Cancellation::Lazy] {
            let config = config.clone();
            let (result, outputs) = within_stack("timewarp, large events", stack, move || {
                let mut outputs = Vec::new();
                let result = TimeWarp::new(config)
                    .threads(threads)
                    .cancellation(cancellation)
                    .run(lps(), &mut outputs);
                (result, outputs)
            });
            let report = result.unwrap();
            assert_eq!(report.trace_hash, expected.trace_hash, "{threads} threads");
            assert_eq!(outputs, expected_outputs, "{threads} threads");
        }
    }
}

#[test]
fn events_of_256_kib_run_as_sequentially() {
    large_events_run_as_sequentially::<{ 32 * 1024 }>(MAIN_STACK);
}

#[test]
fn events_of_512_kib_run_as_sequentially() {
    large_events_run_as_sequentially::<{ 64 * 1024 }>(MAIN_STACK);
}

#[test]
fn events_of_2_mib_run_as_sequentially_with_a_larger_main_stack() {
    // A model this large needs a larger stack on the sequential kernel too (the main
    // thread's 8 MiB holds a handful of copies); Time Warp's workers size their own.
    large_events_run_as_sequentially::<{ 256 * 1024 }>(64 << 20);
}

/// LP 1 sleeps in its handler when it sees `Late` before `Early` — a state that never happens
/// sequentially (`Early` comes first), and that only an optimistic LP can be in.
#[derive(Clone, Default)]
struct Sleeper {
    seen_early: bool,
    /// On Time Warp: LP 0 sends `Early` only once LP 1 has begun its stall (or after 2 s), so
    /// that the stall happens however late a busy machine starts the second thread.
    wait_for_late: bool,
}

/// Set when LP 1 begins its stall (only the stall test uses it).
static LATE_STARTED: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
enum Sl {
    Chain(u32),
    Early,
    Late,
}

impl LogicalProcess for Sleeper {
    type Event = Sl;
    type Output = ();
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        match ctx.me().get() {
            0 => {
                ctx.schedule(0.001, Sl::Chain(2000));
            }
            2 => {
                ctx.send(LpId::new(1), 2.0, Sl::Late);
            }
            _ => {}
        }
    }
    fn on_event(&mut self, event: Sl, ctx: &mut Ctx<Self>) {
        match event {
            Sl::Chain(0) => {
                if self.wait_for_late {
                    // Wall-clock only: what LP 0 sends does not depend on it.
                    let start = std::time::Instant::now();
                    while !LATE_STARTED.load(Ordering::SeqCst)
                        && start.elapsed() < Duration::from_secs(2)
                    {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                ctx.send(LpId::new(1), 1.0 - ctx.now().as_f64(), Sl::Early);
            }
            Sl::Chain(n) => {
                ctx.schedule(0.0001, Sl::Chain(n - 1));
            }
            Sl::Early => self.seen_early = true,
            Sl::Late => {
                if !self.seen_early {
                    // Impossible sequentially; optimistically, a long stall.
                    LATE_STARTED.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_secs(3));
                }
            }
        }
    }
}

#[test]
fn a_handler_that_stalls_in_a_speculative_state_is_reported() {
    let (expected, _) = sequential(RunConfig::new(1), vec![Sleeper::default(); 3]);
    let expected = expected.unwrap();
    // The stall needs LP 1 to run `Late` before `Early` arrives, which takes two threads and
    // LP 0 waiting for it (`wait_for_late`): try until it happens (the first time, unless
    // the second thread starts more than 2 s late).
    let sleeper = Sleeper {
        wait_for_late: true,
        ..Sleeper::default()
    };
    let warnings = Arc::new(Mutex::new(Vec::new()));
    for _ in 0..20 {
        LATE_STARTED.store(false, Ordering::SeqCst);
        let seen = warnings.clone();
        let sleeper = sleeper.clone();
        let report = within("speculative stall", move || {
            TimeWarp::new(RunConfig::new(1))
                .threads(2)
                .partition(Partition::RoundRobin)
                .slow_handler_after(Duration::from_millis(500))
                .on_warning(Arc::new(move |warning: &Warning| {
                    seen.lock().unwrap().push(warning.to_string())
                }))
                .run(vec![sleeper; 3], &mut Discard)
        })
        .unwrap();
        assert_eq!(report.trace_hash, expected.trace_hash);
        if !warnings.lock().unwrap().is_empty() {
            break;
        }
    }
    let warnings = warnings.lock().unwrap();
    let warning = warnings
        .first()
        .expect("the stall happened and was reported");
    assert!(warning.contains("LP 1"), "{warning}");
    assert!(warning.contains("time 2"), "{warning}");
    assert!(warning.contains("speculative"), "{warning}");
}

#[test]
fn more_threads_than_lps_are_capped() {
    let (report, stats) = within("threads cap", || {
        TimeWarp::new(RunConfig::new(5).end_time(10.0))
            .threads(10_000)
            .run_with_stats(ring(8, None), &mut Discard)
    });
    let report = report.unwrap();
    assert_eq!(stats.threads, 8);
    assert_eq!(stats.per_thread.len(), 8);
    let (expected, _) = sequential(RunConfig::new(5).end_time(10.0), ring(8, None));
    assert_eq!(report.trace_hash, expected.unwrap().trace_hash);
}

/// The ring, whose `Clone` panics when it copies a copy: saving the live state works until
/// a rollback restores a copy, and rebuilding a state from a save (coasting forward, with
/// state saves every third event) clones a save — outside any handler.
#[derive(Default)]
struct CopyShy {
    ring: Ring,
    copy: bool,
}

impl Clone for CopyShy {
    fn clone(&self) -> CopyShy {
        assert!(!self.copy, "copy of a copy");
        CopyShy {
            ring: self.ring.clone(),
            copy: true,
        }
    }
}

impl LogicalProcess for CopyShy {
    type Event = Token;
    type Output = u32;
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        for _ in 0..4 {
            let delay = ctx.rng().random_range(0.1..1.0);
            ctx.schedule(
                delay,
                Token {
                    hops: 0,
                    bomb: false,
                },
            );
        }
    }
    fn on_event(&mut self, token: Token, ctx: &mut Ctx<Self>) {
        self.ring.handled += 1;
        let n_lps = ctx.n_lps();
        let next = LpId::new(ctx.rng().random_range(0..n_lps));
        let delay = ctx.rng().random_range(0.0..1.0);
        ctx.send(
            next,
            delay,
            Token {
                hops: token.hops + 1,
                ..token
            },
        );
    }
}

#[test]
fn a_clone_that_panics_while_the_kernel_rebuilds_a_state_ends_the_run() {
    let mut failed = 0;
    for threads in [2, 4] {
        for _ in 0..5 {
            let result = within("copy of a copy", move || {
                let lps: Vec<CopyShy> = (0..16).map(|_| CopyShy::default()).collect();
                kernel(threads)
                    .checkpoint_interval(3)
                    .run(lps, &mut Discard)
            });
            let Err(error) = result else { continue };
            failed += 1;
            match &error.error {
                SimError::ModelPanic { message, .. } => {
                    assert!(message.contains("copy of a copy"), "{message}");
                }
                other => panic!("{threads} threads: {other:?}"),
            }
        }
    }
    assert!(failed > 0, "no run rolled back");
}

#[test]
fn a_clone_that_panics_on_one_rank_ends_the_run_on_every_rank() {
    // The same model across loopback ranks: a worker of one rank panics outside a handler;
    // every rank stops with the same typed error (`common::cluster` checks they agree).
    let mut failed = 0;
    for _ in 0..5 {
        let (result, _, _) = within("copy of a copy, 2 ranks", || {
            let make = || -> Vec<CopyShy> { (0..16).map(|_| CopyShy::default()).collect() };
            common::cluster(&kernel(2).checkpoint_interval(3), 2, &make)
        });
        if let Err(error) = result {
            failed += 1;
            assert!(error.to_string().contains("copy of a copy"), "{error}");
        }
    }
    assert!(failed > 0, "no run rolled back");
}

/// A ring whose events carry a field their `PartialEq` ignores: the number of events the
/// sender had handled, which a straggler changes when the sender re-executes. A kernel that
/// trusted `PartialEq` kept the stale message; the encoding catches the difference.
#[derive(Clone, Default)]
struct Loose {
    handled: u64,
    /// Add one to every payload (a deliberately different model with the same keys).
    corrupt: bool,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Counted {
    hops: u32,
    /// Ignored by `PartialEq`.
    handled_by_sender: u64,
}

impl PartialEq for Counted {
    fn eq(&self, other: &Counted) -> bool {
        self.hops == other.hops
    }
}

impl LogicalProcess for Loose {
    type Event = Counted;
    type Output = u64;
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        for _ in 0..3 {
            let delay = ctx.rng().random_range(0.1..1.0);
            let event = Counted {
                hops: 0,
                handled_by_sender: 0,
            };
            ctx.schedule(delay, event);
        }
    }
    fn on_event(&mut self, event: Counted, ctx: &mut Ctx<Self>) {
        self.handled += 1;
        ctx.emit(event.handled_by_sender);
        let n_lps = ctx.n_lps();
        let next = LpId::new(ctx.rng().random_range(0..n_lps));
        let delay = ctx.rng().random_range(0.0..1.0);
        let handled_by_sender = self.handled + u64::from(self.corrupt);
        let event = Counted {
            hops: event.hops + 1,
            handled_by_sender,
        };
        ctx.send(next, delay, event);
    }
}

#[test]
fn a_partial_eq_that_ignores_a_field_cannot_change_what_commits() {
    let config = RunConfig::new(9).end_time(30.0).content_hash(true);
    let lps = |corrupt| -> Vec<Loose> {
        (0..16)
            .map(|_| Loose {
                handled: 0,
                corrupt,
            })
            .collect()
    };
    let (expected, expected_outputs) = sequential(config.clone(), lps(false));
    let expected = expected.unwrap();
    let mut lazy_hits = 0;
    for threads in [2, 4] {
        for _ in 0..5 {
            let config = config.clone();
            let (result, outputs, stats) = within("loose PartialEq", move || {
                let mut outputs = Vec::new();
                let (result, stats) = kernel_with(config, threads)
                    .cancellation(Cancellation::Lazy)
                    .run_with_stats(lps(false), &mut outputs);
                (result, outputs, stats)
            });
            let report = result.unwrap();
            assert_eq!(report.trace_hash, expected.trace_hash);
            assert_eq!(report.content_hash, expected.content_hash);
            assert_eq!(
                outputs, expected_outputs,
                "{threads} threads: outputs differ"
            );
            lazy_hits += stats.lazy_hits;
        }
    }
    // Lazy cancellation still keeps the messages that really are the same.
    assert!(lazy_hits > 0);
    // A run handed different contents under the same keys: the trace hash cannot tell, the
    // content hash does.
    let (corrupted, _) = sequential(config, lps(true));
    let corrupted = corrupted.unwrap();
    assert_eq!(corrupted.trace_hash, expected.trace_hash);
    assert_ne!(corrupted.content_hash, expected.content_hash);
}
