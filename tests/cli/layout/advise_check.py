#!/usr/bin/env python3
"""hit-layout --advise end to end: the JSON of every application, ranked and with commands that
name the program, every layout plug-in listed or rejected, the same answer under mpiexec, the
calibration from a real run's result, and 65 536 processes in seconds.

Usage: advise_check.py BIN_DIR MPIEXEC
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

BIN, MPIEXEC = sys.argv[1], sys.argv[2]
LAYOUT = os.path.join(BIN, "hit-layout")
HETERO = "emu:0(slowdown=4),cpu*3"


def run(args, procs=1, env=None):
    cmd = ([MPIEXEC, "-n", str(procs)] if procs > 1 else []) + args
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if out.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{out.stderr}")
    return out.stdout


TIE_TOLERANCE = 0.02


def advise(*args, procs=1):
    return json.loads(run([LAYOUT, "--advise", "--json"] + list(args), procs))


def check_ranked(doc, app, procs):
    cands = doc["candidates"]
    assert doc["app"] == app and doc["procs"] == procs, doc
    assert cands, f"{app}: no candidate"
    fits = [c for c in cands if c["fits"]]
    assert cands[: len(fits)] == fits, f"{app}: a candidate that does not fit ranks first"
    # By predicted_s, where makespans within 2 % of each other are a tie that the total cost
    # breaks (docs/advisor.md): no candidate beats an earlier one by more than that.
    times = [c["predicted_s"] for c in fits]
    for i, t in enumerate(times):
        assert all(later * (1 + TIE_TOLERANCE) >= t for later in times[i + 1:]), \
            f"{app}: not ranked by predicted_s: {times}"
    assert times[0] <= min(times) * (1 + TIE_TOLERANCE), f"{app}: the first is not the best: {times}"
    for c in cands:
        assert c["predicted_s"] > 0 and c["compute_s"] > 0, c
        assert c["predicted_s"] <= c["compute_s"] + c["comm_s"] + 1e-12, c
        assert c["command"].startswith(f"mpiexec.mpich -n {procs} hit-{app} "), c["command"]
        assert "--layout " in c["command"], c["command"]


def listed_plugins():
    text = run([LAYOUT, "--list"])
    section = text.split("layouts (--layout):")[1].split("partitions (")[0]
    return re.findall(r"^  (\w+) ", section, re.M)


def main():
    # Every dense application on a heterogeneous node: the slow device gets less than the even
    # share, so the best layout is not the even split, and every plug-in is accounted for.
    names = listed_plugins()
    for app, shape in [("jacobi", "[0:1026][0:1026]"), ("cannon", "[0:512][0:512]"),
                       ("summa", "[0:512][0:512]"), ("cholesky", "[0:1024][0:1024]")]:
        doc = advise("--app", app, "--shape", shape, "--procs", "4", "--devices", HETERO)
        check_ranked(doc, app, 4)
        seen = {re.split(r"[:(]", c["layout"])[0] for c in doc["candidates"] + doc["rejected"]}
        missing = set(names) - seen
        assert not missing, f"{app}: plug-ins neither ranked nor rejected: {missing}"
        assert all(r["reason"] for r in doc["rejected"]), doc["rejected"]
        best = doc["candidates"][0]
        blocks = [c for c in doc["candidates"] if c["layout"] == "blocks"]
        # Cannon cannot run the uneven layouts (A's column blocks would not be B's row blocks),
        # so its best may be the even split; the others balance the slow device away.
        if blocks and app != "cannon":
            assert best["predicted_s"] < blocks[0]["predicted_s"], (app, best, blocks[0])
        if app == "cannon":
            assert any("A's column blocks to equal B's row blocks" in r["reason"]
                       for r in doc["rejected"]), doc["rejected"]

    # --per-process: each candidate's processes. The critical path's compute is the slowest
    # process's of each step, summed, so it is at least any process's whole compute; the 4x
    # slower device computes longer than a host process in the even split.
    doc = advise("--app", "jacobi", "--shape", "[0:1026][0:1026]", "--procs", "4", "--devices",
                 HETERO, "--per-process")
    assert "procs" not in advise("--app", "jacobi", "--shape", "[0:258][0:258]", "--procs", "4",
                                 "--devices", HETERO)["candidates"][0]
    for c in doc["candidates"]:
        procs = c["procs"]
        assert len(procs) == 4, c
        assert c["compute_s"] >= max(p["compute_s"] for p in procs) * (1 - 1e-9), c
        assert all(0 <= p["launch_s"] <= p["compute_s"] and p["comm_s"] >= 0 for p in procs), c
        assert max(p["bytes"] for p in procs) == c["max_bytes"], c
    even = [c for c in doc["candidates"] if c["layout"] == "blocks"][0]["procs"]
    assert even[0]["compute_s"] > 2 * even[1]["compute_s"], even

    # CG on a generated matrix: the sparse plug-ins, the same ranking under mpiexec -n 2.
    one = advise("--app", "cg", "--generate", "poisson2d:n=48", "--procs", "4", "--devices", HETERO)
    check_ranked(one, "cg", 4)
    assert {c["layout"].split(":")[0] for c in one["candidates"]} >= {"rows", "metis"}, one
    # The 4x slower device's weight in the row splits by nonzeros: its speed (1/4) raised to the
    # powers around one, so the prediction can find the balance between them.
    slow = sorted(float(c["layout"].split("w=")[1].split(",")[0]) for c in one["candidates"]
                  if c["layout"].startswith("rows:by=nonzeros,w="))
    want = sorted(0.25 ** p for p in (0.5, 0.75, 1, 1.25, 1.5))
    assert len(slow) == len(want) and all(abs(a - b) < 1e-3 * b for a, b in zip(slow, want)), slow
    two = advise("--app", "cg", "--generate", "poisson2d:n=48", "--procs", "4", "--devices", HETERO,
                 procs=2)
    assert [c["layout"] for c in one["candidates"]] == [c["layout"] for c in two["candidates"]]

    # A device too small for an even share is reported, and ranked after those that fit.
    doc = advise("--app", "jacobi", "--shape", "[0:1026][0:1026]", "--procs", "4", "--devices",
                 "emu:0(mem=4MiB),cpu*3")
    fits = {c["layout"]: c["fits"] for c in doc["candidates"]}
    assert fits.get("blocks") is False, fits
    assert any(fits.values()), fits

    # Calibration: a real run's result corrects the compute of its devices.
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "jacobi.json")
        out = run([os.path.join(BIN, "hit-jacobi"), "--n", "258", "--iters", "20", "--topology",
                   "array", "--devices", "emu:0(slowdown=2),cpu", "--json", "--reps", "2"], 2)
        with open(result, "w") as f:
            f.write(out)
        measured = json.loads(out)["time_s"]
        doc = advise("--app", "jacobi", "--shape", "[0:258][0:258]", "--iters", "20", "--procs",
                     "2", "--devices", "emu:0(slowdown=2),cpu", "--calibrate", result)
        cal = doc["calibration"]
        assert cal["runs"] == 1 and set(cal["compute"]) == {"cpu", "emu(slowdown=2)"}, cal
        blocks = [c for c in doc["candidates"]
                  if c["layout"] == "blocks" and c["topology"] == "array"][0]
        # The compute is the run's own; only the communication is modelled: within 3x.
        assert abs(math.log(blocks["predicted_s"] / measured)) < math.log(3), (blocks, measured)

    # Models of the devices (hit-fpm build): the fpm layout is a candidate, its files in the spec,
    # and the best layout's picture is drawn.
    with tempfile.TemporaryDirectory() as tmp:
        pattern = os.path.join(tmp, "jacobi-{rank}.csv")
        run([os.path.join(BIN, "hit-fpm"), "build", "--kernel", "jacobi", "--columns", "258",
             "--max", "256", "--points", "4", "--max-time", "0.2", "--quiet", "--devices",
             "emu:0(slowdown=2),cpu", "--out", pattern], 2)
        svg = os.path.join(tmp, "best.svg")
        doc = advise("--app", "jacobi", "--shape", "[0:258][0:258]", "--procs", "2", "--devices",
                     "emu:0(slowdown=2),cpu", "--models", pattern, "--iters", "20", "--svg", svg)
        assert doc["models"] is True, doc
        # The fpm layout is ranked, or, where the measured models give exactly another
        # candidate's blocks (a blocksLB factor, on a loaded machine), rejected as that one.
        fpm = [c for c in doc["candidates"] if c["layout"].startswith("fpm:models=")]
        same = [r for r in doc["rejected"] if r["layout"].startswith("fpm:models=")
                and r["reason"].startswith("the same blocks as ")]
        ranked = {c["layout"] for c in doc["candidates"]}
        assert (fpm and pattern.replace("{rank}", "1") in fpm[0]["layout"]) or (
            same and same[0]["reason"][len("the same blocks as "):] in ranked), (
            doc["candidates"], doc["rejected"])
        with open(svg) as f:
            assert f.read().lstrip().startswith("<svg"), "--svg wrote no picture"

    # 65 536 processes: every candidate of Cannon predicted in seconds.
    start = time.time()
    doc = advise("--app", "cannon", "--shape", "[0:65536][0:65536]", "--procs", "65536")
    took = time.time() - start
    check_ranked(doc, "cannon", 65536)
    print(f"65 536 processes: {len(doc['candidates'])} candidates in {took:.1f} s")
    assert took < 60, f"--advise for 65 536 processes took {took:.1f} s"
    print("advise checks passed")


if __name__ == "__main__":
    main()
