#!/usr/bin/env python3
"""The JSON result of hit-cannon, hit-summa, hit-jacobi, hit-linsolve, hit-cholesky, hit-qr and hit-packages has exactly the fields docs/results.md lists
(so the doc stays true), the schema name, the project's version, and one per-rank object per rank.

usage: results_check.py MPIEXEC NP BIN_DIR DOCS_RESULTS_MD VERSION
"""
import json
import re
import subprocess
import sys

mpiexec, np_, bindir, doc, version = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
text = open(doc).read()


def documented(section):
    block = text.split(f"<!-- fields: {section} -->", 1)[1].split("\n\n", 1)[0]
    names = set()
    for line in block.splitlines()[2:]:
        first = line.split("|")[1]
        names.update(re.findall(r"`([a-z_0-9]+)`", first))
    return names


problems = []
for app, args in (("cannon", ["--n", "20"]), ("summa", ["--n", "20", "--panel", "8"]),
                  ("jacobi", ["--n", "20", "--iters", "3"]), ("linsolve", ["--n", "20"]),
                  ("cholesky", ["--n", "20", "--b", "6"]),
                  ("qr", ["--m", "30", "--n", "20", "--b", "6"]),
                  ("packages", ["--n", "20", "--iters", "8"]),
                  ("packages-clustercl", ["--workload", "bicg", "--n", "20", "--m", "12"])):
    program = app.split("-")[0]
    out = subprocess.run([mpiexec, "-n", np_, f"{bindir}/hit-{program}", "--json", "--reps", "1", "--warmup", "0"]
                         + args, capture_output=True, text=True, timeout=120, env=None)
    lines = out.stdout.splitlines()
    if out.returncode != 0 or len(lines) != 1:
        problems.append(f"{app}: exit {out.returncode}, {len(lines)} stdout lines: {out.stderr.strip()}")
        continue
    result = json.loads(lines[0])
    want = documented("common") | documented(app)
    if set(result) != want:
        problems.append(f"{app}: fields not documented {sorted(set(result) - want)}, "
                        f"documented but missing {sorted(want - set(result))}")
    if result.get("schema") != "hitmap.result/1":
        problems.append(f"{app}: schema {result.get('schema')!r}")
    if result.get("version") != version:
        problems.append(f"{app}: version {result.get('version')!r}, the project is {version}")
    if len(result.get("per_rank", [])) != int(np_) or len(result.get("devices", [])) != int(np_):
        problems.append(f"{app}: per_rank/devices do not have one entry per rank")
    for r in result.get("per_rank", []):
        if set(r) != documented("per_rank"):
            problems.append(f"{app}: per-rank fields {sorted(r)} are not the documented ones")
            break
print("\n".join(problems) or f"all programs at np={np_}: fields as documented, schema and version {version}")
sys.exit(1 if problems else 0)
