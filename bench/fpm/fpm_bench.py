#!/usr/bin/env python3
"""The four hit-bench-fpm scenarios of docs/benchmarks.md (even vs CPM vs partial-FPM dynamic
partitioning on emulated devices), one after the other, each writing its table into the "fpm"
section with the commit measured.

    python3 bench/fpm/fpm_bench.py [--build build] [--runs 9]
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import commit_text  # noqa: E402

# (label, devices; None: the program's default devices).
SCENARIOS = [
    ("A: balanced share below the cliff", None),
    ("B: balanced share beyond the cliff",
     "emu:0(slowdown=2,clock=cpu,cores=1),emu:1(slowdown=7.6,clock=cpu,cores=1),"
     "emu:2(slowdown=2;28@48MiB,clock=cpu,cores=1)"),
    ("A2: as A, the fastest device as fast as the host",
     "emu:0(slowdown=1,clock=cpu,cores=1),emu:1(slowdown=3.8,clock=cpu,cores=1),"
     "emu:2(slowdown=2.5;14@40MiB,clock=cpu,cores=1)"),
    ("A3: as A, emulator clock=wall",
     "emu:0(slowdown=2),emu:1(slowdown=7.6),emu:2(slowdown=5;28@40MiB)"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    args = ap.parse_args()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    commit = commit_text()
    for label, devices in SCENARIOS:
        cmd = ["mpiexec.mpich", "-n", "3", os.path.join(args.build, "bin", "hit-bench-fpm"),
               "--runs", str(args.runs)]
        if devices:
            cmd += ["--devices", devices]
        cmd += ["--label", label, "--markdown", args.out, "--measured-at", f"commit {commit}",
                "--quiet"]
        print(f"{label} ...", flush=True)
        subprocess.run(cmd, env=env, check=True, cwd=ROOT)
    print(f"section 'fpm' of {args.out} written")


if __name__ == "__main__":
    main()
