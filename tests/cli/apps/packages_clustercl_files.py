#!/usr/bin/env python3
"""hit-packages' clusterCL workloads with arrays by name: inputs written here (raw row-major
doubles), read with --input, the outputs written with --output and compared with the same
computation in plain Python (syrk, conv with its edges, bicg's two products, gsmv, cov, cor,
Gram-Schmidt's Q and R, dcs by grid and by atoms). --describe names the arrays with the sizes
given. Bad files (NaN, wrong size) are one line on every rank, exit 2, nothing written.

    packages_clustercl_files.py MPIEXEC NP HIT_PACKAGES
"""
import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

mpiexec, np_, program = sys.argv[1], sys.argv[2], sys.argv[3]
tmp = tempfile.mkdtemp(prefix="hit-clustercl-")
random.seed(11)
n, m = 23, 9


def write(name, values):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(struct.pack("%dd" % len(values), *values))
    return path


def read(path):
    data = open(path, "rb").read()
    return list(struct.unpack("%dd" % (len(data) // 8), data))


def run(args, expect_rc=0):
    cmd = [mpiexec, "-n", np_, program, "--n", str(n), "--m", str(m), "--reps", "1", "--warmup", "0",
           "--schedule", "workPackages:size=2,depth=2"] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != expect_rc:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}, expected {expect_rc}\n{r.stdout}\n{r.stderr}")
    return r


def close(name, got, want, tol=1e-12):
    scale = max(1e-300, max(abs(w) for w in want))
    worst = max(abs(g - w) for g, w in zip(got, want)) / scale
    if len(got) != len(want) or not worst <= tol:
        sys.exit(f"{name}: {len(got)} values, largest relative difference {worst:.3e}")
    print(f"{name}: ok ({worst:.1e})")


def rnd(count):
    return [random.uniform(-1, 1) for _ in range(count)]


a = rnd(n * m)
A = write("a.bin", a)
out = lambda name: os.path.join(tmp, name)

# syrk: C = A A^T, lower triangle
run(["--workload", "syrk", "--input", f"a={A}", "--output", f"c={out('c.bin')}"])
close("syrk", read(out("c.bin")),
      [sum(a[i * m + k] * a[j * m + k] for k in range(m)) if j <= i else 0.0
       for i in range(n) for j in range(n)])

# conv: 3x3 filter, zeros outside the image
w = rnd(9)
W = write("w.bin", w)
run(["--workload", "conv", "--input", f"in={A}", "--input", f"w={W}", "--output", f"out={out('o.bin')}"])
close("conv", read(out("o.bin")),
      [sum(w[x * 3 + y] * a[(i + x - 1) * m + j + y - 1] for x in range(3) for y in range(3)
           if 0 <= i + x - 1 < n and 0 <= j + y - 1 < m) for i in range(n) for j in range(m)])

# bicg: q = A p (by rows), s = A^T r (summed over the packages)
p, r = rnd(m), rnd(n)
run(["--workload", "bicg", "--input", f"a={A}", "--input", f"p={write('p.bin', p)}",
     "--input", f"r={write('r.bin', r)}", "--output", f"q={out('q.bin')}", "--output", f"s={out('s.bin')}"])
close("bicg q", read(out("q.bin")), [sum(a[i * m + j] * p[j] for j in range(m)) for i in range(n)])
close("bicg s", read(out("s.bin")), [sum(a[i * m + j] * r[i] for i in range(n)) for j in range(m)])

# gsmv: y = alpha A x + beta B x (square)
sq_a, sq_b, x = rnd(n * n), rnd(n * n), rnd(n)
run(["--workload", "gsmv", "--input", f"a={write('sa.bin', sq_a)}", "--input", f"b={write('sb.bin', sq_b)}",
     "--input", f"x={write('x.bin', x)}", "--param", "alpha=2", "--param", "beta=-0.5",
     "--output", f"y={out('y.bin')}"])
close("gsmv", read(out("y.bin")),
      [sum((2 * sq_a[i * n + j] - 0.5 * sq_b[i * n + j]) * x[j] for j in range(n)) for i in range(n)])

# cov and cor of the columns of A (n samples of m variables)
mean = [sum(a[i * m + j] for i in range(n)) / n for j in range(m)]
cov = [sum((a[k * m + i] - mean[i]) * (a[k * m + j] - mean[j]) for k in range(n)) / (n - 1)
       for i in range(m) for j in range(m)]
run(["--workload", "cov", "--input", f"x={A}", "--output", f"cov={out('cov.bin')}"])
close("cov", read(out("cov.bin")), cov)
run(["--workload", "cor", "--input", f"x={A}", "--output", f"cor={out('cor.bin')}"])
close("cor", read(out("cor.bin")),
      [cov[i * m + j] / math.sqrt(cov[i * m + i] * cov[j * m + j]) for i in range(m) for j in range(m)])

# gsp: A = Q R, Q^T Q = I, R upper triangular
run(["--workload", "gsp", "--input", f"a={A}", "--output", f"q={out('gq.bin')}", "--output", f"r={out('gr.bin')}"])
q, rr = read(out("gq.bin")), read(out("gr.bin"))
close("gsp A = QR", [sum(q[i * m + k] * rr[k * m + j] for k in range(m)) for i in range(n) for j in range(m)], a)
close("gsp Q^T Q = I", [sum(q[i * m + x] * q[i * m + y] for i in range(n)) for x in range(m) for y in range(m)],
      [1.0 if x == y else 0.0 for x in range(m) for y in range(m)])
if any(rr[x * m + y] != 0 for x in range(m) for y in range(x)):
    sys.exit("gsp: R is not upper triangular")

# dcs: both strategies give the energy of the grid points
atoms = []
for k in range(17):
    atoms += [random.uniform(0, n * 0.1), random.uniform(0, m * 0.1), random.uniform(0, 1), random.uniform(-1, 1)]
AT = write("atoms.bin", atoms)
want = []
for i in range(n):
    for j in range(m):
        e = 0.0
        for k in range(17):
            dx, dy, dz = i * 0.1 - atoms[4 * k], j * 0.1 - atoms[4 * k + 1], 1.5 - atoms[4 * k + 2]
            e += atoms[4 * k + 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
        want.append(e)
for strategy in ("out", "in"):
    run(["--workload", "dcs", "--strategy", strategy, "--param", "atoms=17", "--input", f"atoms={AT}",
         "--output", f"grid={out('g.bin')}"])
    close(f"dcs --strategy {strategy}", read(out("g.bin")), want)

# --describe: the arrays with the sizes given
d = json.loads(run(["--workload", "bicg", "--describe"]).stdout.strip())
shapes = {x["name"]: (x["role"], x["shape"]) for x in d["arrays"]}
if shapes != {"a": ("in", [n, m]), "p": ("in", [m]), "r": ("in", [n]), "q": ("out", [n]), "s": ("out", [m])}:
    sys.exit(f"--describe: {d}")
print("describe: ok")

# Bad files: one line on every rank, exit 2, nothing written under the output's name.
bad = a[:]
bad[5 * m + 3] = float("nan")
target = out("never.bin")
for args, expect in (([f"a={write('nan.bin', bad)}"], "element \\[5, 3\\]|is NaN"),
                     ([f"a={write('short.bin', a[:-1])}"], "expected"),
                     ([f"a={write('ones.bin', [1.0] * (n * m))}", "gsp"], "column 1 of A depends")):
    workload = args[1] if len(args) > 1 else "syrk"
    r = run(["--workload", workload, "--input", args[0], "--output",
             f"{'q' if workload == 'gsp' else 'c'}={target}"], expect_rc=2)
    lines = [l for l in r.stderr.strip().splitlines() if l]
    if (len(lines) != 1 or "hit-packages: error:" not in lines[0] or os.path.exists(target)
            or not re.search(expect, lines[0])):
        sys.exit(f"bad input {args}: {r.stderr!r}, written: {os.path.exists(target)}")
print("bad files: ok")
