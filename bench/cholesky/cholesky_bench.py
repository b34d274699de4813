#!/usr/bin/env python3
"""hit-cholesky against ScaLAPACK's PDPOTRF (ref-pdpotrf: Debian's MPICH build of ScaLAPACK, the
same MPI and OpenBLAS, the same block size and process grid), n×n, on 1×1, 1×2 and 2×2 grids,
run as alternated pairs (A B, B A, ...); every figure is the median with its min-max spread, and
the headline is the throughput ratio hit-cholesky / PDPOTRF per pair (goal ≥ 1.0 at every count).

With --hetero, also the heterogeneous comparison on emulated devices (one fast accelerator, slow
host processes): heteroBlockCyclic with its B_h tuned by hit-cholesky --tune against plain
blockCyclic, time and imbalance (max/mean of the per-rank compute times, as Song et al. measure
it; goal < 1.05).

Writes the "cholesky" section of docs/benchmarks.md and bench/results/cholesky.json.

    python3 bench/cholesky/cholesky_bench.py [--build build] [--n 4096] [--nb 256] [--runs 5] [--hetero]
"""
import argparse
import datetime
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import alternated_pairs, commit_text, machine_text, replace_section, run_json, spread, write_json  # noqa: E402


def fmt(s, digits=3):
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}-{s['max']:.{digits}f}]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--nb", type=int, default=256)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--hetero", action="store_true")
    ap.add_argument("--hetero-n", type=int, default=4096)
    # Three ranks share two cores here: a rank's compute time varies by 5-10 % from one
    # factorisation to the next, so each run's per-rank times are means over several.
    ap.add_argument("--hetero-reps", type=int, default=3)
    # The emulator only slows a device down, so here the host process is the fast side and the two
    # emulated accelerators the slow ones; the layout and the tuner do not care which is faster.
    ap.add_argument("--hetero-devices",
                    default="cpu,emu:0(slowdown=3,clock=cpu,cores=1),emu:1(slowdown=3,clock=cpu,cores=1)")
    ap.add_argument("--hetero-B", type=int, default=256)
    # Thin-tile widths (the granularity of the host share B_h), each tuned and measured: a finer
    # one balances more closely, at the cost of thinner BLAS calls on the host.
    ap.add_argument("--hetero-b", default="32,16")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=os.path.join(ROOT, "bench", "results", "cholesky.json"))
    args = ap.parse_args()
    binary = lambda name: os.path.join(args.build, "bin", name)
    if not os.path.exists(binary("ref-pdpotrf")):
        raise SystemExit("ref-pdpotrf was not built: install libscalapack-mpich-dev and rebuild")
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"
    n, nb = str(args.n), str(args.nb)
    reps = ["--reps", "1", "--warmup", "1"]
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(), "machine": machine_text(details=True), "n": args.n,
               "nb": args.nb, "runs": args.runs, "load_before": os.getloadavg()[0], "cases": []}
    for rows, cols in ((1, 1), (1, 2), (2, 2)):
        procs = rows * cols
        launch = ["mpiexec.mpich", "-n", str(procs)]
        hit_cmd = launch + [binary("hit-cholesky"), "--n", n, "--b", nb, "--json",
                            "--topology", f"mesh:dims={rows}x{cols}"] + reps
        ref_cmd = launch + [binary("ref-pdpotrf"), "--n", n, "--nb", nb, "--rows", str(rows),
                            "--cols", str(cols)] + reps
        hit, ref = alternated_pairs(args.runs, lambda: run_json(hit_cmd, env)["time_s"],
                         lambda: run_json(ref_cmd, env)["time_s"])
        case = {"grid": [rows, cols], "procs": procs, "hit_s": spread(hit), "pdpotrf_s": spread(ref),
                "throughput_ratio": spread([r / h for h, r in zip(hit, ref)]),
                "hit_gflops": args.n ** 3 / 3 / statistics.median(hit) * 1e-9,
                "pdpotrf_gflops": args.n ** 3 / 3 / statistics.median(ref) * 1e-9}
        results["cases"].append(case)
        print(f"{rows}x{cols}: hit-cholesky / PDPOTRF throughput {case['throughput_ratio']['median']:.3f}",
              flush=True)
    if args.hetero:
        results["hetero"] = hetero(args, binary, env)
    write_json(args.json_out, results)
    write_markdown(results, args.out)


def hetero(args, binary, env):
    procs = len(re.sub(r"\([^)]*\)", "", args.hetero_devices).split(","))  # one item per rank
    launch = ["mpiexec.mpich", "-n", str(procs)]
    common = [binary("hit-cholesky"), "--n", str(args.hetero_n), "--devices", args.hetero_devices,
              "--json", "--reps", str(args.hetero_reps), "--warmup", "1", "--topology", "array"]
    layouts = {"blockCyclic": f"blockCyclic:b={args.hetero_B}"}
    tunings = {}
    for b in (int(x) for x in args.hetero_b.split(",")):
        tuned = run_json(launch + common + ["--layout", f"heteroBlockCyclic:B={args.hetero_B},b={b}",
                                            "--tune", "--tune-n", str(args.hetero_n)], env)
        layouts[f"heteroBlockCyclic b={b} (tuned)"] = tuned["layout"]
        tunings[str(b)] = tuned.get("tuning", [])
    out = {"n": args.hetero_n, "reps": args.hetero_reps, "devices": args.hetero_devices, "procs": procs,
           "tunings": tunings, "cases": []}
    times = {k: [] for k in layouts}
    imb = {k: [] for k in layouts}
    for i in range(args.runs):
        order = list(layouts) if i % 2 == 0 else list(reversed(layouts))
        for name in order:
            r = run_json(launch + common + ["--layout", layouts[name]], env)
            times[name].append(r["time_s"])
            imb[name].append(r["imbalance"])
    for name, spec in layouts.items():
        out["cases"].append({"layout": name, "spec": spec, "time_s": spread(times[name]),
                             "imbalance": spread(imb[name])})
        print(f"hetero {name}: {statistics.median(times[name]):.3f} s, imbalance "
              f"{statistics.median(imb[name]):.3f}", flush=True)
    return out


def write_markdown(r, path):
    lines = [
        "## Tiled Cholesky against ScaLAPACK PDPOTRF",
        "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']}; load average "
        f"{r['load_before']:.2f} when it started. n = {r['n']}, block size {r['nb']} for both (hit-cholesky "
        f"`--b {r['nb']}`: `blockCyclic:b={r['nb']}` on the same process grid as PDPOTRF's BLACS grid); "
        f"{r['runs']} alternated pairs per grid, one warm-up factorisation each; median [min-max]. "
        "Throughput ratio = PDPOTRF time / hit-cholesky time, per pair (above 1: hit-cholesky faster; "
        "goal ≥ 1.0 at every count). One OpenBLAS thread per rank.",
        "",
        "Command: `python3 bench/cholesky/cholesky_bench.py" + (" --hetero" if "hetero" in r else "") + "`.",
        "",
        "| grid | procs | hit-cholesky s | PDPOTRF s | throughput ratio | hit-cholesky GFLOP/s | PDPOTRF GFLOP/s | goal |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in r["cases"]:
        ratio = c["throughput_ratio"]["median"]
        lines.append(f"| {c['grid'][0]}x{c['grid'][1]} | {c['procs']} | {fmt(c['hit_s'])} | "
                     f"{fmt(c['pdpotrf_s'])} | {fmt(c['throughput_ratio'])} | {c['hit_gflops']:.2f} | "
                     f"{c['pdpotrf_gflops']:.2f} | {'met' if ratio >= 1.0 else '**not met**'} |")
    if "hetero" in r:
        h = r["hetero"]
        lines += ["", f"### Heterogeneous: heteroBlockCyclic (tuned B_h) against blockCyclic", "",
                  f"n = {h['n']}, {h['procs']} ranks (topology `array`), devices `{h['devices']}` (the emulator "
                  "only slows devices down, so the host process is the fast side and the emulated "
                  "accelerators the slow ones); imbalance = max/mean of the per-rank compute times (goal "
                  f"< 1.05), each rank's time the mean of {h.get('reps', 1)} timed factorisations after a "
                  "warm-up, median [min-max] over the runs. The tuned layout comes from one "
                  f"`--tune --tune-n {h['n']}` run (the tuner factorising a problem of the size measured: "
                  "on a smaller one the emulated devices' costs per launch weigh more, and the B_h it "
                  "picks overloads the host at this size); the table's runs alternate the layouts.",
                  "",
                  "| layout | spec | time s | imbalance | goal |", "|---|---|---|---|---|"]
        for c in h["cases"]:
            lines.append(f"| {c['layout']} | `{c['spec']}` | {fmt(c['time_s'])} | {fmt(c['imbalance'])} | "
                         f"{'met' if c['imbalance']['median'] < 1.05 else '**not met**'} |")
        for b, steps in h.get("tunings", {}).items():
            lines += ["", f"Tuning of B_h with b = {b} (hit-cholesky --tune --tune-n {h['n']}; each step's busy "
                      "times the medians of three factorisations after a warm-up):", "",
                      "| step | B_h | host busy s | accelerator busy s |", "|---|---|---|---|"]
            for i, st in enumerate(steps):
                lines.append(f"| {i} | {st['bh']} | {st['host_s']:.4f} | {st['device_s']:.4f} |")
    lines.append("")
    replace_section(path, "cholesky", "\n".join(lines))


if __name__ == "__main__":
    main()
