//! The paced model of the stop and pause tests (`stop.rs`, `cluster_stop.rs`): handlers at
//! or after a chosen time sleep a little, so that a run is still going when a request made
//! at that time is read.

use std::time::Duration;

use rand::RngExt;
use warpsim_core::{
    Checkpoint, CheckpointLabel, Committed, Ctx, EventHandle, Kernel, LogicalProcess, LpId, Report,
    RunConfig, Sequential,
};

/// Random sends (some with zero delay), cancels and reschedules, one or two outputs per
/// event; handlers at or after `slow_from` sleep [`PACE`] first. `slow_from` changes only
/// the speed: it is not saved in a checkpoint (a resumed run is not slowed) nor shown.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Paced {
    pending: Vec<EventHandle>,
    handled: u64,
    #[serde(skip, default = "never")]
    slow_from: f64,
}

pub fn never() -> f64 {
    f64::INFINITY
}

impl std::fmt::Debug for Paced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Paced")
            .field("pending", &self.pending)
            .field("handled", &self.handled)
            .finish()
    }
}

/// How long a handler at or after `slow_from` sleeps.
pub const PACE: Duration = Duration::from_micros(40);

impl LogicalProcess for Paced {
    type Event = u32;
    type Output = (u8, bool, u64);
    fn init(&mut self, ctx: &mut Ctx<Self>) {
        for _ in 0..2 {
            let delay = ctx.rng().random::<f64>();
            let handle = ctx.schedule(delay, 0);
            self.pending.push(handle);
        }
    }
    fn on_event(&mut self, tag: u32, ctx: &mut Ctx<Self>) {
        if ctx.now().as_f64() >= self.slow_from {
            std::thread::sleep(PACE);
        }
        self.handled += 1;
        ctx.emit((9, false, self.handled));
        let n = ctx.n_lps();
        let roll: f64 = ctx.rng().random();
        let mut sends = 1;
        if roll < 0.2 && !self.pending.is_empty() {
            let index = ctx.rng().random_range(0..self.pending.len());
            let handle = self.pending.swap_remove(index);
            let cancelled = ctx.cancel(handle);
            ctx.emit((0, cancelled, handle.key().id));
            if cancelled {
                sends = 2;
            }
        } else if roll < 0.4 && !self.pending.is_empty() {
            let index = ctx.rng().random_range(0..self.pending.len());
            let delay = ctx.rng().random::<f64>() * 2.0;
            let moved = ctx.reschedule(&mut self.pending[index], delay);
            ctx.emit((1, moved, self.pending[index].key().id));
        }
        for _ in 0..sends {
            let to = LpId::new(ctx.rng().random_range(0..n));
            let delay = if ctx.rng().random::<f64>() < 0.15 {
                0.0
            } else {
                ctx.rng().random::<f64>()
            };
            let handle = ctx.send(to, delay, tag.wrapping_add(1));
            if self.pending.len() < 6 {
                self.pending.push(handle);
            }
        }
    }
}

pub fn lps(n: usize, slow_from: f64) -> Vec<Paced> {
    vec![
        Paced {
            pending: Vec::new(),
            handled: 0,
            slow_from,
        };
        n
    ]
}

/// What the paced model emits, as a sink collects it.
pub type Outputs = Vec<Committed<(u8, bool, u64)>>;

/// `checkpoint` through the file format and back, under `label`.
pub fn round_trip(
    mut checkpoint: Box<Checkpoint<Paced>>,
    label: &CheckpointLabel,
) -> Box<Checkpoint<Paced>> {
    checkpoint.set_label(label.clone());
    let mut bytes = Vec::new();
    checkpoint.write_to(&mut bytes).unwrap();
    Box::new(Checkpoint::read_from(&bytes[..], label).unwrap())
}

/// The uninterrupted run of `n` LPs on the sequential kernel: report, outputs, final states
/// (compared by `Debug`).
pub fn whole(config: &RunConfig, n: usize) -> (Report, Outputs, String) {
    let mut outputs = Vec::new();
    let finished = Sequential::new(config.clone())
        .run_final(lps(n, never()), &mut outputs)
        .unwrap();
    (finished.report, outputs, format!("{:?}", finished.states))
}
