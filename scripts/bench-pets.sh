#!/usr/bin/env bash
# Feeding pets, side by side (BENCHMARKS.md, "Feeding pets"): `warpsim run pets` against the
# seed article's Go program (container/heap) and a SimPy version of the same model, with the
# article's parameters (1M pets, 10 feeders, seed 100). Each program runs REPEATS times,
# interleaved, and the median user+sys CPU time of each is printed with the ratios.
#
#   bash scripts/bench-pets.sh [REPEATS] [SIMPY_REPEATS]     # default 7 and 1
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-7}
SIMPY_REPEATS=${2:-1}
bash scripts/install-bench-tools.sh >/dev/null
cargo build --release -p warpsim-cli --bin warpsim >/dev/null 2>&1
GO_DIR=$(mktemp -d)
cp benches/pets-go/go.mod benches/pets-go/main.go "$GO_DIR"
(cd "$GO_DIR" && go build -o pets-go .)
cpu() { # prints user+sys seconds of one run of "$@"
    /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
declare -a ours go
for _ in $(seq "$REPEATS"); do
    ours+=("$(cpu target/release/warpsim run pets)")
    go+=("$(cpu "$GO_DIR/pets-go" events)")
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
echo "Go (container/heap):   median ${m_go} s CPU (${go[*]})"
echo "SimPy:                 median ${m_simpy} s CPU (${simpy[*]})"
python3 -c "print(f'Go / warpsim = {$m_go / $m_ours:.2f}x, SimPy / warpsim = {$m_simpy / $m_ours:.0f}x')"
rm -rf "$GO_DIR"
