#!/usr/bin/env bash
# The project's test command (the second command in README.md; CI runs it too).
# Installs MPI where it is missing (scripts/install-mpi.sh: MPICH from apt, about 45 s), then
# runs every test with the MPI kernel built in, including the `mpirun` integration tests.
# Release mode: the differential queue tests and model oracles run millions of operations,
# which takes minutes unoptimised and seconds optimised.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-mpi.sh
cargo test --workspace --release --features warpsim-cli/mpi,warpsim-mpi/mpi "$@"
