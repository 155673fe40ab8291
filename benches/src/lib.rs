//! Benchmarks for warpsim live in `benches/`; run them with `cargo bench -p warpsim-benches`.
//! This library is empty on purpose: criterion needs a package to hang the bench targets on.
