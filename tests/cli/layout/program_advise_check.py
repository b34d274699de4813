#!/usr/bin/env python3
"""--hit-advise end to end (docs/advisor.md, "Any program"): hit-jacobi, dry-run on every
candidate layout, prices each from the steps it recorded (its halo messages, its launches with the
jacobi5 kernel's declared flops) and no formula of Jacobi. Its prices must equal those of
hit-layout's Jacobi formula for the same run on every candidate both rank, at 1, 2 and 4
processes; the work of each process must be the program's (4 flops per interior point per
iteration); the program's own output is not printed; a bad HIT_ADVISE is refused in one line.

hit-cg, a sparse program, the same way: its candidates are the sparse layout plug-ins', two that
own every row alike are one, its work is the program's launches (2 flops a nonzero and 10 a row
each iteration, 2 a row once), and its prices follow hit-layout's CG formula (the same best
layout, every price within a quarter: the formula prices CG's vector updates at the sparse product's
speed, the dry run at the streaming kernels').

hit-qr and hit-cholesky --runtime, programs of the task runtime: their task graphs are priced by
simulating their schedules, and each process's work on a layout is what a run on it computes.

Usage: program_advise_check.py BIN_DIR MPIEXEC
"""
import json
import os
import subprocess
import sys

BIN, MPIEXEC = sys.argv[1], sys.argv[2]
JACOBI = os.path.join(BIN, "hit-jacobi")
LAYOUT = os.path.join(BIN, "hit-layout")
DEVICES = {1: "cpu", 2: "emu:0(slowdown=3,clock=cpu),cpu",
           4: "emu:0(slowdown=4,clock=cpu),cpu*3"}
N, ITERS = 256, 40


def run(cmd, env=None, expect=0):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, **(env or {})))
    if out.returncode != expect:
        sys.exit(f"FAILED ({out.returncode}, expected {expect}): {' '.join(cmd)}\n"
                 f"{out.stdout}\n{out.stderr}")
    return out


def advised(procs):
    cmd = [MPIEXEC, "-n", str(procs), JACOBI, "--n", str(N), "--iters", str(ITERS), "--reps", "1",
           "--warmup", "0", "--topology", "array", "--hit-advise=json"]
    out = run(cmd, {"HIT_DEVICES": DEVICES[procs]})
    # Nothing but the advice on stdout: the dry runs' own result lines were not printed.
    return json.loads(out.stdout)


def formula(procs):
    out = run([LAYOUT, "--advise", "--json", "--app", "jacobi", "--shape", f"[0:{N}][0:{N}]",
               "--iters", str(ITERS), "--procs", str(procs), "--devices", DEVICES[procs]])
    doc = json.loads(out.stdout)
    return {c["layout"]: c for c in doc["candidates"] if c["topology"] == "array"}


for procs in (1, 2, 4):
    doc = advised(procs)
    assert doc["program"] == "hit-jacobi" and doc["procs"] == procs, doc
    assert doc["settings"] == ["grid"], doc["settings"]
    assert doc["arrays"][0]["shape"] == f"[0:{N}][0:{N}]", doc["arrays"]
    cands = doc["candidates"]
    assert cands, "no candidate"
    times = [c["predicted_s"] for c in cands]
    assert times == sorted(times) or procs == 1, f"not ranked: {times}"
    # Every process computes 4 flops per interior point of its block per iteration: the whole
    # grid's interior over the processes.
    for c in cands:
        work = sum(p["flops"] for p in c["procs"])
        assert abs(work - 4 * (N - 2) ** 2 * ITERS) < 1e-6 * work, (c["layout"], work)
        assert c["command"] == f"HIT_LAYOUT_GRID={c['layout']} hit-jacobi", c["command"]
    # The same prices as the formula, wherever both rank the layout.
    reference = formula(procs)
    same = 0
    extras = []
    for c in cands:
        ref = reference.get(c["layout"])
        if ref is None:
            continue
        # Compute and makespan within 1 %: the formula counts 1 + neighbours
        # launches a sweep and overlaps the whole sweep with the messages, the steps count the
        # launches the program makes and overlap those that follow the halo's start.
        for key, tolerance in (("compute_s", 0.01), ("predicted_s", 0.01)):
            assert abs(c[key] - ref[key]) <= 1e-9 + tolerance * ref[key], \
                (procs, c["layout"], key, c[key], ref[key])
        # The halo's messages, and the program's two reductions at the end (the last change and
        # the checksum), which the formula leaves out: the same on every layout, and nothing
        # with one process.
        extras.append(c["comm_s"] - ref["comm_s"])
        same += 1
    assert same >= min(procs, 2), f"{procs} processes: {same} layouts ranked by both"
    assert all(abs(e - extras[0]) <= 1e-12 for e in extras), (procs, extras)
    assert (extras[0] == 0 if procs == 1 else 0 < extras[0] < 1e-4), (procs, extras)
    if procs > 1:
        # The device slowed down gets the smaller share in the best layout.
        best = cands[0]["procs"]
        assert best[0]["flops"] < min(p["flops"] for p in best[1:]), cands[0]
        assert any(r["layout"].startswith("cyclic") for r in doc["rejected"]), doc["rejected"]

# A sparse program: hit-cg's dry runs on the sparse layout plug-ins' candidates.
CG = os.path.join(BIN, "hit-cg")
GRID, CG_ITERS = 64, 30
ROWS, NONZEROS = GRID * GRID, GRID * GRID * 5 - 4 * GRID


def cg_formula(procs):
    out = run([LAYOUT, "--advise", "--json", "--app", "cg", "--generate", f"poisson2d:n={GRID}",
               "--iters", str(CG_ITERS), "--procs", str(procs), "--devices", DEVICES[procs]])
    return json.loads(out.stdout)["candidates"]


for procs in (1, 2, 4):
    out = run([MPIEXEC, "-n", str(procs), CG, "--generate", f"poisson2d:n={GRID}", "--max-iters",
               str(CG_ITERS), "--reps", "1", "--warmup", "0", "--hit-advise=json"],
              {"HIT_DEVICES": DEVICES[procs]})
    doc = json.loads(out.stdout)
    if procs == 2:
        doc_2 = doc
    assert doc["settings"] == ["matrix"], doc["settings"]
    matrix = doc["arrays"][0]
    assert matrix["sparse"] and matrix["nonzeros"] == NONZEROS, matrix
    assert matrix["shape"] == f"[0:{ROWS}][0:{ROWS}]", matrix
    cands = doc["candidates"]
    for c in cands:
        work = sum(p["flops"] for p in c["procs"])
        assert work == CG_ITERS * (2 * NONZEROS + 10 * ROWS) + 2 * ROWS, (c["layout"], work)
        assert c["command"] == f"HIT_LAYOUT_MATRIX={c['layout']} hit-cg", c["command"]
    # One process owns every row whatever the layout: one candidate, the others the same rows.
    if procs == 1:
        assert len(cands) == 1, cands
        assert all(r["reason"].startswith("the same rows as ") for r in doc["rejected"]), \
            doc["rejected"]
    reference = {c["layout"]: c for c in cg_formula(procs)}
    assert cands[0]["layout"] == next(iter(reference)), (procs, cands[0]["layout"], reference)
    for c in cands:
        ref = reference[c["layout"]]
        for key in ("predicted_s", "compute_s"):
            assert abs(c[key] - ref[key]) <= 0.25 * ref[key], (procs, c["layout"], key, c[key],
                                                              ref[key])
        if procs > 1:
            # The halo's messages: the same values from the same peers, the reductions beside.
            assert abs(c["comm_s"] - ref["comm_s"]) <= 0.25 * ref["comm_s"], \
                (procs, c["layout"], c["comm_s"], ref["comm_s"])
    if procs > 1:
        best = cands[0]["procs"]
        assert best[0]["flops"] < min(p["flops"] for p in best[1:]), cands[0]

# The program's own layout option does not replace the candidate a dry run prices: the same
# ranking with --layout given.
out = run([MPIEXEC, "-n", "2", CG, "--generate", f"poisson2d:n={GRID}", "--max-iters",
           str(CG_ITERS), "--reps", "1", "--warmup", "0", "--layout", "rows", "--hit-advise=json"],
          {"HIT_DEVICES": DEVICES[2]})
given = json.loads(out.stdout)
assert [c["layout"] for c in given["candidates"]] == [c["layout"] for c in doc_2["candidates"]], \
    (given["candidates"], doc_2["candidates"])
# The devices the program binds (its --devices) are the machine priced, as HIT_DEVICES are.
out = run([MPIEXEC, "-n", "2", CG, "--generate", f"poisson2d:n={GRID}", "--max-iters",
           str(CG_ITERS), "--reps", "1", "--warmup", "0", "--devices", DEVICES[2],
           "--hit-advise=json"])
flagged = json.loads(out.stdout)
assert flagged["devices"] == doc_2["devices"], (flagged["devices"], doc_2["devices"])
assert [c["predicted_s"] for c in flagged["candidates"]] == \
    [c["predicted_s"] for c in doc_2["candidates"]], (flagged["candidates"], doc_2["candidates"])

# Programs of the task runtime: hit-qr and hit-cholesky --runtime record their task graphs and
# are priced by simulating them; each process's work in a candidate is what a run on that layout
# gives it (the JSON's per-rank work), and no candidate is free.
for program in (["hit-qr"], ["hit-cholesky", "--runtime"]):
    args = ["--n", "256", "--b", "32", "--reps", "1", "--warmup", "0"]
    for procs in (1, 2, 4):
        base = [MPIEXEC, "-n", str(procs), os.path.join(BIN, program[0])] + program[1:] + args
        doc = json.loads(run(base + ["--hit-advise=json"], {"HIT_DEVICES": DEVICES[procs]}).stdout)
        # The best candidate run as its command says (HIT_LAYOUT_...=spec).
        best = doc["candidates"][0]
        variable, spec = best["command"].split(" ")[0].split("=", 1)
        ran = json.loads(run(base + ["--json"],
                             {"HIT_DEVICES": DEVICES[procs], variable: spec}).stdout)
        assert ran["layout"].startswith(best["layout"]), (program, procs, ran["layout"], best)
        priced = [p["flops"] for p in best["procs"]]
        work = [r["work"] for r in sorted(ran["per_rank"], key=lambda r: r["rank"])]
        assert all(abs(a - b) <= 1e-9 * max(b, 1) for a, b in zip(priced, work)), \
            (program, procs, priced, work)
        assert all(c["predicted_s"] > 0 and c["compute_s"] > 0 for c in doc["candidates"]), \
            (program, procs, doc["candidates"])

# Work packages are dispatched by measured times, which a dry run has not: refused in one line on
# every count; a static schedule of the same program is advised.
PACKAGES = os.path.join(BIN, "hit-packages")
for procs in (1, 3):
    out = run([MPIEXEC, "-n", str(procs), PACKAGES, "--n", "64", "--reps", "1", "--warmup", "0",
               "--hit-advise"], expect=2)
    assert out.stderr.count("\n") == 1 and "does not price yet" in out.stderr, out.stderr
    out = run([MPIEXEC, "-n", str(procs), PACKAGES, "--n", "64", "--reps", "1", "--warmup", "0",
               "--schedule", "static", "--hit-advise=json"])
    assert json.loads(out.stdout)["candidates"], out.stdout

# The table names the best run.
out = run([JACOBI, "--n", "64", "--iters", "2", "--hit-advise"])
assert out.stdout.startswith("hit-jacobi --hit-advise: 1 processes (cpu:0)"), out.stdout
assert "run the best:\n  HIT_LAYOUT_GRID=" in out.stdout, out.stdout

# Bad input: one line, exit status 2, on every count.
for procs in (1, 3):
    out = run([MPIEXEC, "-n", str(procs), JACOBI, "--n", "64"], {"HIT_ADVISE": "maybe"}, expect=2)
    assert out.stderr == "hit-jacobi: error: HIT_ADVISE 'maybe': give 1 (a table) or json\n", \
        out.stderr
    out = run([MPIEXEC, "-n", str(procs), os.path.join(BIN, "hit-info"), "--hit-advise"],
              expect=2)
    assert out.stderr.count("\n") == 1 and "lays out no array from a layout setting" in out.stderr, \
        out.stderr
print("ok")
