#!/usr/bin/env python3
"""Several ranks on one emulated device whose memory holds one rank's data and a little more: the
program passes its --check, writes a result bit-identical to the same run on cpu, and its JSON
shows the ranks giving up resident copies for each other (evictions) only where residency cannot
hold them all. The same run with memory for everyone gives up nothing.

usage: shared_device_check.py MPIEXEC NP BIN_DIR APP WORK_DIR
APP: cannon | jacobi | summa | cholesky | packages | jacobi-fpm | linsolve
"""
import json
import math
import os
import subprocess
import sys

mpiexec, np_, bindir, app, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
os.makedirs(work, exist_ok=True)
env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
DOUBLE = 8
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def run(args):
    out = subprocess.run([mpiexec, "-n", str(np_)] + args, capture_output=True, text=True, env=env,
                         timeout=240)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} exited {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def padded(cols):
    """Doubles per device row: rows start 64 bytes apart on an emulated device."""
    return math.ceil(cols / 8) * 8


def split(n, p):
    return [n // p + (1 if i < n % p else 0) for i in range(p)]


def grid(p):
    """The most square factorisation, rows first (mesh2d and square topologies)."""
    rows = max(d for d in range(1, int(p ** 0.5) + 1) if p % d == 0)
    return p // rows, rows


# Per app: the program's arguments, the file it writes, and what one rank keeps resident or stages
# in one launch at most (bytes), from which the device's memory is chosen.
if app == "cannon":
    n = 192
    q = int(np_ ** 0.5)
    b = max(split(n, q))
    one_rank = 3 * b * padded(b) * DOUBLE
    args = [f"{bindir}/hit-cannon", "--n", str(n), "--reps", "2", "--warmup", "1"]
    out_flag = "--c-out"
elif app in ("jacobi", "jacobi-fpm"):
    n = 160
    r, c = grid(np_) if app == "jacobi" else (np_, 1)
    one_rank = 2 * (max(split(n, r)) + 2) * padded(max(split(n, c)) + 2) * DOUBLE
    args = [f"{bindir}/hit-jacobi", "--n", str(n), "--iters", "30", "--reps", "1", "--warmup", "0"]
    if app == "jacobi-fpm":
        # Rows re-partitioned while it runs: the balancer's moves of resident copies too. Noise
        # on a loaded host may give nearly every row to one rank (CI once gave rank 0 86 % of
        # them), so the device holds both whole grids: no rank's blocks, capped at the array,
        # can need more. The ranks' blocks, allocated with rows to spare and with halos, hold
        # more than the grids together, so they still take turns.
        args += ["--topology", "array", "--balance", "fpm", "--balance-every", "5"]
        one_rank = int(2 * (n + 2) * padded(n + 2) * DOUBLE / 1.25)
    out_flag = "--out"
elif app == "summa":
    n, panel = 192, 32
    r, c = grid(np_)
    h, w = max(split(n, r)), max(split(n, c))
    one_rank = (h * padded(w) + h * padded(panel) + panel * padded(w)) * DOUBLE
    args = [f"{bindir}/hit-summa", "--n", str(n), "--panel", str(panel), "--reps", "2", "--warmup", "1"]
    out_flag = "--c-out"
elif app == "cholesky":
    n, b = 240, 48
    # Nothing resident: one launch stages at most three tiles (a gemm update).
    one_rank = 3 * b * padded(b) * DOUBLE
    args = [f"{bindir}/hit-cholesky", "--n", str(n), "--b", str(b), "--reps", "1", "--warmup", "0"]
    out_flag = "--c-out"
elif app == "linsolve":
    n = 300
    # The rows of [A | b] kept resident, x gathered every iteration (staged).
    one_rank = max(split(n, np_)) * padded(n + 1) * DOUBLE + 2 * n * DOUBLE
    args = [f"{bindir}/hit-linsolve", "--n", str(n), "--iters", "20", "--reps", "1", "--warmup", "0"]
    out_flag = "--out"
elif app == "packages":
    n = 96
    # C = A*B by work packages: B replicated on every device, rows of A and C per package.
    one_rank = 2 * n * padded(n) * DOUBLE + 2 * 16 * padded(n) * DOUBLE
    args = [f"{bindir}/hit-packages", "--workload", "gemm", "--n", str(n), "--reps", "1", "--warmup", "0",
            "--schedule", "workPackages:size=8"]
    out_flag = None
else:
    sys.exit(f"unknown app {app}")

# Room for one rank's need and a quarter more: two ranks at work at once must take turns. Work
# packages are claimed as ranks come free, so a rank may get none and never hold B: there the
# room is one rank's need only, so that any two ranks that both get packages take turns.
mem = int(one_rank * (1.0 if app == "packages" else 1.25)) + 4096
shared = f"emu:0(mem={mem}B)*{np_}"
roomy = f"emu:0*{np_}"


def result(devices, out):
    extra = [out_flag, out] if out_flag else []
    text = run(args + ["--devices", devices, "--check", "--json"] + extra)
    return json.loads(text)


tight = result(shared, f"{work}/shared.raw")
plenty = result(roomy, f"{work}/plenty.raw")
if out_flag:
    run(args + ["--devices", f"cpu*{np_}", out_flag, f"{work}/cpu.raw"])
    with open(f"{work}/shared.raw", "rb") as a, open(f"{work}/cpu.raw", "rb") as b:
        expect(a.read() == b.read(), "the result on the shared device differs from the cpu run's")

expect(tight["check"]["passed"], f"check failed on the shared device: {tight['check']}")
per_rank = tight.get("per_rank") or tight.get("per_device")
evictions = sum(r["evictions"] for r in per_rank)
for r in plenty.get("per_rank") or plenty.get("per_device"):
    expect(r["evictions"] == 0 and r["evicted_bytes"] == 0,
           f"rank {r['rank']} gave up copies with memory for everyone: {r['evictions']}")
# Only programs that keep tiles resident between launches have anything to give up; where every
# rank's tiles must take turns (two or more ranks, memory for one), they do.
keeps_resident = app in ("cannon", "jacobi", "jacobi-fpm", "summa", "packages", "linsolve")
if keeps_resident and np_ >= 2:
    expect(evictions > 0, f"no rank gave up a copy on a device of {mem} B shared by {np_} ranks")
if not keeps_resident:
    expect(evictions == 0, f"{app} keeps nothing resident, yet {evictions} evictions")
for r in per_rank:
    # A copy given up is written back only when newer on the device: never more bytes back than
    # the results plus what was given up.
    expect(r["evicted_bytes"] >= r["evictions"], f"rank {r['rank']}: evicted bytes below the count")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"shared device {app} np={np_}: mem={mem} B, {evictions} evictions, check passed"
      + (", bit-identical to cpu" if out_flag else ""))
