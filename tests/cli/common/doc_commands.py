#!/usr/bin/env python3
"""Every command the docs show keeps running: each shell line of the given Markdown files' code
blocks (```sh, ```bash, ```console, ``` and ```shell; in a block with `$ ` prompts, only the
prompted lines) that runs a hitmap++ program (`hit-*`, as `build/bin/hit-x` or `hit-x`, possibly
after VAR=value assignments and under `mpiexec` / `mpiexec.mpich -n P`) is run from the build's
bin folder at a small size, in a fresh folder, and must exit 0.

Small sizes: the values of the flags in CAPS below are lowered to their cap (`--n 4096` runs as
`--n 64`), the grid size of a generated sparse matrix to its cap in GENERATED_N
(`--generate poisson3d:n=64,permute` runs as `--generate poisson3d:n=16,permute`), and the example
programs get `--reps 1 --warmup 0`. The program and every other
argument are the documented ones, so a flag or a value a program no longer takes fails here.

A file that a command reads and that the page tells the reader how to make (DOC_FILES: the page's
own code block that shows it, or the command whose output the prose saves to it) is made in the
command's folder first, so those commands run too.

Skipped, and listed as such: synopses (`[--n N]`, `gemm|jacobi`, placeholders such as FILE),
commands for CUDA devices (no GPU is assumed), commands that need the reverseBlocks plug-in of
docs/plugins.md (a project of its own), programs that were not built, and commands that read a
file that does not exist and that no page says how to make.

With --all first, a command skipped for any reason but being a synopsis fails the run: the
pages given must be runnable whole.

usage: doc_commands.py [--all] ROOT BIN_DIR MPIEXEC DOC.md [DOC.md ...]
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

# Largest values, per flag (and per program where the programs differ).
CAPS = {
    "--n": {"hit-cholesky": 256, "hit-fpm": 256, "hit-layout": None, "*": 64},
    "--iters": {"*": 20},
    "--iterations": {"*": 2},
    "--device-iterations": {"*": 2},
    "--reps": {"*": 1},
    "--warmup": {"*": 0},
    "--max": {"*": 64},
    "--points": {"*": 4},
    "--columns": {"*": 256},
    "--panel": {"*": 32},
    "--tune-n": {"*": 256},
    "--runs": {"*": 1},
}
# Largest grid size n= of a generated sparse matrix (`--generate poisson2d:n=K,...`), per generator.
GENERATED_N = {"poisson2d": 32, "poisson3d": 16}
# Programs with the example harness (they take --reps and --warmup).
HARNESS = {"hit-cannon", "hit-summa", "hit-jacobi", "hit-linsolve", "hit-cholesky", "hit-packages",
           "hit-cg", "hit-heat", "hit-qr"}
# Options whose value is a file the program reads, per program.
INPUTS = {"hit-cannon": {"--a", "--b"}, "hit-summa": {"--a", "--b"}, "hit-cholesky": {"--a"},
          "hit-qr": {"--a", "--rhs"},
          "hit-fpm": {"-m", "--model"}, "hit-cg": {"--matrix", "--rhs"},
          "hit-heat": {"--graph", "--init"},
          "hit-layout": {"--calibrate", "--models", "--network", "--matrix"}}
# Files the docs tell the reader to make: ("block", first line) is the code block of the page that
# starts with that line (the file as the page shows it); ("stdout", command) is the command the
# prose saves the output of (run small, as the documented commands are).
DOC_FILES = {
    "small.mtx": ("block", "%%MatrixMarket matrix coordinate real symmetric"),
    "jacobi.json": ("stdout", "mpiexec.mpich -n 4 hit-jacobi --n 1026 --iters 100 --topology array "
                              "--devices 'emu:0(slowdown=4),cpu*3' --json"),
}
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*(\.[a-z]+)?$")  # FILE, N, SPEC, FILE.svg
PER_COMMAND_TIMEOUT = 120


def blocks(text):
    for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
        if m.group(1) in ("", "sh", "bash", "shell", "console"):
            yield m.group(2)


def command_lines(block):
    joined = re.sub(r"\\\n\s*", " ", block)
    lines = [line.strip() for line in joined.splitlines()]
    if any(line.startswith("$ ") for line in lines):
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    return [line for line in lines if line]


def split(line):
    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def parse(line):
    """(env, procs, program, args) of a line that runs a hit-* program, else None."""
    try:
        tokens = split(line)
    except ValueError:
        return None
    env = {}
    while tokens and re.match(r"^[A-Z_][A-Z0-9_]*=", tokens[0]):
        key, value = tokens.pop(0).split("=", 1)
        env[key] = value
    procs = None
    if tokens and os.path.basename(tokens[0]) in ("mpiexec", "mpiexec.mpich"):
        tokens.pop(0)
        while tokens and tokens[0].startswith("-"):
            flag = tokens.pop(0)
            if flag in ("-n", "-np") and tokens:
                procs = tokens.pop(0)
    if not tokens or not re.match(r"^hit-[a-z-]+$", os.path.basename(tokens[0])):
        return None
    return env, procs, os.path.basename(tokens[0]), tokens[1:]


def skip_reason(env, program, args, bin_dir, work):
    if any(a.startswith("[-") or "|" in a or PLACEHOLDER.match(a) for a in args):
        return "a synopsis, not a command"
    if any("cuda" in a for a in args):
        return "needs a CUDA GPU"
    if any("reverseBlocks" in a for a in args + list(env.values())):
        return "needs the reverseBlocks plug-in of docs/plugins.md"
    if not os.access(os.path.join(bin_dir, program), os.X_OK):
        return f"{program} was not built"
    for flag, value in zip(args, args[1:]):
        if flag in INPUTS.get(program, ()) and not os.path.exists(os.path.join(work, value)):
            return f"reads {value}, which does not exist"
    return None


def small_generator(spec):
    """`poisson3d:n=64,permute` with n lowered to its cap in GENERATED_N; other text as it is."""
    name, sep, params = spec.partition(":")
    cap = GENERATED_N.get(name)
    if cap is None or not sep:
        return spec
    return name + sep + re.sub(r"(^|,)n=(\d+)",
                               lambda m: f"{m.group(1)}n={min(int(m.group(2)), cap)}", params)


def small(program, args):
    out = list(args)
    for i, flag in enumerate(out[:-1]):
        if flag == "--generate":
            out[i + 1] = small_generator(out[i + 1])
            continue
        caps = CAPS.get(flag)
        if caps is None:
            continue
        cap = caps.get(program, caps["*"])
        if cap is None:
            continue
        try:
            value = int(out[i + 1])
        except ValueError:
            continue
        out[i + 1] = str(min(value, cap))
    if program in HARNESS:
        for flag, value in (("--reps", "1"), ("--warmup", "0")):
            if flag not in out:
                out += [flag, value]
    return out


def command(parsed, bin_dir, mpiexec):
    env, procs, program, args = parsed
    cmd = [os.path.join(bin_dir, program)] + small(program, args)
    if procs is not None:
        cmd = [mpiexec, "-n", procs] + cmd
    return cmd


def make_doc_files(page, program, args, work, bin_dir, mpiexec):
    """Makes in `work` the DOC_FILES that the command reads and that are not there yet."""
    for flag, value in zip(args, args[1:]):
        if flag not in INPUTS.get(program, ()) or value not in DOC_FILES:
            continue
        path = os.path.join(work, value)
        if os.path.exists(path):
            continue
        how, what = DOC_FILES[value]
        if how == "block":
            shown = [b for b in blocks(page) if b.startswith(what)]
            if shown:
                with open(path, "w") as f:
                    f.write(shown[0])
            continue
        parsed = parse(what)
        out = subprocess.run(command(parsed, bin_dir, mpiexec), cwd=work, capture_output=True,
                             text=True, timeout=PER_COMMAND_TIMEOUT,
                             env={**os.environ, "OPENBLAS_NUM_THREADS": "1", **parsed[0]})
        if out.returncode == 0:
            with open(path, "w") as f:
                f.write(out.stdout)


def run_block(doc, page, block, work, bin_dir, mpiexec, skipped):
    """Runs the commands of one block in `work`; returns how many ran and their failures."""
    ran, failures = 0, []
    for line in command_lines(block):
        parsed = parse(line)
        if parsed is None:
            continue
        env, procs, program, args = parsed
        make_doc_files(page, program, args, work, bin_dir, mpiexec)
        reason = skip_reason(env, program, args, bin_dir, work)
        if reason:
            skipped.append(f"{doc}: {line}\n    skipped: {reason}")
            continue
        cmd = command(parsed, bin_dir, mpiexec)
        shown = " ".join(
            [f"{k}={shlex.quote(v)}" for k, v in env.items()] + [shlex.quote(c) for c in cmd])
        t0 = time.monotonic()
        try:
            out = subprocess.run(cmd, cwd=work, capture_output=True, text=True,
                                 timeout=PER_COMMAND_TIMEOUT,
                                 env={**os.environ, "OPENBLAS_NUM_THREADS": "1", **env})
            status = out.returncode
            tail = (out.stdout + out.stderr)[-1500:]
        except subprocess.TimeoutExpired:
            status, tail = "timeout", ""
        seconds = time.monotonic() - t0
        ran += 1
        if status != 0:
            failures.append(f"{doc}: {line}\n    ran as: {shown}\n    exit {status} after "
                            f"{seconds:.1f} s:\n{tail}")
        else:
            print(f"ok ({seconds:.1f} s) {doc}: {shown}")
    return ran, failures


def main():
    argv = sys.argv[1:]
    require_all = bool(argv) and argv[0] == "--all"
    if require_all:
        argv = argv[1:]
    root, mpiexec, docs = argv[0], argv[2], argv[3:]
    bin_dir = os.path.abspath(argv[1])
    ran, skipped, failures = 0, [], []
    started = time.monotonic()
    for doc in docs:
        page = open(os.path.join(root, doc)).read()
        for block in blocks(page):
            # The commands of one block share a folder: a block that builds a file (models, a
            # matrix) and then uses it runs as a reader would type it.
            with tempfile.TemporaryDirectory(prefix="hit-doc-") as work:
                count, failed = run_block(doc, page, block, work, bin_dir, mpiexec, skipped)
                ran += count
                failures += failed
    for s in skipped:
        print(s)
    if require_all:
        failures += [f"{s} (--all: every command of these pages must run)" for s in skipped
                     if not s.endswith("a synopsis, not a command")]
    for f in failures:
        print(f"FAILED {f}")
    print(f"{ran} documented commands run ({ran - len(failures)} passed), {len(skipped)} skipped, "
          f"{time.monotonic() - started:.0f} s")
    if ran == 0:
        print("no documented command found")
    sys.exit(1 if failures or ran == 0 else 0)


if __name__ == "__main__":
    main()
