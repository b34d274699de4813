#!/usr/bin/env python3
"""hit-summa against ScaLAPACK's PDGEMM (ref-pdgemm: Debian's MPICH build of ScaLAPACK, the same
MPI and OpenBLAS, block size = hit-summa's panel) and against hit-cannon on the same grid, n×n
matrices, grids 1×1, 1×2 and 2×2. The three run alternately (A B C A B C ...) so a shared machine's
drift affects them alike; every figure is the median of the runs with its min-max spread, and the
headline numbers are ratios of throughput. Writes the "summa" section of docs/benchmarks.md and
bench/results/summa.json.

    python3 bench/summa/summa_bench.py [--build build] [--n 4096] [--panel 256] [--runs 7]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--panel", type=int, default=256)
    ap.add_argument("--wide-panel", type=int, default=1024,
                    help="on square grids, hit-summa also runs with this panel, against hit-cannon")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=os.path.join(ROOT, "bench", "results", "summa.json"))
    args = ap.parse_args()
    binary = lambda name: os.path.join(args.build, "bin", name)
    if not os.path.exists(binary("ref-pdgemm")):
        raise SystemExit("ref-pdgemm was not built: install libscalapack-mpich-dev and rebuild")
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"
    n, panel = str(args.n), str(args.panel)
    reps = ["--reps", "1", "--warmup", "1"]
    machine = run_json([binary("hit-bench-machine"), "--n", n, "--reps", "3"], env)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(), "machine": machine_text(details=True), "n": args.n,
               "panel": args.panel, "wide_panel": args.wide_panel, "runs": args.runs, "dgemm_gflops_1thread": machine["dgemm_gflops"],
               "cases": []}
    for rows, cols in ((1, 1), (1, 2), (2, 2)):
        procs = rows * cols
        launch = ["mpiexec.mpich", "-n", str(procs)]
        summa_cmd = launch + [binary("hit-summa"), "--n", n, "--panel", panel, "--json",
                              "--topology", f"mesh:dims={rows}x{cols}"] + reps
        pdgemm_cmd = launch + [binary("ref-pdgemm"), "--n", n, "--nb", panel, "--rows", str(rows),
                               "--cols", str(cols)] + reps
        cannon_cmd = launch + [binary("hit-cannon"), "--n", n, "--json"] + reps if rows == cols else None
        # Cannon moves whole blocks in sqrt(P) steps; SUMMA's panel width is its own choice.
        wide_cmd = None
        if cannon_cmd:
            wide_cmd = [str(args.wide_panel) if a == panel and summa_cmd[k - 1] == "--panel" else a
                        for k, a in enumerate(summa_cmd)]
        times = {"summa": [], "pdgemm": [], "cannon": [], "wide": []}
        for _ in range(args.runs):
            times["summa"].append(run_json(summa_cmd, env)["time_s"])
            times["pdgemm"].append(run_json(pdgemm_cmd, env)["time_s"])
            if cannon_cmd:
                times["cannon"].append(run_json(cannon_cmd, env)["time_s"])
                times["wide"].append(run_json(wide_cmd, env)["time_s"])
        case = {"grid": [rows, cols], "procs": procs,
                "summa_s": spread(times["summa"]), "pdgemm_s": spread(times["pdgemm"]),
                "summa_over_pdgemm": spread([p / s for s, p in zip(times["summa"], times["pdgemm"])])}
        if cannon_cmd:
            case["cannon_s"] = spread(times["cannon"])
            case["summa_over_cannon"] = spread([c / s for s, c in zip(times["summa"], times["cannon"])])
            case["wide_s"] = spread(times["wide"])
            case["wide_over_cannon"] = spread([c / s for s, c in zip(times["wide"], times["cannon"])])
        flops = 2.0 * args.n ** 3
        case["summa_gflops"] = flops / statistics.median(times["summa"]) * 1e-9
        case["pdgemm_gflops"] = flops / statistics.median(times["pdgemm"]) * 1e-9
        results["cases"].append(case)
        line = (f"{rows}x{cols}: summa {case['summa_gflops']:.2f} GFLOP/s, pdgemm "
                f"{case['pdgemm_gflops']:.2f}, summa/pdgemm {case['summa_over_pdgemm']['median']:.2f}")
        if cannon_cmd:
            line += (f", summa/cannon {case['summa_over_cannon']['median']:.2f}, panel "
                     f"{args.wide_panel}: {case['wide_over_cannon']['median']:.2f}")
        print(line, flush=True)
    write_json(args.json_out, results)
    replace_section(args.out, "summa", markdown(results))


def fmt(s, digits=3):
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}–{s['max']:.{digits}f}]"


def markdown(r):
    lines = [
        f"### SUMMA (hit-summa vs ScaLAPACK PDGEMM vs hit-cannon, n = {r['n']}, panel = block = {r['panel']})",
        "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']}; {r['runs']} runs of each, "
        "alternating, each one warm-up and one timed multiplication; median [min–max]. "
        f"Plain dgemm on one thread: {r['dgemm_gflops_1thread']:.2f} GFLOP/s. "
        "Ratios are throughput ratios per run (higher: hit-summa faster).",
        "",
        f"| grid | hit-summa s | PDGEMM s | hit-cannon s | hit-summa GFLOP/s | PDGEMM GFLOP/s | summa / PDGEMM | summa / cannon | hit-summa, panel {r['wide_panel']}, s | summa (panel {r['wide_panel']}) / cannon |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in r["cases"]:
        cannon = fmt(c["cannon_s"]) if "cannon_s" in c else "–"
        ratio_c = fmt(c["summa_over_cannon"], 2) if "summa_over_cannon" in c else "–"
        wide = fmt(c["wide_s"]) if "wide_s" in c else "–"
        ratio_w = fmt(c["wide_over_cannon"], 2) if "wide_over_cannon" in c else "–"
        lines.append(f"| {c['grid'][0]}×{c['grid'][1]} | {fmt(c['summa_s'])} | {fmt(c['pdgemm_s'])} | "
                     f"{cannon} | {c['summa_gflops']:.2f} | {c['pdgemm_gflops']:.2f} | "
                     f"{fmt(c['summa_over_pdgemm'], 2)} | {ratio_c} | {wide} | {ratio_w} |")
    lines += ["", "Command: `python3 bench/summa/summa_bench.py` (after `bash scripts/setup.sh`, which "
              "installs ScaLAPACK). 1×2 has no Cannon (it needs a square grid). The last two columns: "
              f"hit-summa with panels of {r['wide_panel']} (`--panel {r['wide_panel']}`), on the grids "
              "that have a Cannon, run in the same rotation."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
