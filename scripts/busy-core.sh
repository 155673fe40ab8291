#!/usr/bin/env bash
# Time Warp on a shared machine (issue #8, part 5): while another process keeps one core
# busy, 2 threads should be no slower than 1. Runs each scenario on 1 and 2 threads,
# alternating, with a busy loop running beside them the whole time, and prints the median
# wall times and their ratio. Start it on an otherwise quiet machine (`uptime` is printed).
#
#   bash scripts/busy-core.sh [reps] [path/to/warpsim]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
bin=${2:-}
if [ -z "$bin" ]; then
    cargo build --release -q -p warpsim-cli
    bin=target/release/warpsim
fi
uptime
# The other process: one core's worth of busy work, stopped on exit.
(while :; do :; done) &
busy=$!
trap 'kill $busy 2>/dev/null || true' EXIT
scenarios=(
    "PHOLD 16,384 LPs end 100|run phold --lps 16384 --end 100"
    "PHOLD 16,384 LPs end 20 --work 1000|run phold --lps 16384 --end 20 --work 1000"
    "Sharks 2,048 8x8 end 2000|run sharks --creatures 2048 --sectors 8x8 --end 2000"
)
wall() { "$bin" "$@" --json | grep -oE '"wall_seconds":[0-9.eE+-]+' | cut -d: -f2; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for entry in "${scenarios[@]}"; do
    IFS='|' read -r name args <<<"$entry"
    one=()
    two=()
    for _ in $(seq "$reps"); do
        one+=("$(wall $args --kernel timewarp --threads 1)")
        two+=("$(wall $args --kernel timewarp --threads 2)")
    done
    m1=$(printf '%s\n' "${one[@]}" | median)
    m2=$(printf '%s\n' "${two[@]}" | median)
    awk -v n="$name" -v a="$m1" -v b="$m2" \
        'BEGIN { printf "%-40s 1 thread %7.3f s   2 threads %7.3f s   2/1 = %.2f\n", n, a, b, b / a }'
done
