#!/usr/bin/env bash
# What periodic checkpoints cost (issue 18): PHOLD with 1M LPs on the sequential kernel
# (or KERNEL: `timewarp` runs on --threads 2, `mpi` on `mpirun -np 2` ranks of one thread,
# built with the mpi feature), without checkpoints and with
# `--checkpoint-every`, side by side and alternating (the machine may be shared: compare
# medians), and the checkpoint's size per LP.
#
#   bash scripts/checkpoint-cost.sh [END] [EVERY] [ROUNDS] [KERNEL]   # default: 60 10s 3 sequential
#
# With END 60 a run takes about a minute here, so `--checkpoint-every 10s` writes five or
# six checkpoints. Prints one line per run and the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
END=${1:-60}
EVERY=${2:-10s}
ROUNDS=${3:-3}
KERNEL=${4:-sequential}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bin=(target/release/warpsim)
if [ "$KERNEL" = mpi ]; then
    bash scripts/install-mpi.sh
    cargo build --release -q -p warpsim-cli --features warpsim-cli/mpi
    bin=(mpirun -np 2 target/release/warpsim)
else
    cargo build --release -q -p warpsim-cli
fi
args=(run phold --lps 1000000 --end "$END" --json --kernel "$KERNEL")
if [ "$KERNEL" = timewarp ]; then
    args+=(--threads 2)
elif [ "$KERNEL" = mpi ]; then
    args+=(--threads 1)
fi
plain=()
checked=()
for round in $(seq "$ROUNDS"); do
    a=$("${bin[@]}" "${args[@]}" | grep '^{' | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["wall_seconds"], d["trace_hash"])')
    b=$("${bin[@]}" "${args[@]}" --checkpoint-file "$dir/run.ckpt" --checkpoint-every "$EVERY" 2>"$dir/notes" \
        | grep '^{' | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["wall_seconds"], d["trace_hash"])')
    n=$(grep -c "checkpoint written" "$dir/notes" || true)
    size=$(stat -c %s "$dir/run.ckpt")
    echo "round $round: plain ${a%% *} s, with checkpoints ${b%% *} s ($n checkpoints of $size bytes, $((size / 1000000)) bytes per LP); hashes ${a##* } ${b##* }"
    plain+=("${a%% *}")
    checked+=("${b%% *}")
done
python3 - "${plain[*]}" "${checked[*]}" <<'PY'
import statistics, sys
plain = [float(x) for x in sys.argv[1].split()]
checked = [float(x) for x in sys.argv[2].split()]
p, c = statistics.median(plain), statistics.median(checked)
print(f"median: plain {p:.2f} s, with checkpoints {c:.2f} s, cost {100 * (c / p - 1):+.1f} %")
PY
uptime
