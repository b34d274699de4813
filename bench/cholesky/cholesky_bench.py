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

With --starpu, instead: hit-cholesky (--type float) against StarPU 1.3's tiled single-precision
Cholesky (Debian's starpu-examples: cholesky_implicit, one process with 1 and 2 CPU workers,
scheduled by StarPU's default scheduler and by dmda, whose performance models are calibrated first
in untimed runs; and StarPU-MPI's mpi_cholesky on Open MPI, one worker per process), at n = 4096
and 8192 with 256×256 tiles, hit-cholesky on as many processes as StarPU has workers; writes the
"cholesky-starpu" section of docs/benchmarks.md and bench/results/cholesky_starpu.json.

    python3 bench/cholesky/cholesky_bench.py [--build build] [--n 4096] [--nb 256] [--runs 5] [--hetero]
    python3 bench/cholesky/cholesky_bench.py --starpu [--starpu-n 4096,8192] [--starpu-workers 1,2] [--runs 5]
"""
import argparse
import datetime
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import commit_text, machine_text, replace_section, run_json, spread, write_json  # noqa: E402


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
    ap.add_argument("--json-out", default=None,
                    help="default bench/results/cholesky.json (with --starpu: cholesky_starpu.json)")
    ap.add_argument("--starpu", action="store_true",
                    help="measure against StarPU's Cholesky instead of PDPOTRF")
    ap.add_argument("--starpu-n", default="4096,8192")
    ap.add_argument("--starpu-workers", default="1,2",
                    help="StarPU CPU workers = hit-cholesky processes (and StarPU-MPI processes)")
    # StarPU 1.3's default scheduler (STARPU_SCHED unset) is lws; dmda places each task by its
    # calibrated performance model.
    ap.add_argument("--starpu-scheds", default="default,dmda")
    ap.add_argument("--starpu-calibration", type=int, default=2,
                    help="untimed runs with STARPU_CALIBRATE=1 before a model-based scheduler's runs")
    # StarPU's examples factorise once per launch; so does hit-cholesky here by default.
    ap.add_argument("--starpu-hit-warmup", type=int, default=0)
    ap.add_argument("--starpu-mpi", choices=("auto", "yes", "no"), default="auto",
                    help="also StarPU-MPI's mpi_cholesky (auto: when it and Open MPI are installed)")
    ap.add_argument("--starpu-dir", default=None,
                    help="StarPU's installed examples (default /usr/lib/<multiarch>/starpu)")
    args = ap.parse_args()
    binary = lambda name: os.path.join(args.build, "bin", name)
    if args.starpu:
        starpu_main(args, binary)
        return
    if args.json_out is None:
        args.json_out = os.path.join(ROOT, "bench", "results", "cholesky.json")
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
        # The same factorisation on the task runtime (--runtime: the tiles' tasks over the same
        # processes, the tiles another process reads sent as messages): a third command in the
        # alternation, its order reversed every other run.
        # One worker per process, as PDPOTRF has one OpenBLAS thread per rank.
        commands = {"hit": hit_cmd, "runtime": hit_cmd + ["--runtime", "--devices", "cpu(cores=1)"],
                    "ref": ref_cmd}
        times = {k: [] for k in commands}
        for i in range(args.runs):
            for k in (list(commands) if i % 2 == 0 else list(reversed(commands))):
                times[k].append(run_json(commands[k], env)["time_s"])
        hit, runtime, ref = times["hit"], times["runtime"], times["ref"]
        case = {"grid": [rows, cols], "procs": procs, "hit_s": spread(hit), "pdpotrf_s": spread(ref),
                "throughput_ratio": spread([r / h for h, r in zip(hit, ref)]),
                "hit_gflops": args.n ** 3 / 3 / statistics.median(hit) * 1e-9,
                "pdpotrf_gflops": args.n ** 3 / 3 / statistics.median(ref) * 1e-9,
                "runtime_s": spread(runtime),
                "runtime_ratio": spread([r / t for t, r in zip(runtime, ref)]),
                "runtime_over_program_order": spread([h / t for t, h in zip(runtime, hit)]),
                "runtime_gflops": args.n ** 3 / 3 / statistics.median(runtime) * 1e-9}
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
    # Each layout in program order and as tasks of the runtime (whose tasks are runs of a
    # process's consecutive tiles: the thin host tiles of a tuned layout do not multiply them).
    modes = {"program order": [], "--runtime": ["--runtime"]}
    for b in (int(x) for x in args.hetero_b.split(",")):
        # --keep-b: the comparison is of host shares at one B (--hetero-B).
        tuned = run_json(launch + common + ["--layout", f"heteroBlockCyclic:B={args.hetero_B},b={b}",
                                            "--tune", "--keep-b", "--tune-n", str(args.hetero_n)],
                         env)
        layouts[f"heteroBlockCyclic b={b} (tuned)"] = tuned["layout"]
        tunings[str(b)] = tuned.get("tuning", [])
    out = {"n": args.hetero_n, "reps": args.hetero_reps, "devices": args.hetero_devices, "procs": procs,
           "tunings": tunings, "cases": []}
    # The references the balanced runs must beat: each kind of device of the list alone, one
    # process factorising the whole matrix (the goal: faster than the fastest of them).
    items = re.findall(r"[^,(]+(?:\([^)]*\))?", args.hetero_devices)
    alone = {}
    for item in items:
        label = "host alone" if item.split("(")[0] == "cpu" else "accelerator alone"
        alone.setdefault(label, item)
    cases = [(name, mode) for name in layouts for mode in modes] + [(a, "alone") for a in alone]
    times = {k: [] for k in cases}
    imb = {k: [] for k in cases}
    for i in range(args.runs):
        for case in cases if i % 2 == 0 else list(reversed(cases)):
            name, mode = case
            if mode == "alone":
                one = list(common)
                one[one.index("--devices") + 1] = alone[name]
                cmd = ["mpiexec.mpich", "-n", "1"] + one + ["--layout", layouts["blockCyclic"]]
            else:
                cmd = launch + common + ["--layout", layouts[name]] + modes[mode]
            r = run_json(cmd, env)
            times[case].append(r["time_s"])
            imb[case].append(r.get("imbalance", 1.0))
    for case in cases:
        name, mode = case
        if mode == "alone":
            out.setdefault("alone", []).append({"device": name, "spec": alone[name],
                                                "time_s": spread(times[case])})
            continue
        out["cases"].append({"layout": name, "mode": mode, "spec": layouts[name],
                             "time_s": spread(times[case]), "imbalance": spread(imb[case])})
        print(f"hetero {name} {mode}: {statistics.median(times[case]):.3f} s, imbalance "
              f"{statistics.median(imb[case]):.3f}", flush=True)
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
        "goal ≥ 1.0 at every count). One OpenBLAS thread per rank. `--runtime`: the same tiles as "
        "tasks of the task runtime on the same processes, one worker each (docs/runtime.md, "
        "\"Over processes\"), a "
        "third command in each run's alternation; its ratio is PDPOTRF's time over its own, and "
        "\"vs program order\" hit-cholesky's time over its own (above 1: the runtime faster).",
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
    if any("runtime_s" in c for c in r["cases"]):
        lines += ["", "| grid | procs | --runtime s | GFLOP/s | throughput ratio vs PDPOTRF "
                  "| vs program order | goal |", "|---|---|---|---|---|---|---|"]
        for c in r["cases"]:
            if "runtime_s" not in c:
                continue
            ratio = c["runtime_ratio"]["median"]
            lines.append(f"| {c['grid'][0]}x{c['grid'][1]} | {c['procs']} | {fmt(c['runtime_s'])} | "
                         f"{c['runtime_gflops']:.2f} | {fmt(c['runtime_ratio'])} | "
                         f"{fmt(c['runtime_over_program_order'])} | "
                         f"{'met' if ratio >= 1.0 else '**not met**'} |")
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
                  "| layout | spec | mode | time s | imbalance | goal |", "|---|---|---|---|---|---|"]
        for c in h["cases"]:
            lines.append(f"| {c['layout']} | `{c['spec']}` | {c.get('mode', 'program order')} | "
                         f"{fmt(c['time_s'])} | {fmt(c['imbalance'])} | "
                         f"{'met' if c['imbalance']['median'] < 1.05 else '**not met**'} |")
        if h.get("alone"):
            fastest = min(h["alone"], key=lambda a: a["time_s"]["median"])
            lines += ["", "Each kind of device alone (one process, the whole matrix, `blockCyclic`, in the "
                      "same rounds), and the balanced runs against the fastest of them (goal: faster, "
                      "ratio above 1):", "", "| device | devices | time s |", "|---|---|---|"]
            for a in h["alone"]:
                lines.append(f"| {a['device']} | `{a['spec']}` | {fmt(a['time_s'])} |")
            lines += ["", f"| layout | mode | {fastest['device']} s / time | goal |", "|---|---|---|---|"]
            for c in h["cases"]:
                ratio = fastest["time_s"]["median"] / c["time_s"]["median"]
                lines.append(f"| {c['layout']} | {c.get('mode', 'program order')} | {ratio:.3f} | "
                             f"{'met' if ratio > 1.0 else '**not met**'} |")
        for b, steps in h.get("tunings", {}).items():
            lines += ["", f"Tuning of B_h with b = {b} (hit-cholesky --tune --tune-n {h['n']}; each step's busy "
                      "times the medians of three factorisations after a warm-up):", "",
                      "| step | B_h | host busy s | accelerator busy s |", "|---|---|---|---|"]
            for i, st in enumerate(steps):
                lines.append(f"| {i} | {st['bh']} | {st['host_s']:.4f} | {st['device_s']:.4f} |")
    lines.append("")
    replace_section(path, "cholesky", "\n".join(lines))


# StarPU ----------------------------------------------------------------------------------------

# Where StarPU's examples come from: Debian's build of StarPU 1.3 (its MPI examples on Open MPI).
STARPU_PACKAGES = "libstarpu-dev starpu-examples"
STARPU_TIME = re.compile(r"^(\d+)\t(\d+)\t([0-9.]+)", re.M)  # cholesky_implicit: size, ms, GFlop/s
STARPU_MPI_TIME = re.compile(r"Computation time \(in ms\): ([0-9.]+)")


def starpu_dir(args):
    """The folder of StarPU's installed example programs (examples/, mpi/)."""
    if args.starpu_dir:
        return args.starpu_dir
    found = sorted(glob.glob("/usr/lib/*/starpu/examples/cholesky_implicit"))
    if not found:
        raise SystemExit("StarPU's Cholesky example (cholesky_implicit) is not installed: "
                         f"apt-get install --no-install-recommends {STARPU_PACKAGES}")
    return os.path.dirname(os.path.dirname(found[0]))


def package_version(name):
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", name], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else "?"


def needs_models(sched):
    """The schedulers that place tasks by their performance models (dm, dmda, dmdas, heft...)."""
    return sched.startswith("dm") or "heft" in sched


def starpu_env(base, home, workers, sched, calibrate=False, silent=True):
    """StarPU's settings for one run: `workers` CPU workers and no accelerators, the scheduler
    (STARPU_SCHED unset for "default"), its own STARPU_HOME (performance models and the bus's
    calibration), and the models calibrated (STARPU_CALIBRATE=1) or only used (0)."""
    env = {k: v for k, v in base.items() if not k.startswith("STARPU_")}
    env.update({"STARPU_HOME": home, "STARPU_NCPU": str(workers), "STARPU_NCUDA": "0",
                "STARPU_NOPENCL": "0", "STARPU_CALIBRATE": "1" if calibrate else "0"})
    if silent:
        env["STARPU_SILENT"] = "1"
    if sched != "default":
        env["STARPU_SCHED"] = sched
    return env


def run_text(cmd, env):
    """Runs a program; its stdout and stderr together. Ends the driver on failure."""
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=1200)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"command timed out: {' '.join(cmd)}")
    if out.returncode != 0:
        sys.stderr.write(f"command failed ({out.returncode}): {' '.join(cmd)}\n{out.stdout}{out.stderr}\n")
        raise SystemExit(1)
    return out.stdout + out.stderr


class StarPURun:
    """One StarPU contender: cholesky_implicit (one process, `workers` CPU workers) or, with
    `procs` > 1, StarPU-MPI's mpi_cholesky on `procs` Open MPI processes of one worker each."""

    def __init__(self, prog, n, nb, procs, workers, sched, home, base):
        self.prog, self.n, self.nb, self.procs, self.workers = prog, n, nb, procs, workers
        self.sched, self.home, self.base = sched, home, base
        self.mpi = procs > 1
        self.name = ("StarPU-MPI mpi_cholesky" if self.mpi else "StarPU cholesky_implicit")

    def command(self, env):
        args = [self.prog, "-size", str(self.n), "-nblocks", str(self.n // self.nb)]
        if not self.mpi:
            return args
        # Open MPI binds each rank to a core; STARPU_WORKERS_GETBIND makes StarPU bind the rank's
        # worker inside that core (without it StarPU 1.3 binds every rank's worker to core 0).
        bind = "core" if self.procs <= (os.cpu_count() or 1) else "none"
        cmd = ["mpirun.openmpi", "-n", str(self.procs), "--oversubscribe", "--bind-to", bind]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        for k in sorted(env):
            if k.startswith("STARPU_") or k == "OPENBLAS_NUM_THREADS":
                cmd += ["-x", k]
        return cmd + args

    def env(self, calibrate=False, silent=True):
        env = starpu_env(self.base, self.home, self.workers, self.sched, calibrate, silent)
        if self.mpi:
            env["STARPU_WORKERS_GETBIND"] = "1"
        return env

    def run(self, calibrate=False, silent=True):
        env = self.env(calibrate, silent)
        return run_text(self.command(env), env)

    def seconds(self):
        """One factorisation: the time StarPU's example prints (cholesky_implicit: from the first
        task's submission to starpu_task_wait_for_all; mpi_cholesky: between the barriers around
        submission and starpu_mpi_wait_for_all). Matrix generation and registration are outside."""
        text = self.run()
        if self.mpi:
            m = STARPU_MPI_TIME.findall(text)
            if not m:
                raise SystemExit(f"no time in mpi_cholesky's output:\n{text}")
            return float(m[-1]) / 1000
        m = STARPU_TIME.findall(text)
        if not m or int(m[-1][0]) != self.n:
            raise SystemExit(f"no time for n = {self.n} in cholesky_implicit's output:\n{text}")
        return float(m[-1][1]) / 1000

    def calibrate(self, runs):
        """Calibrates the performance models a model-based scheduler needs: `runs` untimed runs
        with STARPU_CALIBRATE=1, then more until a run (not silenced) no longer reports a model as
        not calibrated enough. Returns the number of calibration runs."""
        done = 0
        for _ in range(runs):
            self.run(calibrate=True)
            done += 1
        for _ in range(5):
            if "not calibrated" not in self.run(silent=False):
                return done
            self.run(calibrate=True)
            done += 1
        raise SystemExit(f"{self.name} ({self.sched}): StarPU still reports uncalibrated models "
                         f"after {done} calibration runs")


def alternated(runs, programs):
    """`runs` rounds over `programs` (name -> callable giving seconds), in order in even rounds
    and in reverse in odd ones, so the order favours none; name -> its list of seconds."""
    times = {name: [] for name in programs}
    for i in range(runs):
        for name in (list(programs) if i % 2 == 0 else list(reversed(programs))):
            times[name].append(programs[name]())
    return times


def starpu_main(args, binary):
    if not os.path.exists(binary("hit-cholesky")):
        raise SystemExit(f"hit-cholesky was not built: make -C {args.build} hit-cholesky")
    sdir = starpu_dir(args)
    implicit = os.path.join(sdir, "examples", "cholesky_implicit")
    mpi_prog = os.path.join(sdir, "mpi", "mpi_cholesky")
    if not os.path.exists(implicit):
        raise SystemExit(f"{implicit} is missing: apt-get install --no-install-recommends {STARPU_PACKAGES}")
    mpi_ok = os.path.exists(mpi_prog) and shutil.which("mpirun.openmpi") is not None
    if args.starpu_mpi == "yes" and not mpi_ok:
        raise SystemExit("StarPU-MPI's mpi_cholesky or Open MPI's mpirun.openmpi is missing: "
                         f"apt-get install --no-install-recommends {STARPU_PACKAGES} openmpi-bin")
    use_mpi = args.starpu_mpi == "yes" or (args.starpu_mpi == "auto" and mpi_ok)
    # StarPU keeps its performance models and the bus's calibration in STARPU_HOME: one under the
    # build folder, emptied first, so every measurement calibrates afresh and the same way.
    home = os.path.join(os.path.abspath(args.build), "starpu-home")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    base = {k: v for k, v in os.environ.items() if not k.startswith("STARPU_")}
    base["OPENBLAS_NUM_THREADS"] = "1"
    nb = args.nb
    ns = [int(x) for x in args.starpu_n.split(",")]
    counts = [int(x) for x in args.starpu_workers.split(",")]
    scheds = args.starpu_scheds.split(",")
    openmpi = None
    if mpi_ok:
        out = subprocess.run(["mpirun.openmpi", "--version"], capture_output=True, text=True).stdout
        version = re.search(r"\d+\.\d+(\.\d+)?", out)
        openmpi = "Open MPI " + (version.group(0) if version else "?")
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(), "machine": machine_text(details=True),
               "starpu": package_version("starpu-examples"),
               "openmpi": openmpi,
               "n": ns, "nb": nb, "workers": counts, "scheds": scheds, "runs": args.runs,
               "hit_warmup": args.starpu_hit_warmup, "calibration_runs": args.starpu_calibration,
               "mpi": use_mpi, "load_before": os.getloadavg()[0], "cases": []}
    for n in ns:
        if n % nb:
            raise SystemExit(f"n = {n} is not a multiple of the tile size {nb}")
        for p in counts:
            hit_cmd = ["mpiexec.mpich", "-n", str(p), binary("hit-cholesky"), "--n", str(n), "--b",
                       str(nb), "--type", "float", "--json", "--topology", f"mesh:dims=1x{p}",
                       "--reps", "1", "--warmup", str(args.starpu_hit_warmup)]
            contenders = [StarPURun(implicit, n, nb, 1, p, s, home, base) for s in scheds]
            if use_mpi and p > 1:
                contenders += [StarPURun(mpi_prog, n, nb, p, 1, s, home, base) for s in scheds]
            calibrations = {}
            for c in contenders:
                if needs_models(c.sched):
                    calibrations[f"{c.name} {c.sched}"] = c.calibrate(args.starpu_calibration)
                else:
                    c.run()  # the bus's calibration, on the first run in a fresh STARPU_HOME
            # The task runtime: one process, P workers (one per core), the same tiles.
            runtime_cmd = ["mpiexec.mpich", "-n", "1", binary("hit-cholesky"), "--n", str(n), "--b",
                           str(nb), "--type", "float", "--json", "--runtime", "--devices",
                           f"cpu(cores={p})", "--reps", "1", "--warmup", str(args.starpu_hit_warmup)]
            programs = {"hit": lambda cmd=hit_cmd: run_json(cmd, base)["time_s"],
                        "runtime": lambda cmd=runtime_cmd: run_json(cmd, base)["time_s"]}
            for i, c in enumerate(contenders):
                programs[i] = c.seconds
            times = alternated(args.runs, programs)
            hit = times["hit"]
            runtime = times["runtime"]
            flop = n ** 3 / 3
            case = {"n": n, "workers": p, "hit_s": spread(hit),
                    "hit_gflops": flop / statistics.median(hit) * 1e-9,
                    "runtime_s": spread(runtime),
                    "runtime_gflops": flop / statistics.median(runtime) * 1e-9,
                    "runtime_over_processes": spread([h / r for h, r in zip(hit, runtime)]),
                    "calibration_runs": calibrations, "starpu": []}
            for i, c in enumerate(contenders):
                t = times[i]
                case["starpu"].append({"program": os.path.basename(c.prog), "procs": c.procs,
                                       "workers": c.workers, "sched": c.sched, "time_s": spread(t),
                                       "gflops": flop / statistics.median(t) * 1e-9,
                                       "throughput_ratio": spread([r / h for h, r in zip(hit, t)])})
            best = min(range(len(contenders)), key=lambda i: statistics.median(times[i]))
            case["reference"] = best
            case["throughput_ratio"] = case["starpu"][best]["throughput_ratio"]
            case["runtime_throughput_ratio"] = spread([s / r for r, s in zip(runtime, times[best])])
            results["cases"].append(case)
            for c, r in zip(contenders, case["starpu"]):
                print(f"n={n} P={p} {c.name} {c.sched}: {r['time_s']['median']:.3f} s, hit-cholesky "
                      f"{case['hit_s']['median']:.3f} s, throughput ratio {r['throughput_ratio']['median']:.3f}",
                      flush=True)
    write_json(args.json_out or os.path.join(ROOT, "bench", "results", "cholesky_starpu.json"), results)
    write_starpu_markdown(results, args.out)


def starpu_label(s):
    prog = "mpi_cholesky" if s["procs"] > 1 else "cholesky_implicit"
    sched = "default (lws)" if s["sched"] == "default" else s["sched"]
    return f"{prog}, {sched}"


def write_starpu_markdown(r, path):
    options = []
    defaults = {"n": [4096, 8192], "workers": [1, 2], "scheds": ["default", "dmda"], "runs": 5,
                "nb": 256, "hit_warmup": 0, "calibration_runs": 2}
    flags = {"n": "--starpu-n", "workers": "--starpu-workers", "scheds": "--starpu-scheds",
             "runs": "--runs", "nb": "--nb", "hit_warmup": "--starpu-hit-warmup",
             "calibration_runs": "--starpu-calibration"}
    for key, flag in flags.items():
        if r[key] != defaults[key]:
            value = ",".join(str(v) for v in r[key]) if isinstance(r[key], list) else str(r[key])
            options.append(f"{flag} {value}")
    command = " ".join(["python3 bench/cholesky/cholesky_bench.py --starpu"] + options)
    mpi = (f"; at P > 1 also StarPU-MPI's `mpi_cholesky` on P processes of one worker each "
           f"({r['openmpi']}, `--bind-to core`, `STARPU_WORKERS_GETBIND=1`), its tiles dealt "
           "block-cyclically over them, with the same schedulers" if r["mpi"] else "")
    lines = [
        "## Tiled Cholesky against StarPU (single precision)",
        "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']}; StarPU {r['starpu']} "
        f"(Debian's starpu-examples); load average {r['load_before']:.2f} when it started. "
        f"n = {', '.join(str(n) for n in r['n'])}, {r['nb']}×{r['nb']} tiles for every program, single "
        f"precision: hit-cholesky `--type float --b {r['nb']}` on P MPICH processes (topology "
        f"`mesh:dims=1xP`) against StarPU's `cholesky_implicit -size n -nblocks n/{r['nb']}` with "
        f"P CPU workers (`STARPU_NCPU=P`, `STARPU_NCUDA=0`, `STARPU_NOPENCL=0`){mpi}. One OpenBLAS "
        "thread per process or worker. StarPU's schedulers: its default (lws, locality work stealing) "
        "and dmda (each task to the worker its calibrated performance models say finishes it first); "
        f"dmda's models are calibrated before the timed runs, in {r['calibration_runs']} untimed runs "
        "with `STARPU_CALIBRATE=1` and more until StarPU no longer reports a model as not calibrated "
        "(STARPU_HOME under the build folder, emptied first); the timed runs use them with "
        "`STARPU_CALIBRATE=0`.",
        "",
        "Each launch factorises once, as StarPU's examples do (hit-cholesky `--reps 1 --warmup "
        f"{r['hit_warmup']}`); {r['runs']} rounds per count, the programs' order reversed every other "
        "round; median [min-max]. Times: hit-cholesky's time_s (barrier to barrier around the "
        "factorisation, the input generated before), StarPU's own printed time (cholesky_implicit: "
        "from the first task's submission to `starpu_task_wait_for_all`, the matrix generated and "
        "registered before, printed in whole milliseconds; mpi_cholesky: between barriers around the submission and "
        "`starpu_mpi_wait_for_all`). Throughput ratio = StarPU time / hit-cholesky time, per round "
        "(above 1: hit-cholesky faster; goal ≥ 1.0 at every count); GFLOP/s = n³/3 / time. The "
        "reference at each count is the fastest StarPU program and scheduler there.",
        "",
        f"Command: `{command}`.",
        "",
        "| n | P | hit-cholesky s | reference | StarPU s | throughput ratio | hit-cholesky GFLOP/s | StarPU GFLOP/s | goal |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in r["cases"]:
        ref = c["starpu"][c["reference"]]
        ratio = c["throughput_ratio"]["median"]
        lines.append(f"| {c['n']} | {c['workers']} | {fmt(c['hit_s'])} | {starpu_label(ref)} | "
                     f"{fmt(ref['time_s'])} | {fmt(c['throughput_ratio'])} | {c['hit_gflops']:.2f} | "
                     f"{ref['gflops']:.2f} | {'met' if ratio >= 1.0 else '**not met**'} |")
    lines += ["", "Every StarPU program and scheduler measured:", "",
              "| n | P | StarPU | s | GFLOP/s | throughput ratio |", "|---|---|---|---|---|---|"]
    for c in r["cases"]:
        for s in c["starpu"]:
            lines.append(f"| {c['n']} | {c['workers']} | {starpu_label(s)} | {fmt(s['time_s'])} | "
                         f"{s['gflops']:.2f} | {fmt(s['throughput_ratio'])} |")
    lines += ["", "hit-cholesky `--runtime` (docs/runtime.md): the same tiles as tasks of the task runtime, "
              "one process with P workers (`--devices cpu(cores=P)`, one OpenBLAS thread each), "
              "in the same rounds. Throughput ratios per round: against the reference above, and "
              "against hit-cholesky on P processes (above 1: the runtime faster).", "",
              "| n | P | --runtime s | GFLOP/s | vs the StarPU reference | vs P processes |",
              "|---|---|---|---|---|---|"]
    for c in r["cases"]:
        if "runtime_s" not in c:
            continue
        lines.append(f"| {c['n']} | {c['workers']} | {fmt(c['runtime_s'])} | "
                     f"{c['runtime_gflops']:.2f} | {fmt(c['runtime_throughput_ratio'])} | "
                     f"{fmt(c['runtime_over_processes'])} |")
    lines.append("")
    replace_section(path, "cholesky-starpu", "\n".join(lines))


if __name__ == "__main__":
    main()
