#!/usr/bin/env python3
"""A HIT_* variable given to one process only (mpiexec's per-executable -env) stops the start on
every process: each exits non-zero, and stderr holds one line naming the variable. Checked for
variables read at different places (a layout, a partition, the emulated nodes of the physical
topology), set on the first process or on a later one.

usage: start_check.py MPIEXEC PROGRAM
"""
import re
import subprocess
import sys

mpiexec, program = sys.argv[1], sys.argv[2]
wrap = ["sh", "-c", f'"{program}" --n 8; echo "exit=$?"']
problems = []
cases = [("HIT_LAYOUT_A", "cyclic", 0), ("HIT_NODES", "2", 0), ("HIT_PARTITION_C", "threads", 2),
         ("HIT_NODES", "2", 3)]
for variable, value, position in cases:
    # `position` processes without the variable, one with it, the rest without (4 in all).
    command = [mpiexec]
    if position > 0:
        command += ["-n", str(position)] + wrap + [":"]
    command += ["-n", "1", "-env", variable, value] + wrap
    if position < 3:
        command += [":", "-n", str(3 - position)] + wrap
    out = subprocess.run(command, capture_output=True, text=True, timeout=100)
    statuses = re.findall(r"exit=(\d+)", out.stdout)
    lines = out.stderr.strip().splitlines()
    case = f"{variable}={value} on rank {position} only"
    if len(statuses) != 4 or "0" in statuses:
        problems.append(f"{case}: expected 4 non-zero exit statuses, got {statuses}")
    if len(lines) != 1:
        problems.append(f"{case}: expected one line on stderr, got {len(lines)}: {out.stderr}")
    elif position == 0 and not re.search(
            rf"error: .*{variable} is unset here and '{value}' on rank 0", lines[0]):
        problems.append(f"{case}: the line does not name the variable: {lines[0]}")
    elif position > 0 and not re.search(rf"error: .*{variable}.*'{value}'", lines[0]):
        problems.append(f"{case}: the line does not name the variable and value: {lines[0]}")
    else:
        print(f"{case}: {statuses}: {lines[0]}")
print("\n".join(problems) or "every process refused to start")
sys.exit(1 if problems else 0)
