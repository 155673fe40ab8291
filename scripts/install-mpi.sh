#!/usr/bin/env bash
# Installs what the MPI build needs (an MPI implementation, its headers, and libclang for
# rsmpi's bindgen) when it is missing. Debian/Ubuntu: MPICH from the distribution (~45 s).
# Open MPI works too: install it instead and this script leaves it alone.
set -euo pipefail
have_mpi() { command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; }
have_clang() { ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || ls /usr/lib/*/libclang*.so* >/dev/null 2>&1; }
if have_mpi && have_clang; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-mpi: no MPI found and no apt-get; install MPICH or Open MPI (with mpicc) and libclang, then retry" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-mpi: installing mpich libmpich-dev libclang-dev" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null || true
$SUDO apt-get install -y -qq mpich libmpich-dev libclang-dev >/dev/null
have_mpi || { echo "install-mpi: mpicc/mpirun still missing after apt-get" >&2; exit 1; }
