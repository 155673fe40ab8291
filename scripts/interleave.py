#!/usr/bin/env python3
"""Several builds of warpsim on one scenario, their runs interleaved (BENCHMARKS.md).

    python3 scripts/interleave.py REPS "ARGS" BIN [BIN ...]

Runs `BIN run ARGS --json` REPS times for each BIN, one of each in turn, and prints per BIN
the median wall seconds (the report's `wall_seconds`), the median CPU seconds (user + system
of the process, from wait4), and the median over the repetitions of its CPU time divided by
the first BIN's in the same repetition. This machine's speed moves from minute to minute, so
only the per-repetition ratio compares builds; the medians show the level.
"""

import os
import re
import statistics
import subprocess
import sys


def one_run(binary, args):
    child = subprocess.Popen([binary, "run", *args, "--json"], stdout=subprocess.PIPE)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        sys.exit(f"interleave: {binary} run {' '.join(args)} failed ({status})")
    wall = re.search(rb'"wall_seconds":([0-9.eE+-]+)', out)
    if wall is None:
        sys.exit(f"interleave: no wall_seconds in the report of {binary}")
    return float(wall.group(1)), usage.ru_utime + usage.ru_stime


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    reps, args, bins = int(sys.argv[1]), sys.argv[2].split(), sys.argv[3:]
    walls = {b: [] for b in bins}
    cpus = {b: [] for b in bins}
    for _ in range(reps):
        for b in bins:
            wall, cpu = one_run(b, args)
            walls[b].append(wall)
            cpus[b].append(cpu)
    print(f"run {' '.join(args)}, {reps} interleaved repetitions")
    first = cpus[bins[0]]
    for b in bins:
        ratio = statistics.median(c / f for c, f in zip(cpus[b], first))
        print(
            f"{b}: wall {statistics.median(walls[b]):.4f} s (min {min(walls[b]):.4f}), "
            f"CPU {statistics.median(cpus[b]):.4f} s (min {min(cpus[b]):.4f}), "
            f"CPU ÷ first {ratio:.3f}"
        )


if __name__ == "__main__":
    main()
