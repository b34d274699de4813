#!/usr/bin/env python3
"""hit-heat's sum over all vertices does not depend on the process count or the layout beyond
rounding, and matches a serial heat computed here in plain Python (independent of hitmap++); the
--out file holds the same values at every process count.

    heat_sums.py MPIEXEC HIT_HEAT WORKDIR
"""
import json
import os
import struct
import subprocess
import sys

K = 24          # a K x K 5-point grid graph, permuted so the layouts differ
ITERS = 40
SPEC = f"poisson2d:n={K},permute=5"


def permutation(n, seed):
    """The generators' documented permutation (SplitMix64, Fisher-Yates from the top)."""
    mask = (1 << 64) - 1
    state = seed
    pi = list(range(n))
    for i in range(n - 1, 0, -1):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        j = z % (i + 1)
        pi[i], pi[j] = pi[j], pi[i]
    return pi


def serial_sum():
    n = K * K
    pi = permutation(n, 5)
    nbrs = [[] for _ in range(n)]
    for y in range(K):
        for x in range(K):
            u = y * K + x
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= x + dx < K and 0 <= y + dy < K:
                    nbrs[pi[u]].append(pi[(y + dy) * K + x + dx])
    values = [100.0 if any(v == i * n // 10 for i in range(10)) else 0.0 for v in range(n)]
    for _ in range(ITERS):
        values = [sum(values[c] for c in sorted(nb)) / len(nb) for nb in nbrs]
    return sum(values), values


def main():
    mpiexec, heat, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    want, want_values = serial_sum()
    sums = {}
    for np in (1, 2, 3, 4):
        for layout in ("metis", "rows"):
            out = os.path.join(work, f"heat_{np}_{layout}.raw")
            cmd = [mpiexec, "-n", str(np), heat, "--generate", SPEC, "--iters", str(ITERS),
                   "--layout", layout, "--reps", "1", "--warmup", "0", "--json", "--out", out]
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
            if run.returncode != 0:
                sys.exit(f"{' '.join(cmd)} failed:\n{run.stderr}")
            result = json.loads(run.stdout.strip().splitlines()[-1])
            sums[(np, layout)] = result["sum"]
            with open(out, "rb") as f:
                data = f.read()
            values = struct.unpack(f"{len(data) // 8}d", data)
            worst = max(abs(a - b) for a, b in zip(values, want_values))
            if len(values) != K * K or worst > 1e-9:
                sys.exit(f"np={np} {layout}: --out differs from the serial values by {worst}")
    print("sums:", sums, "serial:", want)
    for key, s in sums.items():
        if abs(s - want) > 1e-9 * max(1.0, abs(want)):
            sys.exit(f"sum at {key} is {s!r}, the serial heat gives {want!r}")
    print("passed")


if __name__ == "__main__":
    main()
