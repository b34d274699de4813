#!/usr/bin/env python3
"""Flags the tables of docs/benchmarks.md that no longer describe the code.

Every section a benchmark script writes (between <!-- BEGIN name --> and <!-- END name -->) names
the commit it measured. A section is stale when a file its figures depend on (the library, the
programs it runs, its script) changed between that commit and the working tree, or when it names
no commit at all. Prints one line per section; with --strict, exits 1 when any is stale.

    python3 bench/stale_tables.py [--strict] [--file docs/benchmarks.md]
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What every measured program is built from.
LIBRARY = ["src", "include", "plugins", "CMakeLists.txt", "examples/common"]

# Library code that only hit-layout runs (the advisor): a change there cannot move the figures of
# a section that does not run hit-layout, though the library holds it.
LAYOUT_ONLY = ["src/advisor", "include/hit/advisor"]

# The files each section's figures depend on, beyond the library, and the command that re-measures it.
SECTIONS = {
    "comm": (["examples/cannon", "examples/jacobi", "bench/ref/cannon.cpp", "bench/ref/jacobi.cpp",
              "bench/machine", "bench/run_benchmarks.py"], "python3 bench/run_benchmarks.py"),
    "summa": (["examples/summa", "examples/cannon", "bench/ref/pdgemm.cpp",
               "bench/ref/scalapack_grid.hpp", "bench/summa"], "python3 bench/summa/summa_bench.py"),
    "cholesky": (["examples/cholesky", "bench/ref/pdpotrf.cpp", "bench/ref/scalapack_grid.hpp",
                  "bench/cholesky"], "python3 bench/cholesky/cholesky_bench.py --hetero"),
    "cholesky-starpu": (["examples/cholesky", "bench/cholesky"],
                        "python3 bench/cholesky/cholesky_bench.py --starpu"),
    "qr": (["examples/qr", "bench/ref/pdgeqrf.cpp", "bench/ref/scalapack_grid.hpp", "bench/qr"],
           "python3 bench/qr/qr_bench.py"),
    "balance": (["examples/jacobi", "bench/balance"], "python3 bench/balance/balance_bench.py"),
    "balance-cg": (["examples/cg", "bench/balance/cg_balance_bench.py"],
                   "python3 bench/balance/cg_balance_bench.py"),
    "hierarchical": (["examples/summa", "tools/fpm", "bench/hierarchical"],
                     "python3 bench/hierarchical/hier_bench.py"),
    "lb": (["examples/cannon", "tools/fpm", "bench/lb"], "python3 bench/lb/lb_sweep.py"),
    "fpm": (["bench/fpm", "tools/fpm"], "python3 bench/fpm/fpm_bench.py"),
    "plans": (["tools/layout", "bench/plans"], "python3 bench/plans/plans_bench.py"),
    "launch": (["bench/launch"], "python3 bench/launch/launch_bench.py"),
    "overlap": (["examples/cannon", "bench/overlap"],
                "python3 bench/overlap/copy_compute_bench.py --update-docs"),
    "packages": (["examples/packages", "bench/packages"],
                 "python3 bench/packages/packages_bench.py --update-docs"),
    "clustercl": (["examples/packages", "bench/packages/clustercl_bench.py"],
                  "python3 bench/packages/clustercl_bench.py --update-docs"),
    "batch": (["examples/packages", "bench/packages/batch_bench.py",
               "bench/packages/placement_bench.py"],
              "python3 bench/packages/batch_bench.py --update-docs"),
    "placement": (["examples/packages", "bench/packages"],
                  "python3 bench/packages/placement_bench.py --update-docs --before OLD_BUILD"),
    "sparse": (["examples/cg", "examples/heat", "bench/ref/csr_cg.cpp", "bench/ref/csr_problem.hpp",
                "bench/ref/petsc_cg.c", "tools/fpm", "bench/sparse"],
               "python3 bench/sparse/sparse_bench.py --update-docs"),
    "advisor": (["examples/jacobi", "examples/cannon", "examples/summa", "examples/cg",
                 "examples/cholesky", "tools/layout", "tools/fpm", "bench/advisor"],
                "python3 bench/advisor/advisor_bench.py --update-docs"),
    "shared": (["examples/cannon", "examples/jacobi", "bench/shared"],
               "python3 bench/shared/shared_bench.py --update-docs --baseline OLD_BUILD"),
}

BEGIN = re.compile(r"<!-- BEGIN (\S+) -->")
COMMIT = re.compile(r"\bcommit ([0-9a-f]{7,40})\b")


def git(*args):
    return subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True)


def sections(text):
    """(name, body) of every marked section."""
    for m in BEGIN.finditer(text):
        name = m.group(1)
        end = text.find(f"<!-- END {name} -->", m.end())
        yield name, text[m.end():end if end >= 0 else len(text)]


def changed_since(commit, paths, excluded=()):
    """The files among `paths` (less those under `excluded`) that differ between `commit` and the
    working tree, or None when the commit is unknown to this repository."""
    if git("cat-file", "-e", commit + "^{commit}").returncode != 0:
        return None
    existing = [p for p in paths if os.path.exists(os.path.join(ROOT, p))]
    out = git("diff", "--name-only", commit, "--", *existing,
              *[f":(exclude){p}" for p in excluded])
    # A benchmark's own results (bench/*/results/) are what it measured, not code it measured.
    return [l for l in out.stdout.splitlines() if l and "/results/" not in l]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--strict", action="store_true", help="exit 1 when a table is stale")
    args = ap.parse_args()
    text = open(args.file).read()
    stale = 0
    for name, body in sections(text):
        deps, command = SECTIONS.get(name, ([], "its benchmark script"))
        commits = COMMIT.findall(body)
        if not commits:
            print(f"stale   {name}: names no measured commit; re-measure with {command}")
            stale += 1
            continue
        commit = commits[0]
        changed = changed_since(commit, LIBRARY + deps,
                                () if "tools/layout" in deps else LAYOUT_ONLY)
        if changed is None:
            print(f"unknown {name}: commit {commit} is not in this repository's history")
            continue
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            print(f"stale   {name}: measured at {commit}; changed since: {shown}; "
                  f"re-measure with {command}")
            stale += 1
        else:
            print(f"current {name}: measured at {commit}, nothing it depends on changed since")
    return 1 if args.strict and stale else 0


if __name__ == "__main__":
    sys.exit(main())
