#!/usr/bin/env python3
"""Work packages against static row layouts (hit-packages) on emulated heterogeneous devices:
three ranks by default, `cpu(cores=1)`, `emu:0(slowdown=2)`, `emu:1(slowdown=4)` (both
`clock=cpu,cores=1`), OPENBLAS_NUM_THREADS=1. Two workloads: Mandelbrot escape counts (irregular:
the cost of a row depends on where it lies, rows through the set run every iteration) and C = A·B
by rows (regular). For each workload:

* static `blocks`: equal contiguous rows per rank, one launch each;
* static CPM: `weighted:w=s0,s1,s2`, the weights the speeds s_r = rows_r / busy_s_r that one short
  static-blocks run measured (its per_device figures). A constant model of each device: on
  Mandelbrot it mistakes the cost of the rows a rank happened to hold for the speed of its device;
* static FPM: the repository's `fpm:models=m0.csv,m1.csv,m2.csv` layout (docs/fpm.md, "The `fpm`
  layout": the geometric partitioner over one piecewise model file per rank, unit = one row of
  this program's own kernel at this n and width). The model files are built by this script, not by
  `hit-fpm build` (its built-in kernels are gemm blocks and Jacobi rows, not these rows), with the
  dynamic-partitioning loop of FuPerMod (§4.4) / the FPM chapter (§1.8) run ahead of time as short
  static runs of hit-packages: step 1 is the static-blocks run above; every step adds each rank's
  point (d = its rows, t = its busy_s) to that rank's model (a point at the same d replaces the
  older one), and the next step runs the static layout `fpm:models=` of the models so far; the
  loop stops when the busy times agree within --fpm-eps ((max−min)/min, the spread of
  docs/fpm.md), when a distribution comes back, or after --fpm-steps steps. The layout measured is
  `fpm:models=` of the final models (their geometric partition, the same rows every run). It is a
  static layout: its rows are contiguous, and a model says how long d rows take, not which rows —
  on Mandelbrot the points of different steps are different rows, and the loop balances the image
  measured rather than the devices;
* work packages `workPackages:size=G,depth=2` for G = n/64, n/16, n/8 and `size=auto` (the
  runtime's own tuner), the output laid out as `blocks` (the packages' homes);
* the prefetch depth: one size (n/64 by default), depth 1, 2, 4, 8;
* the cost of one failure: work packages of n/64 rows with the slowest device given `fail=K` (its
  first K kernel executions succeed, every later one throws Error(device_failed)), K a third of
  the packages it did in the depth-2 runs without failure (so it fails part-way through), against
  the same launch without failure; reps 1, warm-up 0 (a failed device stays failed, so each
  measured run is its own launch), alternating, `--check` required to pass.

Every configuration runs --runs times (the configurations interleaved, the order rotated each
round), each launch --reps timed repetitions after --warmup untimed ones; figures are the median
over the runs of the program's `time_s` (itself the median makespan of its repetitions: from a
barrier to the slowest rank's end, everything the runtime does included) with min-max. Speed-up
over static blocks is t_blocks / t_config per round. Idle: the program's per-device idle_s / wall_s
(for a static run wall_s is the rank's own launch, so this is ~0 and says nothing about waiting
for the slowest rank), and the idle share of the span, 1 − busy_s / max_r wall_s (the span is the
last repetition's longest per-device wall_s), both averaged over the devices. Writes
bench/results/packages.json; with --update-docs also the "packages" section of docs/benchmarks.md
and docs/img/packages_mandelbrot.svg (hit-packages --svg of one Mandelbrot work-packages run).

    python3 bench/packages/packages_bench.py [--update-docs] [--runs 3] [--mandelbrot-n 2048]
        [--iters 256] [--gemm-n 2048] [--devices SPEC] [--quick] [--from-json]
"""
import argparse
import datetime
import json
import os
import re
import shlex
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import (redraw_from_json, results_path, alternated_pairs, commit_text, machine_text, replace_section, run_json,  # noqa: E402
                      spread, write_json)

DEVICES = "cpu(cores=1),emu:0(slowdown=2,clock=cpu,cores=1),emu:1(slowdown=4,clock=cpu,cores=1)"
SECTION = "packages"
HEADING = "### Work packages against static layouts (hit-packages, emulated devices)"


def split_devices(spec):
    """The per-rank items of a --devices spec (commas inside parentheses belong to an item)."""
    items, depth, cur = [], 0, ""
    for ch in spec:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        items.append(cur)
    return items


def slowdown(item):
    m = re.search(r"slowdown=([0-9.]+)", item)
    return float(m.group(1)) if m else 1.0


def with_failure(spec, rank, k):
    items = split_devices(spec)
    item = items[rank]
    if not item.startswith("emu") or not item.endswith(")"):
        raise SystemExit(f"device {item!r} of rank {rank} is not an emulated device with "
                         "parameters: fail=K needs one")
    items[rank] = item[:-1] + f",fail={k})"
    return ",".join(items)


def spread_of(times):
    """(max − min) / min of the busy times of the ranks given rows (docs/fpm.md's spread)."""
    ts = [t for t in times if t > 0]
    return (max(ts) - min(ts)) / min(ts) if ts else 0.0


def idle_fractions(result):
    """Mean over devices of idle_s / span (the program's idle_s is span − busy_s), twice (the
    table's two idle columns were one measure), and the span."""
    dev = result["per_device"]
    span = max(d["wall_s"] for d in dev) or 1e-300
    of_span = statistics.mean(min(1.0, d["idle_s"] / span) for d in dev)
    return of_span, of_span, span


def save_model(path, points, label, what):
    with open(path, "w") as f:
        f.write(f"# device: {label}\n# kernel: {what}, unit: one row\nd,t\n")
        for d in sorted(points):
            f.write(f"{d},{points[d]:.9g}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--devices", default=DEVICES)
    ap.add_argument("--workloads", default="mandelbrot,gemm")
    ap.add_argument("--mandelbrot-n", type=int, default=2048, help="Mandelbrot rows (and columns)")
    ap.add_argument("--iters", type=int, default=256, help="Mandelbrot iterations at most per pixel")
    ap.add_argument("--gemm-n", type=int, default=2048,
                    help="gemm order (1024 takes 0.07 s static, below the ~0.1-0.25 s a "
                    "work-package run costs on its own with 3 ranks on 2 cores)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--sizes", default="64,16,8", help="package sizes as divisors of n (n/64, ...)")
    ap.add_argument("--depth-divisor", type=int, default=64, help="the depth sweep's size: n/this")
    ap.add_argument("--depths", default="1,2,4,8")
    ap.add_argument("--fail-divisor", type=int, default=64, help="the failure runs' size: n/this")
    ap.add_argument("--fpm-steps", type=int, default=6, help="most measured steps of the FPM loop")
    ap.add_argument("--new-view", default="-0.7,0.5,2.5",
                    help="Mandelbrot: another window (CX,CY,HEIGHT) on which the split fitted on "
                         "the default one is measured against blocks and work packages")
    ap.add_argument("--fpm-eps", type=float, default=0.05)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: small sizes, 1 run, results to a temporary folder")
    ap.add_argument("--update-docs", action="store_true",
                    help="write the section of docs/benchmarks.md and docs/img/packages_mandelbrot.svg")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=None,
                    help="default bench/results/packages.json (--quick: a temporary folder)")
    ap.add_argument("--svg", default=os.path.join(ROOT, "docs", "img", "packages_mandelbrot.svg"))
    ap.add_argument("--from-json", action="store_true",
                    help="only write the section again from --json-out (with --update-docs)")
    args = ap.parse_args()
    if args.quick:
        if args.update_docs and not args.from_json:
            raise SystemExit("--quick is a smoke test: its figures do not go into the docs")
        args.mandelbrot_n, args.gemm_n, args.runs, args.reps = 512, 512, 1, 2
        args.fpm_steps = 2
    args.json_out = results_path(args, "packages")
    if redraw_from_json(args, SECTION, markdown):
        return

    binary = os.path.join(args.build, "bin", "hit-packages")
    if not os.path.exists(binary):
        raise SystemExit(f"{binary} was not built")
    shown_binary = os.path.relpath(binary, ROOT) if binary.startswith(ROOT) else binary
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"
    for var in ("HIT_LAYOUT_OUT", "HIT_SCHEDULE", "HIT_DEVICES", "HIT_PARTITION_OUT"):
        env.pop(var, None)  # every run names what it uses
    ranks = len(split_devices(args.devices))
    launch = ["mpiexec.mpich", "-n", str(ranks)]
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(), "machine": machine_text(details=True),
               "devices": args.devices, "ranks": ranks, "runs": args.runs, "reps": args.reps,
               "warmup": args.warmup, "quick": args.quick, "fpm_eps": args.fpm_eps,
               "fpm_steps_max": args.fpm_steps, "workloads": {}}
    # The slowest device (largest slowdown) is the one that fails.
    fail_rank = max(range(ranks), key=lambda r: slowdown(split_devices(args.devices)[r]))
    results["fail_rank"] = fail_rank
    tmp = tempfile.TemporaryDirectory(prefix="packages-bench-")

    for workload in args.workloads.split(","):
        n = args.mandelbrot_n if workload == "mandelbrot" else args.gemm_n
        base = [binary, "--workload", workload, "--n", str(n), "--json"]
        if workload == "mandelbrot":
            base += ["--iters", str(args.iters)]
        timed = ["--reps", str(args.reps), "--warmup", str(args.warmup)]
        short = ["--reps", "1", "--warmup", "1"]

        def cmd(extra, devices=args.devices, reps=timed):
            return launch + base + ["--devices", devices] + extra + reps

        def run(extra, devices=args.devices, reps=timed):
            return run_json(cmd(extra, devices, reps), env)

        def static(layout):
            return ["--schedule", "static", "--layout", layout]

        def packages(size, depth):
            return ["--schedule", f"workPackages:size={size},depth={depth}", "--layout", "blocks"]

        # One short static-blocks run: the CPM speeds and the FPM loop's first step.
        first = run(static("blocks"), reps=short)
        speeds = [d["rows"] / d["busy_s"] if d["busy_s"] > 0 else 0.0 for d in first["per_device"]]
        cpm_layout = "weighted:w=" + ",".join(f"{s:.6g}" for s in speeds)

        # Static FPM: the dynamic-partitioning loop, ahead of time.
        labels = [d["device"] for d in first["per_device"]]
        what = f"hit-packages {workload} n={n}" + (f" iters={args.iters}" if workload == "mandelbrot" else "")
        models = [{} for _ in range(ranks)]
        paths = [os.path.join(tmp.name, f"{workload}-rank{r}.csv") for r in range(ranks)]
        fpm_layout = "fpm:models=" + ",".join(paths)
        steps, seen, status = [], [], "not_converged"

        def add_points(result):
            """Each rank's (rows, busy_s) of a static run added to its model; the model files."""
            rows = [d["rows"] for d in result["per_device"]]
            busy = [d["busy_s"] for d in result["per_device"]]
            for r in range(ranks):
                if rows[r] > 0 and busy[r] > 0:
                    models[r][rows[r]] = busy[r]
                save_model(paths[r], models[r], labels[r], what)
            return rows, busy

        measured = first
        for step in range(1, args.fpm_steps + 1):
            rows, busy = add_points(measured)
            sp = spread_of(busy)
            steps.append({"step": step, "rows": rows, "busy_s": busy, "spread": sp})
            print(f"{workload} FPM step {step}: rows {rows}, busy {[round(b, 4) for b in busy]}, "
                  f"spread {sp:.3f}", flush=True)
            seen.append(rows)
            if sp <= args.fpm_eps:
                status = "converged"
                break
            if step == args.fpm_steps:
                break
            measured = run(static(fpm_layout), reps=short)
            if [d["rows"] for d in measured["per_device"]] in seen:
                status = "cycling"
                rows, busy = add_points(measured)
                steps.append({"step": step + 1, "rows": rows, "busy_s": busy,
                              "spread": spread_of(busy)})
                break

        sizes = [max(1, n // int(k)) for k in args.sizes.split(",")]
        depth_size = max(1, n // args.depth_divisor)
        fail_size = max(1, n // args.fail_divisor)
        configs = {"static blocks": static("blocks"), "static CPM": static(cpm_layout),
                   "static FPM": static(fpm_layout)}
        for g in sizes:
            configs[f"packages size={g} (n/{n // g}), depth=2"] = packages(g, 2)
        configs["packages size=auto, depth=2"] = packages("auto", 2)
        depth_names = {}
        for dp in (int(x) for x in args.depths.split(",")):
            name = f"packages size={depth_size} (n/{n // depth_size}), depth={dp}"
            depth_names[dp] = name
            configs.setdefault(name, packages(depth_size, dp))
        if not any(g == fail_size for g in sizes):
            configs[f"packages size={fail_size} (n/{n // fail_size}), depth=2"] = packages(fail_size, 2)
        names = list(configs)
        runs = {c: [] for c in names}
        for i in range(args.runs):
            order = names[i % len(names):] + names[:i % len(names)]
            for c in order:
                runs[c].append(run(configs[c]))
        cases = []
        for c in names:
            rs = runs[c]
            idle = [idle_fractions(r) for r in rs]
            case = {"config": c, "command": shlex.join(cmd(configs[c])).replace(binary, shown_binary),
                    "time_s": spread([r["time_s"] for r in rs]),
                    "speedup_over_blocks": spread([b["time_s"] / r["time_s"] for b, r in
                                                   zip(runs["static blocks"], rs)]),
                    "idle_own": spread([x[0] for x in idle]), "idle_of_span": spread([x[1] for x in idle]),
                    "span_s": spread([x[2] for x in idle]),
                    "imbalance": spread([r["imbalance"] for r in rs]),
                    "rows": [d["rows"] for d in rs[-1]["per_device"]],
                    "packages_per_device": [d["packages"] for d in rs[-1]["per_device"]],
                    "busy_s": [d["busy_s"] for d in rs[-1]["per_device"]],
                    "layout": rs[-1]["layout"], "schedule": rs[-1]["schedule"]}
            if rs[-1]["schedule"] == "workPackages":
                case.update({"package_size": [r["package_size"] for r in rs],
                             "packages": [r["packages"] for r in rs], "depth": rs[-1]["depth"],
                             "max_ahead": [d["max_ahead"] for d in rs[-1]["per_device"]],
                             "stolen": spread([sum(d["stolen"] for d in r["per_device"]) for r in rs]),
                             "bytes_fetched": spread([sum(d["bytes_fetched"] for d in r["per_device"])
                                                      for r in rs])})
            cases.append(case)
            print(f"{workload} / {c}: {case['time_s']['median']:.3f} s "
                  f"[{case['time_s']['min']:.3f}-{case['time_s']['max']:.3f}], "
                  f"x{case['speedup_over_blocks']['median']:.2f} over blocks, rows {case['rows']}, "
                  f"idle {case['idle_own']['median']:.2f} / {case['idle_of_span']['median']:.2f} of span",
                  flush=True)

        # The cost of one failure.
        fail_name = f"packages size={fail_size} (n/{n // fail_size}), depth=2"
        did = statistics.median(r["per_device"][fail_rank]["packages"] for r in runs[fail_name])
        k = max(1, round(did / 3))
        failing = with_failure(args.devices, fail_rank, k)
        once = ["--reps", "1", "--warmup", "0"]
        fail_extra = packages(fail_size, 2) + ["--check"]

        def checked(devices):
            r = run(fail_extra, devices, once)
            if not r["check"]["passed"]:
                raise SystemExit(f"--check failed: {shlex.join(cmd(fail_extra, devices, once))}")
            return r

        plain, failed = alternated_pairs(args.runs, lambda: checked(args.devices), lambda: checked(failing))
        bad = [r for r in failed if not r["per_device"][fail_rank]["failed"]]
        if bad:
            raise SystemExit(f"the device of rank {fail_rank} did not fail with fail={k}")
        failure = {
            "package_size": fail_size, "packages": failed[-1]["packages"], "fail_rank": fail_rank,
            "k": k, "slowest_did_without_failure": did, "devices": failing,
            "command": shlex.join(cmd(fail_extra, failing, once)).replace(binary, shown_binary),
            "time_s_no_failure": spread([r["time_s"] for r in plain]),
            "time_s_failure": spread([r["time_s"] for r in failed]),
            "ratio": spread([f["time_s"] / p["time_s"] for p, f in zip(plain, failed)]),
            "rerouted": spread([len(r["rerouted"]) for r in failed]),
            "rerouted_last": failed[-1]["rerouted"],
            "failed_device_packages": [r["per_device"][fail_rank]["packages"] for r in failed],
            "abandoned": [r["per_device"][fail_rank]["abandoned"] for r in failed],
            "rerouted_to": [sum(1 for x in failed[-1]["rerouted"] if x["to_rank"] == q)
                            for q in range(ranks)],
            "rounds": [r.get("rounds") for r in failed],
            "check": [r["check"]["passed"] for r in plain + failed],
            "max_rel_error": max(r["check"]["max_rel_error"] for r in plain + failed),
        }
        print(f"{workload} failure (rank {fail_rank}, fail={k}): "
              f"{failure['time_s_failure']['median']:.3f} s against "
              f"{failure['time_s_no_failure']['median']:.3f} s "
              f"(x{failure['ratio']['median']:.2f}), rerouted {failure['rerouted']['median']}, "
              "check passed", flush=True)

        # The split fitted on this image, on the next image (another window of the set): a static
        # split knows the cost of the rows it was fitted on, dispatch needs no fitting.
        new_view = None
        if workload == "mandelbrot" and args.new_view:
            view = ["--view", args.new_view]
            nv = {"static blocks": static("blocks") + view,
                  "static FPM fitted on the default view": static(fpm_layout) + view,
                  "packages size=auto, depth=2": packages("auto", 2) + view}
            nv_runs = {c: [] for c in nv}
            for i in range(args.runs):
                for c in list(nv)[i % 3:] + list(nv)[:i % 3]:
                    nv_runs[c].append(run(nv[c]))
            new_view = {"view": args.new_view, "cases": []}
            for c, rs in nv_runs.items():
                idle = [idle_fractions(x) for x in rs]
                new_view["cases"].append({
                    "config": c, "command": shlex.join(cmd(nv[c])).replace(binary, shown_binary),
                    "time_s": spread([x["time_s"] for x in rs]),
                    "speedup_over_blocks": spread([b["time_s"] / x["time_s"] for b, x in
                                                   zip(nv_runs["static blocks"], rs)]),
                    "idle_of_span": spread([x[1] for x in idle]),
                    "rows": [d["rows"] for d in rs[-1]["per_device"]]})
                print(f"mandelbrot view {args.new_view} / {c}: "
                      f"{new_view['cases'][-1]['time_s']['median']:.3f} s, "
                      f"x{new_view['cases'][-1]['speedup_over_blocks']['median']:.2f} over blocks",
                      flush=True)

        results["workloads"][workload] = {
            "new_view": new_view,
            "n": n, "width": first["width"], "iters": first.get("iters"),
            "cpm": {"speeds": speeds, "layout": cpm_layout, "measured_rows": [d["rows"] for d in first["per_device"]],
                    "measured_busy_s": [d["busy_s"] for d in first["per_device"]]},
            "fpm": {"status": status, "steps": steps,
                    "models": [[[d, models[r][d]] for d in sorted(models[r])] for r in range(ranks)],
                    "rows": next(c["rows"] for c in cases if c["config"] == "static FPM")},
            "sizes": sizes, "depth_size": depth_size, "depths": depth_names,
            "cases": cases, "failure": failure}

    # The picture: one Mandelbrot work-packages run.
    if "mandelbrot" in results["workloads"]:
        w = results["workloads"]["mandelbrot"]
        g = w["sizes"][0]
        svg_path = args.svg if args.update_docs else os.path.join(tempfile.gettempdir(),
                                                                   "packages_mandelbrot.svg")
        svg_cmd = (launch + [binary, "--workload", "mandelbrot", "--n", str(w["n"]), "--iters",
                             str(args.iters), "--devices", args.devices, "--json"] +
                   ["--schedule", f"workPackages:size={g},depth=2", "--layout", "blocks",
                    "--reps", "1", "--warmup", "1", "--svg", svg_path])
        r = run_json(svg_cmd, env)
        shown = [a if a != svg_path else "docs/img/packages_mandelbrot.svg" for a in svg_cmd]
        results["svg"] = {"command": shlex.join(shown).replace(binary, shown_binary),
                          "time_s": r["time_s"], "rerouted": len(r["rerouted"])}
        print(f"picture: {svg_path}")

    write_json(args.json_out, results)
    print(f"results: {args.json_out}")
    text = markdown(results)
    if args.update_docs:
        replace_section(args.out, SECTION, text)
        print(f"section '{SECTION}' of {args.out} written")
    else:
        print(text)
    tmp.cleanup()


def fmt(s, digits=3):
    if s["min"] == s["max"]:
        return f"{s['median']:.{digits}f}"
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}–{s['max']:.{digits}f}]"


def pct(s):
    if s["min"] == s["max"]:
        return f"{100 * s['median']:.0f} %"
    return f"{100 * s['median']:.0f} % [{100 * s['min']:.0f}–{100 * s['max']:.0f}]"


def slash(values):
    return " / ".join(str(v) for v in values)


def packages_text(c):
    if c["schedule"] != "workPackages":
        return "1 per rank"
    counts = sorted(set(c["packages"]))
    sizes = sorted(set(c["package_size"]))
    return f"{slash(counts)} × {slash(sizes)} rows"


def summary(r):
    """What the tables show, from the numbers measured."""
    out = ["**What it shows.**", ""]
    for name, w in r["workloads"].items():
        by = {c["config"]: c["time_s"]["median"] for c in w["cases"]}
        auto = by.get("packages size=auto, depth=2")
        if not auto:
            continue
        best = min((t, c) for c, t in by.items() if c.startswith("packages"))
        text = (f"- {name}: work packages with the tuned size take {auto:.3f} s; static blocks, "
                f"the CPM split and the FPM split fitted on this input take "
                f"{by['static blocks'] / auto:.2f}, {by['static CPM'] / auto:.2f} and "
                f"{by['static FPM'] / auto:.2f} times as long (above 1: work packages are faster). "
                f"Best work-package configuration: {best[1]}, {best[0]:.3f} s.")
        nv = w.get("new_view")
        if nv:
            t = {c["config"]: c["time_s"]["median"] for c in nv["cases"]}
            fitted = next(v for c, v in t.items() if c.startswith("static FPM"))
            text += (f" On the next image the fitted split takes {fitted / t['static blocks']:.2f} "
                     f"times as long as blocks and {fitted / t['packages size=auto, depth=2']:.2f} "
                     "times as long as work packages: a static split is only as good as its "
                     "knowledge of where the cost lies.")
        if name == "gemm":
            text += (" The cost per row is regular here, so the model-based splits know it exactly "
                     "and move nothing while computing; work packages fetch rows of A from their "
                     "owners, return rows of C and call BLAS on thin panels (each call packs B again), "
                     "so they lose to CPM and FPM though they beat blocks.")
        out.append(text)
    out.append("- Prefetch depth: each device holds depth + 1 packages, so the slowest devices "
               "finish with that many while the others are idle; here the transfers are short and a "
               "depth of 1 is best. Depth pays where copies are long against the compute "
               "(docs/packages.md).")
    out.append("")
    return out


def markdown(r):
    runs = (f"{r['runs']} runs of each configuration, interleaved (order rotated each round), each "
            f"launch {r['reps']} timed repetitions after {r['warmup']} warm-up")
    lines = [
        HEADING,
        "",
    ]
    if r.get("quick"):
        lines += ["**Smoke run (`--quick`): small sizes, one run; not figures to compare.**", ""]
    lines += [
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']}. {r['ranks']} ranks, "
        f"devices `{r['devices']}` (OPENBLAS_NUM_THREADS=1). {runs}; makespan = the program's "
        "`time_s` (median of its repetitions, from a barrier to the slowest rank's end, the "
        "work-package runtime's set-up and tear-down included), median [min–max] over the runs. "
        "Speed-up: t(static blocks) / t(configuration), per round. Span: the longest per-device "
        "`wall_s` of the last repetition (static: the slowest launch; packages: the dispatch, "
        "from its starting barrier to the last package). Idle: the program's `idle_s` (span − "
        "busy_s: waiting for a package, its rows or the others) over the span, averaged over the "
        "devices. "
        "Rows and packages per device: the last run.",
        "",
        "Static CPM: `weighted:w=` the speeds rows / busy_s per rank of one static-blocks run. "
        "Static FPM: the `fpm:models=` layout (geometric partitioner) over one piecewise model per "
        "rank (unit one row), built by the FPM dynamic-partitioning loop run ahead of time: each "
        "step a short static run of the current layout adds every rank's (rows, busy_s) to its "
        f"model, until the busy times agree within {r['fpm_eps']} ((max−min)/min), a distribution "
        f"returns, or {r['fpm_steps_max']} steps; the layout measured is the models' final "
        "partition. Neither model knows which rows a rank gets, only how many: the FPM split is "
        "*fitted on this very image* by those extra runs (not counted in its makespan), the best a "
        "static split can do once it has seen the input; the last table measures it on another "
        "window of the set.",
        "",
    ]
    for name, w in r["workloads"].items():
        size = (f"{w['n']}×{w['width']}, {w['iters']} iterations at most" if name == "mandelbrot"
                else f"n = {w['n']}")
        fpm = w["fpm"]
        speeds = slash(format(s, '.0f') for s in w["cpm"]["speeds"])
        lines += [f"**{name}** ({size}). CPM speeds (rows/s) {speeds} "
                  f"from rows {slash(w['cpm']['measured_rows'])}; FPM loop: {len(fpm['steps'])} "
                  f"measured steps ({fpm['status']}), spreads "
                  f"{', '.join(format(s['spread'], '.2f') for s in fpm['steps'])}.", "",
                  "| configuration | rows per device | packages | makespan s | speed-up over blocks | "
                  "span s | idle of span |",
                  "|---|---|---|---|---|---|---|"]
        depth_only = set(w["depths"].values()) - {c["config"] for c in w["cases"]
                                                   if c["config"].endswith("depth=2")}
        for c in w["cases"]:
            if c["config"] in depth_only:
                continue
            lines.append(f"| {c['config']} | {slash(c['rows'])} | {packages_text(c)} | "
                         f"{fmt(c['time_s'])} | {fmt(c['speedup_over_blocks'], 2)} | "
                         f"{fmt(c['span_s'])} | {pct(c['idle_of_span'])} |")
        lines.append("")
    lines += ["**Prefetch depth** (packages each rank holds ahead of the one computing).", "",
              "| workload | size | depth | makespan s | speed-up over blocks | span s | idle of span | "
              "most held ahead per device | stolen | bytes fetched |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name, w in r["workloads"].items():
        by = {c["config"]: c for c in w["cases"]}
        for dp, cname in w["depths"].items():
            c = by[cname]
            lines.append(f"| {name} | {w['depth_size']} | {dp} | {fmt(c['time_s'])} | "
                         f"{fmt(c['speedup_over_blocks'], 2)} | {fmt(c['span_s'])} | "
                         f"{pct(c['idle_of_span'])} | {slash(c['max_ahead'])} | {fmt(c['stolen'], 0)} | "
                         f"{fmt(c['bytes_fetched'], 0)} |")
    lines += ["", f"**The cost of one failure**: the slowest device (rank {r['fail_rank']}) gets "
              "`fail=K` (its first K kernel executions succeed, every later one fails; work packages "
              "reroute what it held), K a third of the packages it did without failure; each run is its own "
              "launch (reps 1, no warm-up), alternating with the same launch without failure, "
              "`--check` passed on every one.", "",
              "| workload | packages × size | K | makespan without failure s | with failure s | "
              "ratio | rerouted packages | packages the failed device finished | rerouted to ranks | check |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name, w in r["workloads"].items():
        f = w["failure"]
        lines.append(f"| {name} | {f['packages']} × {f['package_size']} | {f['k']} | "
                     f"{fmt(f['time_s_no_failure'])} | {fmt(f['time_s_failure'])} | "
                     f"{fmt(f['ratio'], 2)} | {fmt(f['rerouted'], 0)} | "
                     f"{', '.join(str(x) for x in f['failed_device_packages'])} | "
                     f"{slash(f['rerouted_to'])} | "
                     f"{'passed' if all(f['check']) else 'FAILED'} (max error {f['max_rel_error']:.1e}) |")
    lines.append("")
    for name, w in r["workloads"].items():
        nv = w.get("new_view")
        if not nv:
            continue
        lines += [f"**The next image**: {name} on the window `--view {nv['view']}` (the same set "
                  "moved up: its costly rows lie elsewhere), with the FPM split fitted on the "
                  "default window above.", "",
                  "| configuration | rows per device | makespan s | speed-up over blocks | idle of span |",
                  "|---|---|---|---|---|"]
        for c in nv["cases"]:
            lines.append(f"| {c['config']} | {slash(c['rows'])} | {fmt(c['time_s'])} | "
                         f"{fmt(c['speedup_over_blocks'], 2)} | {pct(c['idle_of_span'])} |")
        lines.append("")
    lines += summary(r)
    if "svg" in r:
        lines += ["![which device computed which Mandelbrot package, and when (rerouted: red); "
                  "beside it the rows coloured by device](img/packages_mandelbrot.svg)", "",
                  f"Picture: `{r['svg']['command']}`.", ""]
    lines += ["Commands (one of each kind; the others differ in `--layout` / `--schedule`):", ""]
    for name, w in r["workloads"].items():
        by = {c["config"]: c for c in w["cases"]}
        lines += [f"- `{by['static blocks']['command']}`",
                  f"- `{next(c['command'] for c in w['cases'] if c['schedule'] == 'workPackages')}`",
                  f"- `{w['failure']['command']}`"]
    lines += ["", "Everything: `python3 bench/packages/packages_bench.py --update-docs`."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
