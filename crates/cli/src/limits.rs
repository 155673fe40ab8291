//! Sizes the user chose, checked before anything is allocated: the memory a run will need
//! against the memory the machine can give, and worker threads against what can help.
//!
//! A count on the command line (`--lps`, `--population`, `--replications`, `--gates`, `--n`,
//! `--creatures`, a sweep grid) sizes vectors the run allocates at once. Without a check, an
//! absurd count ends in the allocator's abort ("memory allocation of N bytes failed") after
//! the run has started, or in the kernel's OOM killer. Here each scenario states its
//! [`Demand`]s — how many items of how many bytes, the bytes taken from the real types' sizes —
//! and the run is refused in one line naming the flag when their sum exceeds what is
//! available.
//!
//! # Available memory
//!
//! The smallest of: `MemAvailable` in `/proc/meminfo`; the cgroup v2 limit
//! (`/sys/fs/cgroup/memory.max` less `memory.current`), which is what a container may use; and
//! the address-space limit (`ulimit -v`, read from `/proc/self/limits`) less what the process
//! has mapped. Where none of them can be read (not Linux), nothing is refused.
//!
//! # Estimates
//!
//! The per-item sizes are `size_of` the types the kernels store; those of items kept in
//! vectors that grow by doubling (pending events, outcomes) are doubled, since such a vector
//! holds up to twice what it needs. They are lower bounds of the real footprint (PHOLD's
//! sequential run measured 150 bytes per pending event and 260 per LP with its event, against
//! 88 and 88 + 104 estimated here), so a run that is refused could not have fitted, and one
//! that passes may still be tight.

use std::mem::size_of;

use anyhow::{Result, bail};
use warpsim_core::kernel_api::LpMeta;
use warpsim_core::{EventKey, LpId};

use crate::run::Scenario;

/// A number of items of one kind a run allocates, and the flag that chose it.
#[derive(Debug, Clone)]
pub(crate) struct Demand {
    /// The flag (or flags) that set the count, e.g. `--lps`.
    pub(crate) flag: &'static str,
    /// The flag's value as given (for the message).
    pub(crate) value: String,
    /// What the items are, plural (`LPs`, `pending events`).
    pub(crate) what: &'static str,
    pub(crate) items: u128,
    pub(crate) bytes_each: u64,
}

impl Demand {
    pub(crate) fn new(
        flag: &'static str,
        value: impl ToString,
        what: &'static str,
        items: u128,
        bytes_each: u64,
    ) -> Demand {
        Demand {
            flag,
            value: value.to_string(),
            what,
            items,
            bytes_each,
        }
    }

    fn bytes(&self) -> u128 {
        self.items.saturating_mul(u128::from(self.bytes_each))
    }
}

/// Bytes a kernel keeps per LP of type `M`: the model and the kernel's per-LP record (not
/// doubled: LP vectors are built at their exact size).
pub(crate) fn lp_bytes<M>() -> u64 {
    (size_of::<M>() + size_of::<LpMeta>()) as u64
}

/// Bytes a kernel keeps per pending event of type `E`: its key, the event, the destination,
/// its critical time and the queue's locator.
pub(crate) fn event_bytes<E>() -> u64 {
    2 * (size_of::<EventKey>()
        + size_of::<E>()
        + size_of::<LpId>()
        + size_of::<f64>()
        + size_of::<u64>()) as u64
}

/// Bytes of a vector of `T`.
pub(crate) fn vec_bytes<T>() -> u64 {
    2 * size_of::<T>() as u64
}

/// The bytes this process can still allocate, if the platform says (see the module docs).
pub(crate) fn available_bytes() -> Option<u64> {
    let mut smallest: Option<u64> = None;
    let mut consider = |bytes: Option<u64>| {
        if let Some(bytes) = bytes {
            smallest = Some(smallest.map_or(bytes, |s| s.min(bytes)));
        }
    };
    consider(meminfo_available());
    consider(cgroup_available());
    consider(address_space_available());
    smallest
}

fn meminfo_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text
        .lines()
        .find(|line| line.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

fn cgroup_available() -> Option<u64> {
    let read = |name: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{name}")).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?; // "max": no limit
    let current: u64 = read("memory.current")
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0);
    Some(max.saturating_sub(current))
}

fn address_space_available() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max address space"))?;
    // "Max address space   <soft>   <hard>   bytes"; "unlimited" parses as no limit.
    let soft: u64 = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let mapped_kib: u64 = status
        .lines()
        .find(|line| line.starts_with("VmSize:"))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(0);
    Some(soft.saturating_sub(mapped_kib.saturating_mul(1024)))
}

/// Bytes as a short human figure: `1.5 GiB`.
pub(crate) fn human_bytes(bytes: u128) -> String {
    const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else if value >= 1024.0 {
        format!("{value:.3e} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Refuses `demands` whose sum exceeds `available` bytes, naming the flag of the largest.
///
/// # Errors
///
/// One line: the flag and its value, what it allocates, the total, and what is available.
pub(crate) fn check_against(demands: &[Demand], available: Option<u64>) -> Result<()> {
    let Some(available) = available else {
        return Ok(());
    };
    let total: u128 = demands
        .iter()
        .map(Demand::bytes)
        .fold(0, u128::saturating_add);
    if total <= u128::from(available) {
        return Ok(());
    }
    let Some(largest) = demands.iter().max_by_key(|demand| demand.bytes()) else {
        return Ok(());
    };
    bail!(
        "{} {}: the run needs at least {} ({} {} of {} bytes{}), but only {} of memory is \
         available",
        largest.flag,
        crate::text::excerpt(&largest.value),
        human_bytes(total),
        largest.items,
        largest.what,
        largest.bytes_each,
        if demands.len() > 1 { ", and more" } else { "" },
        human_bytes(u128::from(available))
    )
}

/// Checks a scenario's demands against the memory available. With replications, as many runs
/// as rayon has threads are in memory at once, and every run's outcome is kept.
///
/// # Errors
///
/// See [`check_against`].
pub(crate) fn check_run(scenario: &dyn Scenario) -> Result<()> {
    let mut demands = scenario.demands();
    if let Some(replications) = scenario.run_args().replications {
        let at_once =
            crate::analysis::runs_at_once(scenario).min(replications.max(1) as usize) as u128;
        for demand in &mut demands {
            demand.items = demand.items.saturating_mul(at_once);
        }
        demands.push(Demand::new(
            "--replications",
            replications,
            "kept outcomes",
            u128::from(replications),
            vec_bytes::<anyhow::Result<crate::run::Outcome>>() + 2048,
        ));
    }
    check_against(&demands, available_bytes())
}

/// The most worker threads a run gets per core: beyond a few per core, threads only add
/// switching (and each costs a stack and its share of the kernel's buffers).
const THREADS_PER_CORE: usize = 4;

/// The most worker threads a run is given on this machine: [`THREADS_PER_CORE`] per core, at
/// least 8.
pub(crate) fn thread_ceiling() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    (THREADS_PER_CORE * cores).max(8)
}

/// The worker threads a Time Warp run of `n_lps` LPs is given for `requested`: no more than
/// the LPs (a thread without an LP has nothing to do) and no more than
/// [`THREADS_PER_CORE`] per core (at least 8, so that small machines can still test
/// many-thread runs). When the request is capped and `tell` is set, one note on stderr says
/// so and why.
pub(crate) fn worker_threads(requested: usize, n_lps: usize, tell: bool) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let ceiling = thread_ceiling();
    let (threads, why) = if n_lps >= 1 && requested > n_lps && n_lps <= ceiling {
        (n_lps, format!("one per LP: the model has {n_lps} LPs"))
    } else if requested > ceiling {
        (
            ceiling,
            format!("{THREADS_PER_CORE} per core on this machine's {cores} cores"),
        )
    } else {
        return requested;
    };
    if tell {
        crate::out::note(&format!(
            "--threads {requested} capped to {threads} ({why}; more threads cannot help)"
        ));
    }
    threads
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demands_over_the_memory_name_the_largest_flag() {
        let demands = [
            Demand::new("--lps", 64, "LPs", 64, 100),
            Demand::new(
                "--population",
                4294967295u64,
                "pending events",
                64 * 4294967295,
                96,
            ),
        ];
        assert!(check_against(&demands, None).is_ok());
        assert!(check_against(&demands[..1], Some(1 << 30)).is_ok());
        let error = check_against(&demands, Some(1 << 30))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("--population 4294967295: the run needs at least 24.0 TiB"),
            "{error}"
        );
        assert!(error.contains("only 1.0 GiB"), "{error}");
        // No overflow, whatever the counts.
        let huge = [Demand::new("--n", u64::MAX, "torches", u128::MAX, u64::MAX)];
        assert!(check_against(&huge, Some(u64::MAX)).is_err());
    }

    #[test]
    fn bytes_read_well() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
    }

    #[test]
    fn threads_are_capped_at_the_lps_and_the_cores() {
        assert_eq!(worker_threads(2, 64, false), 2);
        assert_eq!(
            worker_threads(10_000, 64, false).min(64),
            worker_threads(10_000, 64, false)
        );
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let ceiling = (THREADS_PER_CORE * cores).max(8);
        assert_eq!(worker_threads(4_294_967_296, 1_000_000, false), ceiling);
        assert_eq!(worker_threads(10_000, 64, false), ceiling.min(64));
        assert_eq!(worker_threads(3, 2, false), 2);
        assert_eq!(worker_threads(1, 1, false), 1);
    }
}
