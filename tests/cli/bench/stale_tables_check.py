#!/usr/bin/env python3
"""bench/stale_tables.py on a made-up benchmarks file: a section naming no commit is stale, one
naming the repository's first commit is stale (the library changed since), one naming a commit
that does not exist is unknown; --strict turns stale into exit status 1."""
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "bench", "stale_tables.py")
first = subprocess.run(["git", "-C", root, "rev-list", "--max-parents=0", "HEAD"], capture_output=True,
                       text=True, check=True).stdout.split()[0][:9]
doc = (f"# Benchmarks\n\n<!-- BEGIN comm -->\nno commit here\n<!-- END comm -->\n\n"
       f"<!-- BEGIN summa -->\nMeasured at commit {first} on a machine.\n<!-- END summa -->\n\n"
       f"<!-- BEGIN balance -->\nMeasured at commit 0123456789abcdef.\n<!-- END balance -->\n")
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "benchmarks.md")
    open(path, "w").write(doc)
    out = subprocess.run([sys.executable, script, "--file", path], capture_output=True, text=True)
    strict = subprocess.run([sys.executable, script, "--file", path, "--strict"], capture_output=True,
                            text=True)
lines = {l.split()[1].rstrip(":"): l for l in out.stdout.splitlines() if l.strip()}
failures = []
if out.returncode != 0:
    failures.append(f"without --strict the exit status is {out.returncode}, expected 0")
if strict.returncode != 1:
    failures.append(f"with --strict the exit status is {strict.returncode}, expected 1")
if not lines.get("comm", "").startswith("stale") or "names no measured commit" not in lines["comm"]:
    failures.append(f"comm: {lines.get('comm')!r}")
if not lines.get("summa", "").startswith("stale") or "changed since" not in lines["summa"]:
    failures.append(f"summa: {lines.get('summa')!r}")
if not lines.get("balance", "").startswith("unknown"):
    failures.append(f"balance: {lines.get('balance')!r}")
if failures:
    print("\n".join(failures) + "\n--- output:\n" + out.stdout + out.stderr)
    sys.exit(1)
print("stale_tables.py: 3 sections classified as expected")
