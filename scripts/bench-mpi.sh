#!/usr/bin/env bash
# Time Warp over MPI: repeated equivalence runs, then PHOLD rates side by side with our
# sequential and threaded kernels (BENCHMARKS.md, "Time Warp over MPI").
#
#   bash scripts/bench-mpi.sh [REPEATS]      # default 20 repeats of each equivalence case
#
# Every equivalence case runs REPEATS times on 2 and 3 ranks; any run whose trace hash or
# results differ from the sequential kernel's, or that fails or hangs, is reported and makes
# the script exit non-zero at the end (after the rates).
set -uo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-20}
bash scripts/install-mpi.sh || exit 1
cargo build --release --features warpsim-cli/mpi --bin warpsim || exit 1
BIN=target/release/warpsim
OVERSUB=""
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then OVERSUB="--oversubscribe"; fi
failures=0

# The fields of a JSON report that must not depend on the kernel.
essence() {
    python3 -c '
import json, sys
lines = [l for l in sys.stdin if l.startswith("{")]
d = json.loads(lines[0]) if len(lines) == 1 else {"bad": len(lines)}
for k in ("kernel", "timewarp", "events_per_second", "wall_seconds", "peak_rss_bytes",
          "events_processed", "peak_pending", "granularity_us"):
    d.pop(k, None)
print(json.dumps(d, sort_keys=True))'
}

cases=(
    "phold --lps 1024 --end 50 --seed 11"
    "pets --style events --tasks 20000 --seed 3"
    "sharks --creatures 1000 --sectors 8x8 --end 500 --radius-min 50 --radius-max 200 --cancel app --seed 5"
    "sharks --creatures 1000 --sectors 8x8 --end 500 --radius-min 50 --radius-max 200 --cancel kernel --seed 5"
)
echo "== equivalence: each case ${REPEATS}× on 2 and 3 ranks × 2 threads"
for case in "${cases[@]}"; do
    expected=$($BIN run $case --json | essence)
    ok=0
    for ranks in 2 3; do
        for _ in $(seq "$REPEATS"); do
            got=$(timeout 300 mpirun $OVERSUB -np "$ranks" $BIN run $case --kernel mpi --threads 2 --json 2>/tmp/bench-mpi.err | essence)
            if [ "$got" == "$expected" ]; then
                ok=$((ok + 1))
            else
                failures=$((failures + 1))
                echo "FAILED: $case on $ranks ranks: $(head -c 300 /tmp/bench-mpi.err)"
            fi
        done
    done
    echo "$case: $ok of $((2 * REPEATS)) runs identical to the sequential kernel"
done

rate() {
    python3 -c '
import json, sys
lines = [l for l in sys.stdin if l.startswith("{")]
d = json.loads(lines[0])
eff = d.get("timewarp", {}).get("commit_ratio")
extra = f", commit ratio {eff:.2f}" if eff is not None else ""
rate, wall, hash = d["events_per_second"] / 1e6, d["wall_seconds"], d["trace_hash"]
print(f"{rate:.3f} M events/s ({wall:.2f} s, hash {hash}{extra})")'
}

echo "== PHOLD rates (remote 0.25, lookahead 0.1, mean 1, population 1, seed 7)"
for spec in "1024 2000" "32768 150" "1048576 5"; do
    set -- $spec
    args="phold --lps $1 --end $2 --seed 7 --json"
    echo "-- $1 LPs, end $2"
    echo "sequential:              $($BIN run $args | rate)"
    echo "threads, 2:              $($BIN run $args --kernel timewarp --threads 2 | rate)"
    echo "mpi, 2 ranks × 1:        $(timeout 600 mpirun $OVERSUB -np 2 $BIN run $args --kernel mpi --threads 1 | rate)"
    echo "mpi, 2 ranks × 1, -w 1:  $(timeout 600 mpirun $OVERSUB -np 2 $BIN run $args --kernel mpi --threads 1 --window 1 | rate)"
done

# Memory per rank (BENCHMARKS.md, "Memory per rank"): peak RSS of every rank, from GNU time,
# for a large PHOLD at start-up only (end 0.01: init, placement, workers' records) and for a
# whole run, on 1, 2 and 3 ranks (3 oversubscribes a 2-core machine).
command -v /usr/bin/time >/dev/null || sudo_apt=1
if [ "${sudo_apt:-0}" = 1 ]; then
    if [ "$(id -u)" = 0 ]; then apt-get install -y time >/dev/null; else sudo apt-get install -y time >/dev/null; fi
fi
echo "== peak RSS per rank, PHOLD 2,097,152 LPs, 1 thread per rank"
for end in 0.01 2; do
    for ranks in 1 2 3; do
        rss=$(timeout 600 mpirun $OVERSUB -np "$ranks" /usr/bin/time -f "rss-kb %M" $BIN run phold --lps 2097152 --end $end --seed 7 --kernel mpi --threads 1 --json 2>&1 \
            | grep -oE "rss-kb [0-9]+" | awk '{printf "%.0f MB ", $2 / 1024}')
        echo "end $end, $ranks rank(s): $rss"
    done
done

if [ "$failures" -gt 0 ]; then
    echo "$failures equivalence run(s) FAILED"
    exit 1
fi
echo "all equivalence runs identical"
