#!/usr/bin/env python3
"""The sparse benchmarks: hit-cg against PETSc's CG and a hand-written MPI CSR CG, the `rows` and
`metis` layouts on a permuted Laplacian, METIS weighted three ways on unlike emulated devices, and
hit-heat against Hitmap's published Heat figures. Every figure is the median over --runs runs of
the program's own median (its --reps timed repetitions after --warmup), with the spread (min-max
over the runs); the programs of one comparison run interleaved, the order rotated every round.

Parts (--parts, default all):

* cg: `poisson3d:n=64` (262 144 rows, 7-point) and `poisson2d:n=1024,permute` (1 048 576 rows,
  5-point, unknowns renumbered at random) at 1, 2 and 4 processes: hit-cg (`rows` on the 3-D
  Laplacian; `rows` and `metis` on the permuted one), ref-csr-cg (block rows, MPICH) and petsc-cg
  (PETSc's KSPCG with -pc_type none, block rows, on Open MPI with its own launcher: Debian's PETSc
  is built on it; bench/ref/build_petsc_cg.sh builds it). Same matrix, b = A·1, x0 = 0, relative
  residual 1e-8, one BLAS thread per process. The figure is time per iteration; the permuted case
  stops at --cap iterations (time per iteration is steady long before its 1 755). The iteration
  counts to convergence are shown beside it (poisson3d: the full runs; permuted: one uncapped run
  at 2 processes). Ratio = hit-cg / PETSc (goal <= 1.0).
* layouts: from the cg runs on the permuted Laplacian: edge cut, halo bytes per iteration (all
  processes), time per iteration, rows against metis.
* hetero: three processes on emulated devices of speeds about 1 : 3.8 : 14
  (`emu:0(slowdown=14)`, `emu:1(slowdown=3.8)`, `emu:2(slowdown=1)`, each `clock=cpu,cores=1`:
  timed by the CPU time of their bodies, so three processes sharing two cores do not skew the
  speeds), hit-cg on
  `poisson2d:n=512,permute` with `metis` unweighted, `metis:weights=binding` (the devices' nominal
  1/slowdown) and `metis:models=` of functional performance models built for each device by
  `hit-fpm build --kernel spmv` (one unit = one row of the product). Makespan = time per
  iteration; imbalance = slowest process's compute time / mean (goal <= 1.05 with the models).
* heat: hit-heat, one process, k×k 5-point grid graphs (65 536, 262 144 and 4 194 304 vertices),
  1000 iterations, the default `metis` layout: input (generation), set-up (layout, numbering, halo)
  and loop times, against Hitmap's own figures on a 2-core machine (set-up 0.50 s and 7.70 s, loop
  0.16 s and 0.65 s). Goals: set-up linear in the graph (set-up per vertex flat), loop at most
  Hitmap's.

Writes bench/results/sparse.json (the parts measured, merged with those already there) and, with
--update-docs, the "sparse" section of docs/benchmarks.md.

    python3 bench/sparse/sparse_bench.py [--parts cg,layouts,hetero,heat] [--runs 5]
        [--update-docs] [--quick] [--from-json]
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import (ROOT, commit_text, machine_text, replace_section, run_json,  # noqa: E402
                      spread, write_json)

RESULTS = os.path.join(ROOT, "bench", "results", "sparse.json")
OMPI = ["mpiexec.openmpi", "--allow-run-as-root", "--oversubscribe"]
HETERO_DEVICES = ("emu:0(slowdown=14,clock=cpu,cores=1),emu:1(slowdown=3.8,clock=cpu,cores=1),"
                  "emu:2(slowdown=1,clock=cpu,cores=1)")
HITMAP_HEAT = {65536: (0.50, 0.16), 262144: (7.70, 0.65)}


def env():
    e = dict(os.environ)
    e["OPENBLAS_NUM_THREADS"] = "1"
    return e


def binary(args, name):
    return os.path.join(args.build, "bin", name)


def cg_command(args, program, spec, np_, extra, reps=None, warmup=1):
    reps = args.reps if reps is None else reps
    common = ["--generate", spec, "--json", "--reps", str(reps), "--warmup", str(warmup)] + extra
    if program == "petsc-cg":
        return OMPI + ["-n", str(np_), binary(args, "petsc-cg")] + common
    return ["mpiexec.mpich", "-n", str(np_), binary(args, program)] + common


def rotate(items, k):
    k %= len(items)
    return items[k:] + items[:k]


def measure_cg(args):
    """The cg and layouts parts: time per iteration of every program, every case."""
    cap = ["--max-iters", str(args.cap)]
    cases = [("poisson3d:n=64" if not args.quick else "poisson3d:n=24", [], [
        ("hit-cg rows", "hit-cg", ["--layout", "rows"]),
        ("ref-csr-cg", "ref-csr-cg", []),
        ("PETSc", "petsc-cg", [])])]
    permuted = "poisson2d:n=1024,permute" if not args.quick else "poisson2d:n=128,permute"
    cases.append((permuted, cap, [
        ("hit-cg rows", "hit-cg", ["--layout", "rows"]),
        ("hit-cg metis", "hit-cg", ["--layout", "metis"]),
        ("ref-csr-cg", "ref-csr-cg", []),
        ("PETSc", "petsc-cg", [])]))
    out = []
    for spec, extra, programs in cases:
        for np_ in args.procs:
            runs = {label: [] for label, _, _ in programs}
            for rnd in range(args.runs):
                for label, program, flags in rotate(programs, rnd):
                    d = run_json(cg_command(args, program, spec, np_, flags + extra), env())
                    runs[label].append(d)
                    print(f"{spec:26s} np={np_} {label:13s} it={d['iterations']:5d} "
                          f"{d['time_per_iteration_s'] * 1e3:8.3f} ms/it", flush=True)
            entry = {"matrix": spec, "procs": np_, "capped": bool(extra), "programs": {}}
            for label, ds in runs.items():
                e = {"iterations": ds[0]["iterations"],
                     "per_iteration_s": spread([d["time_per_iteration_s"] for d in ds])}
                if "parts" in ds[0]:
                    e["halo_bytes"] = sum(p["halo_bytes"] for p in ds[0]["parts"])
                    e["ghosts"] = sum(p["ghosts"] for p in ds[0]["parts"])
                    e["edge_cut"] = ds[0]["layout"]["edge_cut"]
                    e["layout_imbalance"] = ds[0]["layout"]["imbalance"]
                    e["setup_s"] = spread([d["setup_s"] for d in ds])
                e["ratio_to_petsc"] = None
                entry["programs"][label] = e
            p = entry["programs"]["PETSc"]["per_iteration_s"]["median"]
            for label, e in entry["programs"].items():
                e["ratio_to_petsc"] = e["per_iteration_s"]["median"] / p
            out.append(entry)
    # The iteration counts of the capped case, to convergence (one run each, 2 processes).
    counts = {}
    np_ = min(2, max(args.procs))
    for label, program, flags in cases[1][2]:
        d = run_json(cg_command(args, program, permuted, np_, flags, reps=1, warmup=0), env())
        counts[label] = d["iterations"]
        print(f"{permuted} to convergence: {label} {d['iterations']} iterations", flush=True)
    return {"cases": out, "cap": args.cap, "permuted_iterations": counts, "runs": args.runs,
            "reps": args.reps}


def build_models(args, work):
    """One model file per emulated device, by hit-fpm build with the spmv kernel."""
    os.makedirs(work, exist_ok=True)
    pattern = os.path.join(work, "spmv-{rank}.csv")
    top = 4096 if args.quick else args.model_max
    subprocess.run(["mpiexec.mpich", "-n", "3", binary(args, "hit-fpm"), "build", "--kernel",
                    "spmv", "--devices", HETERO_DEVICES, "--min", str(top // 16), "--max",
                    str(top), "--points", "8", "--max-time", "1", "--out", pattern, "--quiet"],
                   env=env(), check=True, capture_output=True)
    return ",".join(pattern.replace("{rank}", str(r)) for r in range(3))


def measure_hetero(args):
    spec = "poisson2d:n=512,permute" if not args.quick else "poisson2d:n=96,permute"
    models = build_models(args, os.path.join(args.build, "bench-sparse-models"))
    layouts = [("metis (equal weights)", "metis"),
               ("metis:weights=binding", "metis:weights=binding"),
               ("metis:models= (FPM)", "metis:models=" + models)]
    runs = {label: [] for label, _ in layouts}
    for rnd in range(args.runs):
        for label, layout in rotate(layouts, rnd):
            d = run_json(["mpiexec.mpich", "-n", "3", binary(args, "hit-cg"), "--generate", spec,
                          "--layout", layout, "--devices", HETERO_DEVICES, "--max-iters",
                          str(args.hetero_iters), "--json", "--reps", str(args.reps),
                          "--warmup", "1"], env())
            runs[label].append(d)
            print(f"hetero {label:24s} {d['time_per_iteration_s'] * 1e3:8.3f} ms/it "
                  f"imbalance {d['imbalance']:.3f} rows {[p['rows'] for p in d['parts']]}",
                  flush=True)
    out = []
    for label, ds in runs.items():
        out.append({"layout": label,
                    "per_iteration_s": spread([d["time_per_iteration_s"] for d in ds]),
                    "imbalance": spread([d["imbalance"] for d in ds]),
                    "rows": ds[-1]["parts"] and [p["rows"] for p in ds[-1]["parts"]],
                    "edge_cut": ds[-1]["layout"]["edge_cut"]})
    return {"matrix": spec, "devices": HETERO_DEVICES, "iterations": args.hetero_iters,
            "layouts": out, "runs": args.runs}


def measure_heat(args):
    """One process, `single` (one core, as Hitmap's single process) and `threads` (the rows of
    each step shared over the process's cores by the partition plug-in)."""
    sizes = [256, 512, 2048] if not args.quick else [64, 128]
    out = []
    for k in sizes:
        big = k >= 2048
        for partition in ("single", "threads"):
            ds = []
            for _ in range(args.runs if not big else max(1, args.runs // 2)):
                d = run_json(["mpiexec.mpich", "-n", "1", binary(args, "hit-heat"), "--generate",
                              f"poisson2d:n={k}", "--iters", str(args.heat_iters), "--partition",
                              partition, "--json", "--reps", "1" if big else str(args.reps),
                              "--warmup", "0" if big else "1"], env())
                ds.append(d)
                print(f"heat {k * k:9d} vertices {partition:8s}: input {d['input_s']:.3f} s "
                      f"set-up {d['setup_s']:.3f} s loop {d['time_s']:.3f} s", flush=True)
            out.append({"vertices": k * k, "partition": partition,
                        "input_s": spread([d["input_s"] for d in ds]),
                        "setup_s": spread([d["setup_s"] for d in ds]),
                        "loop_s": spread([d["time_s"] for d in ds]), "sum": ds[0]["sum"]})
    return {"iterations": args.heat_iters, "sizes": out}


def fmt_spread(s, scale=1.0, digits=3):
    return (f"{s['median'] * scale:.{digits}f} ({s['min'] * scale:.{digits}f}–"
            f"{s['max'] * scale:.{digits}f})")


def markdown(results):
    machine = next((results[p]["machine"] for p in ("cg", "hetero", "heat") if p in results), "?")
    lines = ["## Sparse domains: hit-cg against PETSc, rows against metis, METIS weighted by "
             "models, hit-heat against Hitmap", "", f"Measured on {machine} by `python3 bench/sparse/sparse_bench.py --update-docs` "
             "(each table names its commit). Medians over the runs of each program's own median, "
             "min–max over the runs in brackets."]
    cg = results.get("cg")
    if cg:
        lines += ["", f"**hit-cg against PETSc's CG** (commit {cg['commit']}; KSPCG, -pc_type none, Open MPI) and a "
                  f"hand-written MPI CSR CG (ref-csr-cg), time per iteration in ms, {cg['runs']} "
                  f"runs × {cg['reps']} repetitions; the permuted case capped at {cg['cap']} "
                  "iterations. Ratio = hit-cg / PETSc, goal ≤ 1.0.", "",
                  "| matrix | procs | program | iterations | ms / iteration | ratio to PETSc |",
                  "|---|---|---|---|---|---|"]
        met = True
        for c in cg["cases"]:
            for label, e in c["programs"].items():
                its = e["iterations"]
                if c["capped"]:
                    its = f"{cg['permuted_iterations'].get(label, '?')} (cap {cg['cap']})"
                ratio = e["ratio_to_petsc"]
                if label.startswith("hit-cg") and (label != "hit-cg rows" or not c["capped"]):
                    met = met and ratio <= 1.0
                lines.append(f"| {c['matrix']} | {c['procs']} | {label} | {its} | "
                             f"{fmt_spread(e['per_iteration_s'], 1e3)} | {ratio:.2f} |")
        lines += ["", "Goal (hit-cg at most 1.0× PETSc's time per iteration at every process "
                  "count, with its default layout for the matrix: `rows` on the 3-D Laplacian, "
                  f"`metis` on the permuted one): **{'met' if met else 'not met'}**."]
        lines += ["", "**`rows` against `metis`** on the permuted 2-D Laplacian (from the runs "
                  "above): halo bytes are what all processes send per iteration.", "",
                  "| procs | layout | edge cut | ghosts | halo bytes / iteration | "
                  "ms / iteration |", "|---|---|---|---|---|---|"]
        for c in cg["cases"]:
            if not c["capped"]:
                continue
            for label in ("hit-cg rows", "hit-cg metis"):
                e = c["programs"][label]
                lines.append(f"| {c['procs']} | {label.split()[1]} | {e['edge_cut']} | "
                             f"{e['ghosts']} | {e['halo_bytes']} | "
                             f"{fmt_spread(e['per_iteration_s'], 1e3)} |")
    het = results.get("hetero")
    if het:
        lines += ["", f"**METIS weighted three ways on unlike devices** (commit {het['commit']}): "
                  f"hit-cg on "
                  f"`{het['matrix']}`, {het['iterations']} iterations, three processes on "
                  f"`{het['devices']}` (speeds about 1 : 3.8 : 14). Imbalance = the slowest "
                  "process's compute time over the mean; goal ≤ 1.05 with the FPM weights.", "",
                  "| layout | rows per process | edge cut | ms / iteration | imbalance |",
                  "|---|---|---|---|---|"]
        for e in het["layouts"]:
            lines.append(f"| `{e['layout']}` | {' / '.join(map(str, e['rows']))} | "
                         f"{e['edge_cut']} | {fmt_spread(e['per_iteration_s'], 1e3)} | "
                         f"{fmt_spread(e['imbalance'], 1, 2)} |")
        fpm = het["layouts"][-1]["imbalance"]["median"]
        lines += ["", f"Goal (imbalance ≤ 1.05 with FPM weights): "
                  f"**{'met' if fpm <= 1.05 else 'not met'}** ({fpm:.3f})."]
    heat = results.get("heat")
    if heat:
        lines += ["", f"**hit-heat against Hitmap's Heat** (commit {heat['commit']}; one process, k×k 5-point grid "
                  f"graphs, {heat['iterations']} iterations, `metis` layout; Hitmap's figures "
                  "are its published ones on a 2-core machine). Input = generating the graph; "
                  "set-up = layout, moving the rows, local numbering and halo.", "",
                  "| vertices | partition | input s | set-up s | set-up µs / vertex | loop s | "
                  "Hitmap set-up s | Hitmap loop s | loop ratio |",
                  "|---|---|---|---|---|---|---|---|---|"]
        per_vertex = []
        loop_met = {}
        for e in heat["sizes"]:
            v = e["vertices"]
            part = e.get("partition", "single")
            hm = HITMAP_HEAT.get(v)
            per_vertex.append(e["setup_s"]["median"] / v * 1e6)
            ratio = f"{e['loop_s']['median'] / hm[1]:.2f}" if hm else "–"
            if hm:
                loop_met[part] = loop_met.get(part, True) and e["loop_s"]["median"] <= hm[1]
            lines.append(f"| {v:,} | `{part}` | {fmt_spread(e['input_s'])} | "
                         f"{fmt_spread(e['setup_s'])} | {per_vertex[-1]:.2f} | "
                         f"{fmt_spread(e['loop_s'])} | {hm[0] if hm else '–'} | "
                         f"{hm[1] if hm else '–'} | {ratio} |")
        linear = max(per_vertex) <= 2.0 * min(per_vertex)
        verdict = "; ".join(f"`{p}` **{'met' if m else 'not met'}**" for p, m in loop_met.items())
        lines += ["", f"Goals: set-up linear in the graph (µs per vertex within 2× across a "
                  f"64-fold range): **{'met' if linear else 'not met'}**; loop at most Hitmap's "
                  f"(one process; `single` uses one core as Hitmap's process does, `threads` "
                  f"both cores of the machine): {verdict}."]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--parts", default="cg,hetero,heat")
    ap.add_argument("--procs", default="1,2,4")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cap", type=int, default=100, help="iterations of the permuted case")
    ap.add_argument("--hetero-iters", type=int, default=100)
    ap.add_argument("--model-max", type=int, default=131072,
                    help="largest model size in rows (hetero)")
    ap.add_argument("--heat-iters", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="small sizes, to try the script")
    ap.add_argument("--update-docs", action="store_true")
    ap.add_argument("--from-json", action="store_true", help="only rewrite the docs section")
    args = ap.parse_args()
    args.procs = [int(p) for p in args.procs.split(",")]
    try:
        results = json.load(open(RESULTS))
    except (OSError, ValueError):
        results = {}
    if not args.from_json:
        parts = args.parts.split(",")
        if "cg" in parts or "layouts" in parts:
            if not os.path.exists(binary(args, "petsc-cg")):
                subprocess.run(["sh", os.path.join(ROOT, "bench/ref/build_petsc_cg.sh"),
                                os.path.join(args.build, "bin")], check=True)
            results["cg"] = measure_cg(args)
        if "hetero" in parts:
            results["hetero"] = measure_hetero(args)
        if "heat" in parts:
            results["heat"] = measure_heat(args)
        for part in ("cg", "hetero", "heat"):
            if part in parts or (part == "cg" and "layouts" in parts):
                results[part]["commit"] = commit_text()
                results[part]["machine"] = machine_text(details=True)
        write_json(RESULTS, results)
    text = markdown(results)
    print(text)
    if args.update_docs:
        replace_section(os.path.join(ROOT, "docs", "benchmarks.md"), "sparse", text)


if __name__ == "__main__":
    main()
