#!/usr/bin/env python3
"""hit-layout on sparse layouts (--generate, --matrix), run under `mpiexec -n NP`: the --json
figures against what the 5-point grid gives by hand, metis against rows on a permuted grid, the
same answer whatever the run's size (--procs), a Matrix Market file of the same matrix, --type,
inactive ranks, emulated devices, and --svg with one fill colour per rank.

Usage: sparse_check.py HIT_LAYOUT MPIEXEC NP OUT_DIR
"""
import json
import os
import re
import subprocess
import sys

LAYOUT, MPIEXEC, NP = sys.argv[1], sys.argv[2], int(sys.argv[3])
# A folder per process count: ctest -j runs the counts at once, and they write the same files.
OUT = os.path.join(sys.argv[4], f"np{NP}")
os.makedirs(OUT, exist_ok=True)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(*args, np=NP):
    cmd = [MPIEXEC, "-n", str(np), LAYOUT, *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.stdout


def doc(*args, np=NP):
    return json.loads(run(*args, "--json", np=np))


def column(d, key):
    return [r[key] for r in d["ranks"]]


# ---- rows of poisson2d:n=16 over 4 processes: row blocks of 4 grid lines -------------------------
K = 16
d = doc("--generate", f"poisson2d:n={K}", "--layout", "rows", "--procs", "4")
check(d["matrix"] == f"poisson2d:n={K}" and d["layout"] == "rows", f"matrix/layout: {d}")
check(d["procs"] == 4 and len(d["ranks"]) == 4, "4 ranks")
check(d["rows"] == K * K and sum(column(d, "rows")) == K * K, "rows sum to 256")
nnz = 5 * K * K - 4 * K
check(d["nonzeros"] == nnz and sum(column(d, "nonzeros")) == nnz, f"nonzeros sum to {nnz}")
check(column(d, "rows") == [64] * 4, f"rows {column(d, 'rows')}")
# A block of 4 grid lines: the end blocks see one neighbouring line, the middle ones two.
check(column(d, "ghosts") == [K, 2 * K, 2 * K, K], f"ghosts {column(d, 'ghosts')}")
check(column(d, "send_values") == [K, 2 * K, 2 * K, K], f"send_values {column(d, 'send_values')}")
check(column(d, "send_bytes") == [8 * v for v in column(d, "send_values")], "send_bytes = 8 x")
# nonzeros of a block of 4 lines: 4*16 rows, 5 each, less the grid's edges inside the block.
check(column(d, "nonzeros") == [296, 312, 312, 296], f"nonzeros {column(d, 'nonzeros')}")
check(d["edge_cut"] == 3 * K, f"edge cut {d['edge_cut']} (3 boundaries of 16 edges)")
check(abs(d["imbalance"] - 376 / 368) < 1e-9, f"imbalance {d['imbalance']}")
check(all(column(d, "active")), "all active")
check(d["topology"] == {"name": "array", "dims": [4]}, f"topology {d['topology']}")

# --type float: 4 bytes a value.
f = doc("--generate", f"poisson2d:n={K}", "--procs", "4", "--type", "float")
check(column(f, "send_bytes") == [4 * v for v in column(f, "send_values")], "float: 4 bytes")
check(f["layout"] == "rows", "rows is the default sparse layout")

# Without --procs: one part per process of the run.
own = doc("--generate", f"poisson2d:n={K}")
check(own["procs"] == NP and sum(column(own, "rows")) == K * K, f"run's size {own['procs']}")

# ---- a permuted grid: metis cuts far fewer edges than rows -----------------------------------------
perm = f"poisson2d:n={K},permute=7"
by_rows = doc("--generate", perm, "--layout", "rows", "--procs", "4")
by_metis = doc("--generate", perm, "--layout", "metis", "--procs", "4")
check(sum(column(by_metis, "rows")) == K * K, "metis rows sum")
check(sum(column(by_metis, "nonzeros")) == nnz, "metis nonzeros sum")
check(by_metis["edge_cut"] < by_rows["edge_cut"] / 4,
      f"metis cut {by_metis['edge_cut']} vs rows {by_rows['edge_cut']}")
check(sum(column(by_metis, "ghosts")) < sum(column(by_rows, "ghosts")), "metis fewer ghosts")
# The permutation does not change the matrix's size nor, with rows, the row counts.
check(column(by_rows, "rows") == [64] * 4 and by_rows["nonzeros"] == nnz, "permuted rows")
# The layout for 4 processes is the same whatever the run's size.
if NP != 1:
    one = doc("--generate", perm, "--layout", "metis", "--procs", "4", np=1)
    check(one == by_metis, "metis --procs 4 differs between 1 process and NP")

# ---- a Matrix Market file of poisson2d:n=5 gives the figures of the generator ------------------------
n = 5
entries = []
for y in range(n):
    for x in range(n):
        u = y * n + x
        entries.append((u, u, 4.0))
        for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            if 0 <= x + dx < n and 0 <= y + dy < n:
                entries.append((u, (y + dy) * n + x + dx, -1.0))
mtx = os.path.join(OUT, "poisson5.mtx")
with open(mtx, "w") as out:
    out.write(f"%%MatrixMarket matrix coordinate real general\n{n*n} {n*n} {len(entries)}\n")
    for r, c, v in entries:
        out.write(f"{r + 1} {c + 1} {v}\n")
fm = doc("--matrix", mtx, "--procs", "3")
fg = doc("--generate", f"poisson2d:n={n}", "--procs", "3")
check(fm["matrix"] == mtx, f"matrix {fm['matrix']}")
check(fm["ranks"] == fg["ranks"] and fm["edge_cut"] == fg["edge_cut"], "file == generator")
check(fm["nonzeros"] == len(entries), f"file nonzeros {fm['nonzeros']}")

# ---- more processes than rows: the last ones inactive -----------------------------------------------
few = doc("--generate", "poisson2d:n=2", "--procs", "6")
check(column(few, "rows") == [1, 1, 1, 1, 0, 0], f"rows {column(few, 'rows')}")
check(column(few, "active") == [True] * 4 + [False] * 2, "ranks 4, 5 inactive")

# ---- emulated devices feed metis:weights=binding: the 4x slower process gets about a quarter ---------
w = doc("--generate", perm, "--layout", "metis:weights=binding", "--procs", "3",
        "--devices", "cpu,emu:0(slowdown=4),cpu")
r = column(w, "rows")
check(sum(r) == K * K and r[1] * 3 < r[0] and r[1] * 3 < r[2], f"binding rows {r}")

# ---- poisson3d ------------------------------------------------------------------------------------
d3 = doc("--generate", "poisson3d:n=6", "--procs", "3")
check(d3["rows"] == 216 and d3["nonzeros"] == 7 * 216 - 6 * 36, f"3-D {d3['nonzeros']}")
check(column(d3, "ghosts") == [36, 72, 36], f"3-D ghosts {column(d3, 'ghosts')}")

# ---- the table -------------------------------------------------------------------------------------
table = run("--generate", f"poisson2d:n={K}", "--procs", "4")
check(re.search(r"\n +1 +yes +64 +312 +32 +32 +256\n", table) is not None, "table row 1:\n" + table)
check("edge cut 48" in table and "active 4 of 4" in table, "table summary:\n" + table)

# ---- --svg: one fill colour per rank, each on as many grid points as the rank has rows ------------
svg = os.path.join(OUT, f"sparse-{NP}.svg")
if os.path.exists(svg):
    os.remove(svg)
s = doc("--generate", "poisson2d:n=12,permute=2", "--layout", "metis", "--procs", "4",
        "--svg", svg)
check(os.path.exists(svg) and not os.path.exists(svg + ".tmp"), "svg written")
if os.path.exists(svg):
    text = open(svg).read()
    check(text.startswith("<?xml") or text.startswith("<svg"), "an SVG document")
    check(text.rstrip().endswith("</svg>"), "a complete SVG document")
    fills = re.findall(r'<rect [^>]*fill="(#[0-9a-fA-F]+)"', text)
    colours = sorted(set(fills))
    check(len(colours) == 4, f"{len(colours)} fill colours for 4 ranks: {colours}")
    # Each colour: one cell per row of its rank, and one legend swatch.
    counts = sorted(fills.count(c) - 1 for c in colours)
    check(counts == sorted(column(s, "rows")), f"cells per colour {counts} vs rows")

if failures:
    sys.exit(f"{len(failures)} checks failed")
print(f"ok: sparse hit-layout checks under {NP} processes")
