#!/usr/bin/env python3
"""Runs hit-cannon and hit-jacobi side by side with their hand-written references and writes the
table, for the portable build and the native build (-march=native), each program against the
reference built the same way.

Framework and reference run as alternated pairs (A B, then B A, ...), so slow drift of a shared
machine and the order within a pair affect both alike; every figure is the median of the runs
with its min-max spread, and the headline numbers are ratios per pair. Also measures the machine's
own ceilings in the same run: the plain OpenBLAS dgemm rate and the STREAM triad bandwidth.

    python3 bench/run_benchmarks.py [--runs 5] [--builds portable,native] [--quick]

The native build (build-native/, CMake preset `native`) is configured and built when missing.
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import alternated_pairs, commit_text, machine_text, replace_section, run_json, spread, write_json  # noqa: E402

BUILDS = {"portable": ("build", "default"), "native": ("build-native", "native")}
PROGRAMS = ["hit-cannon", "ref-cannon", "hit-jacobi", "ref-jacobi", "hit-bench-machine"]

# The goals, ratio framework / reference (Cannon at 1 process: fraction of plain dgemm).
JACOBI_GOAL = {1: 1.00, 2: 1.00, 4: 0.90}
CANNON_GOAL = 1.00
CANNON_DGEMM_GOAL = 0.99


def ensure_build(name):
    folder, preset = BUILDS[name]
    path = os.path.join(ROOT, folder)
    if not os.path.exists(os.path.join(path, "CMakeCache.txt")):
        subprocess.run(["cmake", "--preset", preset], cwd=ROOT, check=True)
    subprocess.run(["cmake", "--build", path, "-j2", "--target"] + PROGRAMS, cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    return path


def measure(build, args, env):
    binary = lambda name: os.path.join(build, "bin", name)
    mpiexec = "mpiexec.mpich"
    cannon_sizes = [512] if args.quick else [2048, 4096]
    jacobi_n = 512 if args.quick else 4096
    jacobi_iters = 20 if args.quick else 200
    out = {"cases": []}
    # The plain dgemm rate at each Cannon size (a smaller product runs below the large one's
    # rate, so one process's Cannon is held against dgemm of its own n).
    machine = {n: [run_json([binary("hit-bench-machine"), "--n", str(n), "--reps", "3"], env)
                   for _ in range(3)] for n in cannon_sizes}
    out["dgemm_by_n"] = {str(n): spread([m["dgemm_gflops"] for m in runs]) for n, runs in machine.items()}
    out["dgemm_gflops_1thread"] = out["dgemm_by_n"][str(max(cannon_sizes))]
    out["triad_gb_per_s"] = spread([m["triad_gb_per_s"] for runs in machine.values() for m in runs])
    print(f"  machine: dgemm " + ", ".join(f"n={n} {d['median']:.2f}" for n, d in out["dgemm_by_n"].items())
          + f" GFLOP/s (1 thread), triad {out['triad_gb_per_s']['median']:.2f} GB/s", flush=True)

    for procs in [1, 4]:
        launch = [mpiexec, "-n", str(procs)]
        for n in cannon_sizes:
            reps = ["--n", str(n), "--reps", "1", "--warmup", "1"]
            fw, ref = alternated_pairs(args.runs,
                            lambda: run_json(launch + [binary("hit-cannon"), "--json"] + reps, env)["time_s"],
                            lambda: run_json(launch + [binary("ref-cannon")] + reps, env)["time_s"])
            ratios = [a / b for a, b in zip(fw, ref)]
            gflops = 2.0 * n ** 3 / statistics.median(fw) * 1e-9
            case = {"app": "cannon", "n": n, "procs": procs, "framework_s": spread(fw),
                    "reference_s": spread(ref), "ratio": spread(ratios), "gflops": gflops,
                    "of_dgemm": gflops / out["dgemm_by_n"][str(n)]["median"] if procs == 1 else None}
            out["cases"].append(case)
            print(f"  cannon n={n} P={procs}: ratio {case['ratio']['median']:.3f} "
                  f"({gflops:.2f} GFLOP/s)", flush=True)
    for procs in [1, 2, 4]:
        launch = [mpiexec, "-n", str(procs)]
        reps = ["--n", str(jacobi_n), "--iters", str(jacobi_iters), "--reps", "1", "--warmup", "1"]
        fw, ref = alternated_pairs(args.runs,
                        lambda: run_json(launch + [binary("hit-jacobi"), "--json"] + reps, env)["time_s"],
                        lambda: run_json(launch + [binary("ref-jacobi")] + reps, env)["time_s"])
        ratios = [a / b for a, b in zip(fw, ref)]
        rate = (jacobi_n - 2) ** 2 * jacobi_iters / statistics.median(fw)
        # 5-point Jacobi moves at least 16 bytes per cell (read the field, write the result)
        # through memory; that is the STREAM-bound cell rate.
        bound = out["triad_gb_per_s"]["median"] * 1e9 / 16.0
        case = {"app": "jacobi", "n": jacobi_n, "procs": procs, "iters": jacobi_iters,
                "framework_s": spread(fw), "reference_s": spread(ref), "ratio": spread(ratios),
                "mcells_per_s": rate * 1e-6, "stream_fraction": rate / bound}
        out["cases"].append(case)
        print(f"  jacobi n={jacobi_n} P={procs}: ratio {case['ratio']['median']:.3f} "
              f"({case['mcells_per_s']:.1f} Mcells/s)", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5, help="alternated pairs per case")
    ap.add_argument("--builds", default="portable,native")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=os.path.join(ROOT, "bench", "results", "latest.json"))
    args = ap.parse_args()
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"  # one BLAS thread per rank, in both programs
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(), "machine": machine_text(details=True), "runs": args.runs,
               "load_before": os.getloadavg()[0], "builds": {}}
    for name in args.builds.split(","):
        if name not in BUILDS:
            raise SystemExit(f"--builds: unknown build '{name}' (known: {', '.join(BUILDS)})")
        path = ensure_build(name)
        print(f"{name} build ({path}):", flush=True)
        results["builds"][name] = measure(path, args, env)
    write_json(args.json_out, results)
    if not args.quick:
        write_markdown(results, args.out)


def fmt(s):
    return f"{s['median']:.3f} [{s['min']:.3f}-{s['max']:.3f}]"


def verdict(value, goal):
    return "met" if value <= goal else "**not met**"


def write_markdown(r, path):
    lines = [
        "## Framework against hand-written references (Cannon, Jacobi)",
        "",
        f"Measured {r['date']} at commit {r['commit']} on: {r['machine']}; load average "
        f"{r['load_before']:.2f} when it started.",
        "",
        f"Framework and reference run as {r['runs']} alternated pairs per case (A B, B A, ...); each "
        "figure is the median, [min-max] in brackets. Ratio = framework time / reference time, per "
        "pair (below 1: the framework is faster). Two builds, each program against the reference "
        "built the same way: *portable* (the default Release build) and *native* (`-DHIT_NATIVE=ON`, "
        "`-march=native`, preset `native`). One OpenBLAS thread per rank.",
        "",
        "Command: `python3 bench/run_benchmarks.py` (after `bash scripts/setup.sh`; it builds "
        "`build-native/` when missing).",
        "",
        "The references (`bench/ref/`) are what a careful programmer writes by hand: Cannon with "
        "`MPI_Cart_create`, blocking `MPI_Sendrecv` into a second buffer that is swapped in (no copy of "
        "the block), shifts that move nothing skipped, one `cblas_dgemm` per step; Jacobi with a "
        "Cartesian grid, four blocking `MPI_Sendrecv` per iteration (a vector datatype for the "
        "columns), contiguous `__restrict` rows with no per-element branch, and a pointer swap "
        "between the two grids.",
        "",
        "Machine ceilings measured in the same session (plain OpenBLAS dgemm on one thread at each "
        "Cannon size, the rate one process's Cannon is held against; STREAM triad):",
        "",
        "| build | dgemm GFLOP/s | triad GB/s |",
        "|---|---|---|",
    ]
    for name, b in r["builds"].items():
        t = b["triad_gb_per_s"]
        by_n = b.get("dgemm_by_n") or {"": b["dgemm_gflops_1thread"]}
        dgemm = "; ".join((f"n={n}: " if n else "") + f"{d['median']:.2f} [{d['min']:.2f}-{d['max']:.2f}]"
                          for n, d in by_n.items())
        lines.append(f"| {name} | {dgemm} | {t['median']:.2f} [{t['min']:.2f}-{t['max']:.2f}] |")
    lines += ["", "### Cannon (hit-cannon vs bench/ref/cannon.cpp)", "",
              f"Goals: ratio ≤ {CANNON_GOAL:.2f} on 4 processes; on one process ≥ {CANNON_DGEMM_GOAL} "
              "of the plain dgemm rate.", "",
              "| build | n | procs | hit-cannon s | reference s | ratio | GFLOP/s | of plain dgemm | goal |",
              "|---|---|---|---|---|---|---|---|---|"]
    for name, b in r["builds"].items():
        for c in b["cases"]:
            if c["app"] != "cannon":
                continue
            if c["procs"] == 1:
                frac = f"{c['of_dgemm']:.3f}"
                goal = "met" if c["of_dgemm"] >= CANNON_DGEMM_GOAL else "**not met**"
            else:
                frac = "-"
                goal = verdict(c["ratio"]["median"], CANNON_GOAL)
            lines.append(f"| {name} | {c['n']} | {c['procs']} | {fmt(c['framework_s'])} | "
                         f"{fmt(c['reference_s'])} | {fmt(c['ratio'])} | {c['gflops']:.2f} | {frac} | "
                         f"{goal} |")
    lines += ["", "### Jacobi (hit-jacobi vs bench/ref/jacobi.cpp)", "",
              "Goals: ratio ≤ 1.00 on 1 and 2 processes, ≤ 0.90 on 4 (the halo overlapped with the "
              "update).", "",
              "| build | N | procs | iters | hit-jacobi s | reference s | ratio | Mcells/s | of STREAM bound | goal |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name, b in r["builds"].items():
        for c in b["cases"]:
            if c["app"] != "jacobi":
                continue
            lines.append(f"| {name} | {c['n']} | {c['procs']} | {c['iters']} | {fmt(c['framework_s'])} | "
                         f"{fmt(c['reference_s'])} | {fmt(c['ratio'])} | {c['mcells_per_s']:.1f} | "
                         f"{c['stream_fraction']:.2f} | "
                         f"{verdict(c['ratio']['median'], JACOBI_GOAL[c['procs']])} |")
    lines += ["",
              "The STREAM bound of Jacobi is triad bandwidth / 16 bytes per cell (one read and one",
              "write of a double per cell update, neighbours served from cache). 4 processes share",
              "the 2 cores, and MPICH busy-waits in blocking calls.", ""]
    replace_section(path, "comm", "\n".join(lines))


if __name__ == "__main__":
    main()
