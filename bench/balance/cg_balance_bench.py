#!/usr/bin/env python3
"""Dynamic load balancing of hit-cg on the emulated devices of the hit-jacobi balance benchmark
(relative speeds 14 : 3.8 : 1, three ranks): CG on poisson3d:n=64 (262 144 rows, 7-point) to its
default tolerance (1e-8, about 160 iterations), `rows` layout. Configurations: static even rows,
static CPM (rows in proportion to the speeds one static even run measured: each rank's rows over
its compute time), dynamic CPM and FPM (--balance cpm|fpm, from the even split), dynamic FPM
from stored models (--balance-models, models of the spmv kernel built once by
`hit-fpm build --kernel spmv` on the steady devices), and the best static split in hindsight (the
final rows of a dynamic FPM run from stored models, used from the start). Then the same with the
fastest device slowing down 4x halfway (change=4@K, K its launch halfway through the run). Every
configuration runs --runs times, interleaved; figures are medians with min-max. Writes the
"balance-cg" section of docs/benchmarks.md and bench/results/balance-cg.json.

    python3 bench/balance/cg_balance_bench.py [--build build] [--runs 15] [--grid 64]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import commit_text, machine_text, replace_section, run_json, spread, write_json  # noqa: E402
# The devices, the proportional split and the figures of the hit-jacobi balance benchmark.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from balance_bench import SLOWDOWNS, devices, fmt, proportional  # noqa: E402

# Device launches of one CG iteration: the interior and boundary SpMV, the x/r update, the p update.
LAUNCHES_PER_ITERATION = 4


def rows_layout(rows):
    return "rows:w=" + ",".join(str(r) for r in rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--grid", type=int, default=64, help="poisson3d:n=GRID")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=os.path.join(ROOT, "bench", "results", "balance-cg.json"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "build", "bench-models"))
    ap.add_argument("--from-json", action="store_true",
                    help="only write the table again from --json-out")
    args = ap.parse_args()
    if args.from_json:
        results = json.load(open(args.json_out))
        for name, sc in results["scenarios"].items():
            sc["goals"] = goals(name, {c["config"]: c["time_s"]["median"] for c in sc["cases"]})
        write_json(args.json_out, results)
        replace_section(args.out, "balance-cg", markdown(results))
        return
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"
    matrix = f"poisson3d:n={args.grid}"
    n = args.grid ** 3
    cg = ["mpiexec.mpich", "-n", "3", os.path.join(args.build, "bin", "hit-cg"), "--generate",
          matrix, "--json", "--reps", "1", "--warmup", "0"]

    def run(dev, extra):
        return run_json(cg + ["--devices", dev] + extra, env)

    os.makedirs(args.models_dir, exist_ok=True)
    models = os.path.join(args.models_dir, "spmv-{rank}.csv")
    subprocess.run(["mpiexec.mpich", "-n", "3", os.path.join(args.build, "bin", "hit-fpm"), "build",
                    "--kernel", "spmv", "--partition", "single", "--devices", devices(), "--min",
                    str(n // 64), "--max", str(n), "--points", "8", "--out", models, "--quiet"],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    stored = ["--balance-models", models]
    even = run(devices(), ["--layout", "rows"])
    iterations = even["iterations"]
    cpm_rows = proportional([p["rows"] for p in even["parts"]],
                            [r["compute_s"] for r in even["per_rank"]], n)
    change = LAUNCHES_PER_ITERATION * iterations // 2
    scenarios = {"steady": devices(), "slowdown": devices(change)}
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(), "machine": machine_text(details=True), "matrix": matrix,
               "rows": n, "iterations": iterations, "runs": args.runs, "slowdowns": SLOWDOWNS,
               "change_at_launch": change, "static_cpm_rows": cpm_rows, "scenarios": {}}
    for name, dev in scenarios.items():
        final = [p["rows"] for p in run(dev, ["--balance", "fpm"] + stored)["parts"]]
        configs = {
            "static even": ["--layout", "rows"],
            "static CPM": ["--layout", rows_layout(cpm_rows)],
            "dynamic CPM": ["--balance", "cpm"],
            "dynamic FPM": ["--balance", "fpm"],
            "dynamic FPM, stored models": ["--balance", "fpm"] + stored,
            "best static (hindsight)": ["--layout", rows_layout(final)],
        }
        runs = {c: [] for c in configs}
        for _ in range(args.runs):
            for c, extra in configs.items():
                runs[c].append(run(dev, extra))
        cases = []
        for c, rs in runs.items():
            case = {"config": c, "time_s": spread([r["time_s"] for r in rs]),
                    "imbalance": spread([r["imbalance"] for r in rs]),
                    "iterations": spread([r["iterations"] for r in rs]),
                    "rebalances": spread([r["rebalances"] for r in rs]),
                    "move_s": spread([r["balance_move_s"] for r in rs]),
                    "final_rows": [p["rows"] for p in rs[-1]["parts"]]}
            cases.append(case)
            print(f"{name} / {c}: {case['time_s']['median']:.3f} s", flush=True)
        results["scenarios"][name] = {
            "devices": dev, "hindsight_rows": final, "cases": cases,
            "goals": goals(name, {c["config"]: c["time_s"]["median"] for c in cases})}
    write_json(args.json_out, results)
    replace_section(args.out, "balance-cg", markdown(results))


def goals(scenario, med):
    """Per dynamic configuration (med: median time per configuration): its time over the best
    static split (<= 1.10), the faster of the split in hindsight and static CPM (a hindsight split
    taken from one balanced run can be a little off the best), and, when a device slows down, over
    static CPM (< 1)."""
    best = min(med["best static (hindsight)"], med["static CPM"])
    out = []
    for c in ("dynamic CPM", "dynamic FPM", "dynamic FPM, stored models"):
        g = {"config": c, "vs_hindsight": med[c] / med["best static (hindsight)"],
             "vs_best_static": med[c] / best}
        g["hindsight_met"] = g["vs_best_static"] <= 1.10
        if scenario == "slowdown":
            g["vs_static_cpm"] = med[c] / med["static CPM"]
            g["static_cpm_met"] = g["vs_static_cpm"] < 1.0
        out.append(g)
    return out


def markdown(r):
    lines = [
        f"### Dynamic load balancing of hit-cg ({r['matrix']}, {r['rows']} rows, 3 ranks)",
        "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']}. CG to its default "
        f"tolerance (1e-8: {r['iterations']} iterations on the even split), `rows` layout. Devices: "
        f"emulated, slowdowns {' / '.join(str(s) for s in r['slowdowns'])} (relative speeds 14 : 3.8 "
        f": 1), `clock=cpu`; the slowdown scenario makes rank 0 4× slower from its launch "
        f"{r['change_at_launch']} on, about halfway. {r['runs']} runs of each configuration, "
        f"interleaved; median [min–max]. Static CPM: rows {r['static_cpm_rows']}, in proportion to "
        "the speeds of one static even run (each rank's rows over its compute time). Dynamic: "
        "`--balance cpm|fpm` from the even split (first step after three iterations); \"stored "
        "models\": `--balance-models`, models of the spmv kernel built once by `hit-fpm build "
        "--kernel spmv` on the steady devices (not timed here), the rows starting from their "
        "partition. Best static in hindsight: the final rows of a dynamic FPM run from stored models. "
        "Imbalance: max/mean of the per-rank compute times of the whole run. Moves: seconds of all "
        "of a run's re-partitions (new layout, rows and vectors exchanged, numbering and halo "
        "rebuilt, device reloaded).",
        "",
    ]
    for name, sc in r["scenarios"].items():
        lines += [f"**{name}** (best static in hindsight: rows {sc['hindsight_rows']})", "",
                  "| configuration | time s | imbalance | iterations | rebalances | moves s | "
                  "final rows (last run) |",
                  "|---|---|---|---|---|---|---|"]
        for c in sc["cases"]:
            dyn = c["config"].startswith("dynamic")
            lines.append(f"| {c['config']} | {fmt(c['time_s'])} | {fmt(c['imbalance'])} | "
                         f"{fmt(c['iterations'], 0)} | {fmt(c['rebalances'], 0) if dyn else '–'} | "
                         f"{fmt(c['move_s']) if dyn else '–'} | {c['final_rows']} |")
        lines.append("")
        slow = name == "slowdown"
        lines += [f"Goals ({name}): time over the best static split ≤ 1.10 (the faster of the "
                  "split in hindsight and static CPM)"
                  + (", and below static CPM's" if slow else "") + ".", "",
                  "| configuration | / hindsight split | / best static | goal |"
                  + (" / static CPM | goal |" if slow else ""),
                  "|---|---|---|---|" + ("---|---|" if slow else "")]
        for g in sc["goals"]:
            mark = lambda ok: "met" if ok else "**not met**"
            lines.append(f"| {g['config']} | {g['vs_hindsight']:.3f} | {g['vs_best_static']:.3f} | "
                         f"{mark(g['hindsight_met'])} |"
                         + (f" {g['vs_static_cpm']:.3f} | {mark(g['static_cpm_met'])} |" if slow else ""))
        lines.append("")
    lines.append("Command: `python3 bench/balance/cg_balance_bench.py`.")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
