#!/usr/bin/env bash
# Installs rsvg-convert (Debian's librsvg2-bin) when it is missing: scripts/render-plots.sh
# uses it to turn the CLI's SVG plots into PNGs to look at.
set -euo pipefail
if command -v rsvg-convert >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-plot-tools: no rsvg-convert and no apt-get; install librsvg (rsvg-convert), then retry" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-plot-tools: installing librsvg2-bin" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null || true
$SUDO apt-get install -y -qq librsvg2-bin >/dev/null
command -v rsvg-convert >/dev/null 2>&1 || { echo "install-plot-tools: rsvg-convert still missing after apt-get" >&2; exit 1; }
