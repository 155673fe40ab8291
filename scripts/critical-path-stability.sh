#!/usr/bin/env bash
# How stable is the available parallelism that `--critical-path ns` measures? Runs PHOLD with
# 1,024 LPs and Sharks World 2,048 creatures on 8×8 sectors RUNS times each (default 5) and
# prints, per model, the parallelism of each run, its mean, standard deviation and
# coefficient of variation (the target is CV ≤ 10 %), beside the unit-cost bound. The
# machine's load is printed first: the figures are wall-clock timings.
#
#   bash scripts/critical-path-stability.sh [RUNS]
set -euo pipefail
runs="${1:-5}"
cd "$(dirname "$0")/.."
cargo build --release -p warpsim-cli --quiet
bin=target/release/warpsim
echo "load: $(uptime)"
for model in "phold --lps 1024" "sharks --creatures 2048 --sectors 8x8"; do
    unit=$($bin run $model --critical-path unit --json)
    timed=()
    for _ in $(seq "$runs"); do
        timed+=("$($bin run $model --critical-path ns --json)")
    done
    printf '%s\n' "$unit" "${timed[@]}" | python3 -c '
import json, statistics, sys
model = sys.argv[1]
unit, *timed = [json.loads(line) for line in sys.stdin]
values = [run["critical_path"]["parallelism"] for run in timed]
mean = statistics.mean(values)
sd = statistics.stdev(values) if len(values) > 1 else 0.0
print(f"{model}: {len(values)} runs, available parallelism (ns)",
      " ".join(f"{v:.2f}" for v in values))
unit_bound = unit["critical_path"]["parallelism"]
event_time = statistics.median(run["critical_path"]["total_cost"] for run in timed) / 1e6
print(f"  mean {mean:.2f}, sd {sd:.3f}, CV {100 * sd / mean:.2f} %; "
      f"unit cost {unit_bound:.2f}; committed event time {event_time:.2f} ms (median)")
' "$model"
done
