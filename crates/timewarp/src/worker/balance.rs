//! Dynamic load balancing: worker 0's decision, the migration every worker takes part in,
//! and rebuilding a worker's indices after LPs moved.

use std::sync::atomic::Ordering;

use warpsim_core::{EventKey, LogicalProcess, LpId};

use super::Worker;
use super::log::{NONE, Status};
use super::lp::Transfer;
use crate::sync::quiesce;

/// GVTs between two load-balancing decisions, and the smallest imbalance acted on (the
/// busiest worker's load over the mean).
const BALANCE_EVERY: u32 = 16;
const IMBALANCE: f64 = 1.15;

/// How often each worker reads how long it waited for a core, and worker 0 compares them
/// (`TimeWarp::give_way`): at the first GVT this long after the last look.
const LOOK_EVERY: std::time::Duration = std::time::Duration::from_millis(5);

/// The looks a decision to give way spans (see [`Worker::consider_giving_way`]): 120 ms.
const LOOKS: usize = 24;

/// A worker gives way only if other processes kept at least this many cores busy in each
/// half of the span (see [`Worker::consider_giving_way`]). A busy loop keeps a whole one;
/// a program starting up beside the run, 0.5–0.8 of one over the first half of the span
/// and at most half of one over the second (`/proc/stat` counts whole clock ticks, 12 per
/// half here).
const OTHERS_BUSY: f64 = 0.75;

/// The looks a decision to take LPs back spans (see [`Worker::consider_taking_back`]):
/// 60 ms, twelve of `/proc/stat`'s clock ticks on each CPU.
const BACK_LOOKS: usize = 12;

/// A worker that gave way takes LPs back once other processes ran less than this many
/// cores' worth in each half of [`BACK_LOOKS`] (a busy loop runs a whole one).
const OTHERS_QUIET: f64 = 0.35;

/// A worker gives way only if every worker still holding LPs waited for a core more than
/// this share of `TimeWarp::give_way`'s threshold (see [`Worker::consider_giving_way`]).
const ALL_WAITED: f64 = 0.75;

/// [`extract`](Worker::extract)'s amount for taking LPs back: the later half of the
/// source's LPs (those it adopted when the other gave way come last).
const TAKE_BACK: u64 = u64::MAX - 1;

/// What worker 0 reads at one look (every [`LOOK_EVERY`]): each worker's wait for a core
/// so far, and what the machine's other processes had run.
#[derive(Debug)]
pub(super) struct Look {
    at: std::time::Instant,
    waited: Vec<u64>,
    others: Option<Others>,
}

impl<M: LogicalProcess> Worker<'_, M> {
    /// Worker 0, every [`BALANCE_EVERY`] GVTs: if the busiest worker committed more than
    /// [`IMBALANCE`] times the mean since the last decision, plans to move load from it to
    /// the least busy one and asks for a migration with the next GVT.
    pub(super) fn consider_balancing(&mut self) {
        self.balance.gvts_since_balance += 1;
        if self.balance.gvts_since_balance < BALANCE_EVERY {
            return;
        }
        self.balance.gvts_since_balance = 0;
        // Once a worker gave way, balancing would only hand it load again.
        if !self.settings.load_balancing || !self.balance.emptied.is_empty() {
            return;
        }
        let now: Vec<u64> = self
            .shared
            .gauges
            .iter()
            .map(|gauge| gauge.committed.load(Ordering::Relaxed))
            .collect();
        if self.balance.load_marks.len() != now.len() {
            self.balance.load_marks = vec![0; now.len()];
        }
        let loads: Vec<u64> = now
            .iter()
            .zip(&self.balance.load_marks)
            .map(|(now, mark)| now.saturating_sub(*mark))
            .collect();
        self.balance.load_marks = now;
        let total: u64 = loads.iter().sum();
        if loads.len() < 2 || total < 256 {
            return;
        }
        let mean = total as f64 / loads.len() as f64;
        let (from, &busiest) = loads
            .iter()
            .enumerate()
            .max_by_key(|(_, load)| **load)
            .expect("at least two workers");
        let (to, &idlest) = loads
            .iter()
            .enumerate()
            .min_by_key(|(_, load)| **load)
            .expect("at least two workers");
        if (busiest as f64) < IMBALANCE * mean || from == to {
            return;
        }
        let amount = (busiest as f64 - mean).min(mean - idlest as f64) as u64;
        *self
            .shared
            .plan
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((from, to, amount));
        self.shared.gvt.request_migration();
    }

    /// Every [`LOOK_EVERY`], publishes how long this worker's thread has waited for a core
    /// so far, and worker 0 compares them (`TimeWarp::give_way`).
    pub(super) fn note_waiting(&mut self) {
        let Some(share) = self.settings.give_way else {
            return;
        };
        let now = std::time::Instant::now();
        if self
            .balance
            .noted_at
            .is_some_and(|then| now.duration_since(then) < LOOK_EVERY)
        {
            return;
        }
        self.balance.noted_at = Some(now);
        if let Some(waited) = waited_for_a_core() {
            self.shared.gauges[self.index]
                .waited
                .store(waited, Ordering::Relaxed);
        }
        if self.index == 0 {
            self.consider_giving_way(share, now);
        }
    }

    /// Worker 0: whether a worker that still holds LPs waited for a core more than `share`
    /// of the time over the last [`LOOKS`] looks, while every such worker waited more than
    /// [`ALL_WAITED`] of `share` (at once when `share` is 0, and only when no migration is
    /// pending); if so, plans to move all its LPs to the worker that waited least and asks
    /// for a migration with the next GVT. While a worker it emptied idles, the same look
    /// asks whether to take LPs back ([`Worker::consider_taking_back`]).
    ///
    /// Over many looks, and only when all waited, because the threads of a run wait now
    /// and then on a machine nobody else keeps busy, one more than the other: 40–75 % of one
    /// 5 ms look, and on 2026-11-29 up to 41–43 % of 60 ms in the first 100 ms of a run
    /// whose output went to a program starting up (PHOLD 16,384 LPs `--work 1000`: 3 runs
    /// in 4 gave way and ran as slowly as on one thread), while the other worker waited
    /// 20–30 %. Over 120 ms the worse of the two waited at most 39 %, the better at most
    /// 30 % (8 runs). A process that keeps one of 2 cores busy makes both threads wait,
    /// steadily: 44–70 % each over 120 ms.
    ///
    /// And only when other processes kept at least [`OTHERS_BUSY`] cores busy in each half
    /// of the span (`/proc/stat` less this process's own time; not checked where there is
    /// no such file): a process that keeps a core busy, not one that starts beside the run.
    /// The waits alone moved LPs when the run's output went to a program that was starting
    /// up (`warpsim run ... --json | python3 ...`): both threads of PHOLD 1,024 LPs waited
    /// 36–50 % of the first 120 ms, the other processes ran 0.4–0.8 of a core then, and 5
    /// runs of 8 gave way for good and took 0.33–0.36 s against 0.23–0.25 s. A busy loop
    /// uses a whole core in every half; a quiet machine's other processes, a few hundredths
    /// of one. (A decision from 30 ms of looks, with another process runnable at 5 of 6 in
    /// `/proc/loadavg`, was tried on 2026-12-04 with the taking back below. PHOLD 16,384
    /// LPs end 100 on 2 threads, 5–7 interleaved runs: piped into `python3` on a quiet
    /// machine it gave way to Python's start-up (80 ms of CPU here) in 6 runs of 7 and took
    /// the LPs back, 0.19–0.20 → 0.19–0.22 s; beside a busy core 0.27–0.32 → 0.22–0.23 s
    /// against 0.17 s on one thread; Sharks 2,048 8×8 (0.06 s) and `--work 1000` did not
    /// move. Not enough to reach one thread's time, and paid by every quiet run whose
    /// output goes to a program that starts beside it: not kept.)
    fn consider_giving_way(&mut self, share: f64, now: std::time::Instant) {
        if self.shared.gvt.migrations() != self.balance.migrations_done {
            return;
        }
        if share <= 0.0 && self.balance.moves >= 2 {
            // Forced (for tests): one move away and one back, then the run goes on as it is.
            return;
        }
        let waited: Vec<u64> = self
            .shared
            .gauges
            .iter()
            .map(|gauge| gauge.waited.load(Ordering::Relaxed))
            .collect();
        let look = Look {
            at: now,
            waited,
            others: others_ran(),
        };
        let looks = &mut self.balance.looks;
        looks.push_back(look);
        while looks.len() > LOOKS.max(BACK_LOOKS) + 1 {
            looks.pop_front();
        }
        if !self.balance.emptied.is_empty() && self.consider_taking_back() {
            return;
        }
        let looks = &self.balance.looks;
        if looks.len() <= LOOKS && share > 0.0 {
            return;
        }
        let first = looks.len().saturating_sub(LOOKS + 1);
        let (then, last) = (&looks[first], &looks[looks.len() - 1]);
        // Cores the other processes kept busy in each half of the span, where Linux says.
        let mid = looks.get(first + LOOKS / 2).and_then(|look| look.others);
        let busy_elsewhere = match (then.others, mid, last.others) {
            (Some(then), Some(mid), Some(now)) => mid
                .cores_since(&then)
                .zip(now.cores_since(&mid))
                .map(|(first, second)| first.min(second)),
            _ => None,
        };
        if share > 0.0 && busy_elsewhere.is_some_and(|cores| cores < OTHERS_BUSY) {
            // Nobody else took a core: the waits are this run's own (see above).
            return;
        }
        let wall = now.duration_since(then.at).as_nanos().max(1) as f64;
        let shares: Vec<(usize, f64)> = last
            .waited
            .iter()
            .zip(&then.waited)
            .enumerate()
            .filter(|(worker, _)| !self.balance.emptied.contains(worker))
            .map(|(worker, (now, mark))| (worker, now.saturating_sub(*mark) as f64 / wall))
            .collect();
        let Some((from, to)) = giving_way(&shares, share) else {
            return;
        };
        // The next decision measures afresh, without the workers' waits before this move.
        self.balance.looks.clear();
        self.balance.emptied.push(from);
        self.balance.moves += 1;
        self.plan_migration(from, to, u64::MAX);
    }

    /// Worker 0, at a look while a worker it emptied idles: once the machine's other
    /// processes ran less than [`OTHERS_QUIET`] cores in each half of the last
    /// [`BACK_LOOKS`] looks, plans to move the later half of the LPs of the worker that
    /// committed most back to the worker that gave way last, and returns `true`. A run
    /// that gave way to a process that has since ended gets its threads back (beside a busy
    /// loop that ran for the first 0.5 s of PHOLD 16,384 LPs end 1000: 1.47 s, against
    /// 2.00 s busy throughout and 1.26 s quiet). Never where `/proc/stat` is missing; with
    /// `give_way` at 0 (for tests), at once: such a run gives way at its first look and
    /// takes back at the next, once.
    fn consider_taking_back(&mut self) -> bool {
        let forced = self.settings.give_way.is_some_and(|share| share <= 0.0);
        if !forced {
            let looks = &self.balance.looks;
            if looks.len() <= BACK_LOOKS {
                return false;
            }
            let n = looks.len();
            let (first, mid, last) = (
                &looks[n - 1 - BACK_LOOKS],
                &looks[n - 1 - BACK_LOOKS / 2],
                &looks[n - 1],
            );
            if !quiet_in_both_halves(first.others, mid.others, last.others) {
                return false;
            }
        }
        let committed =
            |worker: usize| self.shared.gauges[worker].committed.load(Ordering::Relaxed);
        let Some(from) = (0..self.shared.gauges.len())
            .filter(|worker| !self.balance.emptied.contains(worker))
            .max_by_key(|&worker| committed(worker))
        else {
            return false;
        };
        let Some(to) = self.balance.emptied.pop() else {
            return false;
        };
        self.balance.looks.clear();
        self.balance.moves += 1;
        self.plan_migration(from, to, TAKE_BACK);
        true
    }

    /// Publishes a migration plan for the next GVT.
    fn plan_migration(&self, from: usize, to: usize, amount: u64) {
        *self
            .shared
            .plan
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((from, to, amount));
        self.shared.gvt.request_migration();
    }

    /// Moves LPs between workers (every worker calls it, with the same published plan).
    ///
    /// # Ground rules
    ///
    /// 1. Quiescence first: flush, barrier, absorb, flush, barrier, read the count of
    ///    messages between workers not yet absorbed, barrier; repeat until it is zero
    ///    (absorbing can roll back and send antimessages). Then every event and message is
    ///    inside an LP record, and nobody sends until the end.
    /// 2. The GVT round in progress, if any, is abandoned: its reports may not cover an LP
    ///    that moves. The next round starts afresh, after the move.
    /// 3. The source worker hands over each LP whole: its record (deferred and withdrawn
    ///    events, failure, hold), its pending and parked events, the chain of its records
    ///    with their saves and effects taken out of the logs, and the early antimessages
    ///    that wait for it; both workers then rebuild their indices (lists, counts, route).
    /// 4. A last barrier orders the route updates before any worker reads a route again.
    pub(super) fn migrate(&mut self) {
        // An LP that moves takes its pending events elsewhere, whose replies may come back
        // below the bound (see `safe.rs`, rule 1).
        self.void_safe();
        let shared = self.shared;
        let barrier = &shared.migration_barrier;
        let quiet = quiesce(
            self,
            barrier,
            || shared.in_flight.load(Ordering::SeqCst),
            |worker| worker.flush_all(),
            |worker| {
                worker.absorb_inbox();
                worker.drain_local();
            },
        );
        if !quiet {
            // Broken: another thread failed and the run is over; nothing moves.
            return;
        }
        if self.index == 0 {
            self.shared.gvt.abort_round();
        }
        let plan = *self
            .shared
            .plan
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((from, _, amount)) = plan
            && from == self.index
        {
            let moving = self.extract(amount);
            self.balance
                .transfer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend(moving);
        }
        if !barrier.wait() {
            // The LPs this worker handed over are lost to it; the run is over anyway.
            return;
        }
        if let Some((from, to, _)) = plan {
            if to == self.index {
                // Back in the GVT protocol before it holds an event (`gvt.rs`, rule 5);
                // no round runs during a migration.
                self.shared.gvt.rejoin(&mut self.port);
                let arriving = std::mem::take(
                    &mut *self
                        .balance
                        .transfer
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner),
                );
                self.counters.lps_received += arriving.len() as u64;
                let mut antis = Vec::new();
                for transfer in arriving {
                    let Transfer {
                        mut lp,
                        pending,
                        records,
                        antis: waiting,
                    } = transfer;
                    let id = lp.id;
                    antis.extend(waiting.into_iter().map(|key| (id, key)));
                    self.balance
                        .limbo
                        .extend(pending.into_iter().map(|(key, event)| (id, key, event)));
                    // Its records join this worker's logs under new seqs.
                    let rename = self.logs.adopt(self.lps.len() as u32, records);
                    lp.last = rename(lp.last);
                    lp.base = rename(lp.base);
                    if lp.base == NONE {
                        lp.since = 0;
                    }
                    if !self.logs.is_live(lp.last) {
                        lp.newest = -1.0;
                    }
                    self.lps.push(lp);
                }
                self.rebuild(antis);
            } else if from == self.index {
                self.rebuild(Vec::new());
            }
        }
        self.loads.clear();
        self.loads.resize(self.lps.len(), 0);
        self.balance.migrations_done += 1;
        // Every event is now pending at or after GVT, some on other workers than before:
        // promises start again from it (`promise.rs`, rule 4).
        self.reset_promises(self.gvt.time.as_f64());
        barrier.wait();
        if self.lps.is_empty() && !self.shared.gvt.is_external() {
            // It gave all its LPs away: it receives nothing and sends nothing, so it leaves
            // the GVT protocol (`gvt.rs`, rule 5), and the worker left with the LPs runs as
            // a lone worker does, without waking this one for every round (on a quiet
            // machine its PHOLD 16,384 LPs took 2.5 s against one thread's 1.8 s, a twelfth
            // of the time in the kernel's wake-ups).
            if self.shared.gvt.leave(&mut self.port).is_some() {
                self.wake_peers();
            }
        }
    }

    /// Source side of a migration: takes LPs, most loaded first, until about `amount` of
    /// load has left (keeping at least one LP, unless `amount` is `u64::MAX`: all of them).
    /// Returns them with their pending events and early antimessages; the events of the LPs
    /// that stay wait in `limbo` for [`Worker::rebuild`] (LP indices change here).
    pub(super) fn extract(&mut self, amount: u64) -> Vec<Transfer<M>> {
        let mut order: Vec<usize> = (0..self.lps.len()).collect();
        order.sort_by_key(|&l| std::cmp::Reverse(self.loads[l]));
        let mut chosen = Vec::new();
        let mut moved = 0;
        if amount == TAKE_BACK {
            // Back to the worker that gave way: the later half, where its LPs went.
            order = (self.lps.len() / 2..self.lps.len()).collect();
        }
        for l in order {
            if amount == TAKE_BACK {
                chosen.push(l);
                continue;
            }
            if moved >= amount || (amount != u64::MAX && chosen.len() + 1 >= self.lps.len()) {
                break;
            }
            moved += u64::from(self.loads[l]);
            chosen.push(l);
        }
        // Early antimessages by LP id, since indices change below.
        let waiting: Vec<(LpId, EventKey)> = std::mem::take(&mut self.early_antis)
            .into_iter()
            .map(|(l, key)| (self.lps[l as usize].id, key))
            .collect();
        // Every pending event, by LP id, since indices change below.
        let mut moving_ids = std::collections::HashSet::with_capacity(chosen.len());
        moving_ids.extend(chosen.iter().map(|&l| self.lps[l].id));
        let mut leaving: std::collections::HashMap<LpId, Vec<(EventKey, M::Event)>> =
            std::collections::HashMap::with_capacity(chosen.len());
        for (key, l, event) in self.store.drain() {
            let id = self.lps[l as usize].id;
            if moving_ids.contains(&id) {
                leaving.entry(id).or_default().push((key, event));
            } else {
                self.balance.limbo.push((id, key, event));
            }
        }
        chosen.sort_unstable_by(|a, b| b.cmp(a));
        let mut moving = Vec::with_capacity(chosen.len());
        for l in chosen {
            let lp = self.lps.swap_remove(l);
            moving.push(lp);
        }
        let mut transfers: Vec<Transfer<M>> = moving
            .into_iter()
            .map(|lp| {
                let antis = waiting
                    .iter()
                    .filter(|(id, _)| *id == lp.id)
                    .map(|(_, key)| *key)
                    .collect();
                let pending = leaving.remove(&lp.id).unwrap_or_default();
                let records = self.logs.take_chain(lp.last);
                Transfer {
                    lp,
                    pending,
                    records,
                    antis,
                }
            })
            .collect();
        let staying: Vec<(LpId, EventKey)> = waiting
            .into_iter()
            .filter(|(id, _)| !moving_ids.contains(id))
            .collect();
        self.balance.pending_antis = staying;
        transfers.shrink_to_fit();
        transfers
    }

    /// Rebuilds every index over this worker's LPs after a migration changed them: the
    /// route entries, the pending events waiting in `limbo` (back into the store, under the
    /// LPs' new indices), the lists of LPs in each state, the size counts, and the early
    /// antimessages (`extra`, by LP id, plus any kept by [`Worker::extract`]).
    pub(super) fn rebuild(&mut self, extra: Vec<(LpId, EventKey)>) {
        self.store.fit(self.lps.len());
        self.recount_newest();
        self.lists.deferred.clear();
        self.lists.withdrawn.clear();
        self.lists.failed.clear();
        self.lists.held.clear();
        (
            self.sizes.pending,
            self.sizes.deferred,
            self.sizes.withdrawn,
        ) = (self.store.len(), 0, 0);
        let tally = self.logs.tally();
        self.sizes.saves = tally.saves;
        self.sizes.outputs = tally.outputs;
        self.sizes.save_heap = if self.settings.memory.is_some() {
            tally.save_heap
        } else {
            0
        };
        let mut index_of = std::collections::HashMap::with_capacity(self.lps.len());
        for (l, lp) in self.lps.iter_mut().enumerate() {
            self.route[lp.id.index()]
                .store((self.index as u64) << 32 | l as u64, Ordering::Relaxed);
            index_of.insert(lp.id, l as u32);
            lp.unlist(true, false, false);
            if lp.in_deferred() {
                self.lists.deferred.push(l as u32);
            }
            if lp.in_withdrawn() {
                self.lists.withdrawn.push(l as u32);
            }
            let parked = lp.rare.as_ref().map_or(0, |rare| rare.parked.len());
            if lp.failed().is_some() {
                self.lists.failed.push(l as u32);
            } else if parked > 0 {
                // Held back (see `Worker::park`): back to the store at the next GVT.
                lp.rare_mut().in_held = true;
                self.lists.held.push(l as u32);
            }
            self.sizes.pending += parked;
            self.sizes.deferred += lp.deferred().len();
            self.sizes.withdrawn += lp.rare.as_ref().map_or(0, |rare| rare.withdrawn.len());
            lp.tidy();
        }
        // Records name their LP by index too, and indices changed.
        for (_, record) in self.logs.records.iter_mut() {
            if record.status != Status::Dead
                && let Some(&l) = index_of.get(&record.id)
            {
                record.lp = l;
            }
        }
        let kept = std::mem::take(&mut self.balance.pending_antis);
        if !kept.is_empty() || !extra.is_empty() || !self.early_antis.is_empty() {
            let current: Vec<(LpId, EventKey)> = std::mem::take(&mut self.early_antis)
                .into_iter()
                .map(|(l, key)| (self.lps[l as usize].id, key))
                .collect();
            for (id, key) in current.into_iter().chain(kept).chain(extra) {
                if let Some(&l) = index_of.get(&id) {
                    self.early_antis.insert((l, key));
                }
            }
        }
        for (id, key, event) in std::mem::take(&mut self.balance.limbo) {
            if let Some(&l) = index_of.get(&id) {
                self.add_pending(l as usize, key, event);
            }
        }
    }
}

/// The decision of [`Worker::consider_giving_way`] from each worker's share of the span it
/// waited for a core, `(worker, share)` for the workers that still hold LPs: the worker
/// that gives its LPs away and the one that takes them, if one waited more than `share`
/// and every one more than [`ALL_WAITED`] of it (always, when `share` is 0).
fn giving_way(shares: &[(usize, f64)], share: f64) -> Option<(usize, usize)> {
    if shares.len() < 2 {
        return None;
    }
    let by_share = |a: &&(usize, f64), b: &&(usize, f64)| a.1.total_cmp(&b.1);
    let (mut from, worst) = *shares.iter().max_by(by_share)?;
    let (to, least) = *shares.iter().min_by(by_share)?;
    if from == to {
        // All alike (a forced look, or nothing measured): any other one.
        from = shares
            .iter()
            .map(|(worker, _)| *worker)
            .find(|&worker| worker != to)?;
    }
    if share > 0.0 && (worst <= share || least <= ALL_WAITED * share) {
        return None;
    }
    Some((from, to))
}

/// What the machine's CPUs had run for other processes, and in all, at one look: clock
/// ticks from `/proc/stat` (all CPUs) less this process's own (`/proc/self/stat`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Others {
    busy: u64,
    total: u64,
    cpus: u64,
}

impl Others {
    /// Cores' worth the other processes ran since `then`; `None` if no tick passed.
    fn cores_since(&self, then: &Others) -> Option<f64> {
        let total = self
            .total
            .checked_sub(then.total)
            .filter(|&ticks| ticks > 0)?;
        let busy = self.busy.saturating_sub(then.busy);
        Some(busy as f64 / total as f64 * self.cpus as f64)
    }
}

/// [`Others`] now, or `None` where Linux's files are not there.
fn others_ran() -> Option<Others> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let mut lines = stat.lines();
    // "cpu user nice system idle iowait irq softirq steal ...": busy is all but idle and
    // iowait; steal (time the hypervisor gave another machine) is no process here.
    let ticks: Vec<u64> = lines
        .next()?
        .split_whitespace()
        .skip(1)
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    let field = |index: usize| ticks.get(index).copied().unwrap_or(0);
    let all: u64 = (0..7).map(field).sum();
    let busy = all - field(3) - field(4);
    let cpus = lines.filter(|line| line.starts_with("cpu")).count() as u64;
    // utime and stime: fields 14 and 15 of `/proc/self/stat`, the 12th and 13th after the
    // command name's closing parenthesis.
    let own = std::fs::read_to_string("/proc/self/stat").ok()?;
    let mut after = own.rsplit_once(')')?.1.split_whitespace().skip(11);
    let ours = after.next()?.parse::<u64>().ok()? + after.next()?.parse::<u64>().ok()?;
    Some(Others {
        busy: busy.saturating_sub(ours),
        total: all,
        cpus: cpus.max(1),
    })
}

/// Whether other processes ran less than [`OTHERS_QUIET`] cores in each half of the span
/// from `first` to `last` (`mid` between); `false` where Linux's files are not there.
fn quiet_in_both_halves(first: Option<Others>, mid: Option<Others>, last: Option<Others>) -> bool {
    match (first, mid, last) {
        (Some(first), Some(mid), Some(last)) => mid
            .cores_since(&first)
            .zip(last.cores_since(&mid))
            .is_some_and(|(a, b)| a.max(b) < OTHERS_QUIET),
        _ => false,
    }
}

/// Nanoseconds this thread has waited for a core (runnable, not running) since it started:
/// the second field of Linux's `/proc/thread-self/schedstat`. `None` where there is no such
/// file.
fn waited_for_a_core() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{Others, giving_way, quiet_in_both_halves};

    #[test]
    fn lps_are_taken_back_only_when_other_processes_were_quiet_in_both_halves() {
        let at = |busy, total| {
            Some(Others {
                busy,
                total,
                cpus: 2,
            })
        };
        // 24 ticks on 2 CPUs in each half: a busy loop runs 12 of them, a whole core.
        assert!(!quiet_in_both_halves(at(0, 0), at(12, 24), at(24, 48)));
        // It ended in the second half: not yet.
        assert!(!quiet_in_both_halves(at(0, 0), at(12, 24), at(13, 48)));
        // Quiet in both (1 tick of 24 is 0.08 of a core).
        assert!(quiet_in_both_halves(at(0, 0), at(1, 24), at(2, 48)));
        // No tick passed in a half, or no `/proc/stat`: never.
        assert!(!quiet_in_both_halves(at(0, 0), at(0, 0), at(1, 24)));
        assert!(!quiet_in_both_halves(None, at(1, 24), at(2, 48)));
    }

    #[test]
    fn other_processes_are_counted_in_cores() {
        // 12 of 24 ticks on 2 CPUs: one core's worth.
        let then = Others {
            busy: 100,
            total: 1_000,
            cpus: 2,
        };
        let now = Others {
            busy: 112,
            total: 1_024,
            cpus: 2,
        };
        assert_eq!(now.cores_since(&then), Some(1.0));
        // No tick passed: nothing to say.
        assert_eq!(then.cores_since(&then), None);
        #[cfg(target_os = "linux")]
        {
            let here = super::others_ran().expect("Linux has /proc/stat and /proc/self/stat");
            assert!(here.cpus >= 1 && here.busy <= here.total);
        }
    }

    #[test]
    fn only_a_worker_that_waited_while_every_worker_waited_gives_way() {
        // A quiet machine: one thread waited 39 % of the span, the other 20 %.
        assert_eq!(giving_way(&[(0, 0.39), (1, 0.20)], 0.4), None);
        assert_eq!(giving_way(&[(0, 0.43), (1, 0.24)], 0.4), None);
        // Another process keeps a core busy: both wait, one more.
        assert_eq!(giving_way(&[(0, 0.70), (1, 0.44)], 0.4), Some((0, 1)));
        assert_eq!(giving_way(&[(0, 0.55), (1, 0.56)], 0.4), Some((1, 0)));
        // Both waited, but neither more than the share.
        assert_eq!(giving_way(&[(0, 0.38), (1, 0.35)], 0.4), None);
        // Forced (share 0): always, even when nothing was measured.
        assert_eq!(giving_way(&[(2, 0.0), (3, 0.0)], 0.0), Some((3, 2)));
        // Nobody to give to.
        assert_eq!(giving_way(&[(0, 0.9)], 0.4), None);
    }
}
