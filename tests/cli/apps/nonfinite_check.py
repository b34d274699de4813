#!/usr/bin/env python3
"""A matrix file with one non-finite element is refused on every rank, naming the file and the
element: writes an n x n matrix (n on the diagonal, small values elsewhere: symmetric positive
definite) of DTYPE with VALUE at [I, J] to WORK/NAME, runs error_check.cmake on the program with
ARGS (where {file} stands for that file), and checks that the --c-out file, if any, was not made.

usage: nonfinite_check.py CMAKE ERROR_CHECK MPIEXEC NP PROGRAM WORK NAME DTYPE N I J VALUE EXPECT ARGS...
"""
import os
import struct
import subprocess
import sys

(cmake, error_check, mpiexec, np, program, work, name, dtype, n, i, j, value,
 expect) = sys.argv[1:14]
args = sys.argv[14:]
n, i, j = int(n), int(i), int(j)
os.makedirs(work, exist_ok=True)
path = os.path.join(work, name)
values = []
for r in range(n):
    for c in range(n):
        values.append(float(n) if r == c else 0.01 * ((r + c) % 7))
values[i * n + j] = float(value)
with open(path, "wb") as f:
    f.write(struct.pack(f"<{n * n}{'d' if dtype == 'double' else 'f'}", *values))
args = [a.replace("{file}", path).replace("{work}", work) for a in args]
outputs = [args[k + 1] for k, a in enumerate(args[:-1]) if a == "--c-out"]
for out in outputs:
    if os.path.exists(out):
        os.remove(out)
rc = subprocess.call([cmake, f"-DPROGRAM={program}", f"-DMPIEXEC={mpiexec}", f"-DNP={np}",
                      "-DARGS=" + "|".join(args), f"-DEXPECT={expect}", "-P", error_check])
if rc != 0:
    sys.exit(rc)
for out in outputs:
    if os.path.exists(out):
        sys.exit(f"{out} was written from a matrix with a non-finite element")
print("refused, and nothing written")
