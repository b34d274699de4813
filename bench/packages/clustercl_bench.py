#!/usr/bin/env python3
"""clusterCL's applications on unequal devices (hit-packages --workload NAME, Raca and Mehofer's
eleven): how close work packages come to the ideal split, how busy every device stays, how the
two halves of an emulated two-node machine finish, and size=auto against fixed package sizes.

Devices: three CPU-clocked emulated devices of speeds 1 : 3.8 : 14 (slowdown 14, 3.684 and 1: a
slowdown scales the CPU time of the kernel's thread, so a shared core does not blur the ratio),
one process each; the fast device alone in the same round is the reference. Ideal: the fast
device's time alone over the sum of the speeds relative to it, T_fast / (1 + 1/3.8 + 1/14).
Goals (issue 51): on the compute-bound applications (dcs, cor, cov, bop, gemm, syrk, gsp) every
device busy >= 98 % of the span and the makespan <= 1.1x the ideal; on the data-bound ones (bsm,
conv, bicg, gsmv) the table shows the bytes moved and the ratio reached. Two emulated nodes
(HIT_NODES=1: one process per node, the fast device and the 3.8x slower one): the relative
standard deviation of the nodes' processing times (goal <= 3 %). Each application's package size:
size=auto against n/64, n/16 and n/4 rows on the three devices.

Every configuration is one hit-packages launch (--reps timed repetitions after one warm-up),
--runs rounds with the configurations interleaved; medians with min-max. Writes
bench/results/clustercl.json and, with --update-docs, the "clustercl" section of
docs/benchmarks.md.

    python3 bench/packages/clustercl_bench.py [--update-docs] [--runs 3] [--quick]
"""
import argparse
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import benchlib  # noqa: E402

FAST = "emu:2(slowdown=1,clock=cpu)"
THREE = "emu:0(slowdown=14,clock=cpu),emu:1(slowdown=3.684,clock=cpu)," + FAST
TWO_NODES = "emu:1(slowdown=3.684,clock=cpu)," + FAST
SPEEDS = [1 / 14, 1 / 3.684, 1.0]
COMPUTE_BOUND = ["dcs", "cor", "cov", "bop", "gemm", "syrk", "gsp"]
DATA_BOUND = ["bsm", "conv", "bicg", "gsmv"]

# Sizes whose fast device alone takes about half a second here (--quick: a tenth).
SIZES = {
    "dcs": ["--n", "512", "--m", "512", "--param", "atoms=800"],
    "cor": ["--n", "1500", "--m", "400"],
    "cov": ["--n", "1500", "--m", "400"],
    "bop": ["--n", "4000", "--param", "steps=700"],
    "gemm": ["--n", "2048"],
    "syrk": ["--n", "1100", "--m", "1100"],
    "gsp": ["--n", "3000", "--m", "120"],
    "bsm": ["--n", "1000000"],
    "conv": ["--n", "3000", "--m", "3000"],
    "bicg": ["--n", "4000", "--m", "4000"],
    "gsmv": ["--n", "3000"],
}
QUICK = {
    "dcs": ["--n", "128", "--m", "128", "--param", "atoms=200"],
    "cor": ["--n", "300", "--m", "100"],
    "cov": ["--n", "300", "--m", "100"],
    "bop": ["--n", "800", "--param", "steps=200"],
    "gemm": ["--n", "256"],
    "syrk": ["--n", "300", "--m", "300"],
    "gsp": ["--n", "600", "--m", "40"],
    "bsm": ["--n", "300000"],
    "conv": ["--n", "600", "--m", "600"],
    "bicg": ["--n", "800", "--m", "800"],
    "gsmv": ["--n", "800"],
}


def launch(args, workload, devices, np_, extra, env):
    sizes = (QUICK if args.quick else SIZES)[workload]
    cmd = ["mpiexec.mpich", "-n", str(np_), os.path.join(args.build, "bin", "hit-packages"),
           "--workload", workload, "--devices", devices, "--json", "--reps", str(args.reps),
           "--warmup", "1"] + sizes + extra
    return benchlib.run_json(cmd, env)


def busy_fractions(r):
    """Each device's busy time over the span (devices that computed something)."""
    out = []
    span = r.get("span_s") or r["time_s"]
    for d in r["per_device"]:
        if d["packages"] > 0:
            out.append(d.get("busy_fraction", d["busy_s"] / span if span > 0 else 0.0))
    return out


def measure(args, workload, env):
    """--runs rounds of: the fast device alone, the three devices, the two emulated nodes."""
    auto = ["--schedule", "workPackages:size=auto,depth=2"]
    node_env = dict(env, HIT_NODES="1")
    rows = {"alone": [], "three": [], "ratio": [], "busy": [], "shares": [], "rsd": [],
            "moved": []}
    for _ in range(args.runs):
        alone = launch(args, workload, FAST, 1, auto, env)
        three = launch(args, workload, THREE, 3, auto, env)
        nodes = launch(args, workload, TWO_NODES, 2, auto, node_env)
        ideal = alone["time_s"] / (sum(SPEEDS) / SPEEDS[-1])
        rows["alone"].append(alone["time_s"])
        rows["three"].append(three["time_s"])
        rows["ratio"].append(three["time_s"] / ideal)
        rows["busy"].append(min(busy_fractions(three)))
        rows["shares"].append([d["rows"] for d in three["per_device"]])
        rows["moved"].append(sum(d["bytes_fetched"] + d["bytes_returned"] + d["h2d_bytes"] +
                                 d["d2h_bytes"] for d in three["per_device"]))
        rows["rsd"].append(nodes.get("nodes_rsd_percent", float("nan")))
    return rows


def sizes_vs_auto(args, workload, env):
    """size=auto and three fixed sizes on the three devices (one run each)."""
    n = int((QUICK if args.quick else SIZES)[workload][1])
    out = {}
    for label, size in (("auto", "auto"), ("n/64", max(1, n // 64)), ("n/16", max(1, n // 16)),
                        ("n/4", max(1, n // 4))):
        r = launch(args, workload, THREE, 3, ["--schedule", f"workPackages:size={size},depth=2"], env)
        out[label] = r["time_s"]
    return out


def fmt(values, digits=3):
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def markdown(results):
    lines = [
        "### clusterCL's applications on unequal devices (hit-packages --workload NAME)", "",
        f"Measured at commit {results['commit']} on {results['machine']}; load average "
        f"{results['load']:.2f} before the runs. Devices `{THREE}` (speeds 1 : 3.8 : 14), one "
        "process each, `workPackages:size=auto,depth=2`; the fast device alone in the same round. "
        f"{results['runs']} rounds, each launch {results['reps']} timed repetitions after a "
        "warm-up; median (min–max). Ratio: the makespan over the ideal T_fast / (1 + 1/3.8 + "
        "1/14) (goal <= 1.10 on the compute-bound ones). Least busy: the least busy device that "
        "computed packages, busy time over the span (goal >= 98 %). Nodes %rsd: two emulated "
        f"nodes (`HIT_NODES=1`, devices `{TWO_NODES}`), the relative standard deviation of their "
        "processing times (goal <= 3 %). Moved: bytes fetched and returned between processes "
        "and copied to and from the devices, over all devices, one repetition. Command: "
        "`python3 bench/packages/clustercl_bench.py --update-docs`.", "",
        "| application | class | fast alone (s) | three devices (s) | ratio to ideal | least busy "
        "| rows per device (slow, mid, fast) | nodes %rsd | moved (MB) | goal |",
        "|---|---|---|---|---|---|---|---|---|---|"]
    met = []
    for w in COMPUTE_BOUND + DATA_BOUND:
        r = results["workloads"][w]
        ratio = statistics.median(r["ratio"])
        busy = statistics.median(r["busy"])
        rsd = statistics.median(r["rsd"])
        compute = w in COMPUTE_BOUND
        ok = ratio <= 1.10 and busy >= 0.98 and rsd <= 3.0 if compute else None
        if compute:
            met.append(ok)
        shares = " / ".join(str(v) for v in r["shares"][-1])
        lines.append(
            f"| {w} | {'compute' if compute else 'data'} | {fmt(r['alone'])} | {fmt(r['three'])} | "
            f"{fmt(r['ratio'], 2)} | {100 * busy:.0f} % | {shares} | {rsd:.1f} | "
            f"{statistics.median(r['moved']) / 1e6:.1f} | "
            f"{'met' if ok else 'missed' if compute else '—'} |")
    lines += ["", f"Compute-bound goals met by {sum(1 for m in met if m)} of {len(met)}.", "",
              "Package size (three devices, one run each): makespan in seconds with size=auto and "
              "fixed sizes of n/64, n/16 and n/4 rows.", "",
              "| application | auto | n/64 | n/16 | n/4 | auto over the best fixed |",
              "|---|---|---|---|---|---|"]
    for w in COMPUTE_BOUND + DATA_BOUND:
        s = results["sizes"][w]
        best = min(s["n/64"], s["n/16"], s["n/4"])
        lines.append(f"| {w} | {s['auto']:.3f} | {s['n/64']:.3f} | {s['n/16']:.3f} | "
                     f"{s['n/4']:.3f} | {s['auto'] / best:.2f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="small sizes, one round (a smoke run)")
    ap.add_argument("--update-docs", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--from-json", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.runs = 1
    args.json_out = benchlib.results_path(args, "clustercl")
    if benchlib.redraw_from_json(args, "clustercl", markdown):
        return
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    results = {"commit": benchlib.commit_text(), "machine": benchlib.machine_text(details=True),
               "load": os.getloadavg()[0], "runs": args.runs, "reps": args.reps,
               "workloads": {}, "sizes": {}}
    for w in COMPUTE_BOUND + DATA_BOUND:
        results["workloads"][w] = measure(args, w, env)
        results["sizes"][w] = sizes_vs_auto(args, w, env)
        r = results["workloads"][w]
        print(f"{w}: ratio {fmt(r['ratio'], 2)}, least busy {fmt(r['busy'], 2)}, "
              f"nodes %rsd {fmt(r['rsd'], 1)}", flush=True)
    benchlib.write_json(args.json_out, results)
    if args.update_docs and not args.quick:
        benchlib.replace_section(args.out, "clustercl", markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
