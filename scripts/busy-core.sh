#!/usr/bin/env bash
# Time Warp on a shared machine (issue 13, part 5): while another process keeps one core
# busy, 2 threads should be no slower than 1. Runs each scenario on 1 and 2 threads,
# alternating, with a busy loop running beside them the whole time, and prints the median
# wall seconds and CPU seconds (user + system) of each and the ratio of the wall medians.
# `uptime` is printed first: other load on the machine changes the figures.
#
#   bash scripts/busy-core.sh [reps] [path/to/warpsim]
#
# With PIN=CPU (e.g. `PIN=0`), the busy loop and every run are pinned to that one CPU
# (`taskset -c`): 1 worker against 2 workers sharing one core with the busy loop. That is
# less sensitive to other processes on a shared machine (they rarely all land on that CPU,
# and each run pays the same), and shows whether waiting workers give the core away.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
bin=${2:-}
if [ -z "$bin" ]; then
    cargo build --release -q -p warpsim-cli
    bin=target/release/warpsim
fi
pin=()
if [ -n "${PIN:-}" ]; then
    command -v taskset >/dev/null || { echo "busy-core.sh: PIN needs taskset (util-linux)" >&2; exit 1; }
    pin=(taskset -c "$PIN")
    echo "pinned to CPU $PIN"
fi
uptime
# The other process: one core's worth of busy work, stopped on exit.
"${pin[@]}" bash -c 'while :; do :; done' &
busy=$!
trap 'kill $busy 2>/dev/null || true' EXIT
scenarios=(
    "PHOLD 16,384 LPs end 100|run phold --lps 16384 --end 100"
    "PHOLD 16,384 LPs end 20 --work 1000|run phold --lps 16384 --end 20 --work 1000"
    "Sharks 2,048 8x8 end 2000|run sharks --creatures 2048 --sectors 8x8 --end 2000"
    # Long enough (2 s) for a thread that waits for a core to give way (60 ms to decide).
    "PHOLD 16,384 LPs end 1000|run phold --lps 16384 --end 1000"
)
# One run: "wall cpu" (wall from the report, CPU user + system of the process).
one() {
    local out
    out=$( { TIMEFORMAT='%U %S'; time "${pin[@]}" "$bin" "$@" --json; } 2>&1)
    local wall cpu
    wall=$(grep -oE '"wall_seconds":[0-9.eE+-]+' <<<"$out" | cut -d: -f2)
    cpu=$(tail -n 1 <<<"$out" | awk '{ print $1 + $2 }')
    echo "$wall $cpu"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '| scenario | 1 thread wall (CPU) | 2 threads wall (CPU) | 2 / 1 wall |\n|---|---:|---:|---:|\n'
for entry in "${scenarios[@]}"; do
    IFS='|' read -r name args <<<"$entry"
    w1=() c1=() w2=() c2=()
    for _ in $(seq "$reps"); do
        read -r w c < <(one $args --kernel timewarp --threads 1)
        w1+=("$w") c1+=("$c")
        read -r w c < <(one $args --kernel timewarp --threads 2)
        w2+=("$w") c2+=("$c")
    done
    mw1=$(printf '%s\n' "${w1[@]}" | median)
    mc1=$(printf '%s\n' "${c1[@]}" | median)
    mw2=$(printf '%s\n' "${w2[@]}" | median)
    mc2=$(printf '%s\n' "${c2[@]}" | median)
    awk -v n="$name" -v a="$mw1" -v ca="$mc1" -v b="$mw2" -v cb="$mc2" \
        'BEGIN { printf "| %s | %.3f s (%.3f) | %.3f s (%.3f) | %.2f |\n", n, a, ca, b, cb, b / a }'
done
