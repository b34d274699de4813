#!/usr/bin/env python3
"""Models of the spmv kernel drive the sparse layout, end to end: `hit-fpm build --kernel spmv` on
two emulated devices, the second 4 times slower, writes one model per rank whose times at the
largest size differ about 4 times; `hit-cg` on poisson3d:n=64 with `--layout metis:models=` of
those files gives the slower process clearly fewer rows (without the models, METIS splits the rows
evenly: ratio 1), and as many as `hit-fpm partition` of the same models says, within METIS's
tolerance.

The devices run at 2 and 8 times a core's speed with `clock=cpu,cores=1`: their times are the CPU
time of the body times the slowdown, so a host shared with other jobs (more ranks than cores, a
build beside the tests) does not make one device look slower than it is; the factor 2 on the faster
one absorbs a body preempted for up to its own length.

Why the row ratio is not asserted near 4: the slower device's share (about 60000 rows) keeps more
of its matrix in cache than the faster one's (about 200000), so its time per row at its share is
lower than at the faster one's; measured on a 2-core machine, the ratio lies between 2.5 and 3.6.
Memory traffic from other jobs bends the faster device's curve further (its time per row at
140000 rows was 3 times that at 20000 in a loaded CI run), and the partition follows the curves:
1.90 was measured there, with the rows within 0.01 % of what `hit-fpm partition` said. So the ratio
is bounded below by 1.5, which equal devices (ratio about 1) cannot reach, and the exact check is
the one against the models' own partition. The models' own times at one size carry the factor 4
(3.8 to 3.9 measured).

usage: spmv_models_check.py MPIEXEC HIT_FPM HIT_CG WORK_DIR
"""
import json
import os
import subprocess
import sys

mpiexec = sys.argv[1]
fpm, cg, work = (os.path.abspath(a) for a in sys.argv[2:5])
os.makedirs(work, exist_ok=True)
devices = "emu:0(slowdown=2,clock=cpu,cores=1),emu:1(slowdown=8,clock=cpu,cores=1)"
matrix = "poisson3d:n=64"  # 262144 rows of the kernel's row structure
rows_total = 64 ** 3
models = [os.path.join(work, f"spmv{r}.csv") for r in (0, 1)]


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=100, cwd=work)
    if out.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)} exited {out.returncode}:\n{out.stdout}{out.stderr}")
    return out.stdout


run([mpiexec, "-n", "2", fpm, "build", "--kernel", "spmv", "--min", "20000", "--max", "260000",
     "--points", "5", "--max-time", "0.2", "--devices", devices, "--quiet",
     "--out", os.path.join(work, "spmv{rank}.csv")])
for m in models:
    if not os.path.exists(m):
        sys.exit(f"FAILED: hit-fpm build wrote no {m}")

predicted = json.loads(run([fpm, "partition", "-m", models[0], "-m", models[1], "--n",
                            str(rows_total), "--json"]))
expected = [p["d"] for p in predicted["parts"]]

report = json.loads(run([mpiexec, "-n", "2", cg, "--generate", matrix, "--layout",
                         f"metis:models={models[0]},{models[1]}", "--devices", devices,
                         "--json", "--reps", "1", "--warmup", "0"]))
rows = [p["rows"] for p in report["parts"]]
problems = []
if sum(rows) != rows_total:
    problems.append(f"the parts hold {sum(rows)} rows, not {rows_total}")
ratio = rows[0] / max(rows[1], 1)
if not 1.5 <= ratio <= 8.0:
    problems.append(f"fast/slow rows = {ratio:.2f}, not clearly uneven (1.5 to 8)")


def largest_point(model):
    points = [line.split(",") for line in open(model) if line[:1].isdigit()]
    d, t = max((int(p[0]), float(p[1])) for p in points)
    return d, t


(d0, t0), (d1, t1) = (largest_point(m) for m in models)
slowdown = t1 / t0
# 2.0, not 2.5: a fresh clone's whole suite (ctest -j2) once measured 2.22 (3.0-4.5 in 8 runs
# before); equal devices would give about 1, so the bound still tells the slowdown apart.
if d0 != d1 or not 2.0 <= slowdown <= 6.0:
    problems.append(f"the models time {d0} and {d1} units in {t0:.3g} and {t1:.3g} s: the slower "
                    f"device {slowdown:.2f} times slower, not about 4 (2 to 6)")
for r in (0, 1):
    if abs(rows[r] - expected[r]) > 0.1 * expected[r]:
        problems.append(f"rank {r} holds {rows[r]} rows, the models' partition says {expected[r]}")
print(f"rows {rows} (ratio {ratio:.2f}), hit-fpm partition {expected}, models' slowdown "
      f"{slowdown:.2f} at {d0} units")
if problems:
    print("\n".join("FAILED: " + p for p in problems))
    for m in models:
        print(open(m).read())
    sys.exit(1)
print("passed")
