#!/usr/bin/env bash
# Issue #8, part 3: the sequential kernel against Time Warp on 2 threads, side by side, the
# two interleaved, median wall seconds and the speedup. A wall-clock table: run it on a
# quiet machine (`uptime` is printed first).
#
#   bash scripts/two-threads.sh [reps] [path/to/warpsim]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
bin=${2:-}
if [ -z "$bin" ]; then
    cargo build --release -q -p warpsim-cli
    bin=target/release/warpsim
fi
uptime
scenarios=(
    "phold --lps 16384 --end 100|1.5"
    "phold --lps 16384 --end 100 --work 1000|1.85"
    "phold --lps 1024 --end 2000|1.2"
    "sharks --creatures 32000 --sectors 16x16 --end 2000|1.7"
    "sharks --creatures 2048 --sectors 8x8 --end 2000 --work 5000|1.85"
)
wall() { "$bin" run "$@" --json | grep -oE '"wall_seconds":[0-9.eE+-]+' | cut -d: -f2; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '| scenario | sequential | Time Warp 2 threads | speedup | target |\n|---|---:|---:|---:|---:|\n'
for entry in "${scenarios[@]}"; do
    IFS='|' read -r args target <<<"$entry"
    seq_times=()
    tw_times=()
    for _ in $(seq "$reps"); do
        seq_times+=("$(wall $args --kernel sequential)")
        tw_times+=("$(wall $args --kernel timewarp --threads 2)")
    done
    s=$(printf '%s\n' "${seq_times[@]}" | median)
    t=$(printf '%s\n' "${tw_times[@]}" | median)
    awk -v n="$args" -v s="$s" -v t="$t" -v g="$target" \
        'BEGIN { printf "| `%s` | %.3f | %.3f | %.2f× | %s× |\n", n, s, t, s / t, g }'
done
