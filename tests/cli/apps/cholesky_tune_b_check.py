#!/usr/bin/env python3
"""hit-cholesky --tune chooses the top-level tile size B before the host share B_h: it times the
tile gemm at every candidate (128 to 2048 and the layout's own B, those at most n and --tune-n,
multiples of b), reports each rate, factorises with the smallest B within 5 % of the best rate,
and passes --check; with --keep-b it keeps the layout's B.

usage: cholesky_tune_b_check.py MPIEXEC HIT_CHOLESKY
"""
import json
import re
import subprocess
import sys

mpiexec, cholesky = sys.argv[1:3]
common = [mpiexec, "-n", "3", cholesky, "--n", "600", "--topology", "array", "--json", "--check",
          "--reps", "1", "--warmup", "0", "--tune", "--tune-n", "600",
          "--devices", "cpu,emu:0(slowdown=3,clock=cpu),emu:1(slowdown=3,clock=cpu)",
          "--layout", "heteroBlockCyclic:B=64,b=16"]


def run(extra):
    out = subprocess.run(common + extra, capture_output=True, text=True, timeout=280)
    if out.returncode != 0:
        sys.exit(f"exit {out.returncode}: {' '.join(common + extra)}\n{out.stderr}")
    return json.loads(out.stdout)


problems = []
r = run([])
sizes = [t["B"] for t in r.get("tuning_b", [])]
if sizes != [64, 128, 256, 512]:
    problems.append(f"candidates {sizes}, expected [64, 128, 256, 512] (n = --tune-n = 600)")
rates = {t["B"]: t["gflops"] for t in r.get("tuning_b", [])}
if any(not g > 0 for g in rates.values()):
    problems.append(f"rates {rates}")
best = max(rates.values()) if rates else 0
smallest = min((b for b, g in rates.items() if g >= 0.95 * best), default=None)
if r.get("tuned_b") != smallest:
    problems.append(f"chose B = {r.get('tuned_b')}, the smallest within 5 % of {best:.2f} is "
                    f"{smallest} ({rates})")
m = re.search(r"B=(\d+)", r["layout"])
if not m or int(m.group(1)) != r.get("tuned_b"):
    problems.append(f"factorised with {r['layout']}, not B = {r.get('tuned_b')}")
if not r["tuning"]:
    problems.append("no B_h trials after the B search")
if not r["check"]["passed"]:
    problems.append(f"check failed: {r['check']}")
kept = run(["--keep-b"])
if "tuning_b" in kept or "B=64," not in kept["layout"]:
    problems.append(f"--keep-b: layout {kept['layout']}, tuning_b {kept.get('tuning_b')}")
if problems:
    sys.exit("\n".join(problems))
print(f"B candidates {rates}, chose {r['tuned_b']}: {r['layout']}; --keep-b kept B = 64: ok")
