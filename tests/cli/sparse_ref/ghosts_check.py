#!/usr/bin/env python3
"""Runs ref-csr-cg (the command after --) with --json and checks its matrix against an independent
Python generator: rows, nonzeros and each process's ghost count (the distinct columns of its block
rows held elsewhere) for the 5-/7-point Laplacian with the seeded permutation of hitmap++'s generators, and that
its --check passed. A wrong permutation, block range or stencil changes the ghost counts.

Usage: ghosts_check.py SPEC PROCS -- mpiexec -n PROCS ref-csr-cg ...   (SPEC as --generate)
"""
import json
import subprocess
import sys

MASK = (1 << 64) - 1


def parse(spec):
    kind, _, rest = spec.partition(":")
    dims = {"poisson2d": 2, "poisson3d": 3}[kind]
    k, seed = None, None
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if key == "n":
            k = int(value)
        elif key == "permute":
            seed = int(value) if eq else 1
    return dims, k, seed


def permutation(n, seed):
    pi = list(range(n))
    state = seed
    for i in range(n - 1, 0, -1):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        j = z % (i + 1)
        pi[i], pi[j] = pi[j], pi[i]
    return pi


def edges(dims, k):
    """(u, v) for every off-diagonal entry of the natural Laplacian."""
    n = k ** dims
    for u in range(n):
        c = [u % k, (u // k) % k, u // (k * k)][:dims]
        for axis in range(dims):
            for step in (-1, 1):
                if 0 <= c[axis] + step < k:
                    yield u, u + step * k ** axis


def main():
    sep = sys.argv.index("--")
    spec, procs, command = sys.argv[1], int(sys.argv[2]), sys.argv[sep + 1:]
    dims, k, seed = parse(spec)
    n = k ** dims
    pi = permutation(n, seed) if seed is not None else list(range(n))
    base, extra = divmod(n, procs)
    begin = [p * base + min(p, extra) for p in range(procs + 1)]
    owner = [0] * n
    for p in range(procs):
        for r in range(begin[p], begin[p + 1]):
            owner[r] = p
    ghosts = [set() for _ in range(procs)]
    nnz = n
    for u, v in edges(dims, k):
        nnz += 1
        row, col = pi[u], pi[v]
        if owner[row] != owner[col]:
            ghosts[owner[row]].add(col)
    want = {"rows": n, "nonzeros": nnz, "ghosts": [len(g) for g in ghosts], "procs": procs}

    out = subprocess.run(command, capture_output=True, text=True, timeout=240)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        print(f"FAILED: exit status {out.returncode}\n{out.stdout}")
        return 1
    got = json.loads(out.stdout.strip().splitlines()[-1])
    bad = [f"{key}: got {got.get(key)}, want {value}" for key, value in want.items()
           if got.get(key) != value]
    if not got.get("check", {}).get("passed") or not got.get("converged"):
        bad.append(f"check not passed: {got.get('check')}")
    if bad:
        print("FAILED: " + "; ".join(bad))
        return 1
    print(f"ghosts check: passed ({spec}, {procs} processes, ghosts {want['ghosts']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
