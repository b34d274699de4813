#!/usr/bin/env python3
"""HDF5 datasets as the programs' inputs and outputs, at NP processes. Inputs are made with
h5import and outputs read with h5dump (the HDF5 tools, not hitmap++): a program run on datasets
gives the bytes the same run on raw files gives, for hit-summa (A and B in groups of one file, C
into another; double and float), hit-qr (R and x into one file beside a dataset kept from before)
and hit-cg (b and x vectors). Bad input is one line `hit-X: error: ...` from every rank, exit 2,
and leaves the files as they were: a missing dataset, wrong extents, a wrong element type, a NaN
in a vector, an output named without its dataset, a read-only output file.

    hdf5_files.py NP WORKDIR MPIEXEC BIN_DIR
"""
import os
import random
import shutil
import struct
import subprocess
import sys

np_, work, mpiexec, bin_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
problems = []


def path(name):
    return os.path.join(work, name)


def write_raw(name, values, code):
    with open(path(name), "wb") as f:
        f.write(struct.pack(f"<{len(values)}{code}", *values))
    return path(name)


def h5import(raw, dims, dataset, out, code):
    """The raw file as a dataset of `out` (which h5import creates; one dataset per file)."""
    size = "64" if code == "d" else "32"
    dims_text = ",".join(str(d) for d in dims)
    subprocess.run(["h5import", raw, "-d", dims_text, "-p", dataset, "-t", "FP", "-s", size,
                    "-o", out], check=True, capture_output=True)


def h5dump(file, dataset):
    out = path("dump.bin")
    if os.path.exists(out):
        os.remove(out)
    run = subprocess.run(["h5dump", "-d", dataset, "-b", "LE", "-o", out, file],
                         capture_output=True, text=True)
    if run.returncode != 0 or not os.path.exists(out):
        problems.append(f"h5dump {file} {dataset}: {run.stdout}{run.stderr}")
        return b""
    with open(out, "rb") as f:
        return f.read()


def run(program, args):
    cmd = [mpiexec, "-n", str(np_), os.path.join(bin_dir, program)] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if r.returncode != 0:
        problems.append(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr}")
    return r


def read(name):
    with open(path(name), "rb") as f:
        return f.read()


def same_bytes(what, a, b):
    if not a or a != b:
        problems.append(f"{what}: the dataset ({len(a)} bytes) differs from the raw run's "
                        f"({len(b)} bytes)")


rng = random.Random(20261207 + np_)

# hit-summa: A and B from datasets in groups, C into a dataset of a new file; double and float.
for dtype, code in (("double", "d"), ("float", "f")):
    n, m, k = 11, 7, 9
    a = write_raw(f"a_{code}.raw", [rng.uniform(-1, 1) for _ in range(n * m)], code)
    b = write_raw(f"b_{code}.raw", [rng.uniform(-1, 1) for _ in range(m * k)], code)
    h5import(a, (n, m), "/inputs/A", path(f"a_{code}.h5"), code)
    h5import(b, (m, k), "/inputs/more/B", path(f"b_{code}.h5"), code)
    common = ["--n", str(n), "--m", str(m), "--k", str(k), "--type", dtype, "--check",
              "--reps", "1", "--warmup", "0"]
    run("hit-summa", common + ["--a", a, "--b", b, "--c-out", path(f"c_{code}.raw")])
    r = run("hit-summa", common + ["--a", path(f"a_{code}.h5") + ":/inputs/A",
                                   "--b", path(f"b_{code}.h5") + ":/inputs/more/B",
                                   "--c-out", path(f"c_{code}.h5") + ":/results/C"])
    if "check: passed" not in r.stdout:
        problems.append(f"hit-summa {dtype} on datasets did not pass --check:\n{r.stdout}")
    same_bytes(f"hit-summa {dtype} C", h5dump(path(f"c_{code}.h5"), "/results/C"),
               read(f"c_{code}.raw"))

# hit-qr: least squares; R and x written into one file that already holds a dataset.
m, n = 13, 6
a = write_raw("qa.raw", [rng.uniform(-1, 1) for _ in range(m * n)], "d")
rhs = write_raw("qb.raw", [rng.uniform(-1, 1) for _ in range(m)], "d")
h5import(a, (m, n), "/A", path("qr_in.h5"), "d")
h5import(rhs, (m,), "/b", path("qr_out.h5"), "d")  # an object the outputs must keep
common = ["--m", str(m), "--n", str(n), "--b", "4", "--check", "--reps", "1", "--warmup", "0"]
run("hit-qr", common + ["--a", a, "--rhs", rhs, "--r-out", path("r.raw"), "--x-out",
                        path("x.raw")])
run("hit-qr", common + ["--a", path("qr_in.h5") + ":/A", "--rhs", path("qr_out.h5") + ":/b",
                        "--r-out", path("qr_out.h5") + ":/R", "--x-out",
                        path("qr_out.h5") + ":/solution/x"])
same_bytes("hit-qr R", h5dump(path("qr_out.h5"), "/R"), read("r.raw"))
same_bytes("hit-qr x", h5dump(path("qr_out.h5"), "/solution/x"), read("x.raw"))
same_bytes("hit-qr's kept b", h5dump(path("qr_out.h5"), "/b"), read("qb.raw"))

# hit-cg: b from a dataset, x into one.
rows = 25  # poisson2d:n=5
rhs = write_raw("cb.raw", [rng.uniform(-1, 1) for _ in range(rows)], "d")
h5import(rhs, (rows,), "/b", path("cg_b.h5"), "d")
common = ["--generate", "poisson2d:n=5", "--reps", "1", "--warmup", "0"]
run("hit-cg", common + ["--rhs", rhs, "--x-out", path("cx.raw")])
run("hit-cg", common + ["--rhs", path("cg_b.h5") + ":/b", "--x-out", path("cg_x.h5") + ":/x"])
same_bytes("hit-cg x", h5dump(path("cg_x.h5"), "/x"), read("cx.raw"))


def expect_refused(program, args, expect):
    """Every rank exits non-zero; stderr is one line naming the cause."""
    cmd = [mpiexec, "-n", str(np_), "sh", "-c", '"$0" "$@"; echo "exit=$?"',
           os.path.join(bin_dir, program)] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    statuses = [line for line in r.stdout.splitlines() if line.startswith("exit=")]
    err = r.stderr.strip()
    if len(statuses) != np_ or "exit=0" in statuses:
        problems.append(f"{program} {args}: exit statuses {statuses}")
    if "\n" in err or not err.startswith(f"{program}: error: ") or expect not in err:
        problems.append(f"{program} {args}: expected one line with '{expect}', got:\n{err}")


before = {name: read(name) for name in ("c_d.h5", "qr_out.h5")}
mat = ["--n", "11", "--m", "7", "--k", "9", "--reps", "1", "--warmup", "0"]
b_raw = path("b_d.raw")
expect_refused("hit-summa", mat + ["--a", path("a_d.h5") + ":/inputs/B", "--b", b_raw],
               "has no dataset /inputs/B")
expect_refused("hit-summa", mat[:2] + ["--m", "9", "--k", "9", "--a",
                                       path("a_d.h5") + ":/inputs/A", "--b", b_raw],
               "the dataset's extents are [11, 7], expected [11, 9]")
expect_refused("hit-summa", mat + ["--a", path("a_f.h5") + ":/inputs/A", "--b", b_raw],
               "the dataset holds 32-bit floating point, expected 64-bit floating point")
expect_refused("hit-summa", mat + ["--a", path("a_d.raw"), "--b", b_raw, "--c-out",
                                   path("c_d.h5")], "is an HDF5 file: name the dataset too")
nan = write_raw("nan.raw", [0.0] * 5 + [float("nan")] + [0.0] * 19, "d")
h5import(nan, (rows,), "/b", path("nan.h5"), "d")
expect_refused("hit-cg", ["--generate", "poisson2d:n=5", "--rhs", path("nan.h5") + ":/b"],
               "holds NaN at index 5")
os.chmod(path("qr_out.h5"), 0o444)
expect_refused("hit-qr", ["--m", "13", "--n", "6", "--a", path("qr_in.h5") + ":/A",
                          "--r-out", path("qr_out.h5") + ":/R2"], "read-only")
os.chmod(path("qr_out.h5"), 0o644)
for name, data in before.items():
    if read(name) != data:
        problems.append(f"{name} changed by a refused run")
left = sorted(f for f in os.listdir(work) if ".tmp-" in f)
if left:
    problems.append(f"temporaries left: {left}")

if problems:
    sys.exit("\n".join(problems))
print(f"hdf5 files at {np_} processes: ok")
