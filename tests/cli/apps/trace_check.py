#!/usr/bin/env python3
"""--trace writes one trace-event JSON file for the whole run: valid JSON whose events carry the
fields Perfetto needs, a named process for every rank, and as many launch events per rank as the
JSON summary counts launches; HIT_TRACE does the same where --trace is not given. With hit-qr,
every task of the runtime's report is a span (and every message an instant); with hit-cg, every
update of the sparse halo is a comm span.

usage: trace_check.py NP WORKDIR MPIEXEC BIN_DIR
"""
import collections
import json
import os
import shutil
import subprocess
import sys

np_, work, mpiexec, bin_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
problems = []


def run(program, args, env=None):
    cmd = [mpiexec, "-n", str(np_), os.path.join(bin_dir, program)] + args + ["--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240,
                       env=dict(os.environ, **(env or {})))
    if r.returncode != 0:
        problems.append(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr}")
        return None
    return json.loads(r.stdout)


def load(path):
    try:
        with open(path) as f:
            t = json.load(f)
    except (OSError, ValueError) as e:
        problems.append(f"{path}: {e}")
        return []
    events = t.get("traceEvents", [])
    for e in events:
        if e.get("ph") not in ("X", "i", "M") or "pid" not in e or "name" not in e:
            problems.append(f"{path}: malformed event {e}")
            break
        if e["ph"] == "X" and (e.get("dur", -1) < 0 or "ts" not in e or "tid" not in e):
            problems.append(f"{path}: a span without ts, tid or a duration >= 0: {e}")
            break
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    if sorted(names) != list(range(np_)):
        problems.append(f"{path}: processes named {sorted(names)}, expected 0..{np_ - 1}")
    return events


def launches_match(what, events, result):
    counted = collections.Counter(e["pid"] for e in events if e.get("cat") == "launch")
    summary = {r["rank"]: r["launches"] for r in result["per_rank"]}
    if any(counted.get(r, 0) != summary[r] for r in range(np_)) or sum(summary.values()) == 0:
        problems.append(f"{what}: launch events per rank {dict(counted)}, the summary's {summary}")


jacobi = ["--n", "64", "--iters", "4", "--reps", "2", "--warmup", "1"]
result = run("hit-jacobi", jacobi + ["--trace", os.path.join(work, "jacobi.json")])
if result:
    events = load(os.path.join(work, "jacobi.json"))
    launches_match("hit-jacobi --trace", events, result)
    if np_ > 1 and not any(e.get("cat") == "comm" for e in events):
        problems.append("hit-jacobi --trace: no comm events (the halo exchanges)")
result = run("hit-summa", ["--n", "48", "--reps", "1", "--warmup", "0"],
             env={"HIT_TRACE": os.path.join(work, "summa.json")})
if result:
    launches_match("hit-summa with HIT_TRACE", load(os.path.join(work, "summa.json")), result)
result = run("hit-qr", ["--n", "96", "--b", "32", "--reps", "1", "--warmup", "0", "--trace",
                        os.path.join(work, "qr.json")])
if result:
    events = load(os.path.join(work, "qr.json"))
    # The runtime's JSON is rank 0's: its tasks and messages, each one event of rank 0.
    rt = result["runtime"]
    tasks = sum(1 for e in events if e.get("cat") == "task" and e["pid"] == 0)
    messages = sum(1 for e in events if e.get("cat") == "message" and e["pid"] == 0)
    if tasks != rt["tasks"] or messages != rt["messages_sent"] + rt["messages_received"]:
        problems.append(f"hit-qr --trace: rank 0 has {tasks} task spans and {messages} message "
                        f"events, its runtime report {rt}")
    if np_ > 1 and not any(e.get("cat") == "task" and e["pid"] == np_ - 1 for e in events):
        problems.append(f"hit-qr --trace: no task of rank {np_ - 1}")

# A sparse program: one comm span per halo update and process that exchanges anything (an
# iteration's update, counted by the JSON's iterations), named as the halo is.
result = run("hit-cg", ["--generate", "poisson2d:n=24", "--reps", "1", "--warmup", "0",
                        "--trace", os.path.join(work, "cg.json")])
if result:
    events = load(os.path.join(work, "cg.json"))
    launches_match("hit-cg --trace", events, result)
    halos = collections.Counter(e["pid"] for e in events
                                if e.get("cat") == "comm" and "halo" in e["name"])
    expected = {p: result["iterations"] for p in range(np_)} if np_ > 1 else {}
    if dict(halos) != expected:
        problems.append(f"hit-cg --trace: halo spans per rank {dict(halos)}, expected {expected} "
                        f"(one per iteration)")

if problems:
    sys.exit("\n".join(problems))
print(f"trace at {np_} processes: ok")
