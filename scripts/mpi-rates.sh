#!/usr/bin/env bash
# PHOLD over MPI (2 ranks × 1 thread) for two builds, interleaved run by run, beside the
# sequential kernel of the second: the rates of BENCHMARKS.md, "Time Warp over MPI".
#
#   bash scripts/mpi-rates.sh [RUNS] [OLD] [NEW]
#
# RUNS (default 5) runs of each build per size; OLD and NEW are `warpsim` binaries built with
# `--features warpsim-cli/mpi` (default: both target/release/warpsim, built here). Prints every
# run (events/s, wall, GVT rounds, commit ratio, trace hash), then the medians. Every run of
# a size must print the same trace hash: the script exits non-zero otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
bash scripts/install-mpi.sh || exit 1
if [ $# -lt 3 ]; then
    cargo build --release --features warpsim-cli/mpi --bin warpsim || exit 1
fi
OLD=${2:-target/release/warpsim}
NEW=${3:-target/release/warpsim}
OVERSUB=""
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then OVERSUB="--oversubscribe"; fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT

row() {
    python3 -c '
import json, sys
label = sys.argv[1]
d = json.loads([l for l in sys.stdin if l.startswith("{")][0])
t = d.get("timewarp") or {}
rate, wall, ratio = d["events_per_second"] / 1e6, d["wall_seconds"], t.get("commit_ratio", 1.0)
print(label, "%.3f" % rate, "%.3f" % wall, t.get("gvt_rounds", "-"), "%.3f" % ratio, d["trace_hash"])' "$1"
}

echo "size build M_events/s wall_s gvt_rounds commit_ratio trace_hash"
for spec in "1024 2000" "32768 150" "1048576 5"; do
    set -- $spec
    args="phold --lps $1 --end $2 --seed 7 --json"
    for _ in $(seq "$RUNS"); do
        for build in old new; do
            bin=$OLD
            [ "$build" = new ] && bin=$NEW
            timeout 600 mpirun $OVERSUB -np 2 "$bin" run $args --kernel mpi --threads 1 2>/dev/null |
                row "$1 $build" | tee -a "$out"
        done
        "$NEW" run $args | row "$1 sequential" | tee -a "$out"
    done
done

python3 - "$out" <<'EOF'
import collections, statistics, sys
rates, hashes = collections.defaultdict(list), collections.defaultdict(set)
for line in open(sys.argv[1]):
    size, build, rate, _wall, _rounds, _ratio, trace = line.split()
    rates[(int(size), build)].append(float(rate))
    hashes[int(size)].add(trace)
print("\nmedians (M events/s):")
for size in sorted(hashes):
    row = {build: statistics.median(rates[(size, build)]) for build in ("old", "new", "sequential")}
    print(f"{size:>9} LPs: old {row['old']:.2f}, new {row['new']:.2f} ({row['new'] / row['old']:.2f}×), "
          f"sequential {row['sequential']:.2f} (new ÷ sequential {row['new'] / row['sequential']:.2f})")
bad = [size for size, seen in hashes.items() if len(seen) != 1]
if bad:
    print("trace hashes differ for", bad)
    sys.exit(1)
EOF
