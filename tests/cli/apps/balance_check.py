#!/usr/bin/env python3
"""hit-jacobi --balance fpm on emulated devices whose speed changes mid-run: the result is bit for
bit the serial one, and the balancer's report shows what the speed changes force — rank 1, made
5000x slower at its 8th launch, left without rows, then, when every other rank is made as slow at
its 20th, given rows again (np >= 2); at one process only the answer is checked. Twice: with the
default reserve, where a block that shrinks (or grows within its spare rows) moves in place, and
with --balance-reserve 0.

Whether the balancer moves at all depends on the measured times: on a loaded machine the noise of
microsecond steps can exceed every spread, and the balancer then rightly holds still (docs/fpm.md).
So the moves the speed changes should force must show in one of up to three runs of each setting;
what holds whatever the timing (bit for bit, rows summing to 96, bytes moved) must hold in every
run.

usage: balance_check.py MPIEXEC NP HIT_JACOBI
"""
import json
import subprocess
import sys

mpiexec, np_, jacobi = sys.argv[1], int(sys.argv[2]), sys.argv[3]
slow_later = "emu(clock=cpu,change=5000@20)"
devices = [slow_later] * np_
if np_ >= 2:
    devices[1] = "emu(clock=cpu,change=5000@8)"
# Each rank its own emulated device (a shared one would count the launches of all its ranks).
devices = ",".join(d.replace("emu(", f"emu:{i}(") for i, d in enumerate(devices))
cmd = [mpiexec, "-n", str(np_), jacobi, "--n", "96", "--iters", "60", "--balance", "fpm",
       "--balance-eps", "0.1", "--devices", devices, "--check", "--json", "--reps", "1",
       "--warmup", "0"]


def check(extra):
    """What is wrong with one run: (errors whatever the timing, moves the timing did not show, the
    rows per rebalance)."""
    out = subprocess.run(cmd + extra, capture_output=True, text=True, timeout=240)
    problems = []
    unseen = []
    if out.returncode != 0:
        return [f"{extra}: exit {out.returncode}: {out.stderr.strip()}"], [], []
    result = json.loads(out.stdout)
    if not result["check"]["passed"]:
        problems.append(f"not bit-for-bit equal to the serial run: {result['check']}")
    b = result["balance"]
    rows = [r["rows"] for r in b["rebalances"]]
    if any(sum(r) != 96 for r in rows) or sum(b["rows"]) != 96:
        problems.append(f"rows do not sum to 96: {rows}")
    if any(not 0 <= r["tiles_in_place"] <= r["tiles_moved"] for r in b["rebalances"]):
        problems.append(f"tiles in place outside 0..tiles moved: {b['rebalances']}")
    if np_ >= 2:
        emptied = next((k for k, r in enumerate(rows) if r[1] == 0), None)
        if emptied is None:
            unseen.append(f"rank 1 never lost its rows: {rows}")
        elif not any(r[1] > 0 for r in rows[emptied + 1:]):
            unseen.append(f"rank 1 never got rows back: {rows}")
        if any(r["bytes_moved"] <= 0 for r in b["rebalances"]):
            problems.append("a rebalance moved no bytes")
        # Giving rank 1 rows back shrinks blocks that earlier moves put in new memory: in place.
        if b["rebalances"] and sum(r["tiles_in_place"] for r in b["rebalances"]) == 0:
            unseen.append(f"no tile moved in place: {b['rebalances']}")
    return [f"{extra}: {p}" for p in problems], [f"{extra}: {p}" for p in unseen], rows


problems = []
for extra in ([], ["--balance-reserve", "0"]):
    for attempt in range(3):
        errors, unseen, rows = check(extra)
        problems += errors
        if errors or not unseen:
            break
        print(f"run {attempt + 1} of {extra}: {'; '.join(unseen)}")
    else:
        problems += unseen
    if not problems:
        print(f"np={np_} {extra}: bit-for-bit, {len(rows)} rebalances: {rows}")
if problems:
    print("\n".join(problems))
sys.exit(1 if problems else 0)
