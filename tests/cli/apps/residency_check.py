#!/usr/bin/env python3
"""Data stays on its device: hit-jacobi and hit-cannon on emulated devices report per-rank
host<->device bytes (h2d_bytes, d2h_bytes) within what residency allows, computed here from the
blocks layout independently of the library, and write results bit-identical to host runs.

usage: residency_check.py MPIEXEC NP BIN_DIR jacobi|cannon WORK_DIR
"""
import json
import os
import subprocess
import sys

mpiexec, np_, bindir, app, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
os.makedirs(work, exist_ok=True)
env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
DOUBLE = 8
failures = []


def run(args):
    out = subprocess.run([mpiexec, "-n", str(np_)] + args, capture_output=True, text=True, env=env,
                         timeout=240)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} exited {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def parts(n, p):
    """Hitmap's blocks: the first n mod p parts get one element more."""
    return [n // p + (1 if i < n % p else 0) for i in range(p)]


def expect(cond, what):
    if not cond:
        failures.append(what)


emu = f"emu:0(slowdown=1)*{np_}"
if app == "jacobi":
    n, iters = 66, 50
    # mesh2d dims as the library balances them: the most square factorisation, rows first.
    rows = max(d for d in range(1, int(np_ ** 0.5) + 1) if np_ % d == 0)
    dims = (np_ // rows, rows)
    result = json.loads(run([f"{bindir}/hit-jacobi", "--n", str(n), "--iters", str(iters), "--reps", "1",
                             "--warmup", "0", "--devices", emu, "--json", "--out", f"{work}/emu.raw"]))
    expect(result["topology"]["dims"] == list(dims), f"mesh2d dims {result['topology']['dims']} != {dims}")
    pr, pc = parts(n, dims[0]), parts(n, dims[1])
    for r in result["per_rank"]:
        expect(r["evictions"] == 0, f"rank {r['rank']}: {r['evictions']} evictions with memory for all")
        i, j = divmod(r["rank"], dims[1])
        h, w = pr[i], pc[j]
        grid = (h + 2) * (w + 2) * DOUBLE
        faces = ((i > 0) + (i < dims[0] - 1)) * w + ((j > 0) + (j < dims[1] - 1)) * h
        face_bytes = faces * DOUBLE
        # The two grids once, then the faces received per iteration; out: the faces sent per
        # iteration and the result once.
        expect(2 * grid <= r["h2d_bytes"] <= 2 * grid + iters * face_bytes,
               f"rank {r['rank']}: h2d {r['h2d_bytes']} outside [{2 * grid}, {2 * grid + iters * face_bytes}]")
        expect(r["d2h_bytes"] <= iters * face_bytes + h * w * DOUBLE,
               f"rank {r['rank']}: d2h {r['d2h_bytes']} > {iters * face_bytes + h * w * DOUBLE}")
        # Staging whole tiles every launch would have moved two grids in per iteration.
        expect(r["h2d_bytes"] < iters * grid / 2, f"rank {r['rank']}: h2d {r['h2d_bytes']} is grids per iteration")
    run([f"{bindir}/hit-jacobi", "--n", str(n), "--iters", str(iters), "--reps", "1", "--warmup", "0",
         "--out", f"{work}/host.raw"])
else:
    n, reps = 70, 2
    q = int(np_ ** 0.5)
    result = json.loads(run([f"{bindir}/hit-cannon", "--n", str(n), "--reps", str(reps), "--warmup", "1",
                             "--devices", emu, "--json", "--c-out", f"{work}/emu.raw"]))
    p = parts(n, q)
    padded = max(p) * max(p) * DOUBLE  # A and B are padded to the largest block
    for r in result["per_rank"]:
        expect(r["evictions"] == 0, f"rank {r['rank']}: {r['evictions']} evictions with memory for all")
        if r["rank"] >= q * q:
            expect(r["h2d_bytes"] == 0 and r["d2h_bytes"] == 0, f"inactive rank {r['rank']} moved data")
            continue
        i, j = divmod(r["rank"], q)
        c_bytes = p[i] * p[j] * DOUBLE
        # C comes back once per repetition, and nothing else does.
        expect(r["d2h_bytes"] == reps * c_bytes, f"rank {r['rank']}: d2h {r['d2h_bytes']} != {reps} x C {c_bytes}")
        # In: C once, A and B once per step (after each shift), per repetition.
        most = reps * (c_bytes + q * 2 * padded)
        expect(reps * c_bytes < r["h2d_bytes"] <= most, f"rank {r['rank']}: h2d {r['h2d_bytes']} outside ({reps * c_bytes}, {most}]")
    run([f"{bindir}/hit-cannon", "--n", str(n), "--reps", "1", "--warmup", "0", "--c-out", f"{work}/host.raw"])

with open(f"{work}/emu.raw", "rb") as a, open(f"{work}/host.raw", "rb") as b:
    expect(a.read() == b.read(), "the result on emulated devices differs from the host run's")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"residency {app} np={np_}: {len(result['per_rank'])} ranks within bounds, results bit-identical")
