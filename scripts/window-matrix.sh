#!/usr/bin/env bash
# The adaptive optimism window against fixed ones (issue #8, part 6): for each scenario, the
# median wall time of the default (`--window auto`) beside each fixed window and none, on
# Time Warp with 2 threads, all in one run (interleaved), and the default's time over the best one's.
# A wall-clock table: run it on a quiet machine (`uptime` is printed first).
#
#   bash scripts/window-matrix.sh [reps] [path/to/warpsim]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
bin=${2:-}
if [ -z "$bin" ]; then
    cargo build --release -q -p warpsim-cli
    bin=target/release/warpsim
fi
uptime
# Runs of 0.2-1.5 s each: at 20-60 ms (the first version's ends) the best of five noisy fixed
# windows was a low outlier as often as a better window.
scenarios=(
    "PHOLD 1,024 LPs end 2000|run phold --lps 1024 --end 2000|0.25 0.5 1 2 4"
    "PHOLD 16,384 LPs end 300|run phold --lps 16384 --end 300|0.25 0.5 1 2 4"
    "Sharks 128 creatures end 400000|run sharks --creatures 128 --end 400000|10 20 40 80 160"
    "Sharks 256 creatures end 200000|run sharks --creatures 256 --end 200000|10 20 40 80 160"
    "Sharks 2,048 8x8 end 20000|run sharks --creatures 2048 --sectors 8x8 --end 20000|10 20 40 80 160"
    "Sharks 32,000 16x16 end 2000|run sharks --creatures 32000 --sectors 16x16 --end 2000|10 20 40 80 160"
)
wall() { # args... -> wall seconds of one run
    "$bin" "$@" --kernel timewarp --threads 2 --json | grep -oE '"wall_seconds":[0-9.eE+-]+' | cut -d: -f2
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for entry in "${scenarios[@]}"; do
    IFS='|' read -r name args windows <<<"$entry"
    printf '%s\n' "$name"
    # Interleaved: every window once per round, so a slow moment of the machine hits them all.
    declare -A runs=()
    for _ in $(seq "$reps"); do
        for window in auto $windows none; do
            runs[$window]+="$(wall $args --window "$window") "
        done
    done
    best=""
    best_time=""
    auto_time=""
    for window in auto $windows none; do
        times=$(tr ' ' '\n' <<<"${runs[$window]}" | grep . | median)
        printf '  window %-5s %8.3f s\n' "$window" "$times"
        if [ "$window" = auto ]; then
            auto_time=$times
        elif [ -z "$best_time" ] || awk -v a="$times" -v b="$best_time" 'BEGIN { exit !(a < b) }'; then
            best=$window
            best_time=$times
        fi
    done
    unset runs
    awk -v a="$auto_time" -v b="$best_time" -v w="$best" \
        'BEGIN { printf "  default / best fixed (%s) = %.2f\n", w, a / b }'
done
