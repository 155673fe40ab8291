//! Random streams: one per LP, derived from the run's seed.

use rand::SeedableRng;

/// The random generator each LP gets from [`Ctx::rng`](crate::Ctx::rng): xoshiro256++.
///
/// Chosen because it is fast (about 1 ns per number), small (32 bytes of state, cloned with
/// the LP on every state save), has a documented, platform-independent output, and passes
/// BigCrush. Use it with `rand`'s `RngExt` methods and `rand_distr` distributions.
pub type LpRng = rand_xoshiro::Xoshiro256PlusPlus;

const fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Derives the seed of stream `stream` from a base seed; distinct streams of one seed, and
/// the same stream of distinct seeds, give unrelated seeds. Used for per-LP streams and for
/// replications (`derive_seed(base, replication_index)`).
///
/// ```
/// use warpsim_core::derive_seed;
/// assert_ne!(derive_seed(7, 0), derive_seed(7, 1));
/// assert_ne!(derive_seed(7, 0), derive_seed(8, 0));
/// assert_eq!(derive_seed(7, 3), derive_seed(7, 3));
/// ```
pub const fn derive_seed(seed: u64, stream: u64) -> u64 {
    splitmix64(splitmix64(seed) ^ splitmix64(stream ^ 0x5851_f42d_4c95_7f2d))
}

/// The random stream of LP `lp` in a run with seed `seed`.
pub(crate) fn lp_rng(seed: u64, lp: u32) -> LpRng {
    LpRng::seed_from_u64(derive_seed(seed, u64::from(lp)))
}

/// FNV-1a, 64 bits: a hash of a stream's name that never changes between platforms or
/// Rust versions (std's hasher may), so a name gives the same stream everywhere.
const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}

/// The random stream named `name` of LP `lp` in a run with seed `seed`: derived from the
/// three alone, so the same name draws the same numbers in every run with that seed,
/// whatever else the model changes — common random numbers across configurations (give
/// arrivals and services their own streams, and a change of service policy no longer shifts
/// the arrivals). Independent of the LP's main stream ([`Ctx::rng`](crate::Ctx::rng)) and of
/// every other name. Inside a handler, [`Ctx::stream`](crate::Ctx::stream) is the same.
///
/// ```
/// use rand::RngExt;
/// use warpsim_core::{LpId, stream_rng};
/// let mut a = stream_rng(7, LpId::new(0), "arrivals");
/// let mut b = stream_rng(7, LpId::new(0), "arrivals");
/// assert_eq!(a.random::<u64>(), b.random::<u64>());
/// let mut c = stream_rng(7, LpId::new(0), "service");
/// assert_ne!(a.random::<u64>(), c.random::<u64>());
/// ```
pub fn stream_rng(seed: u64, lp: crate::LpId, name: &str) -> LpRng {
    let per_lp = derive_seed(seed, u64::from(lp.get()));
    LpRng::seed_from_u64(derive_seed(
        per_lp ^ 0x2545_f491_4f6c_dd1d,
        fnv1a(name.as_bytes()),
    ))
}
