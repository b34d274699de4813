#!/usr/bin/env python3
"""hit-cholesky --runtime --svg: the timeline of the last timed run has one bar per task (as many
as the JSON's runtime.tasks), on as many lanes as the run had workers, every bar's tooltip names
its kernel and tile and its times; the times respect the factorisation's dependencies (the
potrf of column k ends before any trsm of column k starts, and each trsm (i, k) ends before the
syrk of tile (i, i) and column k starts); every kernel is in the legend once.

usage: cholesky_timeline_check.py MPIEXEC HIT_CHOLESKY OUT_DIR DEVICES
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

mpiexec, cholesky, out_dir, devices = sys.argv[1:5]
svg_path = os.path.join(out_dir, "cholesky_timeline_" + re.sub(r"\W", "_", devices) + ".svg")
if os.path.exists(svg_path):
    os.remove(svg_path)
cmd = [mpiexec, "-n", "1", cholesky, "--n", "400", "--b", "64", "--runtime", "--devices",
       devices, "--svg", svg_path, "--json", "--check", "--reps", "2", "--warmup", "0"]
out = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
if out.returncode != 0:
    sys.exit(f"exit {out.returncode}: {' '.join(cmd)}\n{out.stderr}")
result = json.loads(out.stdout)
problems = []
if not result["check"]["passed"]:
    problems.append(f"check failed: {result['check']}")
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(svg_path).getroot()
tasks = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "task"]
if len(tasks) != result["runtime"]["tasks"]:
    problems.append(f"{len(tasks)} bars for {result['runtime']['tasks']} tasks")
title = re.compile(r"task (\d+): (potrf|trsm|syrk|gemm) of tile \((\d+),(\d+)\), column (\d+) "
                   r"\(([0-9.]+)-([0-9.]+) ms\)")
bars = {}
for r in tasks:
    m = title.fullmatch(r.find("s:title", ns).text)
    if not m:
        problems.append(f"tooltip {r.find('s:title', ns).text!r}")
        continue
    kind, i, j, k = m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5))
    bars[(kind, i, j, k)] = (float(m.group(6)), float(m.group(7)))
    if float(m.group(7)) < float(m.group(6)):
        problems.append(f"{m.group(0)} ends before it starts")
tiles = (400 + 63) // 64
for k in range(tiles):
    potrf = bars.get(("potrf", k, k, k))
    if potrf is None:
        problems.append(f"no potrf of column {k}")
        continue
    for i in range(k + 1, tiles):
        trsm = bars.get(("trsm", i, k, k))
        syrk = bars.get(("syrk", i, i, k))
        if trsm is None or syrk is None:
            problems.append(f"no trsm or syrk of ({i}, {k})")
            continue
        # The tooltips round to a microsecond.
        if trsm[0] + 1e-3 < potrf[1]:
            problems.append(f"trsm ({i},{k}) starts at {trsm[0]} ms, before potrf {k} ends ({potrf[1]})")
        if syrk[0] + 1e-3 < trsm[1]:
            problems.append(f"syrk ({i},{k}) starts at {syrk[0]} ms, before trsm ({i},{k}) ends")
# One lane per worker that ran a task, named by its place (the host's cores, the device).
lanes = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.text and " #" in t.text]
places = ("host cores", devices)
if not 1 <= len(lanes) <= result["runtime"]["workers"] or \
        any(not lane.startswith(places) for lane in lanes):
    problems.append(f"lanes {lanes} for {result['runtime']['workers']} workers")
legend = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")
          if t.text in ("potrf", "trsm", "syrk", "gemm")]
if sorted(legend) != ["gemm", "potrf", "syrk", "trsm"]:
    problems.append(f"legend {legend}")
if problems:
    sys.exit(f"{devices}: " + "\n".join(problems))
print(f"{devices}: {len(tasks)} tasks on {len(lanes)} lanes, dependencies respected: ok")
