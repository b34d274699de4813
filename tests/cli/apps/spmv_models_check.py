#!/usr/bin/env python3
"""Models of the spmv kernel drive the sparse layout, end to end: `hit-fpm build --kernel spmv` on
two emulated devices, the second 4 times slower, writes one model per rank; `hit-cg` on
poisson3d:n=32 with `--layout metis:models=` of those files gives the slower process about a
quarter of the faster one's rows (without the models, METIS splits the rows evenly: ratio 1), and
as many as `hit-fpm partition` of the same models says, within METIS's tolerance.

The devices run at 2 and 8 times a core's speed with `clock=cpu,cores=1`: their times are the CPU
time of the body times the slowdown, so a host shared with other jobs (more ranks than cores, a
build beside the tests) does not make one device look slower than it is; the factor 2 on the faster
one absorbs a body preempted for up to its own length. The measured ratio lies below 4 (each
launch's fixed cost is not slowed down), about 3 to 3.5 on a 2-core machine.

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
matrix = "poisson3d:n=32"  # 32768 rows of the kernel's row structure
rows_total = 32 ** 3
models = [os.path.join(work, f"spmv{r}.csv") for r in (0, 1)]


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=100, cwd=work)
    if out.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)} exited {out.returncode}:\n{out.stdout}{out.stderr}")
    return out.stdout


run([mpiexec, "-n", "2", fpm, "build", "--kernel", "spmv", "--min", "2000", "--max", "30000",
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
if not 2.5 <= ratio <= 6.0:
    problems.append(f"fast/slow rows = {ratio:.2f}, not about 4 (2.5 to 6)")
for r in (0, 1):
    if abs(rows[r] - expected[r]) > 0.1 * expected[r]:
        problems.append(f"rank {r} holds {rows[r]} rows, the models' partition says {expected[r]}")
print(f"rows {rows} (ratio {ratio:.2f}), hit-fpm partition {expected}")
if problems:
    print("\n".join("FAILED: " + p for p in problems))
    for m in models:
        print(open(m).read())
    sys.exit(1)
print("passed")
