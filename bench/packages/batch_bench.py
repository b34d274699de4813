#!/usr/bin/env python3
"""Batches against one package per launch (hit-packages, `workPackages:size=auto,batch=auto`
against `workPackages:size=auto`): does sizing each device's launches for it alone pay?

The configurations of placement_bench.py: the fast device `emu:0(slowdown=1,clock=cpu)` alone and
beside two devices R = 2, 4, 20 and 100 times slower, and beside two `cpu` ranks; Mandelbrot
(irregular rows) and C = A·B by rows (regular). In every round each configuration runs once with
each schedule, their order alternated between rounds, and the fast device alone once; ratios are
against the fast device alone of the same round. Figures: medians over --runs rounds, min-max.
Least busy: the least busy device that got packages, over the span. Launches: per device, the
median round's.

Writes bench/results/batch.json; with --update-docs the "batch" section of docs/benchmarks.md.

    python3 bench/packages/batch_bench.py [--update-docs] [--runs 5] [--quick] [--from-json]
"""
import argparse
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "bench", "packages"))
import benchlib  # noqa: E402
import placement_bench  # noqa: E402

SCHEDULES = {"one": "workPackages:size=auto,depth=2",
             "batch": "workPackages:size=auto,depth=2,batch=auto"}


def measure(args):
    binary = os.path.join(args.bin, "hit-packages")
    configs = placement_bench.configurations()
    raw = {}  # (workload, config, schedule) -> per-round results
    loads = [placement_bench.load_text()]
    for rnd in range(args.runs):
        for workload in ("mandelbrot", "gemm"):
            for name, devices, _ in configs:
                kinds = ["one"] if name == "alone" else ["one", "batch"]
                if rnd % 2 == 1:
                    kinds.reverse()
                for kind in kinds:
                    r = placement_bench.launch(args, binary, workload, devices, SCHEDULES[kind])
                    raw.setdefault((workload, name, kind), []).append(r)
                    print(f"round {rnd + 1} {workload} {name} {kind}: {r['time_s']:.4f} s",
                          file=sys.stderr)
        loads.append(placement_bench.load_text())
    res = {"machine": benchlib.machine_text(details=True), "commit": benchlib.commit_text(),
           "runs": args.runs, "reps": args.reps, "mandelbrot_n": args.mandelbrot_n,
           "gemm_n": args.gemm_n, "load_average_1min": loads, "rows": []}
    for workload in ("mandelbrot", "gemm"):
        alone = raw[(workload, "alone", "one")]
        for name, devices, speeds in configs:
            if name == "alone":
                continue
            row = {"workload": workload, "config": name, "devices": devices}
            for kind in ("one", "batch"):
                runs = raw[(workload, name, kind)]
                middle = sorted(runs, key=lambda r: r["time_s"])[len(runs) // 2]
                row[kind] = {"time_s": benchlib.spread([r["time_s"] for r in runs]),
                             "ratio": benchlib.spread([r["time_s"] / a["time_s"]
                                                       for r, a in zip(runs, alone)]),
                             "least_busy": statistics.median(r["least_busy"] for r in runs),
                             "tail_s": statistics.median(r["tail_s"] for r in runs),
                             "launches": middle["launches"], "packages": middle["packages"]}
            row["batch_over_one"] = benchlib.spread(
                [b["time_s"] / o["time_s"] for b, o in
                 zip(raw[(workload, name, "batch")], raw[(workload, name, "one")])])
            if speeds:
                row["ideal_ratio"] = 1.0 / (1.0 + 0.8 * sum(speeds))
            res["rows"].append(row)
    return res


def fmt_spread(s, digits=3):
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def markdown(res):
    lines = [
        "### Batches: each device's launches sized for it (`batch=auto`)",
        "",
        f"Measured at commit {res['commit']} on {res['machine']}; one-minute load average during "
        f"the runs {', '.join(res['load_average_1min'])}. Mandelbrot n = {res['mandelbrot_n']}, "
        f"gemm n = {res['gemm_n']}; `workPackages:size=auto,depth=2` (one package per launch) "
        f"against the same with `batch=auto`; {res['runs']} rounds, the two alternated, each "
        f"launch {res['reps']} timed repetitions after a warm-up; median (min-max) over the "
        "rounds. Ratio: time over the fast device alone in the same round. Batch / one: the two "
        "schedules' times in the same round. Launches: per device (fast first), the median "
        "round's; packages per launch are the launches' packages over them.",
        "",
        "Command: `python3 bench/packages/batch_bench.py --update-docs --runs "
        f"{res['runs']}`.",
        "",
        "| workload | devices | one: ratio | batch: ratio | batch / one | ideal | one: least busy "
        "| batch: least busy | one: launches | batch: launches (packages) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["rows"]:
        one, batch = r["one"], r["batch"]
        ideal = f"{r['ideal_ratio']:.3f}" if "ideal_ratio" in r else "—"
        lines.append(
            f"| {r['workload']} | {r['config']} | {fmt_spread(one['ratio'], 2)} | "
            f"{fmt_spread(batch['ratio'], 2)} | {fmt_spread(r['batch_over_one'], 2)} | {ideal} | "
            f"{one['least_busy'] * 100:.0f} % | {batch['least_busy'] * 100:.0f} % | "
            f"{', '.join(str(x) for x in one['launches'])} | "
            + ", ".join(f"{l} ({p})" for l, p in zip(batch["launches"], batch["packages"]))
            + " |")
    better = [r for r in res["rows"] if r["batch_over_one"]["median"] < 0.97]
    worse = [r for r in res["rows"] if r["batch_over_one"]["median"] > 1.03]
    lines += ["",
              f"- batch=auto faster by more than 3 %: {len(better)} of {len(res['rows'])}"
              + "".join(f"; {r['workload']} {r['config']} {r['batch_over_one']['median']:.2f}"
                        for r in better) + ".",
              f"- batch=auto slower by more than 3 %: {len(worse)} of {len(res['rows'])}"
              + "".join(f"; {r['workload']} {r['config']} {r['batch_over_one']['median']:.2f}"
                        for r in worse) + "."]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--mandelbrot-n", type=int, default=2048)
    p.add_argument("--gemm-n", type=int, default=2048)
    p.add_argument("--quick", action="store_true", help="a smoke run: 1 round, small sizes")
    p.add_argument("--update-docs", action="store_true")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    p.add_argument("--json-out")
    p.add_argument("--from-json", action="store_true")
    args = p.parse_args()
    if args.quick:
        args.runs, args.mandelbrot_n, args.gemm_n, args.reps = 1, 256, 192, 1
    args.json_out = benchlib.results_path(args, "batch")
    if benchlib.redraw_from_json(args, "batch", markdown):
        return
    res = measure(args)
    benchlib.write_json(args.json_out, res)
    text = markdown(res)
    if args.update_docs and not args.quick:
        benchlib.replace_section(args.out, "batch", text)
    print(text)


if __name__ == "__main__":
    main()
