#!/usr/bin/env python3
"""hit-cholesky --runtime --svg: the timeline of the last timed run has one bar per task (as many
as the JSON's runtime.tasks), on as many lanes as the run had workers, every bar's tooltip names
its kernel and tile (or run of tiles of a column) and its times; the bars cover every tile step of
the factorisation exactly once (a potrf per column, a trsm of each tile below it, a syrk of each
diagonal tile and a gemm of each tile below it per column before it); the times respect the
factorisation's dependencies (the potrf of column k ends before any trsm of column k starts, and
the trsm of (i, k) ends before the syrk of tile (i, i) and column k starts); every kernel is in
the legend once.

Over NP > 1 processes the picture holds every process's lanes ("rank r: ..."): every task of the
factorisation once, whichever process ran it; every receive of a tile matched by the send of the
process it names, the receive ending after the send began; no process receiving a tile twice
(each panel tile it uses reaches it once); and the dependencies above across processes.

usage: cholesky_timeline_check.py MPIEXEC HIT_CHOLESKY OUT_DIR DEVICES [NP]
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

mpiexec, cholesky, out_dir, devices = sys.argv[1:5]
np = int(sys.argv[5]) if len(sys.argv) > 5 else 1
svg_path = os.path.join(out_dir, f"cholesky_timeline_np{np}_" + re.sub(r"\W", "_", devices) + ".svg")
if os.path.exists(svg_path):
    os.remove(svg_path)
cmd = [mpiexec, "-n", str(np), cholesky, "--n", "400", "--b", "64", "--runtime", "--devices",
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
bars_all = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "task"]
message = re.compile(r"(send|receive) tile \((\d+),(\d+)\) (?:to|from) process (\d+) "
                     r"\(([0-9.]+)-([0-9.]+) ms\)")
tasks = [r for r in bars_all if not message.fullmatch(r.find("s:title", ns).text)]
messages = [message.fullmatch(r.find("s:title", ns).text) for r in bars_all]
messages = [m for m in messages if m]
tiles = (400 + 63) // 64
if np == 1 and len(tasks) != result["runtime"]["tasks"]:
    problems.append(f"{len(tasks)} bars for {result['runtime']['tasks']} tasks")
if np == 1 and messages:
    problems.append(f"{len(messages)} messages in a run of one process")
title = re.compile(r"task (\d+): (potrf|trsm|syrk|gemm) of tiles? \((\d+)(?:-(\d+))?,(\d+)\), "
                   r"column (\d+) \(([0-9.]+)-([0-9.]+) ms\)")
# Per tile step (kernel, i, j, k): the times of the bar that covers it.
bars = {}
for r in tasks:
    m = title.fullmatch(r.find("s:title", ns).text)
    if not m:
        problems.append(f"tooltip {r.find('s:title', ns).text!r}")
        continue
    kind, first, j, k = m.group(2), int(m.group(3)), int(m.group(5)), int(m.group(6))
    last = int(m.group(4)) if m.group(4) else first
    if m.group(4) and (kind not in ("trsm", "gemm") or last <= first):
        problems.append(f"{m.group(0)}: a run of one kernel's tiles (i-i') with i < i'")
    start, end = float(m.group(7)), float(m.group(8))
    if end < start:
        problems.append(f"{m.group(0)} ends before it starts")
    for i in range(first, last + 1):
        if (kind, i, j, k) in bars:
            problems.append(f"{kind} of tile ({i},{j}), column {k}, drawn twice")
        bars[(kind, i, j, k)] = (start, end)
expected = {("potrf", k, k, k) for k in range(tiles)}
expected |= {("trsm", i, k, k) for k in range(tiles) for i in range(k + 1, tiles)}
expected |= {("syrk", j, j, k) for k in range(tiles) for j in range(k + 1, tiles)}
expected |= {("gemm", i, j, k) for k in range(tiles) for j in range(k + 1, tiles)
             for i in range(j + 1, tiles)}
if set(bars) != expected:
    problems.append(f"the bars cover {len(bars)} tile steps, {len(set(bars) & expected)} of the "
                    f"{len(expected)} of {tiles} tile columns; missing "
                    f"{sorted(expected - set(bars))[:5]}, extra {sorted(set(bars) - expected)[:5]}")
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
# Messages: a bar's lane (its label's row) names the process that drew it; a send names its
# receiver and a receive its sender. Each receive must have the sender's send, and no process
# receives a tile twice.
label_rank = {}
for t in root.iter("{http://www.w3.org/2000/svg}text"):
    if t.text and " #" in t.text:
        lane_rank = re.match(r"rank (\d+): ", t.text)
        label_rank[round(float(t.get("y")), 1)] = int(lane_rank.group(1)) if lane_rank else 0
sends = {}
receives = {}
for r in bars_all:
    m = message.fullmatch(r.find("s:title", ns).text)
    if not m:
        continue
    drawn_by = label_rank.get(round(float(r.get("y")) + 12, 1))
    if drawn_by is None:
        problems.append(f"the bar of {m.group(0)} is on no lane")
        continue
    tile, peer = (int(m.group(2)), int(m.group(3))), int(m.group(4))
    times = (float(m.group(5)), float(m.group(6)))
    if m.group(1) == "send":
        sends.setdefault((tile, drawn_by, peer), []).append(times)
    else:
        receives.setdefault((tile, peer, drawn_by), []).append(times)
if np > 1 and not messages:
    problems.append(f"no messages over {np} processes")
for key, got in list(sends.items()) + list(receives.items()):
    if len(got) != 1:
        problems.append(f"tile {key[0]} moved {len(got)} times from process {key[1]} to {key[2]}")
if sorted(sends) != sorted(receives):
    problems.append(f"sends {sorted(set(sends) - set(receives))} and receives "
                    f"{sorted(set(receives) - set(sends))} do not pair up")
for key, got in receives.items():
    if key in sends and got[0][1] + 1e-3 < sends[key][0][0]:
        problems.append(f"tile {key[0]} received at {got[0][1]} ms, before its send began")
# One lane per worker that ran a task, named by its place (the host's cores, the device, the
# messages), and over several processes by its rank.
lanes = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.text and " #" in t.text]
places = ("host cores", devices.split(",")[0].split("*")[0], "messages")
if np > 1:
    places = tuple(f"rank {r}: {p}" for r in range(np) for p in places)
if not 1 <= len(lanes) <= np * (result["runtime"]["workers"] + 1) or \
        any(not lane.startswith(places) for lane in lanes):
    problems.append(f"lanes {lanes} for {result['runtime']['workers']} workers per process")
legend = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")
          if t.text in ("potrf", "trsm", "syrk", "gemm")]
if sorted(legend) != ["gemm", "potrf", "syrk", "trsm"]:
    problems.append(f"legend {legend}")
if problems:
    sys.exit(f"{devices}: " + "\n".join(problems))
print(f"{devices}, {np} processes: {len(tasks)} tasks and {len(messages)} messages on {len(lanes)} "
      "lanes, dependencies respected: ok")
