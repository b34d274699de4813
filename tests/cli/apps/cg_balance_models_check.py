#!/usr/bin/env python3
"""hit-cg --balance fpm|cpm --balance-models: the rows start from the stored models' partition
(the one `hit-fpm partition` computes from the same files, a different code path, with the
partitioner of the mode), named by a {rank} pattern or listed, and the solution still passes
--check.

usage: cg_balance_models_check.py MPIEXEC NP HIT_CG HIT_FPM
"""
import json
import os
import subprocess
import sys
import tempfile

mpiexec, np_, cg, fpm = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
n = 900  # poisson2d:n=30
slowdowns = [1, 3, 2, 5][:np_]
problems = []


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if out.returncode != 0:
        problems.append(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
        return None
    return out.stdout


with tempfile.TemporaryDirectory() as work:
    # Rank r takes slowdowns[r] ms per row, more per row beyond 300 rows (a cache step), so the
    # fpm partition is not plain proportions.
    files = []
    for r, s in enumerate(slowdowns):
        path = os.path.join(work, f"m-{r}.csv")
        with open(path, "w") as f:
            f.write("d,t\n" + "".join(f"{d},{d * s * (1e-6 if d < 300 else 1.5e-6)}\n"
                                       for d in (50, 200, 300, 600, 900)))
        files.append(path)
    for mode, algorithm in (("fpm", "geometric"), ("cpm", "proportional")):
        kind = "piecewise" if mode == "fpm" else "constant"
        listing = run([fpm, "partition", "--n", str(n), "--algorithm", algorithm, "--kind", kind,
                       "--json"] + [a for f in files for a in ("-m", f)])
        expected = [p["d"] for p in json.loads(listing)["parts"]] if listing else None
        for form in (os.path.join(work, "m-{rank}.csv"), ",".join(files)):
            out = run([mpiexec, "-n", str(np_), cg, "--generate", "poisson2d:n=30", "--layout",
                       "rows", "--balance", mode, "--balance-models", form, "--check", "--json",
                       "--reps", "1", "--warmup", "0"])
            if out is None:
                continue
            r = json.loads(out)
            if not r["check"]["passed"]:
                problems.append(f"{mode} {form}: --check failed")
            if r["balance_models"] is not True:
                problems.append(f"{mode} {form}: the report says no models were used")
            if expected is not None and r["initial_rows"] != expected:
                problems.append(f"{mode} {form}: started from rows {r['initial_rows']}, the "
                                f"models' {algorithm} partition is {expected}")
            if expected is not None and np_ > 1 and len(set(expected)) == 1:
                problems.append(f"{mode}: the models' partition is even, which tests nothing")

if problems:
    print("FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"hit-cg started from the stored models' partition at {np_} processes (fpm and cpm, "
      "pattern and list)")
