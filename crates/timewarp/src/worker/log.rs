//! What a worker keeps of the events it ran and has not yet forgotten: one log of records in
//! the order they ran, with their state saves and their effects in two logs beside it.
//!
//! # Why one log per worker
//!
//! Every event writes a record (its key and event, to put it back or run it again), maybe a
//! state save, and what it sent; every GVT commits the records below it and forgets them.
//! Kept per LP (a `Vec` of records and one of effects in each LP, with a pool of buffers),
//! each event wrote to three places chosen by its LP, cold at many LPs, and each commit read
//! them back LP by LP. Here every event appends to the ends of three logs, which stay in the
//! cache, and a commit reads them from the front in order, which the hardware prefetches;
//! a commit touches no LP record at all. (BENCHMARKS.md, "Records in execution order", has
//! the measurements.)
//!
//! # The chain of an LP
//!
//! An LP's records are linked newest to oldest through `prev`, in the order it ran them, and
//! that is also their key order (a rollback undoes the newest records, and the events that
//! run again come after every record left). Each record names its `base`: the latest record
//! of its LP, at or before it, that carries a state save, so the state before a record is its
//! base's save run forward through the records between (coasting).
//!
//! # Forgetting
//!
//! A record is *live* until GVT passes it (then *committed*: its outputs have left) or a
//! rollback undoes it (*undone*). The front of the log is dropped as far as no live record
//! still needs it: a live record needs its base and every record of its LP after that (to
//! coast through). Those are at or after the smallest base of a live record, the *pin*. A
//! base is at most a state-save interval of its LP's records back, and an LP whose base is
//! already forgotten, or among the oldest eighth of the log, saves its state again instead
//! of coasting from it, so pins do not hold the log's front for long.
//!
//! An LP whose records have all committed has nothing live to pin its base, which is then
//! forgotten, and its next event saves its state again, whatever the state-save interval.
//! Keeping a large state's last save instead (moving the LP's records from it to the back
//! of the log when the front reaches them, as the per-LP records once kept them) was tried
//! for Sharks World's sectors and cost more than the saves it spared: 6,069 against 5,411
//! instructions per event (2,048 creatures, 8×8, 1 thread), 7,033 saves against 10,831.

use std::collections::VecDeque;

use warpsim_core::kernel_api::LpMeta;
use warpsim_core::{EventKey, LogicalProcess, LpId};

use super::lp::Logged;

/// A position in one of the logs, counted from the start of the run (never reused).
pub(super) type Seq = u64;

/// "No record".
pub(super) const NONE: Seq = u64::MAX;

/// A record's place in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    /// Ran, not yet committed: a rollback may undo it.
    Live,
    /// Below GVT: its outputs have left; kept only while a live record may coast through it.
    Committed,
    /// Undone by a rollback (its event is pending again), or moved to another worker with
    /// its LP: nothing refers to it any more.
    Dead,
}

/// A state save: the model and the kernel's part of the LP.
pub(super) type Saved<M> = (M, LpMeta);

/// One event an LP ran.
pub(super) struct Rec<M: LogicalProcess> {
    pub(super) key: EventKey,
    /// The LP's previous record, or [`NONE`].
    pub(super) prev: Seq,
    /// The latest record of the LP at or before this one with a state save (see the module
    /// docs).
    pub(super) base: Seq,
    /// Where this record's effects start in the effect log (and where its save is in the
    /// save log, if it made one): the logs' lengths when it was written.
    pub(super) effects_at: Seq,
    pub(super) saves_at: Seq,
    /// Records of the LP since its base, this one included.
    pub(super) since: u32,
    /// How many effects it logged.
    pub(super) effects: u32,
    /// The LP's index in the worker, and its id.
    pub(super) lp: u32,
    pub(super) id: LpId,
    pub(super) status: Status,
    /// Whether it made a state save (at `saves_at`).
    pub(super) saved: bool,
    /// The event, to put back on rollback and to run again when coasting (taken when the
    /// record dies).
    pub(super) event: Option<M::Event>,
    /// What the handler emitted; leaves at commit.
    pub(super) outputs: Vec<M::Output>,
}

/// A log in which every entry has a [`Seq`]: pushed at the back, dropped from the front.
#[derive(Debug)]
pub(super) struct Seqd<T> {
    entries: VecDeque<T>,
    /// The seq of `entries[0]`.
    front: Seq,
}

impl<T> Default for Seqd<T> {
    fn default() -> Seqd<T> {
        Seqd {
            entries: VecDeque::new(),
            front: 0,
        }
    }
}

impl<T> Seqd<T> {
    /// The seq of the first entry still held.
    #[inline]
    pub(super) fn front(&self) -> Seq {
        self.front
    }

    /// The seq the next entry pushed gets.
    #[inline]
    pub(super) fn end(&self) -> Seq {
        self.front + self.entries.len() as Seq
    }

    /// Entries held.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether `seq` names an entry still held.
    #[inline]
    pub(super) fn holds(&self, seq: Seq) -> bool {
        seq >= self.front && seq < self.end()
    }

    #[inline]
    pub(super) fn push(&mut self, entry: T) -> Seq {
        self.entries.push_back(entry);
        self.end() - 1
    }

    #[inline]
    pub(super) fn get(&self, seq: Seq) -> &T {
        &self.entries[(seq - self.front) as usize]
    }

    #[inline]
    pub(super) fn get_mut(&mut self, seq: Seq) -> &mut T {
        &mut self.entries[(seq - self.front) as usize]
    }

    /// The first entry held.
    #[inline]
    pub(super) fn first(&self) -> Option<&T> {
        self.entries.front()
    }

    /// Drops every entry before `seq`, in place: one `drain` rather than a `pop_front` per
    /// entry, which moved each entry out to drop it (for entries without drop glue, the
    /// drain only moves the front).
    #[inline]
    pub(super) fn drop_before(&mut self, seq: Seq) {
        let n = seq
            .saturating_sub(self.front)
            .min(self.entries.len() as Seq);
        if n > 0 {
            self.entries.drain(..n as usize);
            self.front += n;
        }
    }

    /// The entries from `seq` on, in order, with their seqs.
    pub(super) fn iter_from(&self, seq: Seq) -> impl Iterator<Item = (Seq, &T)> {
        let skip = seq.saturating_sub(self.front) as usize;
        (self.front + skip as Seq..).zip(self.entries.range(skip..))
    }

    /// Every entry with its seq, mutably.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (Seq, &mut T)> {
        (self.front..).zip(self.entries.iter_mut())
    }
}

/// A worker's three logs.
pub(super) struct Logs<M: LogicalProcess> {
    pub(super) records: Seqd<Rec<M>>,
    /// State saves, taken out (`None`) when a rollback restores one or its record dies.
    pub(super) saves: Seqd<Option<Saved<M>>>,
    /// Effects; an undone one is left as [`Logged::Taken`].
    pub(super) effects: Seqd<Logged<M::Event>>,
    /// The live records the last commit left, and the end of the record log then (see
    /// [`Logs::live_bound`]).
    live_at_commit: u64,
    end_at_commit: Seq,
}

impl<M: LogicalProcess> Default for Logs<M> {
    fn default() -> Logs<M> {
        Logs {
            records: Seqd::default(),
            saves: Seqd::default(),
            effects: Seqd::default(),
            live_at_commit: 0,
            end_at_commit: 0,
        }
    }
}

impl<M: LogicalProcess> Logs<M> {
    /// At most how many records are live: those the last commit left, plus every record
    /// written since (some of which a rollback or a migration may have ended already). The
    /// cap on optimism counts these, not the log's length: after a rollback the log holds
    /// undone records behind the oldest live one until GVT passes it, and a cap on the
    /// length let a rank of a distributed run that had rolled back hold its log at the cap,
    /// run one event per GVT round and crawl: PHOLD 1,024 LPs on 2 ranks took 2–9 s in
    /// place of 0.6 s, at random from run to run.
    #[inline]
    pub(super) fn live_bound(&self) -> u64 {
        self.live_at_commit + (self.records.end() - self.end_at_commit)
    }

    /// A commit left `live` records live.
    pub(super) fn committed(&mut self, live: u64) {
        self.live_at_commit = live;
        self.end_at_commit = self.records.end();
    }

    /// Whether record `seq` is held and live.
    #[inline]
    pub(super) fn is_live(&self, seq: Seq) -> bool {
        self.records.holds(seq) && self.records.get(seq).status == Status::Live
    }

    /// Drops the front of the logs up to the first record that must stay: a live one, or one
    /// at or after `pin` (see the module docs). Says how many state saves went, and the heap
    /// the model reports for them.
    pub(super) fn forget(&mut self, pin: Seq) -> Forgotten {
        let front = self.records.front();
        let kept = self
            .records
            .iter_from(front)
            .find(|(seq, record)| record.status == Status::Live || *seq >= pin)
            .map_or(self.records.end(), |(seq, _)| seq);
        self.records.drop_before(kept);
        let mut forgotten = Forgotten::default();
        let (saves_to, effects_to) = match self.records.first() {
            Some(record) => (record.saves_at, record.effects_at),
            None => (self.saves.end(), self.effects.end()),
        };
        let front = self.saves.front();
        for (_, save) in self
            .saves
            .iter_from(front)
            .take(saves_to.saturating_sub(front) as usize)
        {
            if let Some((model, _)) = save {
                forgotten.saves += 1;
                forgotten.save_heap += model.heap_bytes() as u64;
            }
        }
        self.saves.drop_before(saves_to);
        self.effects.drop_before(effects_to);
        forgotten
    }
}

impl<M: LogicalProcess> Logs<M> {
    /// The state saves held, the heap the model reports for them, and the outputs of live
    /// records (for the memory account, after a migration).
    pub(super) fn tally(&self) -> Tally {
        let mut tally = Tally::default();
        for (_, save) in self.saves.iter_from(self.saves.front()) {
            if let Some((model, _)) = save {
                tally.saves += 1;
                tally.save_heap += model.heap_bytes() as u64;
            }
        }
        for (_, record) in self.records.iter_from(self.records.front()) {
            if record.status == Status::Live {
                tally.outputs += record.outputs.len();
            }
        }
        tally
    }
}

/// What [`Logs::tally`] counts.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub(super) saves: usize,
    pub(super) save_heap: u64,
    pub(super) outputs: usize,
}

/// What [`Logs::forget`] dropped.
#[derive(Debug, Default)]
pub(super) struct Forgotten {
    pub(super) saves: usize,
    pub(super) save_heap: u64,
}

/// A record on its way to another worker with its LP (load balancing): the record (its
/// `prev`, `base`, `saves_at` and `effects_at` still the source's), its save and effects.
pub(crate) struct Moved<M: LogicalProcess> {
    pub(super) seq: Seq,
    pub(super) record: Rec<M>,
    pub(super) save: Option<Saved<M>>,
    pub(super) effects: Vec<Logged<M::Event>>,
}

impl<M: LogicalProcess> Logs<M> {
    /// Takes out every record of the chain ending at `last` that the logs still hold, oldest
    /// first, with their saves and effects; the records left behind are dead.
    pub(super) fn take_chain(&mut self, last: Seq) -> Vec<Moved<M>> {
        let mut moved = Vec::new();
        let mut seq = last;
        while self.records.holds(seq) {
            let record = self.records.get_mut(seq);
            let prev = record.prev;
            let taken = Rec {
                key: record.key,
                prev: record.prev,
                base: record.base,
                effects_at: record.effects_at,
                saves_at: record.saves_at,
                since: record.since,
                effects: record.effects,
                lp: record.lp,
                id: record.id,
                status: record.status,
                saved: record.saved,
                event: record.event.take(),
                outputs: std::mem::take(&mut record.outputs),
            };
            record.status = Status::Dead;
            let save = if taken.saved {
                self.saves.get_mut(taken.saves_at).take()
            } else {
                None
            };
            let effects = (taken.effects_at..taken.effects_at + Seq::from(taken.effects))
                .map(|at| std::mem::replace(self.effects.get_mut(at), Logged::Taken))
                .collect();
            moved.push(Moved {
                seq,
                record: taken,
                save,
                effects,
            });
            seq = prev;
        }
        moved.reverse();
        moved
    }

    /// Appends records taken out of another worker's logs for its LP `l` here, oldest first,
    /// with new seqs and links. Returns a function from their old seqs to the new ones
    /// ([`NONE`] for a seq that did not come).
    pub(super) fn adopt(&mut self, l: u32, moved: Vec<Moved<M>>) -> impl Fn(Seq) -> Seq + use<M> {
        let mut renamed: Vec<(Seq, Seq)> = Vec::with_capacity(moved.len());
        for Moved {
            seq,
            mut record,
            save,
            effects,
        } in moved
        {
            let rename = |old: Seq| {
                renamed
                    .binary_search_by_key(&old, |&(from, _)| from)
                    .map_or(NONE, |at| renamed[at].1)
            };
            record.prev = rename(record.prev);
            record.base = rename(record.base);
            record.lp = l;
            record.saves_at = self.saves.end();
            if record.saved {
                self.saves.push(save);
            }
            record.effects_at = self.effects.end();
            record.effects = effects.len() as u32;
            for effect in effects {
                self.effects.push(effect);
            }
            let new = self.records.push(record);
            if self.records.get(new).base == NONE && self.records.get(new).saved {
                self.records.get_mut(new).base = new;
            }
            renamed.push((seq, new));
        }
        move |old: Seq| {
            renamed
                .binary_search_by_key(&old, |&(from, _)| from)
                .map_or(NONE, |at| renamed[at].1)
        }
    }
}
