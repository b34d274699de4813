#!/usr/bin/env python3
"""Hierarchical partitioning of the matrix product on emulated heterogeneous nodes, as Clarke,
Ilic, Lastovetsky, Sousa and Zhong compare it: homogeneous, single-CPM, multiple-CPM and FPM
(INPA over the nodes, IDPA over each node's devices; `hit-fpm hierarchical`), each layout then
used by hit-summa for C. Per method: the partitioning cost (seconds spent measuring), the
makespan of hit-summa (median of the runs, min-max), the imbalance of its per-rank compute
times (max/mean), the communication volume (sum of the half-perimeters of the rectangles, in
elements) and a picture of the layout. The methods' hit-summa runs alternate (A B C D A B C D ...)
so a shared machine's drift affects them alike. Writes the "hierarchical" section of
docs/benchmarks.md, bench/results/hierarchical.json and docs/img/hierarchical-<method>.svg.

    python3 bench/hierarchical/hier_bench.py [--build build] [--n 2048] [--block 64] [--runs 5]
"""
import argparse
import datetime
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import commit_text, machine_text, replace_section, run_json, spread, write_json  # noqa: E402

# Relative speeds about 14 : 3.8 : 1, and a device as fast as the fastest until its problem passes
# 9.5 MiB and 1.5x slower beyond: a memory cliff that a constant model measured below it cannot
# see (the even split measures it at 9 MiB), while the balanced share lies beyond it. The fastest
# is half the host's speed, so the four ranks together need about one of the two cores (an
# emulated device sleeps out its slowdown) and contention for the cores stays small.
DEVICES = ("emu:0(slowdown=2,clock=cpu,cores=1),emu:1(slowdown=7.6,clock=cpu,cores=1),"
           "emu:2(slowdown=28,clock=cpu,cores=1),emu:3(slowdown=2;3@9.5MiB,clock=cpu,cores=1)")
METHODS = ("homogeneous", "single-cpm", "multiple-cpm", "fpm")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--block", type=int, default=16, help="area unit of the node rectangles")
    ap.add_argument("--panel", type=int, default=64, help="hit-summa's panel width")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--devices", default=DEVICES)
    ap.add_argument("--eps", type=float, default=0.03, help="balance asked of both levels")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=os.path.join(ROOT, "bench", "results", "hierarchical.json"))
    ap.add_argument("--img", default=os.path.join(ROOT, "docs", "img"))
    args = ap.parse_args()
    binary = lambda name: os.path.join(args.build, "bin", name)
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"
    env["HIT_NODES"] = "2"
    os.makedirs(args.img, exist_ok=True)
    launch = ["mpiexec.mpich", "-n", "4"]
    n, b, panel = str(args.n), str(args.block), str(args.panel)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(), "machine": machine_text(details=True), "n": args.n,
               "block": args.block, "panel": args.panel, "eps": args.eps, "runs": args.runs, "devices": args.devices, "methods": []}
    cases = []
    for method in METHODS:
        part = run_json(launch + [binary("hit-fpm"), "hierarchical", "--n", n, "--block", b,
                                  "--panel", panel, "--method", method, "--eps", str(args.eps),
                                  "--device-eps", str(args.eps), "--devices", args.devices, "--json"], env)
        svg = os.path.join(args.img, f"hierarchical-{method}.svg")
        shape = f"[0:{args.n}][0:{args.n}]"
        # The spec carries every weight, so the layout needs no binding (with --devices given,
        # hit-layout would take the run for a plan of another one and ask for ranks_per_node).
        lay = run_json(launch + [binary("hit-layout"), "--shape", shape, "--layout", part["spec"],
                                 "--json", "--svg", svg], env)
        cases.append({"method": method, "partition": part, "half_perimeters": lay["half_perimeters"],
                      "blocks": [r["blocks"] for r in lay["ranks"]], "runs": []})
        print(f"{method}: {part['status']} after {len(part['steps'])} steps, "
              f"{part['seconds']:.2f} s: {part['spec']}", flush=True)
    summa = [binary("hit-summa"), "--n", n, "--panel", panel, "--devices", args.devices, "--json",
             "--reps", "1", "--warmup", "1"]
    for _ in range(args.runs):
        for case in cases:
            case["runs"].append(run_json(launch + summa + ["--layout-c", case["partition"]["spec"]], env))
    for case in cases:
        times = [r["time_s"] for r in case["runs"]]
        compute = [[p["compute_s"] for p in r["per_rank"]] for r in case["runs"]]
        per_rank = [statistics.median(c[i] for c in compute) for i in range(len(compute[0]))]
        case["summary"] = {
            "makespan_s": spread(times),
            "compute_s": per_rank,
            "imbalance": max(per_rank) / (sum(per_rank) / len(per_rank)),
            "imbalance_runs": spread([r["imbalance"] for r in case["runs"]]),
        }
        del case["runs"]
        results["methods"].append(case)
        print(f"{case['method']}: makespan {case['summary']['makespan_s']['median']:.3f} s, "
              f"imbalance {case['summary']['imbalance']:.3f}", flush=True)
    write_json(args.json_out, results)
    replace_section(args.out, "hierarchical", markdown(results))


def fmt(s, digits=3):
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}–{s['max']:.{digits}f}]"


def markdown(r):
    fpm = next(m for m in r["methods"] if m["method"] == "fpm")
    lines = [
        f"### Hierarchical partitioning on emulated nodes (n = {r['n']}, b = {r['block']}, "
        f"panel = {r['panel']}, 2 nodes × 2 ranks)",
        "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']}. Devices (`HIT_NODES=2`, "
        f"ranks 0–1 node 0, ranks 2–3 node 1): `{r['devices']}`. Each method's layout comes from "
        f"`hit-fpm hierarchical --method M --eps {r['eps']} --device-eps {r['eps']}`, then hit-summa multiplies with it as the layout of C "
        f"({r['runs']} runs per method, alternating, one warm-up each); makespan: median [min–max] "
        "of hit-summa's time; imbalance: max/mean of the per-rank compute times (medians over the "
        "runs); communication: the sum of the rectangles' half-perimeters (elements every panel "
        "step moves, summed over the steps it is n times that).",
        "",
        "| method | node areas (blocks) | device weights | partitioning s (steps) | makespan s | "
        "speed-up over homogeneous | imbalance | half-perimeters |",
        "|---|---|---|---|---|---|---|---|",
    ]
    base = next(m for m in r["methods"] if m["method"] == "homogeneous")["summary"]["makespan_s"]["median"]
    for m in r["methods"]:
        p, s = m["partition"], m["summary"]
        weights = " / ".join(f"{w:.4g}" for w in p["weights"]) or "even"
        lines.append(
            f"| {m['method']} | {' / '.join(str(a) for a in p['areas'])} | {weights} | "
            f"{p['seconds']:.2f} ({len(p['steps'])}, {p['status']}) | {fmt(s['makespan_s'])} | "
            f"{base / s['makespan_s']['median']:.2f}× | {s['imbalance']:.3f} | "
            f"{m['half_perimeters']['total']} |")
    lines += [
        "",
        f"FPM steps (node areas realised, node times): " + "; ".join(
            f"{st['iteration']}: {'/'.join(str(a) for a in st['areas'])} blocks in "
            f"{'/'.join(f'{t:.4f}' for t in st['node_seconds'])} s" for st in fpm["partition"]["steps"]),
        "",
        "Layouts: " + ", ".join(f"![{m['method']}](img/hierarchical-{m['method']}.svg)" for m in r["methods"]),
        "",
        "Command: `python3 bench/hierarchical/hier_bench.py`.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
