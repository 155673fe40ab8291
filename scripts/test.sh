#!/usr/bin/env bash
# The project's test command (the second command in README.md; CI runs it too).
# Release mode: the differential queue tests and model oracles run millions of operations,
# which takes minutes unoptimised and seconds optimised.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release "$@"
