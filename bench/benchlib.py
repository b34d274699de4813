"""What the benchmark drivers (run_benchmarks.py, lb/lb_sweep.py) share: summaries of repeated
runs and the description of the machine they ran on."""

import json
import math
import os
import platform
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_json(cmd, env):
    """Runs a program that prints a JSON line; its last JSON line. Ends the driver on failure."""
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.stderr.write(f"command failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr}\n")
        raise SystemExit(1)
    return json.loads([l for l in out.stdout.splitlines() if l.startswith("{")][-1])


def spread(values):
    """Median, min, max and count of repeated measurements."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "runs": len(values)}


def alternated_pairs(runs, first, second):
    """`runs` pairs of measurements, alternating which of the two runs first (A B, B A, ...), so
    the order inside a pair favours neither; the two lists of results."""
    a, b = [], []
    for i in range(runs):
        if i % 2 == 0:
            a.append(first())
            b.append(second())
        else:
            b.append(second())
            a.append(first())
    return a, b


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def machine_text(details=False):
    """CPU model, cores, OS and MPICH version; with `details`, also the memory and the build."""
    mem = ""
    if details:
        try:
            kb = int(open("/proc/meminfo").readline().split()[1])
            mem = f", {kb / 1024 / 1024:.0f} GiB"
        except (OSError, ValueError, IndexError):
            pass
    mpich = subprocess.run(["mpichversion"], capture_output=True, text=True).stdout.splitlines()
    mpich = mpich[0].split(":", 1)[1].strip() if mpich else "?"
    text = (f"{cpu_model()}, {os.cpu_count()} cores{mem}; {platform.system()} "
            f"{platform.release()}; MPICH {mpich}")
    return text + ("; OpenBLAS (Debian libopenblas); GCC -O3 Release build" if details else "")


def commit_text():
    """The commit the benchmarked programs were built from ("-dirty" with uncommitted changes)."""
    try:
        sha = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def replace_section(path, name, text):
    """Writes `text` between the markers <!-- BEGIN name --> and <!-- END name --> of `path`,
    leaving every other section of the file (written by other benchmarks) as it is."""
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    try:
        old = open(path).read()
    except FileNotFoundError:
        old = "# Benchmarks\n\n"
    block = f"{begin}\n{text}\n{end}"
    if begin in old and end in old:
        new = old[:old.index(begin)] + block + old[old.index(end) + len(end):]
    else:
        head, sep, rest = old.partition("\n\n")
        new = f"{head}{sep}{block}\n\n{rest}" if sep else f"{old}\n{block}\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(new)
    os.replace(tmp, path)


def write_json(path, data):
    """Writes `data` as indented JSON to a temporary name beside `path`, then renames it."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)


def results_path(args, name):
    """`args.json_out`, else bench/results/<name>.json, or a temporary file for a --quick run (a
    smoke run's figures never replace the measured ones)."""
    if args.json_out is not None:
        return args.json_out
    if getattr(args, "quick", False):
        import tempfile
        return os.path.join(tempfile.gettempdir(), f"{name}-quick.json")
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", f"{name}.json")


def redraw_from_json(args, section, markdown):
    """--from-json: the table from the saved results, into the docs with --update-docs, and on
    stdout. Returns False (nothing done) without --from-json."""
    if not args.from_json:
        return False
    with open(args.json_out) as f:
        results = json.load(f)
    if args.update_docs:
        replace_section(args.out, section, markdown(results))
    print(markdown(results))
    return True


def average_ranks(values):
    """Ranks 1..n of `values`, ties given the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(x, y):
    """Spearman's rank correlation (Pearson's of the average ranks); None when either side has no
    spread (all equal) or fewer than two values."""
    if len(x) < 2:
        return None
    rx, ry = average_ranks(x), average_ranks(y)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)
