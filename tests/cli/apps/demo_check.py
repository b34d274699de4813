#!/usr/bin/env python3
"""scripts/demo.sh at a small size, on the programs built: both runs pass --check, the first
with blocks and the second with columns2d, and the last line gives the speed-up as the ratio of
the two runs' median times, which it also prints, as the runs' summaries gave them.

usage: demo_check.py DEMO_SCRIPT BIN_DIR
"""
import os
import re
import subprocess
import sys

demo, bin_dir = sys.argv[1:3]
env = dict(os.environ, HIT_DEMO_BIN=bin_dir, HIT_DEMO_N="384")
out = subprocess.run(["bash", demo, "--reps", "1", "--warmup", "0"], capture_output=True,
                     text=True, timeout=280, env=env)
print(out.stdout)
if out.returncode != 0:
    sys.exit(f"demo.sh exited {out.returncode}\n{out.stderr}")
lines = out.stdout.strip().splitlines()
problems = []
layouts = re.findall(r"^  layouts: A (\S+), B \S+, C \S+$", out.stdout, re.M)
if layouts != ["blocks", "columns2d"]:
    problems.append(f"layouts of the two runs: {layouts}")
if len(re.findall(r"^  check: passed", out.stdout, re.M)) != 2:
    problems.append("not both runs passed --check")
times = [float(t) for t in re.findall(r"^  time ([0-9.]+) s \(median", out.stdout, re.M)]
last = re.fullmatch(r"columns2d over blocks: ([0-9.]+)x the speed \(([0-9.]+) s against "
                    r"([0-9.]+) s\)", lines[-1])
if len(times) != 2 or not last:
    problems.append(f"times {times}, last line {lines[-1]!r}")
else:
    speedup, balanced, plain = (float(g) for g in last.groups())
    if abs(balanced - times[1]) > 5e-5 or abs(plain - times[0]) > 5e-5:
        problems.append(f"last line's times {balanced}, {plain}; the runs' {times[1]}, {times[0]}")
    if abs(speedup - times[0] / times[1]) > 0.006:
        problems.append(f"speed-up {speedup}, the times' ratio {times[0] / times[1]:.4f}")
if not os.path.exists(os.path.join(os.path.dirname(bin_dir.rstrip("/")), "demo-layouts.svg")):
    problems.append("no demo-layouts.svg beside the bin folder")
if problems:
    sys.exit("\n".join(problems))
print("demo: ok")
