#!/usr/bin/env bash
# Draws every plot the CLI makes (small runs, about a minute) and renders each to PNG, so
# that they can be looked at: bash scripts/render-plots.sh [OUT_DIR] (default target/plots).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-target/plots}"
mkdir -p "$OUT"
bash scripts/install-plot-tools.sh
cargo build --release -q -p warpsim-cli --bin warpsim --example mm1
W=target/release/warpsim
$W run pets --tasks 100000 --plot "$OUT/completion.svg" >/dev/null
$W run pets --tasks 20000 --style jump --plot "$OUT/completion-jump.svg" >/dev/null
$W sweep pets --set gates=2..12:2 --tasks 20000 --replications 4 --plot "$OUT/sweep.svg" >/dev/null
$W sweep pets --set gates=2,3,4 --set style=step,events --tasks 5000 --replications 3 \
    --plot "$OUT/sweep-grid.svg" >/dev/null
$W sweep mmc --set servers=5..8 --customers 20000 --replications 4 --plot "$OUT/sweep-mmc.svg" >/dev/null
target/release/examples/mm1 sweep mm1 --set arrival-rate=0.5..0.9:0.1 --replications 4 \
    --plot "$OUT/sweep-mm1.svg" >/dev/null
$W run sharks --creatures 512 --sectors 4x4 --plot "$OUT/sharks.svg" >/dev/null
$W speedup sharks --creatures 512 --sectors 4x4 --threads 1,2 --repeat 1 \
    --plot "$OUT/speedup.svg" >/dev/null
for svg in "$OUT"/*.svg; do
    rsvg-convert --background-color=white "$svg" -o "${svg%.svg}.png"
done
ls "$OUT"/*.png
