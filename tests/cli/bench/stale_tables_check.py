#!/usr/bin/env python3
"""bench/stale_tables.py on a made-up benchmarks file: a section naming no commit is stale, one
naming the repository's first commit is stale (the library changed since), one naming a commit
that does not exist is unknown; --strict turns stale into exit status 1. In a repository of its
own: a change to the advisor's code only (which only hit-layout runs) leaves a section that does
not run hit-layout current and flags one that does."""
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


def advisor_only_change():
    """(comm's line, plans' line) after a commit's src/advisor changed, nothing else."""
    with tempfile.TemporaryDirectory() as repo:
        def git(*args):
            subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", *args],
                           capture_output=True, text=True, check=True)
        for rel in ("bench/stale_tables.py", "src/advisor/a.cpp", "src/core/b.cpp",
                    "tools/layout/c.cpp", "examples/cannon/d.cpp"):
            os.makedirs(os.path.join(repo, os.path.dirname(rel)), exist_ok=True)
            text = open(script).read() if rel.startswith("bench/") else "// v1\n"
            open(os.path.join(repo, rel), "w").write(text)
        git("init", "-q")
        git("add", "-A")
        git("commit", "-qm", "v1")
        measured = subprocess.run(["git", "-C", repo, "rev-parse", "--short=9", "HEAD"],
                                  capture_output=True, text=True, check=True).stdout.strip()
        open(os.path.join(repo, "src/advisor/a.cpp"), "w").write("// v2\n")
        doc = os.path.join(repo, "benchmarks.md")
        open(doc, "w").write("".join(f"<!-- BEGIN {n} -->\nMeasured at commit {measured}.\n"
                                     f"<!-- END {n} -->\n" for n in ("comm", "plans")))
        got = subprocess.run([sys.executable, os.path.join(repo, "bench", "stale_tables.py"),
                              "--file", doc], capture_output=True, text=True)
        found = {l.split()[1].rstrip(":"): l for l in got.stdout.splitlines() if l.strip()}
        return found.get("comm", got.stderr), found.get("plans", got.stderr)


comm, plans = advisor_only_change()
if not comm.startswith("current"):
    failures.append(f"an advisor-only change flagged comm: {comm!r}")
if not plans.startswith("stale") or "src/advisor/a.cpp" not in plans:
    failures.append(f"an advisor-only change left plans unflagged: {plans!r}")
if failures:
    print("\n".join(failures) + "\n--- output:\n" + out.stdout + out.stderr)
    sys.exit(1)
print("stale_tables.py: 5 sections classified as expected")
