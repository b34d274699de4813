#!/usr/bin/env python3
"""Runs hitmap++ programs side by side with their hand-written references and writes the table.

Framework and reference run alternately in the same session (A B A B ...), so slow drift of a
shared machine affects both alike; every figure is the median of the runs with its min-max spread,
and the headline numbers are ratios. Also measures the machine's own ceilings in the same run: the
plain OpenBLAS dgemm rate and the STREAM triad bandwidth.

    python3 bench/run_benchmarks.py [--build build] [--runs 5] [--quick] [--out docs/benchmarks.md]
"""
import argparse
import datetime
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import commit_text, machine_text, replace_section, run_json, spread, write_json  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=os.path.join(ROOT, "bench", "results", "latest.json"))
    args = ap.parse_args()
    binary = lambda name: os.path.join(args.build, "bin", name)
    mpiexec = "mpiexec.mpich"
    cores = os.cpu_count() or 1

    cannon_sizes = [256, 512] if args.quick else [1024, 2048, 4096]
    jacobi_sizes = [512] if args.quick else [2048, 4096]
    jacobi_iters = 20 if args.quick else 100
    procs_list = [1, 4]
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(),
               "machine": machine_text(details=True), "runs": args.runs, "cases": []}

    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"
    machine = [run_json([binary("hit-bench-machine"), "--n", str(max(cannon_sizes)), "--reps", "3"], env)
               for _ in range(3)]
    results["dgemm_gflops_1thread"] = spread([m["dgemm_gflops"] for m in machine])
    results["triad_gb_per_s"] = spread([m["triad_gb_per_s"] for m in machine])
    print(f"machine: dgemm {results['dgemm_gflops_1thread']['median']:.2f} GFLOP/s (1 thread), "
          f"triad {results['triad_gb_per_s']['median']:.2f} GB/s", flush=True)

    for procs in procs_list:
        env = dict(os.environ)
        # One BLAS thread per rank when ranks outnumber cores; else let one rank use the cores it has.
        env["OPENBLAS_NUM_THREADS"] = "1" if procs >= cores or procs > 1 else "1"
        launch = [mpiexec, "-n", str(procs)]
        for n in cannon_sizes:
            reps = ["--reps", "1", "--warmup", "1"]
            fw, ref = [], []
            fw_json = None
            for _ in range(args.runs):
                fw_json = run_json(launch + [binary("hit-cannon"), "--n", str(n), "--json"] + reps, env)
                fw.append(fw_json["time_s"])
                ref.append(run_json(launch + [binary("ref-cannon"), "--n", str(n)] + reps, env)["time_s"])
            ratios = [a / b for a, b in zip(fw, ref)]
            case = {"app": "cannon", "n": n, "procs": procs, "framework_s": spread(fw),
                    "reference_s": spread(ref), "ratio": spread(ratios),
                    "gflops": 2.0 * n ** 3 / statistics.median(fw) * 1e-9,
                    "imbalance": fw_json["imbalance"]}
            results["cases"].append(case)
            print(f"cannon n={n} P={procs}: ratio {case['ratio']['median']:.3f} "
                  f"({case['gflops']:.2f} GFLOP/s)", flush=True)
        for n in jacobi_sizes:
            reps = ["--reps", "1", "--warmup", "1", "--iters", str(jacobi_iters)]
            fw, ref = [], []
            for _ in range(args.runs):
                fw.append(run_json(launch + [binary("hit-jacobi"), "--n", str(n), "--json"] + reps, env)["time_s"])
                ref.append(run_json(launch + [binary("ref-jacobi"), "--n", str(n)] + reps, env)["time_s"])
            ratios = [a / b for a, b in zip(fw, ref)]
            cells = (n - 2) ** 2 * jacobi_iters
            rate = cells / statistics.median(fw)
            # 5-point Jacobi moves at least 16 bytes per cell (read the field, write the result)
            # through memory; that is the STREAM-bound cell rate.
            bound = results["triad_gb_per_s"]["median"] * 1e9 / 16.0
            case = {"app": "jacobi", "n": n, "procs": procs, "iters": jacobi_iters,
                    "framework_s": spread(fw), "reference_s": spread(ref), "ratio": spread(ratios),
                    "mcells_per_s": rate * 1e-6, "stream_fraction": rate / bound}
            results["cases"].append(case)
            print(f"jacobi n={n} P={procs}: ratio {case['ratio']['median']:.3f} "
                  f"({case['mcells_per_s']:.1f} Mcells/s, {case['stream_fraction']:.2f} of STREAM)",
                  flush=True)

    write_json(args.json_out, results)
    write_markdown(results, args.out)


def write_markdown(r, path):
    d = r["dgemm_gflops_1thread"]
    t = r["triad_gb_per_s"]
    lines = [
        "## Framework against hand-written references (Cannon, Jacobi)",
        "",
        "Framework and reference run alternately in the same session;",
        f"each figure is the median of {r['runs']} runs, [min-max] in brackets. Ratio = framework",
        "time / reference time, per pair of runs (below 1: the framework is faster).",
        "",
        f"Measured {r['date']} at commit {r.get('commit', 'unknown')} on: {r['machine']}.",
        "",
        f"Machine ceilings measured in the same session: plain OpenBLAS dgemm "
        f"{d['median']:.2f} GFLOP/s on one thread [{d['min']:.2f}-{d['max']:.2f}]; STREAM triad "
        f"{t['median']:.2f} GB/s [{t['min']:.2f}-{t['max']:.2f}].",
        "",
        "Command: `python3 bench/run_benchmarks.py` (after `bash scripts/setup.sh`).",
        "",
        "### Cannon (hit-cannon vs bench/ref/cannon.cpp: MPI_Cart_create + MPI_Sendrecv_replace + dgemm)",
        "",
        "| n | procs | hit-cannon s | reference s | ratio | GFLOP/s | of plain dgemm (1 proc) |",
        "|---|---|---|---|---|---|---|",
    ]
    fmt = lambda s: f"{s['median']:.3f} [{s['min']:.3f}-{s['max']:.3f}]"
    for c in r["cases"]:
        if c["app"] != "cannon":
            continue
        frac = f"{c['gflops'] / d['median']:.2f}" if c["procs"] == 1 else "-"
        lines.append(f"| {c['n']} | {c['procs']} | {fmt(c['framework_s'])} | {fmt(c['reference_s'])} | "
                     f"{fmt(c['ratio'])} | {c['gflops']:.2f} | {frac} |")
    lines += ["", "### Jacobi (hit-jacobi vs bench/ref/jacobi.cpp: Cartesian grid + MPI_Sendrecv, vector datatype)", "",
              "| N | procs | iters | hit-jacobi s | reference s | ratio | Mcells/s | of STREAM bound |",
              "|---|---|---|---|---|---|---|---|"]
    for c in r["cases"]:
        if c["app"] != "jacobi":
            continue
        lines.append(f"| {c['n']} | {c['procs']} | {c['iters']} | {fmt(c['framework_s'])} | "
                     f"{fmt(c['reference_s'])} | {fmt(c['ratio'])} | {c['mcells_per_s']:.1f} | "
                     f"{c['stream_fraction']:.2f} |")
    lines += ["", "The STREAM bound of Jacobi is triad bandwidth / 16 bytes per cell (one read and one",
              "write of a double per cell update, neighbours served from cache).",
              "Reading the table. At 1 process the hand-written Cannon still calls `MPI_Sendrecv_replace` to\nitself for the alignment (a copy of both matrices), which hit-cannon's shift skips, so the\nframework is slightly faster there; the local product is the same single dgemm call, at the\nplain dgemm rate. At 4 processes 4 ranks share 2 cores and MPICH (ch4:ucx) busy-waits, so\ncommunication times are those of an oversubscribed machine; hit-jacobi posts the four halo\ntransfers of an iteration together (one non-blocking phase) where the reference runs four\nblocking `MPI_Sendrecv` in turn, which is why it is faster there.", ""]
    replace_section(path, "comm", "\n".join(lines))


if __name__ == "__main__":
    main()
