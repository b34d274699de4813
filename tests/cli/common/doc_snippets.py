#!/usr/bin/env python3
"""Code shown in the docs is the code that runs: every fenced block preceded by a line
`<!-- from: PATH -->` in the given Markdown files must appear verbatim in PATH (relative to the
repository root).

usage: doc_snippets.py ROOT DOC.md [DOC.md ...]
"""
import re
import sys

root, docs = sys.argv[1], sys.argv[2:]
checked, failures = 0, []
for doc in docs:
    text = open(f"{root}/{doc}").read()
    for m in re.finditer(r"<!-- from: (\S+) -->\n```[a-z]*\n(.*?)```", text, re.S):
        path, block = m.group(1), m.group(2)
        checked += 1
        if block not in open(f"{root}/{path}").read():
            failures.append(f"{doc}: the block taken from {path} is no longer in it")
if checked == 0:
    failures.append("no <!-- from: PATH --> blocks found")
print("\n".join(failures) or f"{checked} doc snippets match their sources")
sys.exit(1 if failures else 0)
