#!/usr/bin/env python3
"""hit-cholesky --runtime on an emulated device: --check passes, and, with one core (every task
on the device), the device's byte counters show each tile of the lower triangle copied in once
and back once (exactly its bytes, no eviction) when the device holds them all; on a device that
holds a third of them, tiles are evicted, dirty ones written back, and the result is still right;
where the device holds them all, its next tasks acquire their tiles while it computes.
With two cores, the host worker and the device both take tasks, and the result is right.

usage: cholesky_runtime_check.py MPIEXEC HIT_CHOLESKY N B TYPE
"""
import json
import subprocess
import sys

mpiexec, cholesky = sys.argv[1], sys.argv[2]
n, b, dtype = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
size = 8 if dtype == "double" else 4
widths = [min(b, n - c) for c in range(0, n, b)]
triangle = sum(widths[i] * widths[j] * size for i in range(len(widths)) for j in range(i + 1))


def run(device):
    cmd = [mpiexec, "-n", "1", cholesky, "--n", str(n), "--b", str(b), "--type", dtype,
           "--runtime", "--devices", device, "--check", "--json", "--reps", "1", "--warmup", "0"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if out.returncode != 0:
        sys.exit(f"{device}: exit {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)


problems = []
whole = run("emu:0(cores=1)")
rank = whole["per_rank"][0]
if not whole["check"]["passed"]:
    problems.append(f"emu:0: check failed: {whole['check']}")
if rank["h2d_bytes"] != triangle or rank["d2h_bytes"] != triangle:
    problems.append(f"emu:0: h2d {rank['h2d_bytes']} B, d2h {rank['d2h_bytes']} B; the triangle's "
                    f"tiles are {triangle} B")
if whole["runtime"]["evictions"] != 0:
    problems.append(f"emu:0: {whole['runtime']['evictions']} evictions with room for every tile")
# The device's next tasks acquire their tiles while it computes (the copies move meanwhile).
if len(widths) > 2 and whole["runtime"]["places"][0]["prefetched"] == 0:
    problems.append(f"emu:0: no task prefetched: {whole['runtime']['places']}")

# Room for a third of the triangle, and at least for a gemm's three widest tiles.
room = max(triangle // 3, 3 * b * b * size)
small = run(f"emu:0(mem={room},cores=1)")
rt = small["runtime"]
if not small["check"]["passed"]:
    problems.append(f"mem={room}: check failed: {small['check']}")
if rt["evictions"] == 0 or rt["write_backs"] == 0:
    problems.append(f"mem={room}: expected evictions and write-backs, got {rt}")
if small["per_rank"][0]["h2d_bytes"] <= triangle:
    problems.append(f"mem={room}: h2d {small['per_rank'][0]['h2d_bytes']} B; evicted tiles come "
                    f"in again, so more than the {triangle} B of the triangle")
hybrid = run("emu:0(slowdown=2,clock=cpu,cores=2)")
places = hybrid["runtime"]["places"]
if not hybrid["check"]["passed"]:
    problems.append(f"hybrid: check failed: {hybrid['check']}")
if len(places) != 2 or any(p["tasks"] == 0 for p in places):
    problems.append(f"hybrid: expected the host worker and the device to take tasks: {places}")
if sum(p["tasks"] for p in places) != hybrid["runtime"]["tasks"]:
    problems.append(f"hybrid: {places} do not add up to {hybrid['runtime']['tasks']} tasks")
print("\n".join(problems) or f"n={n} b={b} {dtype}: {triangle} B in and out once; with {room} B: "
      f"{rt['evictions']} evictions, {rt['write_backs']} write-backs; hybrid: {places}")
sys.exit(1 if problems else 0)
