#!/usr/bin/env python3
"""Communication plans at up to 65 536 processes, simulated in one process: what building a
halo plan and redistribute plans costs each process (hit-bench-plans: a sample of ranks spread
over a mesh2d grid computes what its plans would hold, with the library functions the builders
call), beside the old way of finding redistribute peers (a scan of every process's blocks), and
the wall time and peak memory of the dry run `hit-layout --comm halo` at each process count.
Every figure is the median of --runs runs with its min-max. Writes the "plans" section of
docs/benchmarks.md and bench/results/plans.json.

    python3 bench/plans/plans_bench.py [--build build] [--procs 1024,4096,16384,65536]
                                       [--n 65536] [--runs 5]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import commit_text, machine_text, replace_section, run_json, spread, write_json  # noqa: E402


def timed_run(cmd, env):
    """Runs `cmd` with its output discarded: (wall seconds, peak resident MiB). Ends on failure."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode()
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.stderr.write(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{err}\n")
        raise SystemExit(1)
    return wall, usage.ru_maxrss / 1024.0


def collect(runs, path):
    """The spread of the value at `path` (a list of keys) over the runs."""
    values = []
    for r in runs:
        v = r
        for key in path:
            v = v[key]
        values.append(v)
    return spread(values)


def summarise(bench_runs):
    """One entry per process count, every figure as a spread over the runs."""
    out = []
    for i, case in enumerate(bench_runs[0]["cases"]):
        def fig(*path):
            return collect([r["cases"][i] for r in bench_runs], list(path))
        entry = {"procs": case["procs"], "dims": case["dims"], "sampled_ranks": case["sampled_ranks"],
                 "layout": case["layout"], "layout_build_s": fig("layout_build_s"),
                 "halo": {k: fig("halo", k) for k in case["halo"]},
                 "dry_run_faces": {k: fig("dry_run_faces", k) for k in case["dry_run_faces"]},
                 "peak_rss_mib": fig("peak_rss_mib"), "redistribute": []}
        for j, item in enumerate(case["redistribute"]):
            red = {"to": item["to"], "layout_build_s": fig("redistribute", j, "layout_build_s"),
                   "plan": {k: fig("redistribute", j, "plan", k) for k in item["plan"]}}
            if "scan" in item:
                red["scan"] = {k: fig("redistribute", j, "scan", k) for k in item["scan"]}
            entry["redistribute"].append(red)
        out.append(entry)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--procs", default="1024,4096,16384,65536")
    ap.add_argument("--n", type=int, default=65536)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=os.path.join(ROOT, "bench", "results", "plans.json"))
    ap.add_argument("--from-json", action="store_true",
                    help="only write the section again from --json-out")
    args = ap.parse_args()
    if args.from_json:
        replace_section(args.out, "plans", markdown(json.load(open(args.json_out))))
        return
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    bench = [os.path.join(args.build, "bin", "hit-bench-plans"), "--procs", args.procs,
             "--n", str(args.n)]
    layout = os.path.join(args.build, "bin", "hit-layout")
    counts = [int(p) for p in args.procs.split(",")]
    bench_runs = []
    dry = {p: {"wall_s": [], "peak_rss_mib": []} for p in counts}
    base = []  # peak RSS of hit-layout --list: what the program holds before any layout
    for run in range(args.runs):
        bench_runs.append(run_json(bench, env))
        for p in counts:
            wall, rss = timed_run([layout, "--shape", f"[0:{args.n}][0:{args.n}]", "--topology",
                                   "mesh2d", "--layout", "blocks", "--comm", "halo", "--procs",
                                   str(p)], env)
            dry[p]["wall_s"].append(wall)
            dry[p]["peak_rss_mib"].append(rss)
        base.append(timed_run([layout, "--list"], env)[1])
        print(f"run {run + 1} of {args.runs}: " + ", ".join(
            f"P={p} hit-layout {dry[p]['wall_s'][-1]:.2f} s" for p in counts), flush=True)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(), "machine": machine_text(details=True), "n": args.n,
               "runs": args.runs, "samples": bench_runs[0]["samples"],
               "cases": summarise(bench_runs),
               "dry_run": [{"procs": p, "wall_s": spread(dry[p]["wall_s"]),
                            "peak_rss_mib": spread(dry[p]["peak_rss_mib"])} for p in counts],
               "dry_run_base_rss_mib": spread(base)}
    write_json(args.json_out, results)
    replace_section(args.out, "plans", markdown(results))


def fmt(s, digits=2):
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}–{s['max']:.{digits}f}]"


def markdown(r):
    n = r["n"]
    most = f"{max(c['procs'] for c in r['cases']):,}".replace(",", " ")
    lines = [
        f"### Communication plans at up to {most} processes (simulated in one, {n}×{n} array)",
        "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']}. {r['runs']} runs; median "
        "[min–max]. The source layout is `blocks` on a `mesh2d` grid; "
        f"{r['samples']} ranks spread over the grid (edges, corners and interiors) each compute what "
        "their plans would hold (`hit::halo_traffic`, `hit::face_traffic`, "
        "`hit::redistribute_traffic`: the peer finding the builders themselves use) and the time "
        "per process is the mean over them. *Scan* is the way redistribute found its peers before: "
        "every process's blocks intersected with this one's. Peak RSS is the benchmark process's "
        "after that process count (it grows with the largest layouts built so far).",
        "",
        "**`hit-layout --shape '[0:N][0:N]' --topology mesh2d --layout blocks --comm halo --procs P`** "
        "(wall time of the whole dry run, its table written to /dev/null; its peak RSS includes "
        f"{r['dry_run_base_rss_mib']['median']:.0f} MiB the program holds before any layout, "
        "measured with `hit-layout --list`: mostly the MPI and CUDA runtimes of this build):",
        "",
        "| P | wall s | peak RSS MiB |",
        "|---|---|---|",
    ]
    for d in r["dry_run"]:
        lines.append(f"| {d['procs']} | {fmt(d['wall_s'])} | {fmt(d['peak_rss_mib'], 0)} |")
    lines += ["", "**Per process** (µs to compute one process's plan; peers: mean / max over the "
              "sampled ranks):", "",
              "| P | grid | halo µs | halo peers | dry-run faces µs | redistribute to | build s | "
              "plan µs | peers | scan µs | peak RSS MiB |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in r["cases"]:
        grid = "×".join(str(d) for d in c["dims"])
        first = True
        for red in c["redistribute"]:
            plan = red["plan"]
            scan = fmt(red["scan"]["us_per_proc"], 1) if "scan" in red else "–"
            head = (f"| {c['procs']} | {grid} | {fmt(c['halo']['us_per_proc'])} | "
                    f"{c['halo']['peers_mean']['median']:.2f} / {c['halo']['peers_max']['median']:.0f} | "
                    f"{fmt(c['dry_run_faces']['us_per_proc'])} |") if first else "| | | | | |"
            lines.append(
                f"{head} {red['to']} | {fmt(red['layout_build_s'], 3)} | {fmt(plan['us_per_proc'])} | "
                f"{plan['peers_mean']['median']:.1f} / {plan['peers_max']['median']:.0f} | {scan} | "
                + (f"{fmt(c['peak_rss_mib'], 0)} |" if first else "|"))
            first = False
    lines += ["", "Commands: `python3 bench/plans/plans_bench.py` (runs `hit-bench-plans` and "
              "`hit-layout`)."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
