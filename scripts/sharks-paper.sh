#!/usr/bin/env bash
# The Sharks World paper's experiments (Presley, Reiher & Bellenot, section 3, Figures 1, 2
# and 5) on this machine: `warpsim speedup sharks` at the paper's sizes — 32 to 2,048
# creatures on 8×8 and 16×16 sectors, end 2000, and 32,000 creatures on 16×16 — on 1, 2 and
# (oversubscribed on 2 cores) 4 threads, lazy against aggressive cancellation, 3 runs per
# point. One more study raises the granularity with the paper's "delay loops"
# (`--work`). Each study's JSON and SVG go to OUT (default sharks-paper/), the machine's load
# is printed before each, and a summary in Markdown follows (the tables of BENCHMARKS.md).
# Nothing else should run meanwhile: the studies are timings.
#
#   bash scripts/sharks-paper.sh [OUT]
set -euo pipefail
out="${1:-sharks-paper}"
cd "$(dirname "$0")/.."
cargo build --release -p warpsim-cli --quiet
bin=target/release/warpsim
mkdir -p "$out"
study() {
    local name=$1
    shift
    echo "$name: load $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%H:%M:%S) UTC" >&2
    "$bin" speedup sharks --end 2000 --threads 1,2,4 --cancellation lazy,aggressive \
        "$@" --json --plot "$out/$name.svg" > "$out/$name.json"
}
for sectors in 8x8 16x16; do
    for creatures in 32 128 512 2048; do
        study "sharks-$creatures-$sectors" --creatures "$creatures" --sectors "$sectors" --repeat 3
    done
done
study "sharks-2048-8x8-work2000" --creatures 2048 --sectors 8x8 --work 2000 --repeat 3
study "sharks-32000-16x16" --creatures 32000 --sectors 16x16 --repeat 3
python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
print("| study | events | load | bound (ns / unit) | sequential | threads | lazy: speedup, efficiency | aggressive: speedup, efficiency | antimessages lazy / aggressive | lazy hits | commit ratio lazy / aggr. | zero-overhead lazy |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for path in sorted(out.glob("*.json"), key=lambda p: (len(p.stem), p.stem)):
    study = json.loads(path.read_text())
    rows = study["configurations"]
    seq = rows[0]
    by = {(r["threads"], r["cancellation"]): r for r in rows[1:]}
    for threads in sorted({r["threads"] for r in rows[1:]}):
        lazy, aggr = by[(threads, "lazy")], by[(threads, "aggressive")]
        mark = "*" if lazy["oversubscribed"] else ""
        print(f"| {path.stem} | {study['events_committed']:,} | {study['load_before'][0]:.1f} "
              f"| {study['critical_path']['ns']['parallelism']:.1f} / {study['critical_path']['unit']['parallelism']:.1f} "
              f"| {seq['time_mean']:.3f} s | {threads}{mark} "
              f"| {lazy['speedup']:.2f}, {100 * lazy['efficiency']:.0f}% "
              f"| {aggr['speedup']:.2f}, {100 * aggr['efficiency']:.0f}% "
              f"| {lazy['antimessages']:,.0f} / {aggr['antimessages']:,.0f} "
              f"| {lazy['lazy_hits']:,.0f} "
              f"| {lazy['commit_ratio']:.3f} / {aggr['commit_ratio']:.3f} "
              f"| {lazy['zero_overhead_speedup']:.2f} |")
PY
