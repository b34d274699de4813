#!/usr/bin/env python3
"""Copies under compute on an emulated accelerator: hit-cannon's time with a host<->device
bandwidth set (`emu:i(bw=...)`, each process a device of its own) against the larger and the sum
of its two parts, measured in the same round:
  - compute: the same run on devices without a bandwidth limit (copies at memcpy speed), its
    median time per repetition;
  - copy: the bytes the slowest-copying rank moved per repetition (h2d_bytes + d2h_bytes of --json)
    over the bandwidth.
The bandwidth is chosen in each round so that copy equals compute (the case where overlapping
them pays most: in sequence they take twice the larger). Ratio = time / max(copy, compute): 2 when
nothing overlaps, 1 when one hides the other entirely; goal <= 1.1. Writes the "overlap" section of
docs/benchmarks.md (with --update-docs) and bench/results/overlap.json.

    python3 bench/overlap/copy_compute_bench.py [--build build] [--runs 3] [--update-docs]
"""
import argparse
import datetime
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import (commit_text, machine_text, redraw_from_json, replace_section,  # noqa: E402
                      results_path, run_json, spread, write_json)

GOAL = 1.1
# (processes, n): one device, and a 2 x 2 grid of devices each with its own copy engine.
CASES = [(1, 1024), (4, 2048)]
REPS = 3


def cannon(build, np_, n, devices, env):
    cmd = ["mpiexec.mpich", "-n", str(np_), os.path.join(build, "bin", "hit-cannon"), "--n", str(n),
           "--reps", str(REPS), "--warmup", "1", "--devices", devices, "--json"]
    return run_json(cmd, env)


def devices_of(np_, params=""):
    return ",".join(f"emu:{i}{'(' + params + ')' if params else ''}" for i in range(np_))


def moved_per_rep(result):
    return max(r["h2d_bytes"] + r["d2h_bytes"] for r in result["per_rank"]) / REPS


def measure(args):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    cases = []
    for np_, n in CASES:
        rounds = []
        for _ in range(args.runs):
            plain = cannon(args.build, np_, n, devices_of(np_), env)
            compute = plain["time_s"]
            moved = moved_per_rep(plain)
            bw = moved / compute  # copy time = compute time
            limited = cannon(args.build, np_, n, devices_of(np_, f"bw={bw / 1e6:.3f}MB/s"), env)
            copy = moved_per_rep(limited) / bw
            larger = max(copy, compute)
            rounds.append({"compute_s": compute, "copy_s": copy, "time_s": limited["time_s"],
                           "bw_bytes_per_s": bw, "ratio": limited["time_s"] / larger,
                           "in_sequence": (copy + compute) / larger,
                           "device_waits": max(r["device_waits"] for r in limited["per_rank"])})
        cases.append({"procs": np_, "n": n, "rounds": rounds,
                      "ratio": spread([r["ratio"] for r in rounds]),
                      "time_s": spread([r["time_s"] for r in rounds]),
                      "compute_s": spread([r["compute_s"] for r in rounds]),
                      "copy_s": spread([r["copy_s"] for r in rounds])})
    return {"commit": commit_text(), "machine": machine_text(details=True),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "load": os.getloadavg()[0], "runs": args.runs, "goal": GOAL, "cases": cases}


def fmt(s, digits=3):
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}-{s['max']:.{digits}f}]"


def markdown(res):
    lines = [
        "### Copies under compute: hit-cannon with a host-device bandwidth (emulated devices)",
        "",
        f"Measured at commit {res['commit']} on {res['machine']}; load average "
        f"{res['load']:.2f} when it started. Each round: hit-cannon on emulated devices without a "
        f"bandwidth limit (compute: its median time per repetition, {REPS} repetitions after a "
        "warm-up), then with `bw=` set so that the bytes a rank moves per repetition (h2d + d2h) "
        "take as long as that (copy). Ratio = time with the bandwidth / max(copy, compute): 2 when "
        f"the copies and the products run in sequence, 1 when either hides the other; goal ≤ {GOAL}. "
        f"{res['runs']} rounds, median [min-max]. Each process has a device of its own "
        "(`emu:0,emu:1,…`).",
        "",
        "Command: `python3 bench/overlap/copy_compute_bench.py --update-docs`.",
        "",
        "| processes | n | compute s | copy s | time with bw s | ratio | goal |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in res["cases"]:
        met = "met" if c["ratio"]["median"] <= res["goal"] else "**not met**"
        lines.append(f"| {c['procs']} | {c['n']} | {fmt(c['compute_s'], 4)} | {fmt(c['copy_s'], 4)} "
                     f"| {fmt(c['time_s'], 4)} | {fmt(c['ratio'])} | {met} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--update-docs", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--from-json", action="store_true")
    args = ap.parse_args()
    if args.from_json and args.json_out is None:
        args.json_out = results_path(args, "overlap")
    if redraw_from_json(args, "overlap", markdown):
        return
    res = measure(args)
    write_json(results_path(args, "overlap"), res)
    if args.update_docs:
        replace_section(args.out, "overlap", markdown(res))
    print(markdown(res))


if __name__ == "__main__":
    main()
