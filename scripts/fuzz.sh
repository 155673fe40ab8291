#!/usr/bin/env bash
# Coverage-guided fuzzing of the CLI's parsers of untrusted input with cargo-afl (AFL++):
# TOML scenarios (`config`), population CSVs (`population`), command lines (`args`) and
# sweep ranges (`sweep`), and checkpoint files (`checkpoint`). Harnesses and seed corpora are
# in fuzz/; findings go to fuzz/out/.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET ...]   # default: 600 s for each of the five
#
# Targets run one after the other (the machine may be shared), on one core each. The script
# exits non-zero if any target found a crash or a hang. Not part of CI: the run takes time.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-600}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then TARGETS=(config population args sweep checkpoint); fi

# cargo-afl builds its own AFL++ (afl-fuzz and the LLVM runtime) from source: it needs a C
# toolchain and make.
if ! command -v cc >/dev/null || ! command -v make >/dev/null; then
    apt-get update -qq && apt-get install -y -qq build-essential
fi
if ! cargo afl --version >/dev/null 2>&1; then
    cargo install --locked cargo-afl
fi
# Builds AFL++ for this rustc once; says so (and fails harmlessly) when it is already built.
cargo afl config --build >/dev/null 2>&1 || true

cd fuzz
cargo afl build --release
# A container has no core-dump handler to configure, and other processes share the cores.
export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1
export AFL_NO_UI=1
failed=0
for target in "${TARGETS[@]}"; do
    out="out/$target"
    rm -rf "$out"
    mkdir -p out
    echo "== $target: ${SECONDS_EACH} s"
    cargo afl fuzz -i "corpus/$target" -o "$out" -V "$SECONDS_EACH" \
        "target/release/$target" > "out-$target.log" 2>&1 || true
    stats="$out/default/fuzzer_stats"
    if [ ! -f "$stats" ]; then
        echo "$target: afl-fuzz did not run; see fuzz/out-$target.log"
        tail -20 "out-$target.log"
        failed=1
        continue
    fi
    crashes=$(find "$out/default/crashes" -type f ! -name README.txt | wc -l)
    hangs=$(find "$out/default/hangs" -type f | wc -l)
    grep -E "^(run_time|execs_done|execs_per_sec|corpus_count|bitmap_cvg|saved_crashes|saved_hangs) " "$stats" \
        | sed "s/^/$target: /"
    echo "$target: $crashes crash(es), $hangs hang(s)"
    if [ "$crashes" -gt 0 ] || [ "$hangs" -gt 0 ]; then failed=1; fi
done
exit $failed
