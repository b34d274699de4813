#!/usr/bin/env python3
"""Dynamic load balancing of hit-jacobi on emulated devices of relative speeds 14 : 3.8 : 1 (three
ranks, N = 4096): static even rows, static CPM (rows in proportion to one measurement of the
speeds, taken by a short --balance cpm run), dynamic CPM and dynamic FPM (--balance cpm|fpm), and
the best static distribution in hindsight (the final rows of the dynamic FPM run, used from the
start). Then the same with the fastest device slowing down 4x mid-run (change=4@K): how many
iterations until the balance is back. Every configuration runs --runs times, interleaved; figures
are medians with min-max. Writes the "balance" section of docs/benchmarks.md,
bench/results/balance.json and docs/img/balance-trace.svg (per-iteration time and imbalance of the
dynamic runs).

    python3 bench/balance/balance_bench.py [--build build] [--n 4096] [--iters 60] [--runs 3]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import commit_text, machine_text, replace_section, run_json, spread, write_json  # noqa: E402

SLOWDOWNS = (1, 3.8, 14)


def devices(change_at=None):
    items = []
    for i, s in enumerate(SLOWDOWNS):
        extra = f",change=4@{change_at}" if change_at is not None and i == 0 else ""
        items.append(f"emu:{i}(slowdown={s},clock=cpu,cores=1{extra})")
    return ",".join(items)


def rows_layout(rows):
    return "dimBlocks:dim=0,w=" + ",".join(str(r) for r in rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--eps", type=float, default=0.05)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--json-out", default=os.path.join(ROOT, "bench", "results", "balance.json"))
    ap.add_argument("--svg", default=os.path.join(ROOT, "docs", "img", "balance-trace.svg"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "build", "bench-models"),
                    help="where the stored models of the jacobi kernel are written")
    ap.add_argument("--reuse-models", action="store_true",
                    help="use the models already in --models-dir instead of building them")
    ap.add_argument("--from-json", action="store_true",
                    help="only write the table and the picture again from --json-out")
    args = ap.parse_args()
    if args.from_json:
        results = json.load(open(args.json_out))
        write_svg(args.svg, results)
        replace_section(args.out, "balance", markdown(results))
        return
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = "1"
    jacobi = ["mpiexec.mpich", "-n", "3", os.path.join(args.build, "bin", "hit-jacobi"), "--n",
              str(args.n), "--topology", "array", "--json", "--reps", "1", "--warmup", "0"]
    balance = ["--balance-eps", str(args.eps)]

    def run(dev, extra, iters=args.iters):
        return run_json(jacobi + ["--iters", str(iters), "--devices", dev] + extra, env)

    # Stored models, built once as FuPerMod's users do (hit-fpm build, the grid resident as
    # hit-jacobi keeps it, on the steady devices: a slowdown mid-run is what no model foresees).
    models = os.path.join(args.models_dir, "jacobi-{rank}.csv")
    if not args.reuse_models or not os.path.exists(models.format(rank=0)):
        os.makedirs(args.models_dir, exist_ok=True)
        subprocess.run(["mpiexec.mpich", "-n", "3", os.path.join(args.build, "bin", "hit-fpm"), "build",
                        "--kernel", "jacobi", "--resident", "--partition", "single", "--columns",
                        str(args.n), "--devices", devices(), "--min", str(args.n // 64), "--max",
                        str(args.n), "--points", "8", "--out", models, "--quiet"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
    stored = ["--balance-models", models]
    # Static CPM: rows in proportion to the speeds of one measurement, each rank's median over
    # five iterations of the even split after one that stages the grid (a balancer that never
    # moves reports every iteration's times).
    probe = run(devices(), ["--balance", "cpm", "--balance-every", "1", "--balance-eps", "1e9"], 6)
    cpm_rows = cpm_split(probe["balance"], args.n)
    change = args.iters // 2
    scenarios = {"steady": devices(), "slowdown": devices(change)}
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "commit": commit_text(), "machine": machine_text(details=True), "n": args.n,
               "iters": args.iters, "runs": args.runs, "eps": args.eps, "slowdowns": SLOWDOWNS,
               "change_at_launch": change, "static_cpm_rows": cpm_rows, "scenarios": {}}
    for name, dev in scenarios.items():
        # The best static distribution in hindsight: the final rows of a dynamic FPM run.
        final = run(dev, ["--balance", "fpm"] + balance + stored)["balance"]["rows"]
        configs = {
            "static even": ["--layout", "blocks"],
            "static CPM": ["--layout", rows_layout(cpm_rows)],
            "dynamic CPM": ["--balance", "cpm"] + balance,
            "dynamic FPM": ["--balance", "fpm"] + balance,
            "dynamic FPM, stored models": ["--balance", "fpm"] + balance + stored,
            "best static (hindsight)": ["--layout", rows_layout(final)],
        }
        runs = {c: [] for c in configs}
        for _ in range(args.runs):
            for c, extra in configs.items():
                runs[c].append(run(dev, extra))
        cases = []
        for c, rs in runs.items():
            case = {"config": c, "time_s": spread([r["time_s"] for r in rs]),
                    "imbalance": spread([r["imbalance"] for r in rs]), "layout": rs[-1]["layout"]}
            if "balance" in rs[-1]:
                b = [r["balance"] for r in rs]
                case["rebalances"] = spread([len(x["rebalances"]) for x in b])
                case["balancing_s"] = spread([x["seconds"] for x in b])
                case["final_imbalance"] = spread([x["imbalance"] for x in b])
                settled = [settled_imbalance(x) for x in b]
                case["settled_imbalance"] = spread([v for v, _ in settled])
                case["settled_iterations"] = [k for _, k in settled]
                case["converged_at"] = [converged_at(x["trace"], args.eps, 0) for x in b]
                case["first_balanced"] = [first_balanced(x["trace"], args.eps, 0) for x in b]
                if name == "slowdown":
                    case["back_after"] = [back_after(x["trace"], args.eps, change) for x in b]
                    case["first_back"] = [first_back(x["trace"], args.eps, change) for x in b]
                # Moves of every run: in place (every tile kept its memory) or into new memory.
                moves = [m for x in b for m in x["rebalances"]]
                kept = [m["seconds"] for m in moves if 0 < m["tiles_moved"] == m["tiles_in_place"]]
                fresh = [m["seconds"] for m in moves if not 0 < m["tiles_moved"] == m["tiles_in_place"]]
                case["moves_in_place"] = {"count": len(kept),
                                          "median_s": statistics.median(kept) if kept else None}
                case["moves_new_memory"] = {"count": len(fresh),
                                            "median_s": statistics.median(fresh) if fresh else None}
                case["final_rows"] = b[-1]["rows"]
                case["trace"] = b[-1]["trace"]
                case["moves"] = b[-1]["rebalances"]
            cases.append(case)
            print(f"{name} / {c}: {case['time_s']['median']:.3f} s, imbalance "
                  f"{case['imbalance']['median']:.3f}", flush=True)
        results["scenarios"][name] = {"devices": dev, "hindsight_rows": final, "cases": cases,
                                      "goals": goals(name, runs)}
    write_json(args.json_out, results)
    write_svg(args.svg, results)
    replace_section(args.out, "balance", markdown(results))


def cpm_split(balance, n):
    """Rows in proportion to the speeds measured at the starting rows (largest remainders)."""
    per_rank = list(zip(*[s["times"] for s in balance["trace"]]))
    return proportional(balance["initial_rows"], [statistics.median(t) for t in per_rank], n)


def proportional(rows, seconds, n):
    """n rows in proportion to the speeds rows/seconds (largest remainders)."""
    speeds = [d / t for d, t in zip(rows, seconds)]
    exact = [n * v / sum(speeds) for v in speeds]
    out = [int(x) for x in exact]
    for i in sorted(range(len(exact)), key=lambda i: out[i] - exact[i])[:n - sum(out)]:
        out[i] += 1
    return out


def goals(scenario, runs):
    """The issue's goals per dynamic configuration: its median time over the best static split in
    hindsight (<= 1.10) and, when a device slows down, over static CPM (< 1)."""
    med = {c: statistics.median(r["time_s"] for r in rs) for c, rs in runs.items()}
    out = []
    for c in ("dynamic CPM", "dynamic FPM", "dynamic FPM, stored models"):
        g = {"config": c, "vs_hindsight": med[c] / med["best static (hindsight)"]}
        g["hindsight_met"] = g["vs_hindsight"] <= 1.10
        if scenario == "slowdown":
            g["vs_static_cpm"] = med[c] / med["static CPM"]
            g["static_cpm_met"] = g["vs_static_cpm"] < 1.0
        out.append(g)
    return out


def balanced(step, eps):
    return step["imbalance"] <= 1 + eps


def converged_at(trace, eps, start):
    """The first iteration from `start` on after which every step stays balanced (None: never)."""
    tail = [s for s in trace if s["iteration"] >= start]
    for k, s in enumerate(tail):
        if all(balanced(t, eps) for t in tail[k:]):
            return s["iteration"]
    return None


def settled_imbalance(balance):
    """The imbalance of the final distribution over the steps it ran: per rank the median of those
    steps' times (each the median of its iterations), max/mean over the ranks with rows; and how
    many iterations that covers."""
    last = max((m["iteration"] for m in balance["rebalances"]), default=-1)
    steps = [s for s in balance["trace"] if s["iteration"] > last]
    if not steps:
        steps = balance["trace"][-1:]
    per_rank = list(zip(*[s["times"] for s in steps]))
    medians = [statistics.median(t) for t in per_rank if max(t) > 0]
    covered = steps[-1]["iteration"] - last if last >= 0 else steps[-1]["iteration"] + 1
    return max(medians) / statistics.mean(medians), covered


def first_balanced(trace, eps, start):
    """The first step from `start` on whose imbalance is within 1 + eps (None: none)."""
    return next((s["iteration"] for s in trace if s["iteration"] >= start and balanced(s, eps)), None)


def first_back(trace, eps, change):
    """Iterations from the speed change to the first balanced step after it (None: none)."""
    at = first_balanced(trace, eps, change)
    return None if at is None else at - change


def back_after(trace, eps, change):
    """Iterations from the speed change until the balance is back for good (None: never)."""
    at = converged_at(trace, eps, change)
    return None if at is None else at - change


def runs_text(values):
    """One entry per run; never: the run never got there."""
    if values is None:
        return "–"
    return ", ".join("never" if v is None else str(v) for v in values)


def moves_text(case):
    def kind(k):
        m = case.get(k)
        if not m:
            return "–"
        return f"{m['count']}" + (f" × {m['median_s']:.3f} s" if m["median_s"] is not None else "")
    return f"{kind('moves_in_place')} / {kind('moves_new_memory')}"


def fmt(s, digits=3):
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}–{s['max']:.{digits}f}]"


def markdown(r):
    lines = [
        f"### Dynamic load balancing of hit-jacobi (N = {r['n']}, {r['iters']} iterations, 3 ranks)",
        "",
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']}. Devices: emulated, "
        f"slowdowns {' / '.join(str(s) for s in r['slowdowns'])} (relative speeds 14 : 3.8 : 1), "
        f"`clock=cpu`; the slowdown scenario makes rank 0 4× slower from its launch "
        f"{r['change_at_launch']} on (`change=4@{r['change_at_launch']}`). {r['runs']} runs of each "
        f"configuration, interleaved; median [min–max]. eps = {r['eps']}. Static CPM: rows "
        f"{r['static_cpm_rows']} (in proportion to the speeds of each rank's median time over five "
        "iterations of the even split, after one that stages the grid). Dynamic: `--balance cpm|fpm` "
        "starting from the even split (the first step after three iterations: one staging, two "
        "timed); \"stored models\": `--balance-models`, models of the kernel with the grid resident "
        "built once by `hit-fpm build --kernel jacobi --resident` on the steady devices (their build "
        "time is not in the table), the rows starting from their partition. Imbalance: max/mean of "
        "the per-rank compute times of the whole run; final imbalance: of the last balancing step (each "
        "rank's median over the balancer's window of steps); final distribution: the imbalance of the "
        "distribution of the last rebalance over all the steps it ran (per rank the median of the "
        "steps' times), with how many iterations that covers in each run. "
        "Moves: over all runs of a configuration, how many rebalances moved every block in place "
        "(within the rows to spare of `--balance-reserve`, 0.125) and how many put some block in new "
        "memory, with the median time of each kind. "
        "Balanced: a balancing step whose per-rank times have max/mean <= 1 + eps; the first such "
        "step, and the step from which every later one is (\"never\": the noise of three processes on "
        "two cores kept taking some step above); one entry per run, in iterations.",
        "",
    ]
    for name, sc in r["scenarios"].items():
        lines += [f"**{name}** (best static in hindsight: rows {sc['hindsight_rows']})", "",
                  "| configuration | time s | imbalance (run) | rebalances | balancing s | moves: in place / "
                  "new memory | final imbalance | final distribution: imbalance (iterations) | first balanced "
                  "step | balanced for good from | after the change: first balanced step, balanced "
                  "for good |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for c in sc["cases"]:
            dyn = "rebalances" in c
            lines.append(
                f"| {c['config']} | {fmt(c['time_s'])} | {fmt(c['imbalance'])} | "
                f"{fmt(c['rebalances'], 0) if dyn else '–'} | {fmt(c['balancing_s']) if dyn else '–'} | "
                f"{moves_text(c) if dyn else '–'} | "
                f"{fmt(c['final_imbalance']) if dyn else '–'} | "
                f"{fmt(c['settled_imbalance']) + ' (' + ', '.join(map(str, c['settled_iterations'])) + ')' if dyn else '–'} | "
                f"{runs_text(c.get('first_balanced')) if dyn else '–'} | "
                f"{runs_text(c['converged_at']) if dyn else '–'} | "
                f"{runs_text(c['first_back']) + ' / ' + runs_text(c['back_after']) if dyn and 'back_after' in c else '–'} |")
        lines.append("")
        if "goals" in sc:
            slow = name == "slowdown"
            lines += [f"Goals ({name}): time over the best static split in hindsight ≤ 1.10"
                      + (", and below static CPM's" if slow else "") + ".", "",
                      "| configuration | / best static (hindsight) | goal |"
                      + (" / static CPM | goal |" if slow else ""),
                      "|---|---|---|" + ("---|---|" if slow else "")]
            for g in sc["goals"]:
                mark = lambda ok: "met" if ok else "**not met**"
                lines.append(f"| {g['config']} | {g['vs_hindsight']:.3f} | {mark(g['hindsight_met'])} |"
                             + (f" {g['vs_static_cpm']:.3f} | {mark(g['static_cpm_met'])} |" if slow else ""))
            lines.append("")
    lines += ["![per-iteration time and imbalance of the dynamic runs](img/balance-trace.svg)", "",
              "Command: `python3 bench/balance/balance_bench.py`."]
    return "\n".join(lines)


def write_svg(path, r):
    """Per-iteration time (top) and imbalance (bottom) of the dynamic runs, both scenarios."""
    w, h, pad = 760, 420, 50
    colors = {"dynamic CPM": "#d62728", "dynamic FPM": "#1f77b4",
              "dynamic FPM, stored models": "#2ca02c"}
    series = []
    for name, sc in r["scenarios"].items():
        for c in sc["cases"]:
            if "trace" in c:
                series.append((f"{c['config']}, {name}", c["trace"], colors[c["config"]],
                               "6,3" if name == "slowdown" else ""))
    iters = r["iters"]
    tmax = max(s["seconds"] for _, t, _, _ in series for s in t) or 1
    imax = min(max(s["imbalance"] for _, t, _, _ in series for s in t), 4)
    half = (h - 3 * pad) / 2
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>']
    for k, (label, top, key, vmax) in enumerate((("seconds per iteration (slowest rank)", pad, "seconds", tmax),
                                                 ("imbalance (max/mean)", 2 * pad + half, "imbalance", imax))):
        out.append(f'<text x="{pad}" y="{top - 8}">{label}, 0 to {vmax:.3g}</text>')
        out.append(f'<rect x="{pad}" y="{top}" width="{w - 2 * pad}" height="{half}" fill="none" stroke="#888"/>')
        for name, trace, color, dash in series:
            pts = " ".join(f"{pad + (w - 2 * pad) * s['iteration'] / max(iters - 1, 1):.1f},"
                           f"{top + half - half * min(s[key], vmax) / vmax:.1f}" for s in trace)
            out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="1.5"'
                       + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
    for i, (name, _, color, dash) in enumerate(series):
        y = h - pad / 2 + 0
        x = pad + i * 180
        out.append(f'<line x1="{x}" y1="{y}" x2="{x + 20}" y2="{y}" stroke="{color}" stroke-width="2"'
                   + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        out.append(f'<text x="{x + 25}" y="{y + 4}">{name}</text>')
    out.append(f'<text x="{w / 2 - 30}" y="{h - 4}">iteration</text>')
    out.append("</svg>")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out))
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
