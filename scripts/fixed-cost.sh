#!/usr/bin/env bash
# The fixed cost of a run (BENCHMARKS.md, "The fixed cost of a Time Warp run"): PHOLD with an
# end time so early that no event runs, so the wall time is the set-up (building the LPs,
# `init`, handing them to the workers) and the end (`finish`, the final states). The
# sequential kernel and Time Warp on 2 threads, at 16,384 and 262,144 LPs, interleaved,
# median wall seconds of REPS runs each. With several binaries (e.g. a build before a
# change, then this one), each gets its own column from the same interleaved runs.
#
#   bash scripts/fixed-cost.sh [reps] [path/to/warpsim ...]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-11}
shift || true
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
    cargo build --release -q -p warpsim-cli
    bins=(target/release/warpsim)
fi
uptime
wall() { local bin=$1; shift; "$bin" run "$@" --json | grep -oE '"wall_seconds":[0-9.eE+-]+' | cut -d: -f2; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
header='| LPs | kernel'
rule='|---:|---'
for bin in "${bins[@]}"; do
    header+=" | $bin"
    rule+='|---:'
done
printf '%s |\n%s|\n' "$header" "$rule"
for lps in 16384 262144; do
    for kernel in "sequential" "timewarp --threads 2"; do
        declare -A times=()
        for _ in $(seq "$reps"); do
            for bin in "${bins[@]}"; do
                # shellcheck disable=SC2086
                times[$bin]+="$(wall "$bin" phold --lps "$lps" --end 0.0001 --kernel $kernel) "
            done
        done
        row="| $lps | $kernel"
        for bin in "${bins[@]}"; do
            ms=$(tr ' ' '\n' <<<"${times[$bin]}" | grep . | median | awk '{ printf "%.2f ms", $1 * 1000 }')
            row+=" | $ms"
        done
        echo "$row |"
        unset times
    done
done
