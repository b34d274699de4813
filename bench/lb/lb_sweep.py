#!/usr/bin/env python3
"""Hitmap's heterogeneous Cannon experiment (Torres et al., section 6, Fig. 4) on emulated devices.

Cannon with `blocksLB` layouts for C and A (Torres et al., Euro-Par 2012, Fig. 3) on 4 ranks (a 2x2 grid) bound as the
paper's scenarios, with emulated stand-ins for its devices: A (the fast GPU) is
`emu:0(slowdown=1)` shared by its ranks (the device lock serialises them, as Hitmap's launch mutex
did), B (the slow GPU) one device `slowdown=3.826`, each C (one CPU core) its own device
`slowdown=14.153` — the paper's measured speed ratios. An emulated device cannot be faster than
the host kernel, so the fast class runs at host speed and the slow classes are r times slower.

1. Measures each device class's speed ratio r against A (1 rank, the per-step block size N/2).
2. Computes the paper's predicted balance factor from the measured r: LB = (r-1)/(r+1) for the A3
   scenarios and LB = r/(r+1) for the A2 scenarios (Torres et al., Euro-Par 2012, section 6), and the factor that
   balances the devices' busy times for the actual binding (a simple model, printed beside it).
3. Sweeps the balance factor over 0.5 ... 0.975 for every scenario, passes alternating ascending
   and descending order and scenarios interleaved, so drift of the shared machine touches every
   point alike; each point is the median of all its runs with the min-max spread.
4. Prints predicted vs measured best, writes a JSON with every run and draws time against factor
   (SVG, log time axis as in the paper's Fig. 4).

    python3 bench/lb/lb_sweep.py [--build build] [--n 1536] [--passes 3] [--reps 2]
                                 [--scenarios A3-B1,A2-C2] [--quick] [--replot JSON]
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import machine_text, spread, write_json  # noqa: E402

# The paper's devices (Torres et al., Euro-Par 2012, section 6): speed of A relative to each slow class.
PAPER_R = {"B": 3.826, "C": 14.153}

# Scenario: the device of each rank (class letter, device index) in rank order on the 2x2 grid
# (row 0 = ranks 0, 1; row 1 = ranks 2, 3) and the paper's formula for the predicted factor.
SCENARIOS = {
    "A3-B1": {"ranks": [("A", 0), ("A", 0), ("A", 0), ("B", 1)], "formula": "(r-1)/(r+1)",
              "what": "3 ranks on device A, 1 rank on device B"},
    "A2-C2": {"ranks": [("A", 0), ("A", 0), ("C", 1), ("C", 2)], "formula": "r/(r+1)",
              "what": "2 ranks on device A, 2 ranks each on its own CPU-core stand-in C"},
    "A2-B2": {"ranks": [("A", 0), ("A", 0), ("B", 1), ("B", 1)], "formula": "r/(r+1)",
              "what": "2 ranks on device A, 2 ranks on device B"},
    "A3-C1": {"ranks": [("A", 0), ("A", 0), ("A", 0), ("C", 1)], "formula": "(r-1)/(r+1)",
              "what": "3 ranks on device A, 1 rank on a CPU-core stand-in C"},
}
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]


def slowdown_of(cls):
    return 1.0 if cls == "A" else PAPER_R[cls]


def device_spec(ranks):
    """The --devices text: runs of equal devices joined as dev*count."""
    parts = []
    for cls, idx in ranks:
        dev = f"emu:{idx}(slowdown={slowdown_of(cls):g})"
        if parts and parts[-1][0] == dev:
            parts[-1][1] += 1
        else:
            parts.append([dev, 1])
    return ",".join(d if c == 1 else f"{d}*{c}" for d, c in parts)


def seed_prediction(formula, r):
    return (r - 1) / (r + 1) if formula == "(r-1)/(r+1)" else r / (r + 1)


def model_time(ranks, speed, f):
    """Busy time of the busiest device (total work 1) with factor f: blocksLB gives row 0 (fast
    when all its ranks are on A) the share f, row 1 the rest; columns split evenly; ranks on one
    device take turns, so a device's time is the sum of its ranks' work over its speed."""
    rows = [ranks[0:2], ranks[2:4]]
    fast = [all(cls == "A" for cls, _ in row) for row in rows]
    if fast[0] == fast[1]:
        shares = [0.5, 0.5]
    else:
        shares = [f if fast[0] else 1 - f, 1 - f if fast[0] else f]
    busy = {}
    for row, share in zip(rows, shares):
        for cls, idx in row:
            busy[idx] = busy.get(idx, 0.0) + share / 2 / speed[cls]
    return max(busy.values())


def model_balanced_factor(ranks, speed):
    grid = [i * 1e-4 for i in range(1, 10000)]
    return min(grid, key=lambda f: model_time(ranks, speed, f))


def run_cannon(args, n, devices, procs, factor=None, reps=None):
    cmd = ["mpiexec.mpich", "-n", str(procs), os.path.join(args.build, "bin", "hit-cannon"),
           "--n", str(n), "--devices", devices, "--reps", str(reps or args.reps),
           "--warmup", str(args.warmup), "--json"]
    if factor is not None:
        lb = f"blocksLB:factor={factor:g},fast=emu:0"
        cmd += ["--layout-a", lb, "--layout-c", lb]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.stderr.write(f"command failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr}\n")
        raise SystemExit(1)
    result = json.loads([l for l in out.stdout.splitlines() if l.startswith("{")][-1])
    result["command"] = " ".join(cmd)
    return result


def samples_of(result):
    """The individual timed runs: hit-cannon reports median, min and max, which are all of them
    for up to 3 repetitions; beyond that only the median stands for the invocation."""
    r = result["reps"]
    if r == 1:
        return [result["time_s"]]
    if r == 2:
        return [result["time_min_s"], result["time_max_s"]]
    if r == 3:
        return [result["time_min_s"], result["time_s"], result["time_max_s"]]
    return [result["time_s"]]


def measure_ratios(args, classes):
    """r of each slow class: one rank multiplying N/2 x N/2 blocks (the per-step product of the
    even split) on A and on the class, alternated, ratio of the medians."""
    n = max(args.n // 2, 64)
    times = {c: [] for c in ["A"] + classes}
    for _ in range(args.r_rounds):
        for c in times:
            res = run_cannon(args, n, f"emu:0(slowdown={slowdown_of(c):g})", 1, reps=3)
            times[c] += samples_of(res)
    fast = statistics.median(times["A"])
    return {c: {"r": statistics.median(times[c]) / fast, "slowdown": slowdown_of(c), "n": n,
                "times_s": times[c], "fast_times_s": times["A"]} for c in classes}


def in_situ_ratio(result, ranks):
    """Speed ratio seen inside a run: mean work rate of the A ranks over that of the others."""
    rate = lambda r: r["work"] / r["compute_s"] if r["compute_s"] > 0 else float("nan")
    fast = [rate(r) for r, (c, _) in zip(result["per_rank"], ranks) if c == "A"]
    slow = [rate(r) for r, (c, _) in zip(result["per_rank"], ranks) if c != "A"]
    return statistics.mean(fast) / statistics.mean(slow)


# ---- SVG -------------------------------------------------------------------------------------

def esc(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def log_ticks(lo, hi):
    for mants in ([1], [1, 2, 5], [1, 1.5, 2, 3, 5, 7], [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9]):
        ticks = [m * 10 ** e for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
                 for m in mants if lo <= m * 10 ** e <= hi]
        if len(ticks) >= 4:
            return ticks
    return [lo, hi]


def draw_svg(res, path):
    W, H = 990, 580
    left, right, top, bottom = 80, 280, 92, 70
    pw, ph = W - left - right, H - top - bottom
    scen = res["scenarios"]
    all_t = [v for s in scen for p in s["points"] for v in (p["time_s"]["min"], p["time_s"]["max"])]
    lo, hi = min(all_t) / 1.12, max(all_t) * 1.12
    x0, x1 = 0.5, 1.0
    X = lambda f: left + (f - x0) / (x1 - x0) * pw
    Y = lambda t: top + (math.log(hi) - math.log(t)) / (math.log(hi) - math.log(lo)) * ph
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
         'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">',
         f'<rect width="{W}" height="{H}" fill="#ffffff"/>',
         f'<text x="16" y="28" font-size="16" font-weight="bold">Cannon with blocksLB for A and C: '
         f'time against balance factor, N={res["n"]}, 4 ranks, emulated devices</text>',
         f'<text x="16" y="48" font-size="12" fill="#444">{esc(res["machine"])}</text>',
         f'<text x="16" y="64" font-size="12" fill="#444">median of {res["runs_per_point"]} runs per '
         "point, bars min-max; ring: measured best; dashed: the paper's prediction from the measured r;</text>",
         '<text x="16" y="79" font-size="12" fill="#444">dotted (where it differs): the factor that '
         'balances the busy times of the binding\'s devices</text>']
    # grid, ticks
    for t in log_ticks(lo, hi):
        y = Y(t)
        o.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e6e6e6"/>')
        o.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" '
                 f'fill="#444">{t:g}</text>')
    for i in range(11):
        f = x0 + i * 0.05
        x = X(f)
        major = i % 2 == 0
        o.append(f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + (6 if major else 3)}" '
                 'stroke="#333"/>')
        if major:
            o.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#f0f0f0"/>')
        o.append(f'<text x="{x:.1f}" y="{top + ph + 19}" font-size="11" text-anchor="middle" '
                 f'fill="#444">{f:.2f}</text>')
    o.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    o.append(f'<text x="{left + pw / 2}" y="{H - 22}" font-size="13" text-anchor="middle">'
             'balance factor (share of the rows on the fast block-row)</text>')
    o.append(f'<text x="22" y="{top + ph / 2}" font-size="13" text-anchor="middle" '
             f'transform="rotate(-90 22 {top + ph / 2})">time (s, log scale)</text>')
    ly = top + 4
    for k, s in enumerate(scen):
        c = COLORS[k % len(COLORS)]
        pts = s["points"]
        dx = (k - (len(scen) - 1) / 2) * 4  # side by side where scenarios share a factor
        o.append('<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>'.format(
            c, " ".join(f'{X(p["factor"]) + dx:.1f},{Y(p["time_s"]["median"]):.1f}' for p in pts)))
        for p in pts:
            x = X(p["factor"]) + dx
            o.append(f'<line x1="{x:.1f}" y1="{Y(p["time_s"]["min"]):.1f}" x2="{x:.1f}" '
                     f'y2="{Y(p["time_s"]["max"]):.1f}" stroke="{c}" stroke-width="1.2"/>')
            o.append(f'<circle cx="{x:.1f}" cy="{Y(p["time_s"]["median"]):.1f}" r="3.5" fill="{c}"/>')
        pred = s["predicted_factor"]
        px = X(min(max(pred, x0), x1))  # a prediction outside the axis is drawn at its edge
        o.append(f'<line x1="{px:.1f}" y1="{top}" x2="{px:.1f}" y2="{top + ph}" stroke="{c}" '
                 'stroke-width="1.5" stroke-dasharray="6 4"/>')
        o.append(f'<text x="{px + 3:.1f}" y="{top + 14 + 14 * k}" font-size="11" fill="{c}">'
                 f'{esc(s["name"])} seed {pred:.3f}</text>')
        if abs(s["balanced_factor"] - pred) > 0.005:
            bal = X(min(max(s["balanced_factor"], x0), x1))
            o.append(f'<line x1="{bal:.1f}" y1="{top}" x2="{bal:.1f}" y2="{top + ph}" stroke="{c}" '
                     'stroke-width="1.2" stroke-dasharray="1.5 3"/>')
        best = s["best"]
        bx, by = X(best["factor"]) + dx, Y(best["time_s"]["median"])
        o.append(f'<circle cx="{bx:.1f}" cy="{by:.1f}" r="9" fill="none" stroke="{c}" stroke-width="2"/>')
        o.append(f'<text x="{bx:.1f}" y="{by + 24:.1f}" font-size="11" text-anchor="middle" fill="{c}" '
                 f'stroke="#fff" stroke-width="3" paint-order="stroke">best {best["factor"]:.3f}</text>')
        # legend
        lx = left + pw + 18
        o.append(f'<line x1="{lx}" y1="{ly + 8}" x2="{lx + 24}" y2="{ly + 8}" stroke="{c}" stroke-width="2"/>')
        o.append(f'<circle cx="{lx + 12}" cy="{ly + 8}" r="3.5" fill="{c}"/>')
        o.append(f'<text x="{lx + 32}" y="{ly + 12}" font-size="13" font-weight="bold">{esc(s["name"])}</text>')
        lines = [f'r = {s["r"]:.2f} (emu slowdown {s["slowdown"]:g})',
                 f'seed {s["formula"]} = {pred:.3f}',
                 f'binding-balanced = {s["balanced_factor"]:.3f}',
                 f'best {best["factor"]:.3f}: {best["time_s"]["median"]:.3f} s',
                 f'{len(s["within_best_spread"])}/{len(pts)} medians within its min-max',
                 f'at {pts[0]["factor"]:g}: {pts[0]["time_s"]["median"]:.3f} s']
        for i, text in enumerate(lines):
            o.append(f'<text x="{lx + 32}" y="{ly + 30 + 15 * i}" font-size="11" fill="#333">{esc(text)}</text>')
        ly += 30 + 15 * len(lines) + 14
    o.append("</svg>")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(o) + "\n")
    os.replace(path + ".tmp", path)


# ---- main ------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build folder with bin/hit-cannon")
    ap.add_argument("--n", type=int, default=1536, help="matrix size (square)")
    ap.add_argument("--scenarios", default="A3-B1,A2-C2", help=f"from {', '.join(SCENARIOS)}")
    ap.add_argument("--factors", default="0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95,0.975")
    ap.add_argument("--passes", type=int, default=3, help="sweeps over all factors (alternating order)")
    ap.add_argument("--reps", type=int, default=2, help="timed runs per invocation (<=3 keeps every run)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--r-rounds", type=int, default=3, help="alternations of the speed-ratio measurement")
    ap.add_argument("--quick", action="store_true", help="small smoke run (n=512, 1 pass, 3 factors)")
    ap.add_argument("--json-out", default=os.path.join(ROOT, "bench", "lb", "results", "lb-sweep.json"))
    ap.add_argument("--svg", default=os.path.join(ROOT, "docs", "img", "lb-sweep.svg"))
    ap.add_argument("--replot", metavar="JSON", help="only redraw the SVG from a JSON this script wrote")
    args = ap.parse_args()
    if args.replot:
        with open(args.replot) as f:
            draw_svg(json.load(f), args.svg)
        print(f"wrote {args.svg}")
        return
    if args.quick:
        args.n, args.passes, args.r_rounds, args.factors = 512, 1, 1, "0.5,0.75,0.975"
    names = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    for s in names:
        if s not in SCENARIOS:
            raise SystemExit(f"unknown scenario '{s}' (known: {', '.join(SCENARIOS)})")
    factors = [float(f) for f in args.factors.split(",")]
    if any(not 0 < f < 1 for f in factors):
        raise SystemExit(f"factors must lie strictly between 0 and 1, got {args.factors}")
    started = time.monotonic()

    classes = sorted({c for s in names for c, _ in SCENARIOS[s]["ranks"] if c != "A"})
    print(f"measuring speed ratios r of {', '.join(classes)} against A (1 rank, n={max(args.n // 2, 64)}) ...",
          flush=True)
    ratios = measure_ratios(args, classes)
    for c in classes:
        print(f"  r({c}) = {ratios[c]['r']:.3f} (emulated slowdown {ratios[c]['slowdown']:g})", flush=True)
    speed = {"A": 1.0, **{c: 1.0 / ratios[c]["r"] for c in classes}}

    runs = {s: {f: [] for f in factors} for s in names}
    for p in range(args.passes):
        order = factors if p % 2 == 0 else list(reversed(factors))
        for f in order:
            for s in names:
                res = run_cannon(args, args.n, device_spec(SCENARIOS[s]["ranks"]), 4, factor=f)
                runs[s][f].append(res)
                print(f"  pass {p + 1} {s:6} factor {f:.3f}: {res['time_s']:.3f} s "
                      f"[{res['time_min_s']:.3f}-{res['time_max_s']:.3f}] "
                      f"({time.monotonic() - started:.0f} s elapsed)", flush=True)

    out = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine_text(), "n": args.n, "procs": 4, "passes": args.passes,
           "reps": args.reps, "warmup": args.warmup,
           "runs_per_point": args.passes * len(samples_of(runs[names[0]][factors[0]][0])),
           "command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
           "ratios": ratios, "scenarios": []}
    for s in names:
        sc = SCENARIOS[s]
        slow = next(c for c, _ in sc["ranks"] if c != "A")
        r = ratios[slow]["r"]
        pred = seed_prediction(sc["formula"], r)
        points = []
        for f in factors:
            samples = [t for res in runs[s][f] for t in samples_of(res)]
            points.append({"factor": f, "time_s": spread(samples), "samples_s": samples,
                           "imbalance": statistics.median(res["imbalance"] for res in runs[s][f]),
                           "per_rank": [res["per_rank"] for res in runs[s][f]],
                           "layouts": runs[s][f][0]["layouts"]})
        best = min(points, key=lambda p: p["time_s"]["median"])
        near = [p["factor"] for p in points if p["time_s"]["median"] <= best["time_s"]["max"]]
        nearest_pred = min(points, key=lambda p: abs(p["factor"] - pred))
        even = next((p for p in points if abs(p["factor"] - 0.5) < 1e-9), None)
        out["scenarios"].append({
            "name": s, "what": sc["what"], "devices": device_spec(sc["ranks"]), "slow_class": slow,
            "slowdown": slowdown_of(slow), "r": r, "formula": sc["formula"], "predicted_factor": pred,
            "balanced_factor": model_balanced_factor(sc["ranks"], speed),
            "r_in_situ_even": (statistics.median(in_situ_ratio(res, sc["ranks"]) for res in runs[s][0.5])
                               if even else None),
            "best": {"factor": best["factor"], "time_s": best["time_s"]},
            "within_best_spread": near,
            "at_prediction": {"factor": nearest_pred["factor"], "time_s": nearest_pred["time_s"]},
            "points": points})
    os.makedirs(os.path.dirname(os.path.abspath(args.json_out)), exist_ok=True)
    write_json(args.json_out, out)
    draw_svg(out, args.svg)

    print(f"\n{out['machine']}; N={args.n}, 4 ranks, {out['runs_per_point']} runs per point "
          f"({time.monotonic() - started:.0f} s in all)\n")
    fmt = lambda t: f"{t['median']:.3f} [{t['min']:.3f}-{t['max']:.3f}]"
    print("| factor | " + " | ".join(f"{s} time s" for s in names) + " |")
    print("|---|" + "---|" * len(names))
    for i, f in enumerate(factors):
        print(f"| {f:.3f} | " + " | ".join(fmt(sc["points"][i]["time_s"]) for sc in out["scenarios"]) + " |")
    print("\n| scenario | devices | r measured | r in situ (f=0.5) | seed formula | predicted | "
          "binding-balanced | measured best | best - predicted | time at best / at predicted / at 0.5 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for sc in out["scenarios"]:
        situ = f"{sc['r_in_situ_even']:.2f}" if sc["r_in_situ_even"] else "-"
        even = sc["points"][0]["time_s"]["median"]
        print(f"| {sc['name']} | `{sc['devices']}` | {sc['r']:.3f} | {situ} | {sc['formula']} | "
              f"{sc['predicted_factor']:.3f} | {sc['balanced_factor']:.3f} | {sc['best']['factor']:.3f} "
              f"(within its spread: {', '.join(f'{f:g}' for f in sc['within_best_spread'])}) | "
              f"{sc['best']['factor'] - sc['predicted_factor']:+.3f} | "
              f"{sc['best']['time_s']['median']:.3f} / {sc['at_prediction']['time_s']['median']:.3f} "
              f"(f={sc['at_prediction']['factor']:g}) / {even:.3f} |")
    print(f"\nwrote {args.json_out} and {args.svg}")


if __name__ == "__main__":
    main()
