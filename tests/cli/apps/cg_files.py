#!/usr/bin/env python3
"""hit-cg with --rhs and --x-out files: a random b for a small permuted 2-D Laplacian, the
solution written at 1, 2 and 4 processes and both layouts, and A x - b recomputed here in plain
Python from the generators' documented definition (independent of hitmap++).

    cg_files.py MPIEXEC HIT_CG WORKDIR
"""
import math
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heat_sums import permutation  # noqa: E402

K = 16
SEED = 9


def laplacian():
    n = K * K
    pi = permutation(n, SEED)
    rows = [dict() for _ in range(n)]
    for y in range(K):
        for x in range(K):
            u = pi[y * K + x]
            rows[u][u] = 4.0
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= x + dx < K and 0 <= y + dy < K:
                    rows[u][pi[(y + dy) * K + x + dx]] = -1.0
    return rows


def main():
    mpiexec, cg, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    a = laplacian()
    rng = random.Random(4)
    b = [rng.uniform(-1, 1) for _ in range(K * K)]
    rhs = os.path.join(work, "b.raw")
    with open(rhs, "wb") as f:
        f.write(struct.pack(f"{len(b)}d", *b))
    bnorm = math.sqrt(sum(v * v for v in b))
    for np in (1, 2, 4):
        for layout in ("rows", "metis"):
            out = os.path.join(work, f"x_{np}_{layout}.raw")
            cmd = [mpiexec, "-n", str(np), cg, "--generate", f"poisson2d:n={K},permute={SEED}",
                   "--rhs", rhs, "--x-out", out, "--tol", "1e-10", "--layout", layout,
                   "--reps", "1", "--warmup", "0"]
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
            if run.returncode != 0:
                sys.exit(f"{' '.join(cmd)} failed:\n{run.stderr}")
            with open(out, "rb") as f:
                x = struct.unpack(f"{K * K}d", f.read())
            res = math.sqrt(sum((b[i] - sum(v * x[j] for j, v in a[i].items())) ** 2
                                for i in range(K * K)))
            if not res / bnorm <= 1e-9:
                sys.exit(f"np={np} {layout}: ||b - A x|| / ||b|| = {res / bnorm:.3e}")
            print(f"np={np} {layout}: relative residual {res / bnorm:.3e}")
    print("passed")


if __name__ == "__main__":
    main()
