#!/usr/bin/env python3
"""hit-layout --comm halo: the send_bytes of its JSON equal the estimate computed here, from the
blocks it prints, the way the dry run defined it before it searched (every face of every block
matched against every block of every other rank): along each shape axis, a rank sends the
elements of its blocks within `width` positions (clamped to the shape) outside another rank's
block, over that block's extent on the other axes. Grids with uneven blocks and inactive ranks,
rows, columns of rectangles, strided and multi-block layouts, widths wider than a block.

usage: halo_check.py HIT_LAYOUT
"""
import json
import re
import subprocess
import sys

LAYOUT = sys.argv[1]

CASES = [
    ("[0:10][0:7]", 6, "mesh2d", "blocks", 1, "double"),
    ("[0:10][0:7]", 6, "mesh2d", "blocks", 2, "float"),
    ("[0:13][0:11]", 7, "mesh:dims=3x2", "blocks", 1, "double"),  # rank 6 outside the grid
    ("[0:2][0:9]", 9, "mesh2d", "blocks", 1, "double"),  # a row of processes without data
    ("[0:10]", 5, "array", "blocks", 3, "int32"),  # the faces reach past the neighbour
    ("[0:13][0:11]", 6, "mesh:dims=3x2", "weighted:w=3,1,2", 1, "double"),
    ("[0:13][0:11]", 4, "array", "dimBlocks:dim=0,w=1,0,2,1", 2, "double"),
    ("[0:6][0:9]", 3, "array", "dimBlocks:dim=1", 1, "int64"),
    ("[0:20][0:16]", 4, "array", "columns2d:w=1,2,3,4", 1, "double"),
    ("[0:20][0:16]", 5, "array", "columns2d:w=1,2,3,4,5", 2, "double"),
    ("[-3:40:3]", 3, "array", "cyclic", 1, "double"),
    ("[0:10][0:6]", 4, "mesh2d", "blockCyclic:b=2", 1, "double"),
    ("[0:4][0:3][0:5]", 4, "mesh:dims=2x2", "blocks", 1, "double"),
    ("[1:40:2][0:24]", 12, "mesh2d", "blocks", 2, "double"),
]
ELEMENT = {"double": 8, "int64": 8, "float": 4, "int32": 4}


def sigs(text):
    """The axes of a shape text as (begin, end, stride)."""
    out = []
    for part in re.findall(r"\[([^]]*)\]", text):
        nums = [int(x) for x in part.split(":")]
        out.append((nums[0], nums[1], nums[2] if len(nums) > 2 else 1))
    return out


def indices(sig):
    return list(range(*sig))


def expected(shape, ranks, width):
    whole = [indices(s) for s in shape]
    blocks = {r["rank"]: [[set(indices(s)) for s in sigs(b)] for b in r["blocks"]] for r in ranks}
    sends = {r: 0 for r in blocks}
    for a, axis in enumerate(whole):
        position = {x: t for t, x in enumerate(axis)}
        for q, qblocks in blocks.items():
            for bq in qblocks:
                first = position[min(bq[a])]
                last = position[max(bq[a])]
                for lo, hi in ((max(0, first - width), first), (last + 1, min(len(axis), last + 1 + width))):
                    if hi <= lo:
                        continue
                    face = list(bq)
                    face[a] = set(axis[lo:hi])
                    for p, pblocks in blocks.items():
                        if p == q:
                            continue
                        for bp in pblocks:
                            n = 1
                            for k in range(len(face)):
                                n *= len(bp[k] & face[k])
                            sends[p] += n
    return [sends[r["rank"]] for r in ranks]


failures = []
for shape, procs, topo, layout, width, etype in CASES:
    args = [LAYOUT, "--shape", shape, "--procs", str(procs), "--topology", topo, "--layout", layout,
            "--type", etype, "--comm", f"halo:width={width}", "--json"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        failures.append(f"{' '.join(args)} exited {out.returncode}: {out.stderr.strip()}")
        continue
    doc = json.loads(out.stdout)
    got = [r["send_bytes"] for r in doc["ranks"]]
    want = [n * ELEMENT[etype] for n in expected(sigs(doc["shape"]), doc["ranks"], width)]
    if got != want:
        failures.append(f"{' '.join(args[1:])}: send_bytes {got}, expected {want}")
    elif sum(want) == 0:
        failures.append(f"{' '.join(args[1:])}: nothing sent, the case tests nothing")
    else:
        print(f"ok: {layout} of {shape} on {topo} ({procs}), width {width}: {got}")
if failures:
    sys.exit("\n".join(failures))
