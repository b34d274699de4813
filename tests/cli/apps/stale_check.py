#!/usr/bin/env python3
"""A run killed mid-write leaves `NAME.tmp-<host>.<pid>.<random>` behind. The next successful write
of NAME removes those of this host whose process is gone, and only those: a live process's
temporary (it may still be writing), another host's, and files that merely look alike stay.

usage: stale_check.py MPIEXEC BIN_DIR WORK_DIR
"""
import os
import shutil
import socket
import subprocess
import sys

mpiexec, bindir, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def host_tag():
    """FNV-1a of the host name, as hitmap++ writes it in its temporaries."""
    h = 2166136261
    for c in socket.gethostname().encode():
        h ^= c
        h = (h * 16777619) & 0xFFFFFFFF
    return f"{h:08x}"


def dead_pid():
    """A process id that no longer exists: a child that has exited and been reaped."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


failures = []


def check(name, command):
    here = host_tag()
    dead = f"{name}.tmp-{here}.{dead_pid()}.0badf00d"
    live = f"{name}.tmp-{here}.{os.getpid()}.0badf00d"
    other_host = f"{name}.tmp-{int(here, 16) ^ 1:08x}.{dead_pid()}.0badf00d"
    unrelated = f"{name}.tmp-not-a-temporary"
    for f in (dead, live, other_host, unrelated):
        open(os.path.join(work, f), "w").write("partial")
    run = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=100)
    if run.returncode != 0:
        failures.append(f"{' '.join(command)}: exit {run.returncode}\n{run.stderr}")
        return
    left = set(os.listdir(work))
    if name not in left:
        failures.append(f"{name} was not written")
    if dead in left:
        failures.append(f"{dead}: the temporary of a dead process was left")
    for kept in (live, other_host, unrelated):
        if kept not in left:
            failures.append(f"{kept} was removed: it is not a stale temporary of this host")
    for f in left:
        if f.startswith(name + ".tmp-") and f not in (live, other_host, unrelated):
            failures.append(f"{f}: a temporary of the run itself was left")


for np in (1, 4):
    check(f"c{np}.raw", [mpiexec, "-n", str(np), os.path.join(bindir, "hit-cannon"), "--n", "12",
                         "--reps", "1", "--c-out", f"c{np}.raw"])
check("layout.svg", [os.path.join(bindir, "hit-layout"), "--shape", "[0:8][0:8]", "--procs", "4",
                     "--svg", "layout.svg"])
print("\n".join(failures) or "stale temporaries removed, the others kept")
sys.exit(1 if failures else 0)
