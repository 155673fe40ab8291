#!/usr/bin/env bash
# Issue #8, part 3: the sequential kernel against Time Warp on 2 threads, side by side, the
# runs interleaved, median wall seconds (with the runs' min–max) and the speedup. A
# wall-clock table: run it on a quiet machine (`uptime` is printed first).
#
#   bash scripts/two-threads.sh [reps] [path/to/warpsim ...]
#
# With several binaries (e.g. a build of an older commit, then this one), the sequential
# column is the last binary's and each binary gets a Time Warp column and a speedup, all
# from the same interleaved runs.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
shift || true
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
    cargo build --release -q -p warpsim-cli
    bins=(target/release/warpsim)
fi
last=${bins[${#bins[@]} - 1]}
uptime
scenarios=(
    "phold --lps 16384 --end 100|1.5"
    "phold --lps 16384 --end 100 --work 1000|1.85"
    "phold --lps 1024 --end 2000|1.2"
    "sharks --creatures 32000 --sectors 16x16 --end 2000|1.7"
    "sharks --creatures 2048 --sectors 8x8 --end 2000 --work 5000|1.85"
)
wall() { local bin=$1; shift; "$bin" run "$@" --json | grep -oE '"wall_seconds":[0-9.eE+-]+' | cut -d: -f2; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# "min–max" of the runs: two-thread wall times here swing by a quarter from one minute to the
# next (BENCHMARKS.md, "The fixed cost of a Time Warp run"), so each median shows its spread.
spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f–%.3f", lo, hi }'; }
header='| scenario | sequential'
rule='|---|---:'
for bin in "${bins[@]}"; do
    header+=" | Time Warp 2 threads ($bin) | speedup"
    rule+='|---:|---:'
done
printf '%s | target |\n%s|---:|\n' "$header" "$rule"
for entry in "${scenarios[@]}"; do
    IFS='|' read -r args target <<<"$entry"
    seq_times=()
    declare -A tw_times=()
    for _ in $(seq "$reps"); do
        seq_times+=("$(wall "$last" $args --kernel sequential)")
        for i in "${!bins[@]}"; do
            tw_times[$i]+="$(wall "${bins[$i]}" $args --kernel timewarp --threads 2) "
        done
    done
    s=$(printf '%s\n' "${seq_times[@]}" | median)
    s_spread=$(printf '%s\n' "${seq_times[@]}" | spread)
    row=$(awk -v n="$args" -v s="$s" -v r="$s_spread" 'BEGIN { printf "| `%s` | %.3f (%s)", n, s, r }')
    for i in "${!bins[@]}"; do
        t=$(printf '%s\n' ${tw_times[$i]} | median)
        t_spread=$(printf '%s\n' ${tw_times[$i]} | spread)
        row+=$(awk -v s="$s" -v t="$t" -v r="$t_spread" 'BEGIN { printf " | %.3f (%s) | %.2f×", t, r, s / t }')
    done
    printf '%s | %s× |\n' "$row" "$target"
    unset tw_times
done
