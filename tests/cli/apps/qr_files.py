#!/usr/bin/env python3
"""hit-qr with input and output files.

    qr_files.py ls M N TYPE WORKDIR -- mpiexec.mpich -n 4 hit-qr [flags]
        writes a random A (m x n, raw, row-major) and b (m values), runs the command with
        --a/--rhs/--r-out/--q-out/--x-out added, and compares R (up to the sign of each row) and
        x with a Householder QR and least-squares solve computed here in plain Python
        (independent of LAPACK and of hitmap++), and checks that Q is orthonormal and Q*R = A.
    qr_files.py deficient M N TYPE WORKDIR COL -- mpiexec.mpich -n 4 hit-qr [flags]
        writes an A whose column COL is the sum of columns 0 and 1, runs the command with --rhs
        and output files, and expects a non-zero exit with one line naming column COL on every
        process' behalf, and no output file written.
    qr_files.py nonfinite M N TYPE WORKDIR WHICH -- mpiexec.mpich -n 4 hit-qr [flags]
        writes A and b with a NaN in WHICH ("a" or "b"), and expects one error line naming that
        file's element and no output file.
"""
import math
import os
import random
import struct
import subprocess
import sys


def householder_qr(a, m, n):
    """R (n x n) and the reflectors applied to the columns of a copy of `a`, in double."""
    r = [row[:] for row in a]
    vs = []
    for k in range(n):
        x = [r[i][k] for i in range(k, m)]
        alpha = -math.copysign(math.sqrt(sum(v * v for v in x)), x[0] if x[0] != 0 else 1.0)
        v = x[:]
        v[0] -= alpha
        vn = math.sqrt(sum(t * t for t in v))
        v = [t / vn for t in v] if vn > 0 else v
        vs.append(v)
        for j in range(k, n):
            d = sum(v[i] * r[k + i][j] for i in range(len(v)))
            for i in range(len(v)):
                r[k + i][j] -= 2 * v[i] * d
    return [[r[i][j] if j >= i else 0.0 for j in range(n)] for i in range(n)], vs


def least_squares(a, b, m, n):
    rr, vs = householder_qr(a, m, n)
    c = b[:]
    for k, v in enumerate(vs):
        d = sum(v[i] * c[k + i] for i in range(len(v)))
        for i in range(len(v)):
            c[k + i] -= 2 * v[i] * d
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (c[i] - sum(rr[i][j] * x[j] for j in range(i + 1, n))) / rr[i][i]
    return rr, x


def write(path, values, code):
    with open(path, "wb") as f:
        f.write(struct.pack(f"{len(values)}{code}", *values))


def read(path, count, code, size):
    raw = open(path, "rb").read()
    if len(raw) != count * size:
        sys.exit(f"{path} has {len(raw)} bytes, expected {count * size}")
    return struct.unpack(f"{count}{code}", raw)


def main():
    sep = sys.argv.index("--")
    mode, m, n, dtype, work = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4],
                               sys.argv[5])
    extra = sys.argv[6:sep]
    cmd = sys.argv[sep + 1:]
    code, size = ("d", 8) if dtype == "double" else ("f", 4)
    os.makedirs(work, exist_ok=True)
    pa, pb = os.path.join(work, "a.raw"), os.path.join(work, "b.raw")
    outputs = {name: os.path.join(work, f"{name}.raw") for name in ("r", "q", "x")}
    rng = random.Random(m * 1000 + n)
    a = [[rng.uniform(-1, 1) for _ in range(n)] for _ in range(m)]
    b = [rng.uniform(-1, 1) for _ in range(m)]
    if mode == "deficient":
        col = int(extra[0])
        for i in range(m):
            a[i][col] = a[i][0] + a[i][1]
    if mode == "nonfinite":
        if extra[0] == "a":
            a[m - 1][n // 2] = float("nan")
        else:
            b[m // 2] = float("nan")
    if code == "f":  # what the program reads: the float inputs, computed with here in double
        a = [list(struct.unpack(f"{n}f", struct.pack(f"{n}f", *row))) for row in a]
        b = list(struct.unpack(f"{m}f", struct.pack(f"{m}f", *b)))
    write(pa, [v for row in a for v in row], code)
    write(pb, b, code)
    for p in outputs.values():
        if os.path.exists(p):
            os.remove(p)
    full = cmd + ["--m", str(m), "--n", str(n), "--type", dtype, "--a", pa, "--rhs", pb,
                  "--r-out", outputs["r"], "--q-out", outputs["q"], "--x-out", outputs["x"]]
    run = subprocess.run(full, capture_output=True, text=True, timeout=240)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if mode in ("deficient", "nonfinite"):
        want = (f"column {extra[0]} depends on the columns before it" if mode == "deficient"
                else ("A (--a)" if extra[0] == "a" else "b (--rhs)"))
        lines = [l for l in run.stderr.splitlines() if "error:" in l]
        if run.returncode == 0 or len(lines) != 1 or want not in lines[0]:
            sys.exit(f"expected a non-zero exit and one error line naming '{want}', got exit "
                     f"{run.returncode} and {lines}")
        written = [p for p in outputs.values() if os.path.exists(p)]
        if written:
            sys.exit(f"output files were written although the run failed: {written}")
        print(f"refused as expected: {lines[0]}")
        return
    if run.returncode != 0:
        sys.exit(f"command failed with exit status {run.returncode}")
    got_r = read(outputs["r"], n * n, code, size)
    got_q = read(outputs["q"], m * n, code, size)
    got_x = read(outputs["x"], n, code, size)
    want_r, want_x = least_squares(a, b, m, n)
    tol = 2e-4 if code == "f" else 1e-10
    scale = max(abs(v) for row in want_r for v in row)
    worst_r = 0.0
    for i in range(n):
        sign = 1.0 if (got_r[i * n + i] < 0) == (want_r[i][i] < 0) else -1.0
        for j in range(n):
            worst_r = max(worst_r, abs(got_r[i * n + j] - sign * want_r[i][j]) / scale)
    x_scale = max(1.0, max(abs(v) for v in want_x))
    worst_x = max(abs(got_x[i] - want_x[i]) for i in range(n)) / x_scale
    worst_qtq = max(abs(sum(got_q[k * n + i] * got_q[k * n + j] for k in range(m)) -
                        (1.0 if i == j else 0.0)) for i in range(n) for j in range(n))
    worst_qr = max(abs(sum(got_q[i * n + k] * got_r[k * n + j] for k in range(n)) - a[i][j])
                   for i in range(m) for j in range(n))
    report = (f"R {worst_r:.3g}, x {worst_x:.3g}, Q^T Q - I {worst_qtq:.3g}, Q R - A "
              f"{worst_qr:.3g} (tolerance {tol})")
    if max(worst_r, worst_x, worst_qtq, worst_qr) > tol:
        sys.exit(f"the files differ from the serial QR and solve: {report}")
    print(f"R, Q and x match the serial QR and solve: {report}")


if __name__ == "__main__":
    main()
