#!/usr/bin/env python3
"""hit-cholesky with input and output files.

    cholesky_files.py spd N TYPE WORKDIR -- mpiexec.mpich -n 4 hit-cholesky [flags]
        writes a random symmetric positive definite A (raw, row-major), runs the command with
        --a/--c-out added, and compares L with a Cholesky factorisation computed here in plain
        Python (independent of LAPACK and of hitmap++); the upper triangle of the file holds
        garbage, which the program must not read.
    cholesky_files.py not_spd N TYPE WORKDIR ROW B -- mpiexec.mpich -n 4 hit-cholesky [flags]
        writes the identity with -1 at (ROW, ROW), runs the command, and expects a non-zero exit
        with one line naming the tile column ROW // B (tiles of side B), within the time limit.
"""
import math
import os
import random
import struct
import subprocess
import sys


def cholesky(a, n):
    l = [[0.0] * n for _ in range(n)]
    for j in range(n):
        s = a[j][j] - sum(l[j][k] * l[j][k] for k in range(j))
        l[j][j] = math.sqrt(s)
        for i in range(j + 1, n):
            l[i][j] = (a[i][j] - sum(l[i][k] * l[j][k] for k in range(j))) / l[j][j]
    return l


def main():
    sep = sys.argv.index("--")
    mode, n, dtype, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    extra = sys.argv[5:sep]
    cmd = sys.argv[sep + 1:]
    code, size = ("d", 8) if dtype == "double" else ("f", 4)
    os.makedirs(work, exist_ok=True)
    pa, pl = os.path.join(work, "a.raw"), os.path.join(work, "l.raw")
    rng = random.Random(n)
    if mode == "spd":
        a = [[0.0] * n for _ in range(n)]
        for i in range(n):
            for j in range(i + 1):
                a[i][j] = rng.uniform(-1, 1) + (n if i == j else 0.0)
                a[j][i] = a[i][j]
        flat = []
        for i in range(n):
            # Above the diagonal: values that are not A's (the program reads the lower triangle).
            flat += [a[i][j] if j <= i else 1e3 * rng.uniform(-1, 1) for j in range(n)]
    else:
        row = int(extra[0])
        flat = [(1.0 if i == j else 0.0) for i in range(n) for j in range(n)]
        flat[row * n + row] = -1.0
    with open(pa, "wb") as f:
        f.write(struct.pack(f"{len(flat)}{code}", *flat))
    if os.path.exists(pl):
        os.remove(pl)
    full = cmd + ["--n", str(n), "--type", dtype, "--a", pa, "--c-out", pl]
    run = subprocess.run(full, capture_output=True, text=True, timeout=240)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if mode == "not_spd":
        row, b = int(extra[0]), int(extra[1])
        want = f"tile column {row // b})"
        lines = [l for l in run.stderr.splitlines() if "error:" in l]
        if run.returncode == 0 or len(lines) != 1 or want not in lines[0]:
            sys.exit(f"expected a non-zero exit and one error line naming '{want}', got exit "
                     f"{run.returncode} and {lines}")
        if os.path.exists(pl):
            sys.exit("an output file was written although the factorisation failed")
        print(f"not positive definite, reported as expected: {lines[0]}")
        return
    if run.returncode != 0:
        sys.exit(f"command failed with exit status {run.returncode}")
    raw = open(pl, "rb").read()
    if len(raw) != n * n * size:
        sys.exit(f"L has {len(raw)} bytes, expected {n * n * size}")
    got = struct.unpack(f"{n * n}{code}", raw)
    want = cholesky([[flat[i * n + j] if j <= i else flat[j * n + i] for j in range(n)]
                     for i in range(n)], n)
    if code == "f":
        # Python's factorisation of the float input in double: the program's is in float.
        tol = 1e-5
    else:
        tol = 1e-12
    scale = max(abs(want[i][j]) for i in range(n) for j in range(n))
    worst = max(abs(got[i * n + j] - want[i][j]) for i in range(n) for j in range(n)) / scale
    if worst > tol:
        sys.exit(f"L differs from the serial factorisation: max relative difference {worst:.3g} "
                 f"> {tol}")
    print(f"L matches the serial factorisation (max relative difference {worst:.3g})")


if __name__ == "__main__":
    main()
