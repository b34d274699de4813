#!/usr/bin/env python3
"""How often the host waits for its device (per-rank `launches` and `device_waits` of --json).

hit-jacobi queues its sweeps (hit::Completion::queued): on one process with a device of its own
the host waits three times a repetition, whatever the iteration count (the first launch sends the
two grids, then the kernels at the end, then the result comes back). On several processes the only
other waits are the halo's (faces to the host before they are sent, ghosts to the device after
they arrive): the same run with every rank on one shared device, where the ranks take turns for
whole kernels so that every launch waits, has exactly its launches' waits more, less the two the
queued run adds at the end. hit-cannon, hit-summa and hit-cg wait at least once per launch on an
emulated device (each launch sends what the host received), and never on a cpu device. Every run
passes its --check.

usage: launch_waits_check.py MPIEXEC NP BIN_DIR
"""
import json
import subprocess
import sys

mpiexec, np_, bindir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
failures = []
own = ",".join(f"emu:{i}" for i in range(np_))
shared = f"emu:0*{np_}"


def run(app, args, devices):
    cmd = [mpiexec, "-n", str(np_), f"{bindir}/{app}"] + args + [
        "--reps", "1", "--warmup", "0", "--devices", devices, "--json", "--check"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {out.returncode}: {out.stderr.strip()}")
    result = json.loads(out.stdout)
    if not result["check"]["passed"]:
        failures.append(f"{app} on {devices}: check failed")
    return result["per_rank"]


def expect(cond, what):
    if not cond:
        failures.append(what)


iters = 12
jacobi = ["--n", "48", "--iters", str(iters)]
queued = run("hit-jacobi", jacobi, own)
if np_ == 1:
    r = queued[0]
    expect(r["launches"] == iters, f"jacobi: {r['launches']} launches for {iters} iterations")
    expect(r["device_waits"] == 3, f"jacobi: the host waited {r['device_waits']} times, not 3")
else:
    turns = run("hit-jacobi", jacobi, shared)
    for q, t in zip(queued, turns):
        expect(q["launches"] == t["launches"] >= iters,
               f"jacobi rank {q['rank']}: launches {q['launches']} and {t['launches']}")
        expect(t["device_waits"] >= t["launches"],
               f"jacobi rank {t['rank']} on a shared device: {t['device_waits']} waits for "
               f"{t['launches']} launches")
        expect(q["device_waits"] == t["device_waits"] - t["launches"] + 2,
               f"jacobi rank {q['rank']}: {q['device_waits']} waits on its own device, "
               f"{t['device_waits']} with {t['launches']} launches on a shared one")

others = {
    "hit-cannon": ["--n", "48"],
    "hit-summa": ["--n", "48"],
    "hit-cg": ["--generate", "poisson2d:n=12"],
}
for app, args in others.items():
    if app == "hit-cannon" and int(np_ ** 0.5) ** 2 != np_:
        continue
    for r in run(app, args, own):
        expect(r["device_waits"] >= r["launches"],
               f"{app} rank {r['rank']}: {r['device_waits']} waits for {r['launches']} launches")
        if r["work"] > 0:
            expect(r["launches"] > 0, f"{app} rank {r['rank']}: work without launches")
    for r in run(app, args, f"cpu*{np_}"):
        expect(r["device_waits"] == 0, f"{app} rank {r['rank']} waited {r['device_waits']} times on cpu")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"launch waits np={np_}: jacobi's sweeps queued, the others wait for their launches")
