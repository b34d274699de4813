#!/usr/bin/env python3
"""hit-packages with an emulated device that slows down a hundred times after it was measured
(`change=100@3`: from its fourth execution on): its packages keep missing, it withdraws, what it
held is computed by the others in a second round, and the answer is still right (gemm, against
BLAS). The JSON says `withdrawn` for it alone, and every package and row is computed once.

Usage: packages_withdraw.py MPIEXEC NP HIT_PACKAGES"""

import json
import subprocess
import sys


def main():
    mpiexec, np, program = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    devices = ",".join(["emu:0(change=100@3,clock=cpu)"] + ["emu:1(clock=cpu)"] * (np - 1))
    # gemm: every package costs the same, so a package's time tells the device's speed (on
    # Mandelbrot a cheap edge package a hundred times slower can still be within the cautious
    # estimate, which counts the costly middle rows).
    # 768 packages of about a millisecond: the others are still computing when its second slow
    # one (about 0.1 s) ends.
    n = 1536
    cmd = [mpiexec, "-n", str(np), program, "--workload", "gemm", "--n", str(n),
           "--check", "--json", "--reps", "1", "--warmup", "0",
           "--schedule", "workPackages:size=2,depth=2", "--devices", devices]
    # Whether its packages miss is a matter of time on a loaded machine (the others sharing its
    # cores lengthen the times it was measured by, or finish every package before its second slow
    # one ends): a run where it did not withdraw must still be right, and is retried, up to five
    # times.
    for attempt in range(5):
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=240, check=False)
        if out.returncode != 0:
            sys.exit(f"exit {out.returncode}: {' '.join(cmd)}\n{out.stderr}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        if result["per_device"][0]["withdrawn"]:
            break
        if not result["check"]["passed"] or any(d["withdrawn"] for d in result["per_device"]):
            sys.exit(f"a run without rank 0 withdrawn went wrong: {json.dumps(result)}")
        print(f"attempt {attempt + 1}: rank 0 did not withdraw; again")
    errors = []
    if not result["check"]["passed"]:
        errors.append(f"check failed: {result['check']}")
    devices = result["per_device"]
    if [d["withdrawn"] for d in devices] != [r == 0 for r in range(np)]:
        errors.append(f"withdrawn flags {[d['withdrawn'] for d in devices]}, expected rank 0's")
    if any(d["failed"] for d in devices):
        errors.append("a device failed")
    if sum(d["packages"] for d in devices) != result["packages"]:
        errors.append(f"{sum(d['packages'] for d in devices)} packages of {result['packages']}")
    if sum(d["rows"] for d in devices) != n:
        errors.append(f"{sum(d['rows'] for d in devices)} rows of {n}")
    if len(result["rerouted"]) != devices[0]["abandoned"]:
        errors.append(f"{len(result['rerouted'])} rerouted, {devices[0]['abandoned']} handed back")
    if errors:
        sys.exit("\n".join(errors) + "\n" + json.dumps(result))
    print(f"rank 0 withdrew after {devices[0]['packages']} packages, handed back "
          f"{devices[0]['abandoned']}: ok")


if __name__ == "__main__":
    main()
