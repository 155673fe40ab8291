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
