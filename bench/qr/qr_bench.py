#!/usr/bin/env python3
"""hit-qr against ScaLAPACK's PDGEQRF (ref-pdgeqrf: Debian's MPICH build of ScaLAPACK, the same MPI
and OpenBLAS, the same block size and process grid), on 1x1, 1x2 and 2x2 grids, for a square n x n
matrix and a tall 4n x n one, run as alternated pairs (A B, B A, ...); every figure is the median
with its min-max spread, and the headline is the throughput ratio hit-qr / PDGEQRF per pair (goal
>= 1.0 at every count and shape). One OpenBLAS thread per process; hit-qr one worker per process.

With --hetero, also the heterogeneous comparison on emulated devices (one fast host process, two
slow emulated accelerators): heteroBlockCyclic with its B_h tuned by hit-qr --tune against plain
blockCyclic, time and imbalance (max/mean of the per-rank compute times, as Song et al. measure it;
goal <= 1.05).

Writes the "qr" section of docs/benchmarks.md and bench/results/qr.json.

    python3 bench/qr/qr_bench.py [--build build] [--n 4096] [--nb 256] [--runs 3] [--tall 4] [--hetero]
"""
import argparse
import datetime
import json
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import commit_text, machine_text, replace_section, run_json, spread, write_json  # noqa: E402


def fmt(s, digits=3):
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}-{s['max']:.{digits}f}]"


def flops(m, n):
    return 2.0 * m * n * n - 2.0 * n ** 3 / 3  # LAPACK's count for dgeqrf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--nb", type=int, default=256)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tall", type=int, default=4, help="the tall shape's rows per column (m = tall x n)")
    ap.add_argument("--grids", default="1x1,1x2,2x2")
    ap.add_argument("--hetero", action="store_true")
    ap.add_argument("--hetero-only", action="store_true",
                    help="only the heterogeneous comparison (the PDGEQRF rows kept from the JSON)")
    ap.add_argument("--hetero-n", type=int, default=2048)
    ap.add_argument("--hetero-reps", type=int, default=3)
    ap.add_argument("--hetero-devices",
                    default="cpu,emu:0(slowdown=3,clock=cpu,cores=1),emu:1(slowdown=3,clock=cpu,cores=1)")
    ap.add_argument("--hetero-layout", default="heteroBlockCyclic:B=512,b=128")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=os.path.join(ROOT, "bench", "results", "qr.json"))
    args = ap.parse_args()
    binary = lambda name: os.path.join(args.build, "bin", name)
    if not os.path.exists(binary("ref-pdgeqrf")):
        raise SystemExit("ref-pdgeqrf was not built: install libscalapack-mpich-dev and rebuild")
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"
    reps = ["--reps", "1", "--warmup", "1"]
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(), "machine": machine_text(details=True), "n": args.n,
               "nb": args.nb, "runs": args.runs, "tall": args.tall,
               "load_before": os.getloadavg()[0], "cases": []}
    if args.hetero_only:
        kept = json.load(open(args.json_out))
        results["cases"] = kept["cases"]
        for key in ("date", "commit", "machine", "n", "nb", "runs", "tall", "load_before"):
            results[key] = kept[key]
    for m in (args.n, args.tall * args.n) if not args.hetero_only else ():
        for grid in args.grids.split(","):
            rows, cols = (int(x) for x in grid.split("x"))
            procs = rows * cols
            launch = ["mpiexec.mpich", "-n", str(procs)]
            size = ["--m", str(m), "--n", str(args.n)]
            commands = {
                "hit": launch + [binary("hit-qr")] + size + ["--b", str(args.nb), "--json",
                                                             "--topology", f"mesh:dims={rows}x{cols}",
                                                             "--devices", "cpu(cores=1)"] + reps,
                "ref": launch + [binary("ref-pdgeqrf")] + size + ["--nb", str(args.nb), "--rows",
                                                                  str(rows), "--cols", str(cols)] + reps}
            times = {k: [] for k in commands}
            for i in range(args.runs):
                for k in (list(commands) if i % 2 == 0 else list(reversed(commands))):
                    times[k].append(run_json(commands[k], env)["time_s"])
            hit, ref = times["hit"], times["ref"]
            case = {"m": m, "n": args.n, "grid": [rows, cols], "procs": procs,
                    "hit_s": spread(hit), "pdgeqrf_s": spread(ref),
                    "throughput_ratio": spread([r / h for h, r in zip(hit, ref)]),
                    "hit_gflops": flops(m, args.n) / statistics.median(hit) * 1e-9,
                    "pdgeqrf_gflops": flops(m, args.n) / statistics.median(ref) * 1e-9}
            results["cases"].append(case)
            print(f"{m}x{args.n} on {grid}: hit-qr / PDGEQRF throughput "
                  f"{case['throughput_ratio']['median']:.3f}", flush=True)
    if args.hetero or args.hetero_only:
        results["hetero"] = hetero(args, binary, env)
    write_json(args.json_out, results)
    write_markdown(results, args.out)


def hetero(args, binary, env):
    """blockCyclic against heteroBlockCyclic with B_h tuned by hit-qr --tune, on the emulated
    devices of --hetero-devices (one process each, topology array), runs alternated."""
    load = os.getloadavg()[0]
    procs = len(re.sub(r"\([^)]*\)", "", args.hetero_devices).split(","))
    launch = ["mpiexec.mpich", "-n", str(procs)]
    common = [binary("hit-qr"), "--n", str(args.hetero_n), "--devices", args.hetero_devices,
              "--json", "--reps", str(args.hetero_reps), "--warmup", "1", "--topology", "array"]
    tuned = run_json(launch + common + ["--layout", args.hetero_layout, "--tune", "--tune-n",
                                        str(args.hetero_n)], env)
    layouts = {"blockCyclic": f"blockCyclic:b={args.nb}", "heteroBlockCyclic (tuned)": tuned["layout"]}
    times = {k: [] for k in layouts}
    imb = {k: [] for k in layouts}
    for i in range(args.runs):
        for name in (list(layouts) if i % 2 == 0 else list(reversed(layouts))):
            r = run_json(launch + common + ["--layout", layouts[name]], env)
            times[name].append(r["time_s"])
            imb[name].append(r.get("imbalance", 1.0))
    out = {"commit": commit_text(), "load_before": load,
           "n": args.hetero_n, "reps": args.hetero_reps, "devices": args.hetero_devices,
           "procs": procs, "tuning": tuned.get("tuning", []), "cases": []}
    for name in layouts:
        out["cases"].append({"layout": name, "spec": layouts[name], "time_s": spread(times[name]),
                             "imbalance": spread(imb[name])})
        print(f"hetero {name}: {statistics.median(times[name]):.3f} s, imbalance "
              f"{statistics.median(imb[name]):.3f}", flush=True)
    return out


def write_markdown(r, path):
    lines = [
        "## Tile QR against ScaLAPACK PDGEQRF",
        "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']}; load average "
        f"{r['load_before']:.2f} when it started. A square n × n and a tall {r['tall']}n × n matrix, "
        f"n = {r['n']}, block size {r['nb']} for both (hit-qr `--b {r['nb']}`: `blockCyclic:b={r['nb']}` "
        "on the same process grid as PDGEQRF's BLACS grid, one worker per process: `--devices "
        f"'cpu(cores=1)'`); {r['runs']} alternated pairs per case, one warm-up factorisation each; "
        "median [min-max]. Throughput ratio = PDGEQRF time / hit-qr time, per pair (above 1: hit-qr "
        "faster; goal ≥ 1.0 at every count and shape). GFLOP/s by LAPACK's count, 2mn² − 2n³/3. One "
        "OpenBLAS thread per process.",
        "",
        "Command: `python3 bench/qr/qr_bench.py`.",
        "",
        "| m × n | grid | procs | hit-qr s | PDGEQRF s | throughput ratio | hit-qr GFLOP/s | PDGEQRF GFLOP/s | goal |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in r["cases"]:
        ratio = c["throughput_ratio"]["median"]
        lines.append(f"| {c['m']} × {c['n']} | {c['grid'][0]}x{c['grid'][1]} | {c['procs']} | "
                     f"{fmt(c['hit_s'])} | {fmt(c['pdgeqrf_s'])} | {fmt(c['throughput_ratio'])} | "
                     f"{c['hit_gflops']:.2f} | {c['pdgeqrf_gflops']:.2f} | "
                     f"{'met' if ratio >= 1.0 else '**not met**'} |")
    if "hetero" in r:
        h = r["hetero"]
        lines += ["", "### Heterogeneous: heteroBlockCyclic (tuned B_h) against blockCyclic", "",
                  f"Measured at commit {h['commit']} (load average {h['load_before']:.2f} when it "
                  f"started). n = {h['n']} (square), {h['procs']} processes (topology `array`), devices "
                  f"`{h['devices']}` (the emulator only slows devices down, so the host process is "
                  "the fast side and the emulated accelerators the slow ones); imbalance = max/mean "
                  "of the per-rank compute times (goal ≤ 1.05), each rank's time the mean of "
                  f"{h['reps']} timed factorisations after a warm-up, median [min-max] over the runs. "
                  f"The tuned layout comes from one `--tune --tune-n {h['n']}` run; the table's runs "
                  "alternate the layouts. Command: `python3 bench/qr/qr_bench.py --hetero`.", "",
                  "| layout | spec | time s | imbalance | goal |", "|---|---|---|---|---|"]
        for c in h["cases"]:
            lines.append(f"| {c['layout']} | `{c['spec']}` | {fmt(c['time_s'])} | "
                         f"{fmt(c['imbalance'])} | "
                         f"{'met' if c['imbalance']['median'] <= 1.05 else '**not met**'} |")
    replace_section(path, "qr", "\n".join(lines))


if __name__ == "__main__":
    main()
