#!/usr/bin/env python3
"""hit-jacobi --balance fpm --balance-models: the rows start from the stored models' partition
(the one `hit-fpm partition` computes from the same files, a different code path), whether the
files are named by a {rank} pattern or listed, and the answer stays bit for bit the serial one.
Then models built by `hit-fpm build --kernel jacobi --resident` are accepted and say what they
measured.

usage: balance_models_check.py MPIEXEC NP HIT_JACOBI HIT_FPM
"""
import json
import os
import subprocess
import sys
import tempfile

mpiexec, np_, jacobi, fpm = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
n = 96
slowdowns = [1, 3, 2, 5][:np_]
devices = ",".join(f"emu:{i}(slowdown={s},clock=cpu)" for i, s in enumerate(slowdowns))
problems = []


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if out.returncode != 0:
        problems.append(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
        return None
    return out.stdout


with tempfile.TemporaryDirectory() as work:
    # Hand-written models: rank r takes slowdowns[r] ms per row, but not linearly (a cache step at
    # 40 rows), so that the partition is not plain proportions.
    files = []
    for r, s in enumerate(slowdowns):
        path = os.path.join(work, f"m-{r}.csv")
        with open(path, "w") as f:
            f.write("d,t\n" + "".join(f"{d},{d * s * (1e-3 if d < 40 else 1.5e-3)}\n"
                                       for d in (5, 20, 40, 80, 96)))
        files.append(path)
    expected = run([fpm, "partition", "--n", str(n), "--json"] + [a for f in files for a in ("-m", f)])
    expected = [p["d"] for p in json.loads(expected)["parts"]] if expected else None
    base = [mpiexec, "-n", str(np_), jacobi, "--n", str(n + 2), "--iters", "12", "--balance", "fpm",
            "--devices", devices, "--check", "--json", "--reps", "1", "--warmup", "0"]
    # The grid has n + 2 rows; the balancer shares them all.
    expected_rows = None
    for form in (os.path.join(work, "m-{rank}.csv"), ",".join(files)):
        out = run(base + ["--balance-models", form])
        if out is None:
            continue
        r = json.loads(out)
        b = r["balance"]
        if not r["check"]["passed"]:
            problems.append(f"{form}: not bit-for-bit equal to the serial run")
        if b["models"] is not True:
            problems.append(f"{form}: the report says no models were used")
        if sum(b["initial_rows"]) != n + 2:
            problems.append(f"{form}: initial rows {b['initial_rows']} do not sum to {n + 2}")
        if expected_rows is None:
            expected_rows = b["initial_rows"]
        elif b["initial_rows"] != expected_rows:
            problems.append(f"the list form started from {b['initial_rows']}, the pattern from "
                            f"{expected_rows}")
    if expected and expected_rows:
        # hit-fpm partitioned n rows, the balancer n + 2: the same shares within two rows each.
        if any(abs(a - b) > 2 for a, b in zip(expected, expected_rows)):
            problems.append(f"initial rows {expected_rows}, hit-fpm partition gives {expected} "
                            f"for {n} rows")
    # Without models the run starts even, and its report says so.
    out = run(base)
    if out is not None:
        b = json.loads(out)["balance"]
        if b["models"] is not False or max(b["initial_rows"]) - min(b["initial_rows"]) > 1:
            problems.append(f"without models: models {b['models']}, initial rows {b['initial_rows']}")

    # Models the tool builds with the grid resident: annotated, and accepted by the balancer.
    pattern = os.path.join(work, "built-{rank}.csv")
    if run([mpiexec, "-n", str(np_), fpm, "build", "--kernel", "jacobi", "--resident", "--columns",
            str(n + 2), "--min", "4", "--max", str(n), "--points", "3", "--max-time", "0.1",
            "--devices", devices, "--out", pattern, "--quiet"]) is not None:
        for r in range(np_):
            text = open(pattern.replace("{rank}", str(r))).read()
            if f"# kernel: jacobi5(N={n + 2},resident)" not in text:
                problems.append(f"built model {r} does not name the resident kernel:\n{text}")
        out = run(base + ["--balance-models", pattern])
        if out is not None and not json.loads(out)["check"]["passed"]:
            problems.append("with built models: not bit-for-bit equal to the serial run")

print("\n".join(problems) or f"np={np_}: started from {expected_rows} (hit-fpm: {expected})")
sys.exit(1 if problems else 0)
