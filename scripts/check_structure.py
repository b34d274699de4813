#!/usr/bin/env python3
"""Structure limits of the tree: no function longer than 100 lines, no source file over 600 lines,
no raw MPI or test of the process's rank in an example's algorithm file.

Usage: structure.py [--root DIR] [--list]

A function is a brace body opened where every enclosing brace is a namespace, class, struct,
union, enum or extern block; lambdas and local classes count as part of the function that holds
them. Comments and string literals are blanked first, so braces inside them do not count.
Functions that only declare options or draw (listed in EXEMPT, by file and name) may be longer.
The algorithm files (ALGORITHM_FILES, the ones docs/examples.md names) hold the global view only:
an MPI_ name or the environment's rank() in their code is an offence (reports, checks and
drawings live in the files beside them).
Exit status 1 when a limit is broken, with one line per offence.
"""
import argparse
import pathlib
import re
import sys

FOLDERS = ("src", "plugins", "include", "examples", "tools")
SUFFIXES = {".cpp", ".hpp", ".cu", ".cuh", ".h", ".c"}
MAX_FUNCTION = 100
MAX_FILE = 600
# (file, function name): pure option declaration or drawing, allowed to be long.
EXEMPT = {
    ("src/fpm/plot.cpp", "speed_plot_svg"),  # the SVG of a speed plot, element after element
}

# Each example program's algorithm, as docs/examples.md lists them.
ALGORITHM_FILES = (
    "examples/cannon/cannon.cpp",
    "examples/summa/summa.cpp",
    "examples/jacobi/jacobi.cpp",
    "examples/linsolve/linsolve.cpp",
    "examples/cg/cg.cpp",
    "examples/heat/heat.cpp",
    "examples/cholesky/cholesky.cpp",
    "examples/cholesky/task_cholesky.cpp",
    "examples/packages/packages.cpp",
    "examples/qr/task_qr.cpp",
)
# Raw MPI and the process's rank (a Shape's or a block's rank() is its number of axes: allowed).
NOT_GLOBAL_VIEW = re.compile(r"\bMPI_\w+|\b(?:env_?|Environment::current\(\))\s*\.\s*rank\(\)")

SCOPE = re.compile(r"\b(namespace|class|struct|union|enum|extern\s+\"C\"?)\b[^;{}()]*$")


def blank(text):
    """Comments and literals replaced by spaces, newlines kept (line numbers stay right)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and (text[i - 1].isalnum()):  # digit separator 1'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, last line) of every function body at namespace or class level."""
    code = blank(text)
    stack = []  # per open brace: ("scope"|"body", start line, name)
    found = []
    last_stmt = 0  # index after the last ; { or } : where the current declaration starts
    for i, c in enumerate(code):
        if c == "{":
            head = code[last_stmt:i]
            inside_body = any(kind == "body" for kind, _, _ in stack)
            if inside_body:
                stack.append(("inner", 0, ""))
            elif SCOPE.search(" ".join(head.split())) and "(" not in head.split("=")[0][-1:]:
                stack.append(("scope", 0, ""))
            elif ")" in head or "operator" in head:
                flat = " ".join(head.split())
                m = re.search(r"([~\w:]+(?:operator\s*[^\s(]+)?)\s*\(", flat)
                name = m.group(1) if m else "?"
                first = code.count("\n", 0, last_stmt + len(head) - len(head.lstrip())) + 1
                stack.append(("body", first, name))
            else:
                stack.append(("scope", 0, ""))  # initialiser lists, enum bodies, aggregates
            last_stmt = i + 1
        elif c == "}":
            if stack:
                kind, first, name = stack.pop()
                if kind == "body":
                    found.append((name, first, code.count("\n", 0, i) + 1))
            last_stmt = i + 1
        elif c == ";":
            last_stmt = i + 1
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[1]))
    ap.add_argument("--list", action="store_true", help="print every function over the limit, exempt or not")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    offences = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            text = path.read_text(errors="replace")
            lines = text.count("\n")
            if lines > MAX_FILE:
                offences.append(f"{rel}: {lines} lines (at most {MAX_FILE})")
            for name, first, last in functions(text):
                length = last - first + 1
                if length > MAX_FUNCTION and ((rel, name) not in EXEMPT or args.list):
                    offences.append(f"{rel}:{first}: {name} is {length} lines (at most {MAX_FUNCTION})")
    for rel in ALGORITHM_FILES:
        path = root / rel
        if not path.is_file():
            continue
        for number, line in enumerate(blank(path.read_text(errors="replace")).splitlines(), 1):
            m = NOT_GLOBAL_VIEW.search(line)
            if m:
                offences.append(f"{rel}:{number}: '{m.group(0)}' in an algorithm file (raw MPI or "
                                "the process's rank: move it beside the algorithm)")
    for o in offences:
        print(o)
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main())
