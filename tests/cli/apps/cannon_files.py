#!/usr/bin/env python3
"""A matrix-product program (hit-cannon, hit-summa) with input and output files: writes random
A (n×m) and B (m×k) as raw row-major files, runs the given command with --a/--b/--c-out added, and compares C with a serial product
computed here in plain Python (independent of BLAS and of hitmap++).

    cannon_files.py N M K TYPE WORKDIR -- mpiexec.mpich -n 4 hit-cannon [flags]
"""
import os
import random
import struct
import subprocess
import sys


def main():
    sep = sys.argv.index("--")
    n, m, k = (int(x) for x in sys.argv[1:4])
    dtype, work = sys.argv[4], sys.argv[5]
    cmd = sys.argv[sep + 1:]
    code = "d" if dtype == "double" else "f"
    size = 8 if dtype == "double" else 4
    os.makedirs(work, exist_ok=True)
    rng = random.Random(n * 1000003 + m * 1009 + k)
    a = [rng.uniform(-1, 1) for _ in range(n * m)]
    b = [rng.uniform(-1, 1) for _ in range(m * k)]
    if code == "f":  # the values the program will see
        a = list(struct.unpack(f"{len(a)}f", struct.pack(f"{len(a)}f", *a)))
        b = list(struct.unpack(f"{len(b)}f", struct.pack(f"{len(b)}f", *b)))
    pa, pb, pc = (os.path.join(work, x) for x in ("a.raw", "b.raw", "c.raw"))
    with open(pa, "wb") as f:
        f.write(struct.pack(f"{len(a)}{code}", *a))
    with open(pb, "wb") as f:
        f.write(struct.pack(f"{len(b)}{code}", *b))
    if os.path.exists(pc):
        os.remove(pc)
    full = cmd + ["--n", str(n), "--m", str(m), "--k", str(k), "--type", dtype,
                  "--a", pa, "--b", pb, "--c-out", pc, "--check"]
    run = subprocess.run(full, capture_output=True, text=True, timeout=240)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        sys.exit(f"command failed with {run.returncode}: {' '.join(full)}")
    data = open(pc, "rb").read()
    if len(data) != n * k * size:
        sys.exit(f"{pc} has {len(data)} bytes, expected {n * k * size}")
    c = struct.unpack(f"{n * k}{code}", data)
    leftovers = [x for x in os.listdir(work) if ".tmp" in x]
    if leftovers:
        sys.exit(f"temporary files left behind: {leftovers}")
    worst = 0.0
    scale = 1e-300
    for i in range(n):
        row = a[i * m:(i + 1) * m]
        for j in range(k):
            want = sum(row[p] * b[p * k + j] for p in range(m))
            scale = max(scale, abs(want))
            worst = max(worst, abs(c[i * k + j] - want))
    tol = 1e-12 if code == "d" else 1e-5
    rel = worst / scale
    print(f"max relative error {rel:.3g} (tolerance {tol})")
    if not rel <= tol:
        sys.exit("C differs from the serial product")


if __name__ == "__main__":
    main()
