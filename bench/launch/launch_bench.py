#!/usr/bin/env python3
"""Launch overhead: microseconds per hit::launch of an empty kernel (hit-bench-launch: a 64 x 64
tile, one in() and one inout() Resident argument) on `cpu:0` and `emu:0`, for the partitions
`single`, `threads:threads=2` and `threads:threads=4`, with, as the reference, what starting and
joining the threads on every call costs (the `threads` partition before the persistent pool).
Each device runs --runs times, interleaved; a run reports the median of its repetitions, and the
figures here are the median of those over the runs, with their min and max. Goals: under 5 us for
`single` on cpu, under 20 us for `threads` on cpu. Writes the "launch" section of
docs/benchmarks.md and bench/results/launch.json.

    python3 bench/launch/launch_bench.py [--build build] [--runs 5] [--launches 2000] [--reps 7]
"""
import argparse
import datetime
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import commit_text, machine_text, replace_section, run_json, spread, write_json  # noqa: E402

DEVICES = ("cpu:0", "emu:0")
# The goals of the launch overhead on cpu, in microseconds, by partition kind.
GOALS = {"single": 5.0, "threads": 20.0}


def goal_of(partition):
    return GOALS[partition.split(":", 1)[0]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--launches", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=os.path.join(ROOT, "bench", "results", "launch.json"))
    ap.add_argument("--from-json", action="store_true",
                    help="only write the section again from --json-out")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if args.from_json:
        replace_section(args.out, "launch", markdown(json.load(open(args.json_out))))
        return
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"
    cmd = ["mpiexec.mpich", "-n", "1", os.path.join(args.build, "bin", "hit-bench-launch"),
           "--launches", str(args.launches), "--reps", str(args.reps)]
    load = os.getloadavg()[0]  # others' work on a shared machine shows in the spread
    raw = {d: [] for d in DEVICES}
    for r in range(args.runs):
        for d in DEVICES:
            out = run_json(cmd + ["--devices", d], env)
            raw[d].append(out)
            cases = ", ".join(f"{c['partition']} {c['us_per_launch']['median']:.2f}"
                              for c in out["cases"])
            print(f"run {r + 1}/{args.runs} {d}: {cases} us", flush=True)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(), "machine": machine_text(details=True),
               "load_average": load, "runs": args.runs, "launches": args.launches,
               "reps": args.reps,
               "n": raw[DEVICES[0]][0]["n"], "goals_us": GOALS, "devices": {}}
    for d, outs in raw.items():
        cases = []
        for k, c in enumerate(outs[0]["cases"]):
            per_run = [o["cases"][k]["us_per_launch"]["median"] for o in outs]
            cases.append({"partition": c["partition"], "threads": c["threads"],
                          "us_per_launch": spread(per_run),
                          "fastest_us": min(o["cases"][k]["us_per_launch"]["min"] for o in outs)})
        reference = []
        for k, c in enumerate(outs[0]["reference"]):
            per_run = [o["reference"][k]["us_per_call"]["median"] for o in outs]
            reference.append({"what": c["what"], "threads": c["threads"],
                              "us_per_call": spread(per_run)})
        results["devices"][d] = {"label": outs[0]["device"], "cores": outs[0]["cores"],
                                 "cases": cases, "reference": reference, "raw": outs}
    write_json(args.json_out, results)
    replace_section(args.out, "launch", markdown(results))
    for line in verdicts(results):
        print(line)


def fmt(s, digits=2):
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}–{s['max']:.{digits}f}]"


def verdicts(r):
    """One line per cpu case with a goal: met or not, on the median over the runs."""
    out = []
    for c in r["devices"]["cpu:0"]["cases"]:
        goal = goal_of(c["partition"])
        met = c["us_per_launch"]["median"] < goal
        out.append(f"`{c['partition']}` on cpu: {fmt(c['us_per_launch'])} µs per launch, goal "
                   f"under {goal:g} µs: **{'met' if met else 'not met'}**")
    return out


def markdown(r):
    lines = [
        f"### Launch overhead of an empty kernel (`hit-bench-launch`, {r['n']} x {r['n']} tile)",
        "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']} (load average "
        f"{r.get('load_average', float('nan')):.1f} at the start). One process; a kernel "
        "whose cpu body does nothing, one `in()` and one `inout()` `Resident` argument (nothing is "
        f"staged: the figure is the launch itself). A run times {r['reps']} repetitions of "
        f"{r['launches']} launches each and reports their median; {r['runs']} runs per device, "
        "interleaved; figures are the median over the runs [min–max], in microseconds per launch. "
        "Reference: per call, starting `threads`-1 `std::thread`s and joining them around the "
        "caller's own (empty) share, as the `threads` partition did on every launch before its "
        "threads became a pool owned by the device.",
        "",
        "| device | partition | host threads | µs per launch | reference: start + join threads, µs |",
        "|---|---|---|---|---|",
    ]
    for d, dev in r["devices"].items():
        ref = {x["threads"]: x for x in dev["reference"]}
        for c in dev["cases"]:
            rx = ref.get(c["threads"])
            lines.append(f"| {dev['label']} | `{c['partition']}` | {c['threads']} | "
                         f"{fmt(c['us_per_launch'])} | {fmt(rx['us_per_call']) if rx else '–'} |")
    cores = r["devices"]["cpu:0"]["cores"]
    over = [c["threads"] for c in r["devices"]["cpu:0"]["cases"] if c["threads"] > cores]
    lines += ["", "Goals on cpu, on the median over the runs: under 5 µs for `single`, under 20 µs "
              "for `threads` (with 2 and 4 threads" +
              (f"; {' and '.join(map(str, over))} threads oversubscribe the {cores} cores of the "
               "device" if over else "") +
              "). The reference is the same host-thread measurement in the runs of either device. "
              "On emu a launch hands the kernel to the device's stream thread and waits for it: "
              "two thread wake-ups, which take much longer when the machine's cores were idle "
              "(a sleeping virtual core wakes slowly), so emu figures swing between runs; no goal "
              "covers them.", ""]
    lines += [f"- {v}" for v in verdicts(r)]
    lines += ["", "Command: `python3 bench/launch/launch_bench.py`."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
