#!/usr/bin/env python3
"""A HIT_* variable given to one process only (mpiexec's per-executable -env) stops the start on
every process: each exits non-zero, and stderr holds one line naming the variable.

usage: start_check.py MPIEXEC PROGRAM
"""
import re
import subprocess
import sys

mpiexec, program = sys.argv[1], sys.argv[2]
wrap = ["sh", "-c", f'"{program}" --n 8; echo "exit=$?"']
out = subprocess.run([mpiexec, "-n", "1", "-env", "HIT_LAYOUT_A", "cyclic"] + wrap + [":", "-n", "3"] + wrap,
                     capture_output=True, text=True, timeout=100)
statuses = re.findall(r"exit=(\d+)", out.stdout)
lines = out.stderr.strip().splitlines()
problems = []
if len(statuses) != 4 or "0" in statuses:
    problems.append(f"expected 4 non-zero exit statuses, got {statuses}")
if len(lines) != 1:
    problems.append(f"expected one line on stderr, got {len(lines)}: {out.stderr}")
elif not re.search(r"error: .*HIT_LAYOUT_A is unset here and 'cyclic' on rank 0", lines[0]):
    problems.append(f"the line does not name the variable: {lines[0]}")
print("\n".join(problems) or f"{statuses}: {lines[0]}")
sys.exit(1 if problems else 0)
