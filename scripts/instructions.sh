#!/usr/bin/env bash
# Instructions per committed event, sequential kernel against Time Warp on one thread, side by
# side: the primary cost figure of the optimistic kernel (issue #8). Instruction counts from
# `valgrind --tool=cachegrind --cache-sim=no` do not depend on machine load, so this can run
# on a busy machine. Whole-process counts (model build and `init` included, for both kernels).
#
#   bash scripts/instructions.sh [path/to/warpsim ...]
#
# With several binaries (e.g. before and after a change), each gets its own columns. Time Warp
# runs twice: as it runs by default (on one thread nearly every event is a safe event, run
# without optimism's costs) and with --no-safe-events (every event through the optimistic
# path: state saves, records, effect logs, commit at GVT), when the binary knows that flag.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
    cargo build --release -q -p warpsim-cli
    bins=(target/release/warpsim)
fi
scenarios=(
    "PHOLD 1,024 LPs end 200|run phold --lps 1024 --end 200"
    "PHOLD 16,384 LPs end 20|run phold --lps 16384 --end 20"
    "Sharks 2,048 creatures 8x8 end 2000|run sharks --creatures 2048 --sectors 8x8 --end 2000"
)
count() { # binary, args... -> "instructions events"
    local bin=$1; shift
    local out
    out=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$bin" "$@" --json 2>&1)
    local refs events
    refs=$(grep -oE 'I\s+refs:\s+[0-9,]+' <<<"$out" | grep -oE '[0-9,]+$' | tr -d ,)
    events=$(grep -oE '"events_committed":[0-9]+' <<<"$out" | grep -oE '[0-9]+$')
    echo "$refs $events"
}
printf '%-38s' "scenario"
for bin in "${bins[@]}"; do printf ' | %-50s' "$bin"; done
printf '\n%-38s' ""
for _ in "${bins[@]}"; do printf ' | %10s %10s %7s %10s %7s' "sequential" "timewarp:1" "ratio" "no safe" "ratio"; done
printf '\n'
for entry in "${scenarios[@]}"; do
    name=${entry%%|*}; args=${entry#*|}
    printf '%-38s' "$name"
    for bin in "${bins[@]}"; do
        read -r seq_refs seq_events < <(count "$bin" $args --kernel sequential)
        read -r tw_refs tw_events < <(count "$bin" $args --kernel timewarp --threads 1)
        if [ "$seq_events" != "$tw_events" ]; then
            echo "instructions.sh: $name: the kernels committed $seq_events and $tw_events events" >&2
            exit 1
        fi
        if "$bin" run phold --help | grep -q -- --no-safe-events; then
            read -r opt_refs opt_events < <(count "$bin" $args --kernel timewarp --threads 1 --no-safe-events)
        else
            opt_refs=$tw_refs opt_events=$tw_events
        fi
        if [ "$seq_events" != "$opt_events" ]; then
            echo "instructions.sh: $name: the kernels committed $seq_events and $opt_events events" >&2
            exit 1
        fi
        awk -v s="$seq_refs" -v t="$tw_refs" -v o="$opt_refs" -v e="$seq_events" \
            'BEGIN { printf " | %10.0f %10.0f %6.2fx %10.0f %6.2fx", s / e, t / e, t / s, o / e, o / s }'
    done
    printf '\n'
done
