#!/usr/bin/env bash
# Issue 13, part 3's watchdog row: PHOLD with and without a timeout per LP that every event
# pushes back (`--watchdog 3`, `Ctx::reschedule` on almost every event), on the sequential
# kernel and Time Warp on 1 and 2 threads, interleaved. Prints per row the median wall
# seconds, the median CPU seconds (user + system, less sensitive to a loaded machine) and the
# median commit ratio (committed ÷ processed events; the issue's "efficiency ≥ 0.8").
# `uptime` is printed first: say the load beside the figures.
#
#   bash scripts/watchdog.sh [reps] [path/to/warpsim ...]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
shift || true
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
    cargo build --release -q -p warpsim-cli
    bins=(target/release/warpsim)
fi
uptime
scenarios=(
    "phold --lps 1024 --end 200"
    "phold --lps 1024 --end 200 --watchdog 3"
    "phold --lps 16384 --end 20"
    "phold --lps 16384 --end 20 --watchdog 3"
)
kernels=("--kernel sequential" "--kernel timewarp --threads 1" "--kernel timewarp --threads 2")
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# One run: "wall cpu ratio" (the ratio is 1 on the sequential kernel).
one() {
    local bin=$1; shift
    local out cpu wall ratio
    out=$( { TIMEFORMAT='%U %S'; time "$bin" run "$@" --json; } 2>&1)
    cpu=$(tail -n 1 <<<"$out" | awk '{ print $1 + $2 }')
    wall=$(grep -oE '"wall_seconds":[0-9.eE+-]+' <<<"$out" | cut -d: -f2)
    ratio=$(grep -oE '"commit_ratio":[0-9.eE+-]+' <<<"$out" | cut -d: -f2 || true)
    echo "$wall $cpu ${ratio:-1}"
}
printf '| binary | scenario | kernel | wall s | CPU s | commit ratio |\n|---|---|---|---:|---:|---:|\n'
for args in "${scenarios[@]}"; do
    for bin in "${bins[@]}"; do
        declare -A walls=() cpus=() ratios=()
        for _ in $(seq "$reps"); do
            for k in "${!kernels[@]}"; do
                read -r w c r < <(one "$bin" $args ${kernels[$k]})
                walls[$k]+="$w "
                cpus[$k]+="$c "
                ratios[$k]+="$r "
            done
        done
        for k in "${!kernels[@]}"; do
            w=$(tr ' ' '\n' <<<"${walls[$k]}" | grep . | median)
            c=$(tr ' ' '\n' <<<"${cpus[$k]}" | grep . | median)
            r=$(tr ' ' '\n' <<<"${ratios[$k]}" | grep . | median)
            printf '| %s | `%s` | %s | %.3f | %.3f | %.3f |\n' "$bin" "$args" "${kernels[$k]#--kernel }" "$w" "$c" "$r"
        done
        unset walls cpus ratios
    done
done
