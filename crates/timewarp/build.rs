//! Declares the `loom` cfg, under which the GVT protocol's atomics come from `loom` so that
//! its loom tests can check every interleaving
//! (`RUSTFLAGS="--cfg loom" cargo test -p warpsim-timewarp --release --lib gvt`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(loom)");
}
