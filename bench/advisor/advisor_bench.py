#!/usr/bin/env python3
"""The layout advisor (`hit-layout --advise`) against measured runs.

Does the layout it ranks first run (nearly) fastest, and does its ranking follow the measured one?

Four processes on emulated devices, `--host-cores 2` (the advisor is told the 4 ranks share the
machine's two cores), OPENBLAS_NUM_THREADS=1, HIT_WAIT=auto. Scenarios (--scenarios, default all):

* homogeneous: `cpu*4`;
* speeds: relative speeds 14 : 3.8 : 1 (`emu:0(slowdown=14,clock=cpu),emu:1(slowdown=3.684,clock=cpu),cpu*2`);
* cliff: a memory cliff (`emu:0(slowdown=1;6@8MiB,clock=cpu),cpu*3`: as fast as the host below 8 MiB staged
  per launch, 6x slower above), at sizes where an even share crosses the cliff and a smaller one
  does not;
* nodes: two emulated nodes of two ranks (HIT_NODES=2 for the runs; `--nodes 2 --network FILE`
  for the advisor, the network model measured once at the start by `hit-fpm network --nodes 2`),
  each node a host core and an emulated device 4x slower;
* shared: one emulated device shared by three ranks (`emu:0(slowdown=2,clock=cpu)*3,cpu`);
* sparse: hit-cg on `poisson2d:n=K` on the devices of `speeds`.

The dense scenarios run hit-jacobi, hit-cannon and hit-summa (--apps; `--apps
jacobi,cannon,summa,cholesky` adds hit-cholesky, n = 2048, about 10 minutes more). For each
scenario and application:

1. the advisor without calibration (`hit-layout --advise ... --json`): its ranking;
2. the default layout (`blocks` on the program's default topology; `rows` for hit-cg), or with
   --calibrate-from first the uncalibrated ranking's first choice, run --calibration-runs times
   (default 3) with the advisor's own command line (+ `--json --reps R --warmup W`), the results
   saved;
3. the advisor again with `--calibrate` those results: the calibrated ranking, whose first entry is
   the advisor's choice (hit-cg iterates to its tolerance: both advisor calls get `--iters` the
   calibration run's iteration count, as the calibrated call would take from the result);
4. every calibrated candidate (and the uncalibrated first choice when calibration changed it) run
   for real with its command line, --rounds rounds, the order shuffled every round (fixed seed);
   each run's figure is the program's `time_s` (median of its --reps repetitions). A candidate
   whose run exits non-zero is listed as failed (a layout the advisor proposes and the program
   refuses) and left out of the statistics.

Figures: per candidate the median over rounds of time_s and its spread ((max-min)/median), the
prediction error predicted/measured - 1 (calibrated and uncalibrated); per scenario and
application the Spearman rank correlation (average ranks for ties) between predicted and
measured makespans, calibrated and uncalibrated, and the regret = measured time of the advisor's
first choice / best measured time (the fastest of everything run for that scenario and
application). Where the choice is not the best, the two then run again in pairs, back to
back, the order alternating, --playoff-rounds pairs (a close verdict, at least two fifths of the
pairs on each side of the goal, up to three times as many), and the regret the goal is judged on
is the median of the pairs' ratios: the smallest of many noisy medians reads lower than its
layout's typical time (the winner's curse), which would count noise as the advisor's error, and a
pair shares the machine's load of its moment. The selection rounds' ratio is
kept beside it. The uncalibrated ranking's weighted candidates carry other
weights than the calibrated ones (the weights come from the calibrated speeds): they are matched
to the measured ones by plug-in and topology (`w=` left out). Goals: regret <= 1.10 and
Spearman >= 0.8 (calibrated).

Writes bench/results/advisor.json (--quick: a temporary file) and, with --update-docs, the
"advisor" section of docs/benchmarks.md. The defaults take about 30 minutes on 2 cores (most of
it the 0.7-1 s start of each 4-rank launch: about 800 launches, playoffs included); --quick (tiny sizes, 1 round,
scenarios speeds and sparse) about 45 s.

    python3 bench/advisor/advisor_bench.py [--bin build/bin] [--scenarios a,b] [--apps a,b]
        [--rounds 5] [--playoff-rounds 5] [--reps 3] [--warmup 1] [--seed 1] [--quick]
        [--update-docs] [--from-json]
"""
import argparse
import datetime
import json
import math
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import (machine_text, redraw_from_json, replace_section, results_path, spearman,  # noqa: E402
                      spread, write_json)

SECTION = "advisor"
PROCS = 4
HOST_CORES = 2
REGRET_GOAL = 1.10
TIE_TOLERANCE = 0.02  # hit::advisor::tie_tolerance
SPEARMAN_GOAL = 0.8

SPEEDS = "emu:0(slowdown=14,clock=cpu),emu:1(slowdown=3.684,clock=cpu),cpu*2"
SCENARIOS = {
    "homogeneous": {"devices": "cpu*4", "what": "four host processes"},
    "speeds": {"devices": SPEEDS, "what": "relative speeds 14 : 3.8 : 1 : 1"},
    "cliff": {"devices": "emu:0(slowdown=1;6@8MiB,clock=cpu),cpu*3",
              "what": "rank 0 6x slower from 8 MiB staged per launch"},
    "nodes": {"devices": "cpu,emu:0(slowdown=4,clock=cpu),cpu,emu:1(slowdown=4,clock=cpu)", "nodes": 2,
              "what": "two emulated nodes, each a host process and a device 4x slower"},
    "shared": {"devices": "emu:0(slowdown=2,clock=cpu)*3,cpu", "what": "one device 2x slower shared by ranks 0-2"},
    "sparse": {"devices": SPEEDS, "what": "hit-cg, relative speeds 14 : 3.8 : 1 : 1"},
}
DENSE_APPS = ["jacobi", "cannon", "summa"]

# Problem sizes: n of the dense apps (jacobi: also its iterations; summa: its panel, 256 unless
# given), K of poisson2d:n=K. Chosen so that the default layout's run takes 0.1-0.5 s on a 2-core
# machine (hit-cg: about 0.6 s; at K = 128, 0.18 s, its runs spread 39 % against 17 % at 256, which
# left its five candidates inside each other's noise) and the whole benchmark about 25 minutes. cliff: rank 0's even share
# stages more than 8 MiB per launch (jacobi on 2x2: two 802x802 grids, 9.8 MiB; cannon on 2x2: A, B
# and C blocks of 640x640, 9.4 MiB; summa on 2x2 with 512-wide panels: a 704x704 block of C and
# two 704x512 panels, 9.3 MiB) and a small enough share stages less (jacobi: fewer than 327 of 1600
# rows on `array`; summa: fewer than 170 of 1408 rows). hit-jacobi on speeds and nodes: n = 1280
# (at 768 and 1024 its fastest layouts took 0.05 s, half a millisecond an iteration, where the
# scheduling of 4 ranks on 2 cores spread single runs by 40-130 %).
SIZES = {
    "homogeneous": {"jacobi": {"n": 1024, "iters": 100}, "cannon": {"n": 1536}, "summa": {"n": 1536}},
    "speeds": {"jacobi": {"n": 1280, "iters": 100}, "cannon": {"n": 1024}, "summa": {"n": 1024}},
    "cliff": {"jacobi": {"n": 1600, "iters": 60}, "cannon": {"n": 1280},
              "summa": {"n": 1408, "panel": 512}},
    "nodes": {"jacobi": {"n": 1280, "iters": 100}, "cannon": {"n": 1280}, "summa": {"n": 1280}},
    "shared": {"jacobi": {"n": 1024, "iters": 100}, "cannon": {"n": 1280}, "summa": {"n": 1280}},
    "sparse": {"cg": {"k": 256}},
}
QUICK_SIZES = {
    "homogeneous": {"jacobi": {"n": 256, "iters": 10}, "cannon": {"n": 256}, "summa": {"n": 256}},
    "speeds": {"jacobi": {"n": 256, "iters": 10}, "cannon": {"n": 256}, "summa": {"n": 256}},
    "cliff": {"jacobi": {"n": 1600, "iters": 5}, "cannon": {"n": 1280},
              "summa": {"n": 1408, "panel": 512}},
    "nodes": {"jacobi": {"n": 256, "iters": 10}, "cannon": {"n": 256}, "summa": {"n": 256}},
    "shared": {"jacobi": {"n": 256, "iters": 10}, "cannon": {"n": 256}, "summa": {"n": 256}},
    "sparse": {"cg": {"k": 32}},
}
QUICK_SCENARIOS = "speeds,sparse"
CHOLESKY = {"quick": {"n": 512}, "full": {"n": 2048}}  # --apps ...,cholesky: blocks about 0.5 s

# The topology each program runs on when given none (its default layout is `blocks`; hit-cg's
# `rows`).
DEFAULT_TOPOLOGY = {"jacobi": "mesh2d", "cannon": "square", "summa": "mesh2d", "cholesky": "mesh2d",
                    "cg": "array"}


# --- running --------------------------------------------------------------------------------

def clean_env():
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"
    # Waiting processes sleep: four ranks share two cores (docs/architecture.md, "Waiting").
    env["HIT_WAIT"] = "auto"
    for var in list(env):
        # Every run names what it uses: no layout, topology, devices or nodes from outside.
        if var.startswith(("HIT_LAYOUT", "HIT_PARTITION", "HIT_TOPOLOGY")) or var in (
                "HIT_DEVICES", "HIT_NODES", "HIT_PIN"):
            env.pop(var)
    return env


def argv_of(command, bindir, extra):
    """The advisor's command line as argv and the environment assignments in front of it:
    `mpiexec.mpich` the real one, `hit-X` the program of --bin, `extra` appended."""
    words = shlex.split(command)
    env = {}
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    out = []
    for i, w in enumerate(words):
        if i == 0 and w == "mpiexec.mpich":
            out.append(shutil.which("mpiexec.mpich") or w)
        elif re.fullmatch(r"hit-[a-z]+", w):
            out.append(os.path.join(bindir, w))
        else:
            out.append(w)
    return out + extra, env


def shown(argv, env_extra, bindir):
    """A command line to print: programs relative to the repository where they lie under it."""
    rel = os.path.relpath(bindir, ROOT)
    shown_bin = rel if not rel.startswith("..") else bindir
    words = [os.path.basename(w) if w.endswith("/mpiexec.mpich") else
             (os.path.join(shown_bin, os.path.basename(w)) if w.startswith(bindir + "/") else w)
             for w in argv]
    prefix = "".join(f"{k}={v} " for k, v in env_extra.items())
    return prefix + shlex.join(words)


def run_program(argv, env_extra, base_env, timeout):
    """One run: (result JSON, None) or (None, why it failed)."""
    env = dict(base_env)
    env.update(env_extra)
    try:
        out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"no result within {timeout} s"
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if out.returncode != 0 or not lines:
        why = (out.stderr.strip() or out.stdout.strip()).splitlines()
        # The first line that says something (MPICH's abort banners come after the program's).
        text = next((l for l in why if l.strip() and not l.startswith(("=", "Abort", "[")) ), "")
        return None, f"exit {out.returncode}: {text or (why[0] if why else 'no output')}"
    try:
        return json.loads(lines[-1]), None
    except json.JSONDecodeError as e:
        return None, f"no JSON result ({e})"


def saved_runs(argv, env_extra, base_env, timeout, count, path_of):
    """`count` runs of one command, each result saved to path_of(run): (their results, the
    files, None), or what they had when a run failed and why."""
    results, files = [], []
    for run in range(count):
        result, why = run_program(argv, env_extra, base_env, timeout)
        if result is None:
            return results, files, why
        results.append(result)
        files.append(path_of(run))
        with open(files[-1], "w") as f:
            json.dump(result, f)
    return results, files, None


def advise(bindir, app, problem, sc, iters, network, calibrate=None, panel=None):
    """hit-layout --advise's JSON, and its command line."""
    argv = [os.path.join(bindir, "hit-layout"), "--advise", "--app", app]
    argv += ["--generate", problem] if app == "cg" else ["--shape", problem]
    argv += ["--procs", str(PROCS), "--devices", sc["devices"], "--host-cores", str(HOST_CORES)]
    if iters:
        argv += ["--iters", str(iters)]
    if panel:
        argv += ["--panel", str(panel)]
    if sc.get("nodes"):
        argv += ["--nodes", str(sc["nodes"]), "--network", network]
    if calibrate:
        argv += ["--calibrate"] + calibrate.split(" ")
    argv.append("--json")
    out = subprocess.run(argv, capture_output=True, text=True, env=clean_env())
    if out.returncode != 0:
        raise SystemExit(f"the advisor failed ({out.returncode}): {shlex.join(argv)}\n{out.stderr}")
    return json.loads([l for l in out.stdout.splitlines() if l.startswith("{")][-1]), argv


def family(layout):
    """The layout plug-in of a spec ("dimBlocks:w=..." -> "dimBlocks")."""
    return layout.split(":", 1)[0]


def match_key(c):
    """A candidate without its weights: the same plug-in and parameters under other weights."""
    layout = re.sub(r"(^|[:,])w=[0-9.e+-]+(,[0-9.e+-]+)*", r"\1w=*", c["layout"])
    return (layout, c["topology"])


def default_candidate(advice, app):
    """The candidate of the program's default layout on its default topology: `blocks` (`rows`
    for cg), or the candidate the advisor folded it into (the same blocks under another name)."""
    want = ("rows" if app == "cg" else "blocks", DEFAULT_TOPOLOGY[app])
    for c in advice["candidates"]:
        if (c["layout"], c["topology"]) == want:
            return c
    for r in advice["rejected"]:
        if (r["layout"], r["topology"]) == want:
            m = re.match(r"the same (?:blocks|rows) as (.+)$", r["reason"])
            if m:
                for c in advice["candidates"]:
                    if c["layout"] == m.group(1) and c["topology"] == want[1]:
                        return c
            raise SystemExit(f"the advisor rejects the default layout {want}: {r['reason']}")
    raise SystemExit(f"the advisor does not list the default layout {want}")


# --- one scenario and application -----------------------------------------------------------

def chosen(c):
    """A choice of the advisor as the statistics record it."""
    return {"layout": c["layout"], "topology": c["topology"],
            "measured_s": c["measured"]["median"] if c["status"] == "ok" else None,
            "status": c["status"]}


def ties_first(cands):
    """Candidates the advisor ranks as tied with its first: makespans within TIE_TOLERANCE of the
    smallest (docs/advisor.md)."""
    times = [c["predicted_s"] for c in cands if c["in_calibrated"] and c["predicted_s"] is not None]
    return sum(1 for t in times if t <= min(times) * (1 + TIE_TOLERANCE)) if times else 0


def advisor_order(cands, predicted, rank):
    """The advisor's ranking of `cands` as numbers to correlate: its rank (makespans within 2 %
    ordered by total cost, as it prints them), or None where every predicted makespan is the
    same (nothing to correlate: its order is then arbitrary)."""
    if len({c[predicted] for c in cands}) < 2:
        return None
    return [c[rank] for c in cands]


def rank_correlation(cands, predicted, rank):
    order = advisor_order(cands, predicted, rank)
    return None if order is None else spearman(order, [c["measured"]["median"] for c in cands])


def restat(case):
    """The correlations of a case from its candidates: the advisor's ranking (the goal) and its
    raw predicted makespans."""
    cands = case["candidates"]
    ok = [c for c in cands if c["status"] == "ok"]
    ok_cal = [c for c in ok if c["in_calibrated"]]
    ok_uncal = [c for c in ok if c.get("predicted_uncal_s") is not None]
    st = case["stats"]
    st["spearman"] = rank_correlation(ok_cal, "predicted_s", "rank_predicted")
    st["spearman_uncal"] = rank_correlation(ok_uncal, "predicted_uncal_s", "rank_uncal")
    st["spearman_makespans"] = spearman([c["predicted_s"] for c in ok_cal],
                                        [c["measured"]["median"] for c in ok_cal])
    st["spearman_met"] = None if st["spearman"] is None else st["spearman"] >= SPEARMAN_GOAL


def measure_case(args, name, sc, app, size, network, tmpdir, base_env):
    if app == "cg":
        problem = f"poisson2d:n={size['k']}"
    else:
        problem = f"[0:{size['n']}][0:{size['n']}]"
    iters = size.get("iters")
    panel = size.get("panel", 256) if app == "summa" else None
    timed = ["--json", "--reps", str(args.reps), "--warmup", str(args.warmup)]
    t0 = time.monotonic()

    uncal, _ = advise(args.bin, app, problem, sc, iters, network, panel=panel)
    default = default_candidate(uncal, app)
    source = default
    if args.calibrate_from == "first":
        if app == "cg":
            # The first choice is the one for the iterations the solve takes: one run of the
            # default layout tells them.
            argv, env_extra = argv_of(default["command"], args.bin, timed)
            probe, why = run_program(argv, env_extra, base_env, args.timeout)
            if probe is None:
                raise SystemExit(f"{name}/{app}: the default layout failed: {why}")
            iters = probe["iterations"]
            uncal, _ = advise(args.bin, app, problem, sc, iters, network, panel=panel)
        source = uncal["candidates"][0]
    argv, env_extra = argv_of(source["command"], args.bin, timed)
    # The calibrating runs of the default layout: several, so that one slow run does not move
    # every prediction of the case (the advisor takes the medians over them).
    results, calib_files, why = saved_runs(
        argv, env_extra, base_env, args.timeout, args.calibration_runs,
        lambda run: os.path.join(tmpdir, f"{name}-{app}-{args.calibrate_from}-{run}.json"))
    if why is not None:
        raise SystemExit(f"{name}/{app}: the calibrating layout failed: {why}\n"
                         f"{shlex.join(argv)}")
    first = results[0]
    calib_file = " ".join(calib_files)
    if app == "cg" and args.calibrate_from == "default":
        # hit-cg iterates to its tolerance: the advisor is told how many iterations that takes
        # (the calibration run's count), which it cannot know beforehand.
        iters = first["iterations"]
        uncal, _ = advise(args.bin, app, problem, sc, iters, network, panel=panel)
    cal, cal_argv = advise(args.bin, app, problem, sc, iters, network, calibrate=calib_file,
                          panel=panel)
    # Learning from its choice (docs/advisor.md, "Learning from runs"): runs of the calibrated
    # first choice are given as well, so that the factors hold near the shares it chose.
    refined, refined_argv, refine_files, refine_failure = None, None, [], None
    if args.refine_runs > 0:
        fargv, fenv = argv_of(cal["candidates"][0]["command"], args.bin, timed)
        _, refine_files, refine_failure = saved_runs(
            fargv, fenv, base_env, args.timeout, args.refine_runs,
            lambda run: os.path.join(tmpdir, f"{name}-{app}-choice-{run}.json"))
        if refine_failure is None:
            refined, refined_argv = advise(args.bin, app, problem, sc, iters, network,
                                           calibrate=" ".join(calib_files + refine_files),
                                           panel=panel)
    uncal_argv = [w for w in cal_argv]
    i = uncal_argv.index("--calibrate")
    del uncal_argv[i:i + 1 + len(calib_files)]

    cands = []
    for rank, c in enumerate(cal["candidates"], 1):
        cands.append({"layout": c["layout"], "topology": c["topology"], "command": c["command"],
                      "predicted_s": c["predicted_s"], "compute_s": c["compute_s"],
                      "comm_s": c["comm_s"], "imbalance": c["imbalance"], "fits": c["fits"],
                      "max_bytes": c["max_bytes"], "rank_predicted": rank, "in_calibrated": True})
    by_key = {}
    for c in cands:
        by_key.setdefault(match_key(c), c)
    for rank, u in enumerate(uncal["candidates"], 1):
        c = by_key.get(match_key(u))
        if c is not None and "predicted_uncal_s" not in c:
            c.update({"predicted_uncal_s": u["predicted_s"], "rank_uncal": rank,
                      "uncal_layout": u["layout"]})
    # The uncalibrated first choice, measured too when calibration changed it (other weights).
    u0 = uncal["candidates"][0]
    if not any(c["layout"] == u0["layout"] and c["topology"] == u0["topology"] for c in cands):
        cands.append({"layout": u0["layout"], "topology": u0["topology"], "command": u0["command"],
                      "predicted_s": None, "predicted_uncal_s": u0["predicted_s"], "rank_uncal": 1,
                      "uncal_layout": u0["layout"], "fits": u0["fits"], "max_bytes": u0["max_bytes"],
                      "in_calibrated": False})
        # Its prediction belongs to it, not to the calibrated candidate matched by plug-in.
        for c in cands[:-1]:
            if c.get("rank_uncal") == 1:
                for k in ("predicted_uncal_s", "rank_uncal", "uncal_layout"):
                    c.pop(k)
    uncal_choice = next(c for c in cands if c["layout"] == u0["layout"] and
                        c["topology"] == u0["topology"])
    refined_choice = None
    if refined is not None:
        r0 = refined["candidates"][0]
        refined_choice = next((c for c in cands if c["layout"] == r0["layout"] and
                               c["topology"] == r0["topology"]), None)
        if refined_choice is None:
            refined_choice = {"layout": r0["layout"], "topology": r0["topology"],
                              "command": r0["command"], "predicted_s": None, "fits": r0["fits"],
                              "max_bytes": r0["max_bytes"], "in_calibrated": False}
            cands.append(refined_choice)
        refined_choice["predicted_refined_s"] = r0["predicted_s"]

    rng = random.Random(f"{args.seed}/{name}/{app}")
    times = [[] for _ in cands]
    failure = [None] * len(cands)
    argvs = [argv_of(c["command"], args.bin, timed) for c in cands]
    for _ in range(args.rounds):
        order = list(range(len(cands)))
        rng.shuffle(order)
        for k in order:
            if failure[k] is not None:
                continue
            result, why = run_program(argvs[k][0], argvs[k][1], base_env, args.timeout)
            if result is None:
                failure[k] = why
                print(f"  {name}/{app}: {cands[k]['layout']} on {cands[k]['topology']} failed: {why}",
                      flush=True)
            else:
                times[k].append(result["time_s"])
    for k, c in enumerate(cands):
        c["shown_command"] = shown(*argvs[k], args.bin)
        if failure[k] is not None:
            c.update({"status": "failed", "failure": failure[k], "runs_before_failure": times[k]})
            continue
        s = spread(times[k])
        c.update({"status": "ok", "times_s": times[k], "measured": s,
                  "spread": (s["max"] - s["min"]) / s["median"]})
        if c.get("predicted_s") is not None:
            c["error"] = c["predicted_s"] / s["median"] - 1
        if c.get("predicted_uncal_s") is not None:
            c["error_uncal"] = c["predicted_uncal_s"] / s["median"] - 1

    ok = [c for c in cands if c["status"] == "ok"]
    ok_cal = [c for c in ok if c["in_calibrated"]]
    ok_uncal = [c for c in ok if c.get("predicted_uncal_s") is not None]
    best = min(ok, key=lambda c: c["measured"]["median"]) if ok else None
    choice = cands[0]

    def regret(c):
        if best is None or c["status"] != "ok":
            return None
        return c["measured"]["median"] / best["measured"]["median"]

    playoffs = {}

    def playoff(c):
        """The best measured is the smallest of many noisy medians: lower than its layout's
        typical time (the winner's curse), so the regret of a choice as fast as it reads above 1.
        The choice and the best run again in pairs, back to back, the order alternating,
        --playoff-rounds pairs; the regret is the median of the pairs' ratios (a pair shares the
        machine's load of the moment, which a ratio of two medians over minutes does not cancel).
        A close verdict (at least two fifths of the pairs on each side of the goal) gets
        --playoff-rounds more pairs, up to three times as many. None where there is nothing to
        settle."""
        if best is None or c is best or c["status"] != "ok" or args.playoff_rounds < 1:
            return None
        key = (c["layout"], c["topology"])
        if key in playoffs:
            return playoffs[key]
        kc, kb = cands.index(c), cands.index(best)
        got = {kc: [], kb: []}
        target, limit, r = args.playoff_rounds, 3 * args.playoff_rounds, 0
        while r < target:
            for k in ((kc, kb) if r % 2 == 0 else (kb, kc)):
                result, why = run_program(argvs[k][0], argvs[k][1], base_env, args.timeout)
                if result is None:
                    print(f"  {name}/{app}: playoff run of {cands[k]['layout']} failed: {why}",
                          flush=True)
                    playoffs[key] = None
                    return None
                got[k].append(result["time_s"])
            r += 1
            if r == target and target < limit:
                ratios = [a / b for a, b in zip(got[kc], got[kb])]
                above = sum(1 for q in ratios if q > REGRET_GOAL)
                if min(above, len(ratios) - above) * 5 >= 2 * len(ratios):
                    target += args.playoff_rounds
        ratios = [a / b for a, b in zip(got[kc], got[kb])]
        playoffs[key] = {"choice_s": got[kc], "best_s": got[kb], "ratios": ratios,
                         "regret": statistics.median(ratios),
                         "ratio_of_medians": spread(got[kc])["median"] / spread(got[kb])["median"]}
        return playoffs[key]

    def settled(c):
        """The regret the goal is judged on: the playoff's where there was one."""
        p = playoff(c)
        return p["regret"] if p is not None else regret(c)

    stats = {
        "candidates": len(cal["candidates"]), "run": len(ok_cal),
        "failed": sum(1 for c in cands if c["status"] == "failed"),
        "rejected": len(cal["rejected"]),
        "spearman": rank_correlation(ok_cal, "predicted_s", "rank_predicted"),
        "spearman_uncal": rank_correlation(ok_uncal, "predicted_uncal_s", "rank_uncal"),
        "spearman_makespans": spearman([c["predicted_s"] for c in ok_cal],
                                       [c["measured"]["median"] for c in ok_cal]),
        "choice": chosen(choice), "choice_uncal": chosen(uncal_choice),
        "best": {"layout": best["layout"], "topology": best["topology"],
                 "measured_s": best["measured"]["median"]} if best else None,
        "regret_selection": regret(choice), "regret_uncal_selection": regret(uncal_choice),
        "regret": settled(choice), "regret_uncal": settled(uncal_choice),
        "playoff": playoff(choice), "playoff_uncal": playoff(uncal_choice),
        "predicted_ties_first": ties_first(cands),
    }
    if refined_choice is not None:
        stats.update({
            "choice_refined": chosen(refined_choice),
            "regret_refined_selection": regret(refined_choice),
            "regret_refined": settled(refined_choice),
            "playoff_refined": playoff(refined_choice)})
    elif refine_failure is not None:
        stats["refine_failure"] = refine_failure
    stats["regret_calibrated_met"] = stats["regret"] is not None and stats["regret"] <= REGRET_GOAL
    judged = stats.get("regret_refined", stats["regret"]) if args.refine_runs > 0 else stats["regret"]
    stats["regret_met"] = judged is not None and judged <= REGRET_GOAL
    stats["spearman_met"] = (None if stats["spearman"] is None
                             else stats["spearman"] >= SPEARMAN_GOAL)
    elapsed = time.monotonic() - t0
    print(f"{name}/{app} ({problem}): {len(ok_cal)} run, {stats['failed']} failed; Spearman "
          f"{fmt_num(stats['spearman'])} (uncalibrated {fmt_num(stats['spearman_uncal'])}), regret "
          f"{fmt_num(stats['regret'])} (uncalibrated {fmt_num(stats['regret_uncal'])}, after "
          f"learning from its choice {fmt_num(stats.get('regret_refined'))}); choice "
          f"{choice['layout']} on {choice['topology']}, best {best['layout'] if best else '-'} on "
          f"{best['topology'] if best else '-'}; {elapsed:.0f} s", flush=True)
    return {"app": app, "problem": problem, "iters": iters,
            "panel": panel,
            "advise_command": shown(uncal_argv, {}, args.bin).replace(network or "\0", "net.txt"),
            "advise_calibrated_command": shown(cal_argv, {}, args.bin).replace(
                tmpdir + "/", "").replace(network or "\0", "net.txt"),
            # The calibrating runs' layout: the default one, or the uncalibrated first choice.
            "default": {"layout": source["layout"], "topology": source["topology"],
                        "command": shown(argv, env_extra, args.bin), "time_s": first["time_s"],
                        "compute_s": [r["compute_s"] for r in first["per_rank"]]},
            "calibration": cal["calibration"],
            "refine_runs": len(refine_files),
            "advise_refined_command": shown(refined_argv, {}, args.bin).replace(
                tmpdir + "/", "").replace(network or "\0", "net.txt") if refined_argv else None,
            "calibration_refined": refined["calibration"] if refined else None,
            "network": cal["network"].replace(network, "net.txt") if network else cal["network"],
            "uncalibrated_ranking": [{"layout": u["layout"], "topology": u["topology"],
                                      "predicted_s": u["predicted_s"]} for u in uncal["candidates"]],
            "rejected": cal["rejected"], "candidates": cands, "stats": stats,
            "elapsed_s": elapsed}


def measure_network(args, tmpdir, base_env):
    path = os.path.join(tmpdir, "net.txt")
    argv = ["mpiexec.mpich", "-n", str(PROCS), os.path.join(args.bin, "hit-fpm"), "network",
            "--nodes", "2", "--out", path, "--quiet"]
    out = subprocess.run(argv, capture_output=True, text=True, env=base_env)
    if out.returncode != 0:
        raise SystemExit(f"hit-fpm network failed: {shlex.join(argv)}\n{out.stderr}")
    return path, {"command": shown(argv, {}, args.bin).replace(path, "net.txt"),
                  "summary": "\n".join(l for l in out.stdout.strip().splitlines()
                                        if not l.startswith("wrote ")),
                  "model": open(path).read()}


# --- the table ------------------------------------------------------------------------------

def fmt_num(x, digits=2):
    return "–" if x is None else f"{x:.{digits}f}"


def regret_text(regret, choice, selection=None):
    if choice["status"] == "failed":
        return "failed"
    text = fmt_num(regret, 3)
    if selection is not None and regret is not None and abs(selection - regret) > 5e-4:
        text += f" [{fmt_num(selection, 3)}]"
    return text


def mark(ok):
    return "n/a" if ok is None else ("met" if ok else "**not met**")


def commit_of(path):
    """The commit the programs of `path` were built from: that of the repository holding them
    ("-dirty" with uncommitted changes), else this script's."""
    for where in (path, ROOT):
        try:
            sha = subprocess.run(["git", "-C", where, "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True, check=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", where, "status", "--porcelain",
                                    "--untracked-files=no"], capture_output=True, text=True,
                                   check=True).stdout.strip()
            return sha + ("-dirty" if dirty else "")
        except (OSError, subprocess.CalledProcessError):
            continue
    return "unknown"


def failure_reason(text):
    """A failure without its particulars: the program's message up to its first details."""
    text = re.sub(r"^exit -?\d+: ", "", text)
    text = re.sub(r"^hit-[a-z]+: error: ", "", text)
    return re.split(r": |; ", text, maxsplit=1)[0]


def layout_text(c):
    return f"`{c['layout']}` on {c['topology']}"


def markdown(r):
    lines = [
        f"### The layout advisor against measured runs ({PROCS} ranks, emulated devices)",
        "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']}. `hit-layout --advise "
        f"--procs {PROCS} --host-cores {HOST_CORES}` ranks every layout it finds applicable; each "
        f"candidate then runs for real with the command line the advisor prints (+ `--json --reps "
        f"{r['reps']} --warmup {r['warmup']}`), {r['rounds']} round{'s' if r['rounds'] != 1 else ''}, the order shuffled every round "
        f"(seed {r['seed']}); measured = median over the rounds of the program's `time_s`, spread "
        f"= (max − min) / median. Calibrated: the advisor given `--calibrate` the results of "
        f"{r.get('calibration_runs', 1)} run{'s' if r.get('calibration_runs', 1) != 1 else ''} "
        + ("of the uncalibrated ranking's first choice"
           if r.get("calibrate_from") == "first" else
           "of the program's default layout (`blocks` on its default topology; `rows` for hit-cg)")
        + ", "
        "the advisor's choice its first candidate"
        + (f"; after learning from its choice: the same call given as well the results of "
           f"{r['refine_runs']} runs of that choice (the workflow of docs/advisor.md: the factors "
           "then hold near the shares it chose), its first choice measured too when that changed "
           "it" if r.get("refine_runs") else "")
        + "; uncalibrated: the same call without it (its "
        "weighted candidates carry other weights than the measured ones and are matched to them "
        "by plug-in and topology; its first choice is measured too when calibration changed it). "
        "Spearman: rank correlation of the advisor's ranking (makespans within 2 % ordered by "
        "total cost, as it prints them) with the measured makespans, over the candidates that ran "
        "(– where every predicted makespan is the same). Regret: measured "
        "time of the advisor's choice / the best measured"
        + ((f", where they differ from a playoff: the two run again in pairs, back to back, the "
            f"order alternating, {r['playoff_rounds']} pairs (a close verdict, at least two fifths "
            f"of the pairs on each side of the goal, up to {3 * r['playoff_rounds']}), and the "
            "regret is the median of the pairs' ratios (the best of many noisy medians reads "
            "lower than its layout's typical time, and a pair shares the machine's load of its "
            "moment; the selection rounds' ratio is in brackets after it)")
           if r.get("playoff_pairs") else
           (f", where they differ from a playoff: the two run again alternately, {r['playoff_rounds']} "
            "times each, and the regret is the ratio of those runs' medians (the best of many noisy "
            "medians reads lower than its layout's typical time; the selection rounds' ratio is "
            "in brackets after it)") if r.get("playoff_rounds") else "")
        + ". Goals: regret ≤ 1.10"
        + (" (after learning from its choice)" if r.get("refine_runs") else "")
        + " and Spearman ≥ "
        f"0.8 (calibrated). OPENBLAS_NUM_THREADS=1, HIT_WAIT=auto (waiting processes sleep: docs/architecture.md).",
        "",
        "Scenarios: " + "; ".join(
            f"**{n}** `{s['devices']}`" + (f" (`HIT_NODES={s['nodes']}`)" if s.get("nodes") else "")
            + f", {s['what']}" for n, s in r["scenarios"].items()) + ".",
        "",
        "| scenario | app | problem | candidates run (failed) | Spearman calibrated | "
        "Spearman uncalibrated | regret (uncalibrated) | advisor's choice | "
        + ("regret after learning from its choice, its choice | " if r.get("refine_runs") else "")
        + "best measured | goals |",
        "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if r.get("refine_runs") else ""),
    ]
    for n, s in r["scenarios"].items():
        for case in s["cases"]:
            st = case["stats"]
            problem = case["problem"] + (f", {case['iters']} iterations" if case.get("iters")
                                         else "") + (f", panel {case['panel']}" if case.get("panel")
                                                     else "")
            ch, best = st["choice"], st["best"]
            choice = (f"`{ch['layout']}` on {ch['topology']}, "
                      + (f"{ch['measured_s']:.3f} s" if ch["measured_s"] is not None else "failed"))
            ties = ties_first(case["candidates"])
            if ties > 1:
                choice += f" (tied within 2 % with {ties - 1} more)"
            best_text = f"`{best['layout']}` on {best['topology']}, {best['measured_s']:.3f} s" if best else "–"
            goals = f"regret {mark(st['regret_met'])}, ρ {mark(st['spearman_met'])}"
            refined = ""
            if r.get("refine_runs"):
                rc = st.get("choice_refined")
                refined = ("– (" + st.get("refine_failure", "not run") + ") | " if rc is None else
                           f"{regret_text(st['regret_refined'], rc, st.get('regret_refined_selection'))}"
                           f", `{rc['layout']}` on {rc['topology']} | ")
            lines.append(
                f"| {n} | {case['app']} | {problem} | {st['run']} ({st['failed']}) | "
                f"{fmt_num(st['spearman'])} | {fmt_num(st['spearman_uncal'])} | "
                f"{regret_text(st['regret'], st['choice'], st.get('regret_selection'))} "
                f"({regret_text(st['regret_uncal'], st['choice_uncal'], st.get('regret_uncal_selection'))}) | {choice} | "
                f"{refined}{best_text} | {goals} |")
    all_cases = [(n, c) for n, s in r["scenarios"].items() for c in s["cases"]]
    met = sum(1 for _, c in all_cases if c["stats"]["regret_met"])
    rho_met = sum(1 for _, c in all_cases if c["stats"]["spearman_met"])
    rho_na = sum(1 for _, c in all_cases if c["stats"]["spearman_met"] is None)
    before = ""
    if r.get("refine_runs"):
        first = sum(1 for _, c in all_cases if c["stats"].get("regret_calibrated_met"))
        before = f" ({first} before learning from its choice)"
    lines += ["", f"Regret goal met in {met} of {len(all_cases)} cases{before}; Spearman goal in "
              f"{rho_met} of {len(all_cases) - rho_na} where it is defined.", ""]

    # Where the model is wrong: per plug-in, and the worst candidates.
    ok = [(n, case, c) for n, case in all_cases for c in case["candidates"]
          if c["status"] == "ok" and c.get("error") is not None]
    fams = {}
    for n, case, c in ok:
        fams.setdefault(family(c["layout"]), []).append(c["error"])
    lines += ["**Where the model is wrong.** Prediction error = calibrated prediction / measured − 1 "
              "per candidate, by layout plug-in over every scenario and application:", "",
              "| layout plug-in | candidates | median error | min | max |", "|---|---|---|---|---|"]
    for f, errs in sorted(fams.items(), key=lambda kv: -statistics.median(abs(e) for e in kv[1])):
        lines.append(f"| {f} | {len(errs)} | {statistics.median(errs):+.0%} | {min(errs):+.0%} | "
                     f"{max(errs):+.0%} |")
    worst = sorted(ok, key=lambda t: -abs(math.log(1 + t[2]["error"])))[:12]
    lines += ["", "The largest errors (factor off, either way):", "",
              "| scenario | app | layout | predicted s | measured s | spread | error | "
              "uncalibrated error |", "|---|---|---|---|---|---|---|---|"]
    for n, case, c in worst:
        lines.append(f"| {n} | {case['app']} | {layout_text(c)} | {c['predicted_s']:.3f} | "
                     f"{c['measured']['median']:.3f} | {c['spread']:.0%} | {c['error']:+.0%} | "
                     + (f"{c['error_uncal']:+.0%}" if c.get("error_uncal") is not None else "–")
                     + " |")
    failed = [(n, case, c) for n, case in all_cases for c in case["candidates"]
              if c["status"] == "failed"]
    if failed:
        groups = {}
        for n, case, c in failed:
            g = groups.setdefault((case["app"], failure_reason(c["failure"])),
                                  {"scenarios": [], "plugins": [], "count": 0, "chosen": [],
                                   "example": c["failure"]})
            g["count"] += 1
            for key, value in (("scenarios", n), ("plugins", family(c["layout"]))):
                if value not in g[key]:
                    g[key].append(value)
            if c is case["candidates"][0] and n not in g["chosen"]:
                g["chosen"].append(n)
        lines += ["", "Candidates the advisor proposed that the program refused (left out of the "
                  "statistics; every failed candidate in bench/results/advisor.json):", "",
                  "| app | why | candidates | layout plug-ins | scenarios | the advisor's choice in |",
                  "|---|---|---|---|---|---|"]
        for (app, why), g in groups.items():
            lines.append(f"| {app} | {why.replace('|', '/')} | {g['count']} | "
                         f"{', '.join(g['plugins'])} | {', '.join(g['scenarios'])} | "
                         f"{', '.join(g['chosen']) or '–'} |")
    spreads = [c["spread"] for _, case in all_cases for c in case["candidates"] if c["status"] == "ok"]
    if spreads:
        lines += ["", f"Spread of the measurements: median {statistics.median(spreads):.0%}, "
                  f"largest {max(spreads):.0%} over {len(spreads)} candidates."]
    if r.get("network"):
        lines += ["", f"Network model (`{r['network']['command']}`):", "", "```text",
                  r["network"]["summary"], "```"]
    ex = all_cases[0][1] if all_cases else None
    if ex:
        c0 = ex["candidates"][0]
        lines += ["", "Commands (one scenario and application; the others differ in their "
                  "options): the advisor `" + ex["advise_command"] + "`, calibrated `"
                  + ex["advise_calibrated_command"] + "`"
                  + (", after learning from its choice `" + ex["advise_refined_command"] + "`"
                     if ex.get("advise_refined_command") else "")
                  + "; a candidate `" + c0["shown_command"] + "`"]
        on_nodes = next((case for n, case in all_cases if r["scenarios"][n].get("nodes")), None)
        if on_nodes:
            lines[-1] += ("; on two emulated nodes `" + on_nodes["candidates"][0]["shown_command"]
                          + "`")
        lines[-1] += "."
    lines += ["", f"Everything: `{r['command']}` ({r['elapsed_s'] / 60:.1f} minutes)."]
    return "\n".join(lines)


# --- main -----------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                    help="the built programs (default: build/bin of this repository)")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS),
                    help=f"comma-separated, of {', '.join(SCENARIOS)} (default all)")
    ap.add_argument("--apps", default=",".join(DENSE_APPS),
                    help="applications of the dense scenarios (jacobi, cannon, summa, cholesky)")
    ap.add_argument("--rounds", type=int, default=5, help="runs of every candidate, interleaved")
    ap.add_argument("--calibrate-from", choices=("default", "first"), default="default",
                    help="the layout of the calibrating runs: the program's default, or the "
                    "uncalibrated ranking's first choice")
    ap.add_argument("--calibration-runs", type=int, default=3,
                    help="runs of the default layout given to --calibrate")
    ap.add_argument("--refine-runs", type=int, default=3,
                    help="runs of the calibrated first choice given to --calibrate as well, the "
                         "advisor's choice after learning from them judged against the goal (0: none)")
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions per run (the program reports their median)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed repetitions per run")
    ap.add_argument("--seed", type=int, default=1, help="seed of the shuffled order")
    ap.add_argument("--playoff-rounds", type=int, default=5,
                    help="runs each of the advisor's choice and the best measured, alternating, "
                         "that the regret is taken from when they differ (0: none)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds a run may take")
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke run: tiny sizes, 1 round, scenarios {QUICK_SCENARIOS} unless "
                         "--scenarios, results to a temporary file")
    ap.add_argument("--update-docs", action="store_true",
                    help="write the advisor section of docs/benchmarks.md")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=None,
                    help="default bench/results/advisor.json (--quick: a temporary folder)")
    ap.add_argument("--from-json", action="store_true",
                    help="only write the section again from --json-out (with --update-docs)")
    argv = sys.argv[1:]
    args = ap.parse_args()
    if args.quick:
        if args.update_docs and not args.from_json:
            raise SystemExit("--quick is a smoke test: its figures do not go into the docs")
        if "--scenarios" not in " ".join(argv):
            args.scenarios = QUICK_SCENARIOS
        args.rounds = 1
    args.json_out = results_path(args, "advisor")
    def restated(results):
        # Saved results count the correlations as this script does now.
        for sc in results["scenarios"].values():
            for case in sc["cases"]:
                restat(case)
        return markdown(results)

    if redraw_from_json(args, SECTION, restated):
        return
    args.bin = os.path.abspath(args.bin)
    for p in ["hit-layout", "hit-fpm", "hit-cg"] + [f"hit-{a}" for a in args.apps.split(",")]:
        if not os.access(os.path.join(args.bin, p), os.X_OK):
            raise SystemExit(f"{os.path.join(args.bin, p)} was not built (--bin)")
    names = args.scenarios.split(",")
    for n in names:
        if n not in SCENARIOS:
            raise SystemExit(f"--scenarios: unknown '{n}' (known: {', '.join(SCENARIOS)})")
    apps = args.apps.split(",")
    for a in apps:
        if a not in DENSE_APPS + ["cholesky"]:
            raise SystemExit(f"--apps: unknown '{a}' (jacobi, cannon, summa, cholesky)")
    sizes = QUICK_SIZES if args.quick else SIZES
    base_env = clean_env()
    started = time.monotonic()
    shown_cmd = "python3 bench/advisor/advisor_bench.py" + "".join(
        " " + shlex.quote(a) for a in argv if a not in ("--update-docs",))
    shown_cmd = shown_cmd.replace(args.bin, os.path.relpath(args.bin, ROOT)
                                  if not os.path.relpath(args.bin, ROOT).startswith("..") else args.bin)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_of(args.bin), "machine": machine_text(details=True),
               "load_average": os.getloadavg()[0], "command": shown_cmd + " --update-docs"
               if args.update_docs else shown_cmd,
               "procs": PROCS, "host_cores": HOST_CORES, "rounds": args.rounds,
               "playoff_rounds": args.playoff_rounds, "playoff_pairs": True, "reps": args.reps,
               "calibration_runs": args.calibration_runs, "calibrate_from": args.calibrate_from,
               "refine_runs": args.refine_runs,
               "warmup": args.warmup, "seed": args.seed, "quick": args.quick,
               "goals": {"regret": REGRET_GOAL, "spearman": SPEARMAN_GOAL}, "scenarios": {}}
    with tempfile.TemporaryDirectory(prefix="advisor-bench-") as tmpdir:
        network = None
        if any(SCENARIOS[n].get("nodes") for n in names):
            network, results["network"] = measure_network(args, tmpdir, base_env)
            print(results["network"]["summary"], flush=True)
        for n in names:
            sc = SCENARIOS[n]
            case_apps = ["cg"] if n == "sparse" else apps
            cases = []
            for app in case_apps:
                if app == "cholesky":
                    size = CHOLESKY["quick" if args.quick else "full"]
                else:
                    size = sizes[n][app]
                cases.append(measure_case(args, n, sc, app, size, network, tmpdir, base_env))
            results["scenarios"][n] = dict(sc, cases=cases)
            # Written after every scenario: a long run stopped half-way keeps what it measured.
            results["elapsed_s"] = time.monotonic() - started
            write_json(args.json_out, results)
    results["elapsed_s"] = time.monotonic() - started
    write_json(args.json_out, results)
    if args.update_docs:
        replace_section(args.out, SECTION, markdown(results))
    print(f"wrote {args.json_out}" + (f" and the {SECTION} section of {args.out}"
                                      if args.update_docs else "")
          + f" ({results['elapsed_s']:.0f} s)")


if __name__ == "__main__":
    main()
