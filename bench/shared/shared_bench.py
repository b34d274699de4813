#!/usr/bin/env python3
"""Several ranks on one emulated device: what time-sharing costs against residency.

hit-cannon (n = 2048) and hit-jacobi (n = 4096) on 1, 2 and 4 ranks bound to one emulated device
`emu:0(clock=cpu,bw=BW)` (Cannon on square counts only: 1 and 4 ranks), OPENBLAS_NUM_THREADS=1:

* (a) memory for everyone (no `mem=`): every rank keeps its tiles resident;
* (b) memory for one rank's data and 10 % more (`mem=`): the ranks take turns, giving up idle
  copies for the rank that launches (docs/devices.md, "Several ranks on one device").

Each configuration runs --runs times (configurations interleaved); figures are the median over runs
of the program's `time_s` with min–max, and the per-run sums over ranks of `h2d_bytes`,
`d2h_bytes`, `evictions` and `evicted_bytes` (the same every run). With --baseline DIR (the build
directory of an earlier commit), (a) also runs that build, alternated with this one in each run, and
the ratio this/baseline per run says what the policy costs where everything fits.

Writes bench/results/shared.json and, with --update-docs, the "shared" section of
docs/benchmarks.md.

    python3 bench/shared/shared_bench.py [--runs 3] [--baseline /path/to/old/build] [--update-docs]
        [--cannon-n 2048] [--jacobi-n 4096] [--iters 10] [--bw 10GB/s] [--from-json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import ROOT, commit_text, machine_text, run_json, spread  # noqa: E402

DOUBLE = 8


def blocks(n, p):
    return [n // p + (1 if i < n % p else 0) for i in range(p)]


def padded(cols):
    return -(-cols // 8) * 8  # rows start 64 bytes apart on an emulated device


def one_rank_bytes(app, n, np_):
    """What one rank keeps on the device (the largest rank): Cannon's A, B, C blocks, Jacobi's two
    grids with their ghost ring (mesh2d: the most square grid, rows first)."""
    if app == "cannon":
        b = max(blocks(n, int(np_ ** 0.5)))
        return 3 * b * padded(b) * DOUBLE
    rows = max(d for d in range(1, int(np_ ** 0.5) + 1) if np_ % d == 0)
    r, c = np_ // rows, rows
    return 2 * (max(blocks(n, r)) + 2) * padded(max(blocks(n, c)) + 2) * DOUBLE


def command(bindir, app, args, np_, devices):
    program = os.path.join(bindir, "hit-cannon" if app == "cannon" else "hit-jacobi")
    base = ["mpiexec.mpich", "-n", str(np_), program, "--devices", devices, "--json", "--reps", "3",
            "--warmup", "1"]
    if app == "cannon":
        return base + ["--n", str(args.cannon_n)]
    return base + ["--n", str(args.jacobi_n), "--iters", str(args.iters)]


def totals(result):
    ranks = result["per_rank"]
    return {k: sum(r.get(k, 0) for r in ranks)
            for k in ("h2d_bytes", "d2h_bytes", "evictions", "evicted_bytes")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--baseline", help="build directory of an earlier commit, for (a)")
    ap.add_argument("--cannon-n", type=int, default=2048)
    ap.add_argument("--jacobi-n", type=int, default=4096)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--bw", default="10GB/s")
    ap.add_argument("--update-docs", action="store_true")
    ap.add_argument("--from-json", action="store_true",
                    help="print (and with --update-docs write) the table of bench/results/shared.json")
    args = ap.parse_args()
    if args.from_json:
        with open(os.path.join(ROOT, "bench", "results", "shared.json")) as f:
            text = table(json.load(f))
        print(text)
        if args.update_docs:
            update_docs(text)
        return
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    bindir = os.path.join(args.build, "bin")

    configs = []
    for app, counts in (("cannon", (1, 4)), ("jacobi", (1, 2, 4))):
        for np_ in counts:
            n = args.cannon_n if app == "cannon" else args.jacobi_n
            mem = int(one_rank_bytes(app, n, np_) * 1.1)
            base = f"clock=cpu,bw={args.bw}"
            configs.append({"app": app, "np": np_, "case": "a", "devices": f"emu:0({base})*{np_}"})
            configs.append({"app": app, "np": np_, "case": "b", "mem": mem,
                            "devices": f"emu:0({base},mem={mem}B)*{np_}"})
    results = {id(c): {"this": [], "baseline": [], "totals": None} for c in configs}
    for run in range(args.runs):
        for c in configs:
            r = results[id(c)]
            this = lambda: run_json(command(bindir, c["app"], args, c["np"], c["devices"]), env)
            if c["case"] == "a" and args.baseline:
                old_bin = os.path.join(args.baseline, "bin")
                old = lambda: run_json(command(old_bin, c["app"], args, c["np"], c["devices"]), env)
                first, second = (this, old) if run % 2 == 0 else (old, this)
                x, y = first(), second()
                mine, theirs = (x, y) if run % 2 == 0 else (y, x)
                r["baseline"].append(theirs["time_s"])
            else:
                mine = this()
            r["this"].append(mine["time_s"])
            r["totals"] = totals(mine)
            print(f"run {run + 1}/{args.runs} {c['app']} np={c['np']} ({c['case']}): "
                  f"{mine['time_s']:.3f} s, evictions {r['totals']['evictions']}", flush=True)

    rows = []
    for c in configs:
        r = results[id(c)]
        row = {k: c[k] for k in ("app", "np", "case", "devices")}
        row["time_s"] = spread(r["this"])
        row.update(r["totals"])
        if r["baseline"]:
            row["baseline_time_s"] = spread(r["baseline"])
            row["ratio_to_baseline"] = spread([t / b for t, b in zip(r["this"], r["baseline"])])
        rows.append(row)
    out = {"commit": commit_text(), "machine": machine_text(details=True), "runs": args.runs,
           "bw": args.bw, "cannon_n": args.cannon_n, "jacobi_n": args.jacobi_n, "iters": args.iters,
           "baseline": args.baseline, "rows": rows}
    path = os.path.join(ROOT, "bench", "results", "shared.json")
    with open(path + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
    os.replace(path + ".tmp", path)
    text = table(out)
    print(text)
    if args.update_docs:
        update_docs(text)


def mib(b):
    return f"{b / 2 ** 20:.0f}"


def table(out):
    lines = [f"Measured at commit {out['commit']} on {out['machine']}; `python3 bench/shared/shared_bench.py"
             f" --runs {out['runs']}`{' with --baseline (the build of the commit before)' if out['baseline'] else ''}."
             f" Cannon n = {out['cannon_n']}, Jacobi n = {out['jacobi_n']} ({out['iters']} iterations),"
             f" one emulated device `emu:0(clock=cpu,bw={out['bw']})`: (a) memory for everyone,"
             f" (b) memory for one rank's data and 10 % more. Time: median of runs [min–max] of"
             f" the program's median of 3 repetitions; bytes and evictions: summed over ranks,"
             f" 3 repetitions.", "",
             "| program | ranks | memory | time (s) | vs before | h2d (MiB) | d2h (MiB) | evictions | evicted (MiB) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in out["rows"]:
        t = r["time_s"]
        ratio = r.get("ratio_to_baseline")
        vs = f"{ratio['median']:.2f} [{ratio['min']:.2f}–{ratio['max']:.2f}]" if ratio else "–"
        memory = "everyone" if r["case"] == "a" else "one rank"
        lines.append(f"| {r['app']} | {r['np']} | {memory} | {t['median']:.3f} [{t['min']:.3f}–{t['max']:.3f}] "
                     f"| {vs} | {mib(r['h2d_bytes'])} | {mib(r['d2h_bytes'])} | {r['evictions']} "
                     f"| {mib(r['evicted_bytes'])} |")
    return "\n".join(lines)


def update_docs(text):
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    doc = open(path).read()
    begin, end = "<!-- BEGIN shared -->", "<!-- END shared -->"
    section = f"{begin}\n{text}\n{end}"
    if begin in doc:
        doc = doc[:doc.index(begin)] + section + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip("\n") + "\n\n## Several ranks on one device\n\n" + section + "\n"
    with open(path + ".tmp", "w") as f:
        f.write(doc)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
