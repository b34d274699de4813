#!/usr/bin/env python3
"""hit-fpm network end to end: at 4 processes with two emulated nodes (HIT_NODES=2) it measures
both link classes, prints them as one JSON object whose fields make sense (latency > 0, bandwidth
> 0 and finite, the pairs of each class, the node of each rank), and writes with --out a model file
that holds exactly the values of the JSON (the library's loader is checked on the same files by the
gtests: save, load, compare). At 2 processes on one node, only the class `node` is measured: the
table says there is no pair on different nodes, and the file has no `network` line.

usage: network_check.py MPIEXEC HIT_FPM WORK_DIR
"""
import json
import math
import os
import subprocess
import sys

mpiexec = sys.argv[1]
fpm, work = (os.path.abspath(a) for a in sys.argv[2:4])
os.makedirs(work, exist_ok=True)
TINY = ["--sizes", "8,1024,16384", "--reps", "3", "--warmup", "1"]
problems = []


def run(cmd, env_extra):
    env = dict(os.environ, **env_extra)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=100, cwd=work, env=env)
    if out.returncode != 0 or out.stderr.strip():
        sys.exit(f"FAILED: {' '.join(cmd)} exited {out.returncode}:\n{out.stdout}{out.stderr}")
    return out.stdout


def read_model(path):
    """(annotations, {class: row}, [pair rows]) of a network model file."""
    info, classes, pairs, section = {}, {}, [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                key, sep, value = line[1:].partition(":")
                if sep:
                    info[key.strip()] = value.strip()
                continue
            fields = line.split(",")
            if fields[0] in ("class", "rank_a"):
                section = fields
                continue
            row = dict(zip(section, fields))
            (classes.__setitem__(row["class"], row) if section[0] == "class" else pairs.append(row))
    return info, classes, pairs


def check_cost(where, c):
    lat, bw = c["latency_s"], c["bandwidth_Bps"]
    if not (lat > 0 and math.isfinite(lat) and lat < 1):
        problems.append(f"{where}: latency {lat} s is not in (0, 1)")
    if not (bw > 0 and math.isfinite(bw)):
        problems.append(f"{where}: bandwidth {bw} B/s is not a finite number > 0")


# 4 processes, 2 emulated nodes: both classes.
out4 = os.path.join(work, "net4.csv")
j = json.loads(run([mpiexec, "-n", "4", fpm, "network", *TINY, "--out", out4, "--json"],
                   {"HIT_NODES": "2"}))
expected_pairs = {"node": 2, "network": 4}
if j["processes"] != 4 or j["node_of_rank"] != [0, 0, 1, 1] or j["ranks_per_node"] != 2:
    problems.append(f"processes/node_of_rank/ranks_per_node: {j['processes']} "
                    f"{j['node_of_rank']} {j['ranks_per_node']}, expected 4 [0,0,1,1] 2")
if sorted(j["classes"]) != ["network", "node"]:
    problems.append(f"classes {sorted(j['classes'])}, expected network and node")
for name, c in j["classes"].items():
    check_cost(f"class {name}", c)
    if c["pairs"] != expected_pairs.get(name):
        problems.append(f"class {name}: {c['pairs']} pairs, expected {expected_pairs.get(name)}")
    if c["latency_spread"] < 0 or c["bandwidth_spread"] < 0:
        problems.append(f"class {name}: a negative spread")
if len(j["pairs"]) != 6:
    problems.append(f"{len(j['pairs'])} pairs measured, expected 6")
for p in j["pairs"]:
    want = "node" if p["rank_a"] // 2 == p["rank_b"] // 2 else "network"
    if p["class"] != want:
        problems.append(f"ranks {p['rank_a']} and {p['rank_b']} are of class {p['class']}, not {want}")
    check_cost(f"pair {p['rank_a']}-{p['rank_b']}", p)
if j["out"] != out4:
    problems.append(f"out {j['out']}, expected {out4}")

# The file holds the values of the JSON, to the bit.
info, classes, pairs = read_model(out4)
if info.get("kind") != "network" or info.get("processes") != "4":
    problems.append(f"annotations kind/processes: {info}")
if info.get("node_of_rank") != "0 0 1 1":
    problems.append(f"node_of_rank: {info.get('node_of_rank')}")
for name, c in j["classes"].items():
    row = classes.get(name)
    if row is None:
        problems.append(f"{out4} has no line for class {name}")
        continue
    for key in ("latency_s", "bandwidth_Bps", "latency_spread", "bandwidth_spread"):
        if float(row[key]) != c[key]:
            problems.append(f"{out4}: class {name} {key} {row[key]}, the JSON says {c[key]}")
    if int(row["pairs"]) != c["pairs"]:
        problems.append(f"{out4}: class {name} pairs {row['pairs']}, the JSON says {c['pairs']}")
if len(pairs) != len(j["pairs"]):
    problems.append(f"{out4}: {len(pairs)} pair lines, the JSON has {len(j['pairs'])}")

# 2 processes on one node: only `node`; the table says why `network` is missing.
out2 = os.path.join(work, "net2.csv")
env2 = {"HIT_NODES": "0"}
table = run([mpiexec, "-n", "2", fpm, "network", *TINY, "--out", out2], env2)
if "network  (no pair of ranks on different nodes in this run)" not in table:
    problems.append(f"the 2-process table does not say that network is missing:\n{table}")
if f"wrote {out2}" not in table or "ranks   0 and 1" not in table:
    problems.append(f"the 2-process table lacks the pair or the file written:\n{table}")
_, classes2, _ = read_model(out2)
if sorted(classes2) != ["node"]:
    problems.append(f"{out2} has classes {sorted(classes2)}, expected only node")
quiet = run([mpiexec, "-n", "2", fpm, "network", *TINY, "--quiet"], env2)
if "ranks   0 and 1" in quiet or "node " not in quiet:
    problems.append(f"--quiet still lists the pairs, or lacks the classes:\n{quiet}")

if problems:
    print("FAILED:\n" + "\n".join(problems))
    sys.exit(1)
print(f"network model checked: {json.dumps(j['classes'])}")
