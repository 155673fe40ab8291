#!/usr/bin/env bash
# Tools for the side-by-side benchmarks in BENCHMARKS.md that compare warpsim with other
# programs: Debian's Go (to build the seed article's Go programs in benches/pets-go/) and
# SimPy (benches/pets_simpy.py, benches/bank_simpy.py). Not needed to build or test warpsim, nor by CI.
#
#   bash scripts/install-bench-tools.sh
set -euo pipefail
if ! command -v go >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq golang-go
fi
if ! python3 -c 'import simpy' >/dev/null 2>&1; then
    python3 -m pip install --quiet simpy
fi
go version
python3 -c 'import simpy; print("simpy", simpy.__version__)'
