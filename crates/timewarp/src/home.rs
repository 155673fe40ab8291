//! Where a worker thread runs: each starts on a CPU of its own, and goes back there when the
//! scheduler woke it beside another worker.
//!
//! Linux starts a new thread on an idle CPU near its parent, wakes a thread that another
//! woke (a message through a channel) on the waker's CPU when that looks cheaper, and
//! spreads busy threads again only at its next load balance, tens of milliseconds later. On
//! 2 CPUs both workers of a run often shared one CPU for their first 10–20 ms, taking turns
//! every 0.7 ms while the other CPU idled (`perf sched timehist`), each waiting for the
//! other's promises meanwhile: a tenth of a 0.17 s run (BENCHMARKS.md, "Two workers on one
//! CPU"). Pinned for good, a worker would stay on a CPU that another process then keeps
//! busy (issue 13, part 5), so a pin lasts only for the move: setting the affinity to one
//! CPU moves the thread before the call returns, and restoring it moves nothing.

/// A worker thread's own CPU.
#[derive(Debug)]
pub(crate) struct Home {
    #[cfg(target_os = "linux")]
    place: Option<(usize, nix::sched::CpuSet)>,
    /// Returns still allowed ([`RETURNS`]).
    #[cfg(target_os = "linux")]
    returns: u8,
}

/// A worker goes back home at most this many times a run. The scheduler may have moved it
/// for a reason: another process keeps its home CPU busy. Sent back every time, a worker beside
/// a busy loop ran PHOLD 16,384 LPs end 1000 2.7 times as long as on 1 thread, against 1.15
/// times when left where the scheduler put it (`busy-core.sh 3`); the start-up moves it fixes
/// take one or two returns.
#[cfg(target_os = "linux")]
const RETURNS: u8 = 3;

#[cfg(target_os = "linux")]
impl Home {
    /// Moves the calling thread onto CPU `slot` (counted round robin among the CPUs the
    /// process may use), then lets the scheduler move it again. No home when there is one CPU
    /// to use, or the system does not say which.
    pub(crate) fn settle(slot: usize) -> Home {
        use nix::sched::{CpuSet, sched_getaffinity};
        use nix::unistd::Pid;
        let place = sched_getaffinity(Pid::from_raw(0))
            .ok()
            .and_then(|allowed| {
                let cpus: Vec<usize> = (0..CpuSet::count())
                    .filter(|&cpu| allowed.is_set(cpu).unwrap_or(false))
                    .collect();
                (cpus.len() > 1).then(|| (cpus[slot % cpus.len()], allowed))
            });
        let home = Home {
            place,
            returns: RETURNS,
        };
        home.go();
        home
    }

    /// Goes back home if the thread runs elsewhere (after a wait that blocked: the waker's
    /// CPU is where the scheduler likes to put it).
    #[inline]
    pub(crate) fn return_home(&mut self) {
        if self.returns > 0
            && let Some((cpu, _)) = self.place
            && nix::sched::sched_getcpu().is_ok_and(|now| now != cpu)
        {
            self.returns -= 1;
            self.go();
        }
    }

    fn go(&self) {
        use nix::sched::{CpuSet, sched_setaffinity};
        use nix::unistd::Pid;
        let Some((cpu, allowed)) = &self.place else {
            return;
        };
        let me = Pid::from_raw(0);
        let mut one = CpuSet::new();
        if one.set(*cpu).is_ok() && sched_setaffinity(me, &one).is_ok() {
            // (Should restoring fail, the pin stays: nothing to do about it but go on.)
            let _ = sched_setaffinity(me, allowed);
        }
    }
}

/// Elsewhere the scheduler places the workers as it will.
#[cfg(not(target_os = "linux"))]
impl Home {
    pub(crate) fn settle(_slot: usize) -> Home {
        Home {}
    }

    #[inline]
    pub(crate) fn return_home(&mut self) {}
}
