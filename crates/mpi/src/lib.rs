//! warpsim's Time Warp transport over MPI: runs one kernel rank per MPI process.
//!
//! The crate implements [`warpsim_timewarp::cluster::Transport`] over `MPI_COMM_WORLD` with
//! the [`mpi`](https://docs.rs/mpi) crate (rsmpi). Batches travel as raw bytes (`MPI_BYTE`,
//! no derived datatypes) with one fixed tag; the kernel encodes and decodes them.
//!
//! # Building
//!
//! Everything sits behind the cargo feature **`mpi`**, which needs a system MPI library
//! (MPICH or Open MPI, with `mpicc` on the `PATH`) and `libclang` to generate the bindings.
//! Without the feature the crate is empty, so the workspace builds on machines without MPI.
//! The command-line tool forwards the feature:
//!
//! ```text
//! cargo build --release --features warpsim-cli/mpi
//! mpirun -np 4 target/release/warpsim ...
//! ```
//!
//! With the feature the crate exposes `Mpi` (the initialised library: `Mpi::init`, `rank`,
//! `ranks`, `transport`, `abort`) and `MpiTransport` (the [`Transport`]).
//!
//! # Threading model
//!
//! MPI is initialised with `MPI_THREAD_FUNNELED`: the process may run many threads, but only
//! the one that called `Mpi::init` calls MPI. That thread is the rank's communication thread:
//! it owns the `Mpi` and its `MpiTransport`, while worker threads only compute. The types are
//! neither `Send` nor `Sync`, so the compiler keeps them on that thread.
//!
//! # Failures
//!
//! MPI's default error handler (`MPI_ERRORS_ARE_FATAL`) ends the whole job on a library
//! error, and launchers end the job when a rank dies, so no call here reports a lost peer.
//! A transport call that gets no answer for its timeout while MPI still holds its buffers
//! cannot return (the buffers would be freed under MPI), so it prints the timeout and aborts
//! the job with `MPI_Abort`: no rank is left hanging.
//!
//! [`Transport`]: warpsim_timewarp::cluster::Transport

#[cfg(feature = "mpi")]
mod transport;

#[cfg(feature = "mpi")]
pub use transport::{Mpi, MpiTransport};
