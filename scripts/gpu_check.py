"""The GPU checks of scripts/gpu-check.sh, and the test list of scripts/gpu-bundle.sh.

    gpu_check.py pack-tests --build DIR --source DIR --mpiexec PATH --labelled JSON --gtests JSON
                            --output FILE
        the tests labelled `cuda` and the CUDA gtests (ctest --show-only=json-v1 of a build) with
        placeholders for the paths of the machine that runs them (@BIN@, @SOURCE@, @MPIEXEC@,
        @PYTHON@)
    gpu_check.py ctestfile --tests FILE --bin DIR --mpiexec PATH --source DIR --dir DIR
        a CTestTestfile.cmake in DIR holding those tests with the paths of this machine, so that
        `ctest --test-dir DIR -L cuda` runs them
    gpu_check.py run --bin DIR --mpiexec PATH --ctest-dir DIR [--size quick|full] [--plan] ...
        the checks: ctest -L cuda, then the benchmarks against the hand-written CUDA references;
        one verdict line per check; docs/gpu-results.md and, with --out, copies of the results

Standard library only (the GPU machine has Python but nothing else of this project's needs).
"""

import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import benchlib  # noqa: E402  (replace_section, commit_text, spearman)

KEPT_PROPERTIES = ("LABELS", "PASS_REGULAR_EXPRESSION", "FAIL_REGULAR_EXPRESSION",
                   "SKIP_REGULAR_EXPRESSION", "ENVIRONMENT", "TIMEOUT", "WILL_FAIL")


# ---- the test list -------------------------------------------------------------------------------

def pack_tests(args):
    build = os.path.realpath(args.build)
    bin_dir = os.path.join(build, "bin") + "/"
    source = os.path.realpath(args.source)
    mpiexec = {args.mpiexec, os.path.realpath(args.mpiexec)}

    def rewrite(word):
        if word in mpiexec:
            return "@MPIEXEC@"
        real = os.path.realpath(word) if word.startswith("/") else word
        if word.startswith(bin_dir) or real.startswith(bin_dir):
            return "@BIN@/" + os.path.basename(word)
        if os.path.basename(word).startswith("python"):
            return "@PYTHON@"
        if word.startswith(source + "/"):
            return "@SOURCE@" + word[len(source):]
        return word.replace(source, "@SOURCE@")

    tests = {}
    for path, extra_label in ((args.labelled, None), (args.gtests, "cuda")):
        with open(path) as f:
            listing = json.load(f)
        for t in listing.get("tests", []):
            if "command" not in t:
                continue
            props = {}
            for p in t.get("properties", []):
                if p["name"] in KEPT_PROPERTIES:
                    value = p["value"]
                    if p["name"] == "ENVIRONMENT":
                        value = [rewrite(v.split("=", 1)[0]) + "=" + rewrite(v.split("=", 1)[1])
                                 if "=" in v else v for v in value]
                    props[p["name"]] = value
            labels = props.setdefault("LABELS", [])
            if extra_label and extra_label not in labels:
                labels.append(extra_label)
            tests[t["name"]] = {"name": t["name"], "command": [rewrite(w) for w in t["command"]],
                                "properties": props}
    # A test whose program the bundle lacks would fail on the GPU machine for nothing it tests.
    # Checked against what the bundle packs (--packed), not what the build folder happens to hold.
    packed = os.path.join(args.packed, "") if args.packed else bin_dir
    missing = sorted({w[len("@BIN@/"):] for t in tests.values() for w in t["command"]
                      if w.startswith("@BIN@/") and not os.path.exists(packed + w[len("@BIN@/"):])})
    if missing:
        sys.exit("gpu-bundle: the cuda tests run " + " ".join(missing) + ", which " +
                 ("the bundle" if args.packed else build) + " does not hold: add them to the programs or test "
                 "binaries of scripts/gpu-bundle.sh")
    with open(args.output, "w") as f:
        json.dump({"tests": list(tests.values())}, f, indent=1)
    print(f"gpu-bundle: {len(tests)} tests: " + " ".join(tests))


def cmake_quote(word):
    """One CMake argument, quoted: backslashes, quotes, dollars and semicolons escaped."""
    return '"' + re.sub(r'([\\"$;])', r"\\\1", str(word)) + '"'


def cmake_list(values):
    """A CMake list property value: the items joined by ';', each item's own ';' escaped."""
    return '"' + ";".join(re.sub(r'([\\"$;])', r"\\\1", str(v)) for v in values) + '"'


def fill(word, places):
    for key, value in places.items():
        word = word.replace(key, value)
    return word


def ctestfile(args):
    with open(args.tests) as f:
        tests = json.load(f)["tests"]
    places = {"@BIN@": os.path.abspath(args.bin), "@SOURCE@": os.path.realpath(args.source),
              "@MPIEXEC@": os.path.abspath(args.mpiexec), "@PYTHON@": args.python or sys.executable}
    os.makedirs(args.dir, exist_ok=True)
    lines = ["# Written by scripts/gpu_check.py ctestfile from the bundle's tests.json."]
    for t in tests:
        command = " ".join(cmake_quote(fill(w, places)) for w in t["command"])
        lines.append(f"add_test({cmake_quote(t['name'])} {command})")
        props = []
        for key, value in t["properties"].items():
            if key == "TIMEOUT":
                continue  # ctest --timeout (gpu-check.sh's per-command limit) applies instead
            if key == "ENVIRONMENT":
                value = [fill(v, places) for v in value]
            props.append(f"{key} {cmake_list(value if isinstance(value, list) else [value])}")
        if props:
            lines.append(f"set_tests_properties({cmake_quote(t['name'])} PROPERTIES "
                         + " ".join(props) + ")")
    with open(os.path.join(args.dir, "CTestTestfile.cmake"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"gpu-check: {len(tests)} tests in {args.dir}/CTestTestfile.cmake")


# ---- running commands ------------------------------------------------------------------------------

class Runner:
    """Runs the checks' commands, each under a time limit (its whole process group is killed past
    it), keeps their output for the log, and stops starting checks past the overall budget."""

    def __init__(self, args):
        self.args = args
        self.log = []
        self.start = time.monotonic()
        # After a command of a check timed out, the check's other commands are not run (the GPU
        # may be hung; the budget is better spent on the next check).
        self.timed_out = False

    def elapsed(self):
        return time.monotonic() - self.start

    def run(self, cmd, timeout=None, env=None, cwd=None):
        # Never past the budget (plus a little): the whole run must end in time.
        timeout = max(5, min(timeout or self.args.timeout, self.args.budget + 30 - self.elapsed()))
        timeout = int(timeout)
        text = " ".join(shlex.quote(c) for c in cmd)
        shown = self.display(cmd)
        if cwd:
            shown = f"(cd {shlex.quote(os.path.relpath(cwd, ROOT))} && {shown})"
            text = f"(cd {shlex.quote(cwd)} && {text})"
        record = {"command": shown, "rc": None, "seconds": 0.0, "json": None, "timed_out": False}
        if self.args.plan:
            print(f"  would run: {text}")
            record["rc"] = 0
            return record
        if self.timed_out:
            print(f"  not run (an earlier command timed out): {shown}", flush=True)
            record.update(rc=125, output="not run: an earlier command of the check timed out")
            self.log.append(record)
            return record
        print(f"  $ {shown}", flush=True)
        full_env = dict(os.environ)
        full_env.update(env or {})
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, env=full_env, start_new_session=True,
                                    errors="replace", cwd=cwd)
        except OSError as e:
            record.update(rc=127, output=f"cannot start {cmd[0]}: {e}")
            self.log.append(record)
            print(f"    cannot start: {e}", flush=True)
            return record
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    out, _ = proc.communicate(timeout=5)
                    break
                except subprocess.TimeoutExpired:
                    out = ""
            record["timed_out"] = True
            self.timed_out = True
            out = (out or "") + f"\n[gpu-check: killed after {timeout} s]\n"
        record["seconds"] = round(time.monotonic() - t0, 2)
        record["rc"] = proc.returncode if not record["timed_out"] else 124
        record["output"] = out
        for line in reversed(out.splitlines()):
            if line.startswith("{"):
                try:
                    record["json"] = json.loads(line)
                    break
                except ValueError:
                    pass
        self.log.append(record)
        tail = [l for l in out.splitlines() if l.strip()][-3:] if record["rc"] != 0 else []
        status = "timed out" if record["timed_out"] else f"exit {record['rc']}"
        print(f"    {status}, {record['seconds']:.1f} s" + "".join(f"\n    | {l}" for l in tail),
              flush=True)
        return record

    def display(self, cmd):
        """A command as the docs show it: the bundle's and this checkout's folders shortened."""
        words = []
        for w in cmd:
            for prefix, short in ((self.args.bin_dir_real + "/", "bin/"), (ROOT + "/", "")):
                if w.startswith(prefix):
                    w = short + w[len(prefix):]
            words.append(shlex.quote(w))
        return " ".join(words)


def ok(record, check=True):
    """The command ran, exited 0, printed JSON and (if asked) its own check passed."""
    if record is None or record["rc"] != 0:
        return False
    if record.get("json") is None:
        return bool(record.get("plan"))
    c = record["json"].get("check", {})
    return (not check) or (c.get("ran") and c.get("passed"))


def why(record):
    if record is None:
        return "not run"
    if record.get("timed_out"):
        return f"timed out: {record['command']}"
    if record["rc"] == 125:
        return f"not run: {record['command']}"
    if record["rc"] != 0:
        lines = [l for l in record.get("output", "").splitlines() if l.strip()]
        return f"exit {record['rc']}: {record['command']}" + (f" ({lines[-1][:240]})" if lines else "")
    if record.get("json") is None:
        return f"no JSON: {record['command']}"
    return f"check failed: {record['command']}"


def fmt(x, digits=3):
    return "n/a" if x is None else f"{x:.{digits}g}" if isinstance(x, float) else str(x)


def ratio(a, b):
    try:
        return a / b if a and b else None
    except TypeError:
        return None


def num(x):
    """A rate or time with three significant digits (no exponent below a million)."""
    return "n/a" if x is None else f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def nbytes(b):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= scale:
            return f"{b / scale:.3g} {unit}"
    return f"{b} B"


def spearman(pairs):
    """The rank correlation of (predicted, measured) pairs; None for fewer than three."""
    if len(pairs) < 3:
        return None
    return benchlib.spearman([p for p, _ in pairs], [m for _, m in pairs])


def per_rank_bytes(j):
    ranks = (j or {}).get("per_rank", [])
    parts = []
    for r in ranks:
        s = f"r{r.get('rank')} h2d {nbytes(r.get('h2d_bytes', 0))} d2h {nbytes(r.get('d2h_bytes', 0))}"
        if "evictions" in r:
            s += f" evict {r['evictions']}"
        parts.append(s)
    return "; ".join(parts)


# ---- the checks --------------------------------------------------------------------------------------

SIZES = {
    "quick": {"cannon": 8192, "cannon_check": 2048, "jacobi": 8192, "jacobi_iters": 200,
              "jacobi_check": 1024, "cholesky": 8192, "cholesky_b": 1024, "cholesky_check": 2048,
              "cholesky_check_b": 256, "shared": 4096, "shared_iters": 100, "mandel": 4096,
              "advisor": 4096, "advisor_iters": 100},
    "full": {"cannon": 16384, "cannon_check": 2048, "jacobi": 16384, "jacobi_iters": 200,
             "jacobi_check": 1024, "cholesky": 16384, "cholesky_b": 1024, "cholesky_check": 2048,
             "cholesky_check_b": 256, "shared": 8192, "shared_iters": 100, "mandel": 8192,
             "advisor": 8192, "advisor_iters": 100},
    # For trying the script itself on a machine without a GPU (emulated devices stand in).
    "tiny": {"cannon": 256, "cannon_check": 128, "jacobi": 256, "jacobi_iters": 20,
             "jacobi_check": 64, "cholesky": 256, "cholesky_b": 64, "cholesky_check": 128,
             "cholesky_check_b": 32, "shared": 128, "shared_iters": 10, "mandel": 128,
             "advisor": 128, "advisor_iters": 10},
}


# clusterCL's applications (hit-packages --workload NAME): sizes by --size.
CLUSTERCL = {
    "quick": {"dcs": ["--n", "1024", "--m", "1024", "--param", "atoms=4096"],
              "cor": ["--n", "4096", "--m", "1024"], "cov": ["--n", "4096", "--m", "1024"],
              "bop": ["--n", "65536", "--param", "steps=1024"], "syrk": ["--n", "2048"],
              "gsp": ["--n", "8192", "--m", "64"], "bsm": ["--n", "1048576"],
              "conv": ["--n", "4096"], "bicg": ["--n", "8192"], "gsmv": ["--n", "8192"]},
    "tiny": {"dcs": ["--n", "32", "--m", "24", "--param", "atoms=40"],
             "cor": ["--n", "40", "--m", "16"], "cov": ["--n", "40", "--m", "16"],
             "bop": ["--n", "64", "--param", "steps=64"], "syrk": ["--n", "40"],
             "gsp": ["--n", "40", "--m", "8"], "bsm": ["--n", "256"], "conv": ["--n", "40"],
             "bicg": ["--n", "48"], "gsmv": ["--n", "48"]},
}
CLUSTERCL["full"] = CLUSTERCL["quick"]


class Checks:
    def __init__(self, args, runner):
        self.a = args
        self.r = runner
        self.s = SIZES[args.size]
        self.results = []

    def prog(self, name):
        return os.path.join(self.a.bin_dir, name)

    def work_file(self, name):
        """A file beside the tests' folder (the check's scratch folder)."""
        return os.path.join(os.path.dirname(os.path.abspath(self.a.ctest_dir)), name)

    def mpi(self, np, name, *rest):
        return [self.a.mpiexec, "-n", str(np), self.prog(name), *rest]

    def blas_env(self, np):
        return {"OPENBLAS_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // np))}

    def verdict(self, name, what, passed, figures, records, skipped=None):
        self.r.timed_out = False
        v = "SKIP" if skipped else ("PLAN" if self.a.plan else "PASS" if passed else "FAIL")
        line = f"{v} {name}: {skipped or figures}"
        print(line, flush=True)
        self.results.append({"name": name, "what": what, "verdict": v, "figures": skipped or figures,
                             "commands": [{k: rec[k] for k in ("command", "rc", "seconds", "json")}
                                          for rec in records if rec is not None]})

    def budget_left(self):
        return self.a.budget - self.r.elapsed()

    # ctest -L cuda over the bundle's (or the build's) tests
    def tests(self):
        what = "every test labelled `cuda` (the programs' CUDA bodies) and the CudaTest gtests"
        # In the tests' folder rather than --test-dir, which older ctest lacks.
        cmd = ["ctest", "-L", "cuda", "--output-on-failure", "--timeout",
               str(min(self.a.timeout, 90)), "-j", "1"]
        if self.a.ctest_regex:
            cmd += ["-R", self.a.ctest_regex]
        rec = self.r.run(cmd, timeout=240, cwd=self.a.ctest_dir)
        if self.a.plan:
            return self.verdict("tests", what, True, "planned", [rec])
        out = rec.get("output", "")
        # "100% tests passed, 0 tests failed out of 11" (CTest 3.x) or "100% tests passed out of
        # 11" (CTest 4 when none failed).
        m = re.search(r"(\d+)% tests passed(?:, (\d+) tests? failed)? out of (\d+)", out)
        not_run = re.findall(r"^\s*\d+ - (\S+) \((?:Skipped|Not Run|Disabled)\)", out, re.M)
        if not m:
            return self.verdict("tests", what, False, why(rec), [rec])
        failed, total = int(m.group(2) or 0), int(m.group(3))
        passed = failed == 0 and not not_run and total > 0 and rec["rc"] == 0
        figures = f"{total - failed - len(not_run)}/{total} passed"
        if not_run:
            figures += f", skipped (no GPU seen?): {' '.join(not_run)}"
        if failed:
            figures += ", failed: " + " ".join(re.findall(r"^\s*\d+ - (\S+) \((?:Failed|Timeout)\)", out, re.M))
        self.verdict("tests", what, passed, figures, [rec])

    def cannon(self):
        n = self.s["cannon"]
        what = (f"hit-cannon on one GPU (n = {n}) against cuBLAS dgemm alone (ref-cublas-gemm), "
                f"transfers included and excluded; --check at n = {self.s['cannon_check']}")
        chk = self.r.run(self.mpi(1, "hit-cannon", "--n", str(self.s["cannon_check"]), "--devices", "cuda:0", "--check",
                                  "--reps", "1", "--warmup", "0", "--json"))
        hit = self.r.run(self.mpi(1, "hit-cannon", "--n", str(n), "--devices", "cuda:0", "--reps",
                                  "5", "--warmup", "1", "--json"))
        ref = self.r.run([self.prog("ref-cublas-gemm"), "--n", str(n), "--reps", "5", "--warmup", "1",
                          "--check"])
        recs = [chk, hit, ref]
        if self.a.plan:
            return self.verdict("cannon-1gpu", what, True, "planned", recs)
        passed = ok(chk) and ok(hit, check=False) and ok(ref)
        if not passed:
            bad = next(r for r in recs if not ok(r, check=r is not hit))
            return self.verdict("cannon-1gpu", what, False, why(bad), recs)
        h, f = hit["json"], ref["json"]
        with_t = ratio(f["time_s"], h["time_s"])
        kern = ratio(f["kernel_time_s"], h["time_s"])
        goal = "met" if with_t and with_t >= 0.9 else "not met"
        figures = (f"hit {num(h['gflops'])} GFLOP/s ({h['time_s']:.4f} s), cuBLAS with transfers "
                   f"{num(f['gflops'])} ({f['time_s']:.4f} s), dgemm alone {num(f['kernel_gflops'])} "
                   f"({f['kernel_time_s']:.4f} s); hit/ref {fmt(with_t)} with transfers "
                   f"(goal >= 0.9 {goal}), {fmt(kern)} of the dgemm alone; "
                   f"check max rel err {chk['json']['check'].get('max_rel_error', 0):.1e}")
        self.verdict("cannon-1gpu", what, True, figures, recs)

    def jacobi(self):
        n, iters = self.s["jacobi"], self.s["jacobi_iters"]
        what = (f"hit-jacobi on one GPU (n = {n}, {iters} iterations) against a hand-written CUDA "
                f"Jacobi (ref-cuda-jacobi), checksums compared; --check (bit for bit) at "
                f"n = {self.s['jacobi_check']}")
        chk = self.r.run(self.mpi(1, "hit-jacobi", "--n", str(self.s["jacobi_check"]), "--iters",
                                  "50", "--devices",
                                  "cuda:0", "--check", "--reps", "1", "--warmup", "0", "--json"))
        hit = self.r.run(self.mpi(1, "hit-jacobi", "--n", str(n), "--iters", str(iters), "--devices",
                                  "cuda:0", "--reps", "3", "--warmup", "1", "--json"))
        ref = self.r.run([self.prog("ref-cuda-jacobi"), "--n", str(n), "--iters", str(iters),
                          "--reps", "3", "--warmup", "1"])
        # A small grid, where launches and waits cost more than the kernels.
        small = str(self.s["jacobi_check"])
        hit_s = self.r.run(self.mpi(1, "hit-jacobi", "--n", small, "--iters", str(iters),
                                    "--devices", "cuda:0", "--reps", "3", "--warmup", "1", "--json"))
        ref_s = self.r.run([self.prog("ref-cuda-jacobi"), "--n", small, "--iters", str(iters),
                            "--reps", "3", "--warmup", "1"])
        recs = [chk, hit, ref, hit_s, ref_s]
        if self.a.plan:
            return self.verdict("jacobi-1gpu", what, True, "planned", recs)
        runs = ((chk, True), (hit, False), (ref, False), (hit_s, False), (ref_s, False))
        if not all(ok(r, c) for r, c in runs):
            bad = next(r for r, c in runs if not ok(r, c))
            return self.verdict("jacobi-1gpu", what, False, why(bad), recs)
        h, f = hit["json"], ref["json"]
        same = h.get("checksum") == f.get("checksum") or (
            abs(h.get("checksum", 0) - f.get("checksum", 1)) <= 1e-12 * abs(f.get("checksum", 1)))
        waits = h.get("per_rank", [{}])[0].get("device_waits")
        figures = (f"hit {num(h['mcells_per_s'])} Mcell/s ({h['time_s']:.4f} s), CUDA reference "
                   f"{num(f['mcells_per_s'])} with transfers ({f['time_s']:.4f} s), "
                   f"{num(f['kernel_mcells_per_s'])} kernels alone; hit/ref "
                   f"{fmt(ratio(f['time_s'], h['time_s']))} with transfers (goal >= 0.9), "
                   f"{fmt(ratio(f['kernel_time_s'], h['time_s']))} of the kernels alone (goal >= 0.9); "
                   f"n = {small}: hit/ref {fmt(ratio(ref_s['json']['time_s'], hit_s['json']['time_s']))} "
                   f"with transfers (goal >= 0.7); host waits {waits} in 3 repetitions; checksums "
                   f"{'equal' if same else 'DIFFER'} ({h.get('checksum')!r} vs {f.get('checksum')!r})")
        self.verdict("jacobi-1gpu", what, same, figures, recs)

    def cholesky(self):
        n, b = self.s["cholesky"], self.s["cholesky_b"]
        what = (f"hit-cholesky on one GPU (n = {n}, b = {b}) against cuSOLVER dpotrf alone "
                "(ref-cusolver-potrf), transfers included and excluded; --check at "
                f"n = {self.s['cholesky_check']}")
        chk = self.r.run(self.mpi(1, "hit-cholesky", "--n", str(self.s["cholesky_check"]), "--b",
                                  str(self.s["cholesky_check_b"]), "--devices",
                                  "cuda:0", "--check", "--reps", "1", "--warmup", "0", "--json"))
        hit = self.r.run(self.mpi(1, "hit-cholesky", "--n", str(n), "--b", str(b), "--devices",
                                  "cuda:0", "--reps", "3", "--warmup", "1", "--json"))
        ref = self.r.run([self.prog("ref-cusolver-potrf"), "--n", str(n), "--reps", "3",
                          "--warmup", "1", "--check"])
        recs = [chk, hit, ref]
        if self.a.plan:
            return self.verdict("cholesky-1gpu", what, True, "planned", recs)
        if not (ok(chk) and ok(hit, check=False) and ok(ref)):
            bad = next(r for r, c in ((chk, True), (hit, False), (ref, True)) if not ok(r, c))
            return self.verdict("cholesky-1gpu", what, False, why(bad), recs)
        h, f = hit["json"], ref["json"]
        figures = (f"hit {num(h['gflops'])} GFLOP/s ({h['time_s']:.4f} s), cuSOLVER with transfers "
                   f"{num(f['gflops'])} ({f['time_s']:.4f} s), potrf alone {num(f['kernel_gflops'])} "
                   f"({f['kernel_time_s']:.4f} s); hit/ref {fmt(ratio(f['time_s'], h['time_s']))} "
                   f"with transfers, {fmt(ratio(f['kernel_time_s'], h['time_s']))} of potrf alone")
        self.verdict("cholesky-1gpu", what, True, figures, recs)

    def cholesky_runtime(self):
        n, b = self.s["cholesky"], self.s["cholesky_b"]
        what = (f"hit-cholesky --runtime on one GPU (n = {n}, b = {b}): every task on the GPU "
                "(cores=1: each tile in once and back once), and the GPU with the host's other "
                "cores as workers, against cuSOLVER dpotrf with its transfers; --check at "
                f"n = {self.s['cholesky_check']} both ways")
        recs = []
        for devices in ("cuda:0(cores=1)", "cuda:0"):
            recs.append(self.r.run(self.mpi(1, "hit-cholesky", "--n", str(self.s["cholesky_check"]),
                                            "--b", str(self.s["cholesky_check_b"]), "--runtime",
                                            "--devices", devices, "--check", "--reps", "1",
                                            "--warmup", "0", "--json")))
        for devices in ("cuda:0(cores=1)", "cuda:0"):
            recs.append(self.r.run(self.mpi(1, "hit-cholesky", "--n", str(n), "--b", str(b),
                                            "--runtime", "--devices", devices, "--reps", "3",
                                            "--warmup", "1", "--json")))
        recs.append(self.r.run([self.prog("ref-cusolver-potrf"), "--n", str(n), "--reps", "3",
                                "--warmup", "1", "--check"]))
        if self.a.plan:
            return self.verdict("cholesky-runtime-1gpu", what, True, "planned", recs)
        checks = [(recs[0], True), (recs[1], True), (recs[2], False), (recs[3], False),
                  (recs[4], True)]
        if not all(ok(r, c) for r, c in checks):
            bad = next(r for r, c in checks if not ok(r, c))
            return self.verdict("cholesky-runtime-1gpu", what, False, why(bad), recs)
        alone, hybrid, f = recs[2]["json"], recs[3]["json"], recs[4]["json"]
        moved = per_rank_bytes(alone)
        figures = (f"GPU alone {num(alone['gflops'])} GFLOP/s ({alone['time_s']:.4f} s, {moved}), "
                   f"GPU + host cores {num(hybrid['gflops'])} ({hybrid['time_s']:.4f} s, places "
                   f"{hybrid['runtime']['places']}); cuSOLVER with transfers {num(f['gflops'])} "
                   f"({f['time_s']:.4f} s); runtime/ref {fmt(ratio(f['time_s'], alone['time_s']))} "
                   f"alone, {fmt(ratio(f['time_s'], hybrid['time_s']))} with the host cores; "
                   f"hybrid/alone {fmt(ratio(alone['time_s'], hybrid['time_s']))}")
        self.verdict("cholesky-runtime-1gpu", what, True, figures, recs)

    def shared(self):
        n, iters = self.s["shared"], self.s["shared_iters"]
        what = (f"four processes sharing one GPU (cuda:0*4): hit-cannon n = {n} and hit-jacobi "
                f"n = {n}, {iters} iterations, both with --check, against one process alone on the "
                "GPU; per-rank host<->device bytes")
        env = self.blas_env(4)
        can = self.r.run(self.mpi(4, "hit-cannon", "--n", str(n), "--devices", "cuda:0*4",
                                  "--check", "--reps", "3", "--warmup", "1", "--json"), env=env)
        jac = self.r.run(self.mpi(4, "hit-jacobi", "--n", str(n), "--iters", str(iters),
                                  "--devices", "cuda:0*4", "--check", "--reps", "3", "--warmup", "1",
                                  "--json"), env=env)
        can1 = self.r.run(self.mpi(1, "hit-cannon", "--n", str(n), "--devices", "cuda:0", "--reps",
                                   "3", "--warmup", "1", "--json"))
        jac1 = self.r.run(self.mpi(1, "hit-jacobi", "--n", str(n), "--iters", str(iters),
                                   "--devices", "cuda:0", "--reps", "3", "--warmup", "1", "--json"))
        # Time-shared: a GPU budget for one rank's A, B and C and a quarter more, so the four ranks
        # take turns, giving up resident copies (docs/devices.md, "Several ranks on one device").
        budget = int(1.25 * 3 * (n // 2) * (n // 2) * 8)
        tight = self.r.run(self.mpi(4, "hit-cannon", "--n", str(n), "--devices",
                                    f"cuda:0(mem={budget}B)*4", "--check", "--reps", "3",
                                    "--warmup", "1", "--json"), env=env)
        recs = [can, jac, can1, jac1, tight]
        what += f"; hit-cannon again with a budget of {budget} B for the four (memory for one)"
        if self.a.plan:
            return self.verdict("shared-gpu-4ranks", what, True, "planned", recs)
        if not (ok(can) and ok(jac) and ok(tight)):
            bad = next(r for r in recs if not ok(r))
            return self.verdict("shared-gpu-4ranks", what, False, why(bad), recs)
        c, j = can["json"], jac["json"]

        def alone(rec, four):
            if not ok(rec, check=False):
                return "one process alone: " + why(rec)
            return f"x{fmt(ratio(four['time_s'], rec['json']['time_s']))} the time of one process alone"

        figures = (f"cannon {num(c['gflops'])} GFLOP/s ({c['time_s']:.4f} s, {alone(can1, c)}, "
                   f"imbalance {fmt(c.get('imbalance'))}; {per_rank_bytes(c)}), jacobi "
                   f"{num(j['mcells_per_s'])} Mcell/s ({j['time_s']:.4f} s, {alone(jac1, j)}; "
                   f"{per_rank_bytes(j)}); time-shared cannon {tight['json']['time_s']:.4f} s "
                   f"(x{fmt(ratio(tight['json']['time_s'], c['time_s']))} the resident run), "
                   f"{sum(r.get('evictions', 0) for r in tight['json']['per_rank'])} evictions; "
                   f"all checks passed")
        evicted = sum(r.get("evictions", 0) for r in tight["json"]["per_rank"])
        if evicted == 0:
            return self.verdict("shared-gpu-4ranks", what, False,
                                "the time-shared run gave up no copy: " + figures, recs)
        self.verdict("shared-gpu-4ranks", what, True, figures, recs)

    def packages(self):
        n = self.s["mandel"]
        what = (f"work packages (Mandelbrot, n = {n}) on a GPU beside two CPU ranks "
                "(cuda:0,cpu*2) against the GPU alone, both with --check")
        common = ["--workload", "mandelbrot", "--n", str(n), "--schedule",
                  "workPackages:size=auto,depth=2", "--check", "--reps", "3", "--warmup", "1",
                  "--json"]
        alone = self.r.run(self.mpi(1, "hit-packages", "--devices", "cuda:0", *common))
        mixed = self.r.run(self.mpi(3, "hit-packages", "--devices", "cuda:0,cpu*2", *common),
                           env=self.blas_env(3))
        # Each device's launches sized for it (docs/packages.md, "Batches"): reported beside the
        # verdict, which stays the default schedule's.
        batched_args = [a if a != "workPackages:size=auto,depth=2" else
                        "workPackages:size=auto,depth=2,batch=auto" for a in common]
        batched = self.r.run(self.mpi(3, "hit-packages", "--devices", "cuda:0,cpu*2",
                                      *batched_args), env=self.blas_env(3))
        recs = [alone, mixed, batched]
        if self.a.plan:
            return self.verdict("packages-gpu-cpu", what, True, "planned", recs)
        if not (ok(alone) and ok(mixed)):
            bad = next(r for r in recs if not ok(r))
            return self.verdict("packages-gpu-cpu", what, False, why(bad), recs)
        a, m = alone["json"], mixed["json"]
        devs = m.get("per_device", [])
        rows = sum(d.get("rows", 0) for d in devs) or 1
        # Rank 0 is the GPU's (cuda:0 comes first in --devices).
        gpu_rows = sum(d.get("rows", 0) for d in devs if d.get("rank") == 0)
        share = ", ".join(f"{d.get('device')} {100 * d.get('rows', 0) / rows:.0f}% of rows "
                          f"({d.get('packages', 0)} packages)" for d in devs)
        figures = (f"GPU alone {num(a['mcells_per_s'])} Mpixel/s ({a['time_s']:.4f} s), GPU + 2 CPU "
                   f"ranks {num(m['mcells_per_s'])} ({m['time_s']:.4f} s, "
                   f"x{fmt(ratio(a['time_s'], m['time_s']))}); {share}")
        if ok(batched):
            b = batched["json"]
            figures += (f"; with batch=auto {b['time_s']:.4f} s "
                        f"(x{fmt(ratio(a['time_s'], b['time_s']))}), batches "
                        + ", ".join(str(d.get("batch", 1)) for d in b.get("per_device", [])))
        else:
            figures += f"; with batch=auto: {why(batched)}"
        self.verdict("packages-gpu-cpu", what, gpu_rows > 0, figures, recs)

    def clustercl(self):
        what = ("clusterCL's ten applications (hit-packages --workload NAME, "
                "workPackages:size=auto,depth=2, --check) on cuda:0 alone and on cuda:0,cpu*2 "
                "(goal: never slower than the GPU alone)")
        recs, figures = [], []
        for workload, size in CLUSTERCL[self.a.size].items():
            common = ["--workload", workload, *size, "--schedule", "workPackages:size=auto,depth=2",
                      "--check", "--reps", "3", "--warmup", "1", "--json"]
            alone = self.r.run(self.mpi(1, "hit-packages", "--devices", "cuda:0", *common))
            mixed = self.r.run(self.mpi(3, "hit-packages", "--devices", "cuda:0,cpu*2", *common),
                               env=self.blas_env(3))
            recs += [alone, mixed]
            if self.a.plan:
                continue
            if not (ok(alone) and ok(mixed)):
                bad = next(r for r in (alone, mixed) if not ok(r))
                return self.verdict("clustercl-gpu", what, False, f"{workload}: {why(bad)}", recs)
            a, m = alone["json"], mixed["json"]
            figures.append(f"{workload} {a['time_s']:.4f} s alone, "
                           f"x{fmt(ratio(a['time_s'], m['time_s']))} beside 2 CPU ranks")
        if self.a.plan:
            return self.verdict("clustercl-gpu", what, True, "planned", recs)
        self.verdict("clustercl-gpu", what, True, "; ".join(figures) + "; every check passed",
                     recs)

    # The layout advisor on a real GPU beside CPU ranks, before and after one calibrating run.
    def advisor(self):
        n, iters, top, np, devices = self.s["advisor"], self.s["advisor_iters"], 6, 4, "cuda:0,cpu*3"
        what = (f"hit-layout --advise for hit-jacobi n = {n}, {iters} iterations on {devices}: "
                "not calibrated, then calibrated by one run of the default layout; the first "
                f"{top} candidates of both rankings run for real (regret: the measured time of "
                "the first choice over the best measured, goal <= 1.10)")
        env = self.blas_env(np)
        size = ["--n", str(n), "--iters", str(iters)]
        timing = ["--devices", devices, "--reps", "3", "--warmup", "1", "--json"]
        base = self.r.run(self.mpi(np, "hit-jacobi", *size, *timing), env=env)
        result = self.work_file("advisor-calibration.json")
        if base.get("json") is not None:
            with open(result, "w") as f:
                json.dump(base["json"], f)
        advise = ["--advise", "--app", "jacobi", "--shape", f"[0:{n}][0:{n}]", "--procs", str(np),
                  "--devices", devices, "--iters", str(iters), "--top", str(top), "--json"]
        raw = self.r.run(self.mpi(1, "hit-layout", *advise))
        cal = self.r.run(self.mpi(1, "hit-layout", *advise, "--calibrate", result))
        recs = [base, raw, cal]
        if self.a.plan:
            return self.verdict("advisor-gpu", what, True, "planned", recs)
        if not (ok(base, check=False) and ok(raw, check=False) and ok(cal, check=False)):
            bad = next(r for r in recs if not ok(r, check=False))
            return self.verdict("advisor-gpu", what, False, why(bad), recs)
        measured = {}
        # The JSON lists every candidate (--top cuts the table only).
        for c in raw["json"]["candidates"][:top] + cal["json"]["candidates"][:top]:
            key = (c["layout"], c["topology"])
            if key not in measured:
                rec = self.r.run(self.mpi(np, "hit-jacobi", *size, "--topology", c["topology"],
                                          "--layout", c["layout"], *timing), env=env)
                recs.append(rec)
                measured[key] = rec["json"]["time_s"] if ok(rec, check=False) else None
        done = {k: t for k, t in measured.items() if t}
        if not done:
            return self.verdict("advisor-gpu", what, False, "no candidate ran", recs)
        best_key = min(done, key=done.get)
        parts = []
        for label, rec in (("not calibrated", raw), ("calibrated", cal)):
            cands = rec["json"]["candidates"][:top]
            first = (cands[0]["layout"], cands[0]["topology"])
            pairs = [(c["predicted_s"], done[(c["layout"], c["topology"])]) for c in cands
                     if done.get((c["layout"], c["topology"]))]
            regret = ratio(done.get(first), done[best_key])
            parts.append(f"{label}: first {first[0]} on {first[1]} predicted "
                         f"{cands[0]['predicted_s']:.4f} s, measured {fmt(done.get(first), 4)} s, "
                         f"regret {fmt(regret)} (goal <= 1.10 {'met' if regret and regret <= 1.10 else 'not met'}), "
                         f"Spearman {fmt(spearman(pairs))} over {len(pairs)}")
        factors = {"stencil": cal["json"]["calibration"]["compute"].get("cuda")}
        for kernel, app, run, problem in (
                ("gemm", "cannon", ["hit-cannon", "--n", str(n)], ["--shape", f"[0:{n}][0:{n}]"]),
                ("spmv", "cg", ["hit-cg", "--generate", f"poisson3d:n={n // 64}"],
                 ["--generate", f"poisson3d:n={n // 64}"])):
            factors[kernel] = self.gpu_factor(app, run, problem, recs)
        cpu = cal["json"]["calibration"]["compute"].get("cpu")
        figures = (f"{'; '.join(parts)}; best measured {best_key[0]} on {best_key[1]} "
                   f"{done[best_key]:.4f} s; default layout {base['json']['time_s']:.4f} s; "
                   "measured over assumed compute (the calibration's factors): cuda:0 "
                   + ", ".join(f"{k} x{fmt(v)}" for k, v in factors.items())
                   + f", cpu stencil x{fmt(cpu)}")
        self.verdict("advisor-gpu", what, len(done) == len(measured), figures, recs)

    def gpu_factor(self, app, run, problem, recs):
        """The advisor's calibration factor for cuda:0 from one run of `app` on it alone: how far
        the assumed GPU speed of the app's kernel is from this GPU's (1: exact)."""
        timed = self.r.run(self.mpi(1, *run, "--devices", "cuda:0", "--reps", "3", "--warmup", "1",
                                    "--json"))
        recs.append(timed)
        if not ok(timed, check=False):
            return None
        result = self.work_file(f"advisor-{app}.json")
        with open(result, "w") as f:
            json.dump(timed["json"], f)
        fit = self.r.run(self.mpi(1, "hit-layout", "--advise", "--app", app, *problem, "--procs",
                                  "1", "--devices", "cuda:0", "--calibrate", result, "--json"))
        recs.append(fit)
        if not ok(fit, check=False):
            return None
        return fit["json"]["calibration"]["compute"].get("cuda")

    def all(self):
        order = [("tests", self.tests), ("cannon-1gpu", self.cannon), ("jacobi-1gpu", self.jacobi),
                 ("cholesky-1gpu", self.cholesky),
                 ("cholesky-runtime-1gpu", self.cholesky_runtime),
                 ("shared-gpu-4ranks", self.shared),
                 ("packages-gpu-cpu", self.packages), ("advisor-gpu", self.advisor),
                 ("clustercl-gpu", self.clustercl)]
        only = set(self.a.only.split(",")) if self.a.only else None
        for name, check in order:
            if only and name not in only:
                continue
            if self.budget_left() < 20 and not self.a.plan:
                self.verdict(name, "", False, "", [], skipped=f"the time budget "
                             f"({self.a.budget:.0f} s) is spent")
                continue
            print(f"gpu-check: {name}", flush=True)
            try:
                check()
            except Exception as e:  # noqa: BLE001 (one check's surprise must not end the others)
                self.verdict(name, "", False, f"could not read the results: {e!r}", [])


# ---- the report ------------------------------------------------------------------------------------

def report_markdown(args, checks, diagnosis):
    lines = []
    lines.append(f"Run by `scripts/gpu-check.sh` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
                 f", commit {args.commit}, sizes `{args.size}`; the checks took "
                 f"{checks.r.elapsed():.0f} s.")
    lines.append("")
    if diagnosis:
        lines.append("```text")
        lines.extend(diagnosis.rstrip().splitlines())
        lines.append("```")
        lines.append("")
    lines.append("| check | verdict | figures |")
    lines.append("|---|---|---|")
    for r in checks.results:
        lines.append(f"| `{r['name']}` | {r['verdict']} | {r['figures'].replace('|', '/')} |")
    lines.append("")
    lines.append("Commands (`bin/` is the bundle's or the build's programs folder):")
    lines.append("")
    lines.append("```sh")
    for r in checks.results:
        for c in r["commands"]:
            lines.append(f"{c['command']}    # {r['name']}: exit {c['rc']}, {c['seconds']} s")
    lines.append("```")
    return "\n".join(lines)


def run(args):
    args.bin_dir_real = os.path.realpath(args.bin_dir)
    if args.commit is None:
        args.commit = benchlib.commit_text()
    runner = Runner(args)
    checks = Checks(args, runner)
    checks.all()
    diagnosis = open(args.diagnosis).read() if args.diagnosis and os.path.exists(args.diagnosis) else ""
    if args.plan:
        return 0
    md = report_markdown(args, checks, diagnosis)
    if args.docs:
        benchlib.replace_section(args.docs, "gpu-check", md)
        print(f"gpu-check: results written to {os.path.relpath(args.docs, os.getcwd())}")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "gpu-results.json"), "w") as f:
            json.dump({"commit": args.commit, "size": args.size, "diagnosis": diagnosis,
                       "seconds": round(runner.elapsed(), 1), "checks": checks.results}, f, indent=1)
        with open(os.path.join(args.out, "gpu-commands.log"), "w") as f:
            for rec in runner.log:
                f.write(f"==== {rec['command']}\n---- exit {rec['rc']}, {rec['seconds']} s\n")
                f.write(rec.get("output", "") + "\n")
        if args.docs:
            with open(args.docs) as src, open(os.path.join(args.out, "gpu-results.md"), "w") as dst:
                dst.write(src.read())
    print("gpu-check: verdicts")
    for r in checks.results:
        print(f"{r['verdict']} {r['name']}: {r['figures']}")
    failed = [r["name"] for r in checks.results if r["verdict"] == "FAIL"]
    print(f"gpu-check: {len(checks.results) - len(failed)} of {len(checks.results)} checks without "
          f"failure" + (f"; failed: {' '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("pack-tests")
    for k in ("--build", "--source", "--mpiexec", "--labelled", "--gtests", "--output"):
        p.add_argument(k, required=True)
    p.add_argument("--packed", help="the folder of the programs the bundle holds")
    p = sub.add_parser("ctestfile")
    for k in ("--tests", "--bin", "--mpiexec", "--source", "--dir"):
        p.add_argument(k, required=True)
    p.add_argument("--python")
    p = sub.add_parser("run")
    p.add_argument("--bin", dest="bin_dir", required=True)
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--ctest-dir", required=True)
    p.add_argument("--ctest-regex", help="only the tests matching this (ctest -R)")
    p.add_argument("--size", choices=sorted(SIZES), default="quick")
    p.add_argument("--only", help="comma-separated check names")
    p.add_argument("--timeout", type=int, default=120, help="seconds per command")
    p.add_argument("--budget", type=float, default=420, help="seconds for all checks")
    p.add_argument("--plan", action="store_true", help="print the commands, run nothing")
    p.add_argument("--diagnosis", help="a text file: what the script found on the machine")
    p.add_argument("--docs", help="the markdown file whose gpu-check section gets the results")
    p.add_argument("--out", help="a folder for gpu-results.json/.md and the commands' output")
    p.add_argument("--commit")
    args = ap.parse_args()
    if args.what == "pack-tests":
        return pack_tests(args)
    if args.what == "ctestfile":
        return ctestfile(args)
    return run(args)


if __name__ == "__main__":
    sys.exit(main() or 0)
