#!/usr/bin/env bash
# Feeding pets, side by side (BENCHMARKS.md, "Feeding pets"): `warpsim run pets` against the
# seed article's Go program (container/heap) and a SimPy version of the same model, with the
# article's parameters (1M pets, 10 feeders, seed 100). Each program runs REPEATS times,
# interleaved, and the median user+sys CPU time of each is printed with the ratios. CPU times
# come from wait4(2) (microseconds; /usr/bin/time rounds to 10 ms, which is 7 % of a run).
#
#   bash scripts/bench-pets.sh [REPEATS] [SIMPY_REPEATS] [BASELINE_WARPSIM]   # default 7 and 1
#
# With BASELINE_WARPSIM (another build of warpsim, e.g. before a change), it runs in the same
# interleaved loop and gets its own line.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-7}
SIMPY_REPEATS=${2:-1}
BASELINE=${3:-}
bash scripts/install-bench-tools.sh >/dev/null
cargo build --release -p warpsim-cli --bin warpsim >/dev/null 2>&1
GO_DIR=$(mktemp -d)
trap 'rm -rf "$GO_DIR"' EXIT
cp benches/pets-go/go.mod benches/pets-go/main.go "$GO_DIR"
(cd "$GO_DIR" && go build -o pets-go .)
cpu() { # prints user+sys seconds of one run of "$@" (its output discarded)
    python3 - "$@" <<'PY'
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
if status != 0:
    sys.exit(f"bench-pets: {sys.argv[1:]} failed ({status})")
print(f"{usage.ru_utime + usage.ru_stime:.4f}")
PY
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
declare -a ours go base
for _ in $(seq "$REPEATS"); do
    ours+=("$(cpu target/release/warpsim run pets)")
    go+=("$(cpu "$GO_DIR/pets-go" events)")
    if [ -n "$BASELINE" ]; then base+=("$(cpu "$BASELINE" run pets)"); fi
done
simpy=()
for _ in $(seq "$SIMPY_REPEATS"); do
    simpy+=("$(cpu python3 benches/pets_simpy.py)")
done
m_ours=$(printf '%s\n' "${ours[@]}" | median)
m_go=$(printf '%s\n' "${go[@]}" | median)
m_simpy=$(printf '%s\n' "${simpy[@]}" | median)
echo "uptime: $(uptime)"
echo "warpsim run pets:      median ${m_ours} s CPU (${ours[*]})"
if [ -n "$BASELINE" ]; then
    m_base=$(printf '%s\n' "${base[@]}" | median)
    echo "baseline ($BASELINE): median ${m_base} s CPU (${base[*]})"
fi
echo "Go (container/heap):   median ${m_go} s CPU (${go[*]})"
echo "SimPy:                 median ${m_simpy} s CPU (${simpy[*]})"
python3 -c "print(f'Go / warpsim = {$m_go / $m_ours:.2f}x, SimPy / warpsim = {$m_simpy / $m_ours:.0f}x')"
