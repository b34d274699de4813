"""The logic of scripts/gpu_check.py (what scripts/gpu-check.sh runs on a GPU machine), on a machine
without a GPU: the programs are stand-ins printing the JSON the real ones print, so the verdicts,
the figures, the time limits, the results file and the copies in $OUT are all exercised.

    gpu_check_fake.py SOURCE_DIR WORK_DIR [HIT_BIN MPIEXEC]

Run 1: every check passes (nine PASS lines, exit 0, the results section of a copy of
docs/gpu-results.md rewritten, gpu-results.json/.md and gpu-commands.log in the out folder).
Run 2: the Jacobi reference's checksum differs and hit-packages hangs past the time limit: FAIL,
FAIL (timed out, the check's second command not started), exit 1. Run 3: no budget left: SKIP.
Run 4 (with HIT_BIN and MPIEXEC): the real hit-* programs under the real mpiexec, cuda:0 replaced
by an emulated device, at --size tiny, the references still stand-ins (the Jacobi one computes the
grid and its checksum in Python, in the CUDA reference's order): every check passes, so the fields
read from the programs' JSON are the ones they print.
"""
import json
import os
import re
import shutil
import subprocess
import sys

FAKE = r'''#!/usr/bin/env python3
import json, os, re, sys, time
name = os.path.basename(sys.argv[0])
args = sys.argv[1:]
mode = os.environ.get("FAKE_MODE", "good")
def arg(k, d=None):
    return args[args.index(k) + 1] if k in args else d
hit_bin = os.environ.get("FAKE_HIT_BIN")
if name == "mpiexec":
    if hit_bin:
        os.execv(os.environ["FAKE_MPIEXEC"], [os.environ["FAKE_MPIEXEC"]] + args)
    np = int(args[1])
    os.environ["FAKE_NP"] = str(np)
    os.execv(args[2], args[2:])
if hit_bin and name.startswith("hit-"):
    real = os.path.join(hit_bin, name)
    # The emulated device in cuda:0's place is CPU-clocked: on a loaded machine a wall-clocked one
    # can time slower than the CPU ranks beside it, and placement then leaves it without work.
    def emulated(text):
        return re.sub(r"cuda:0(?:\(([^)]*)\))?",
                      lambda m: "emu:0(clock=cpu" + (f",{m.group(1)}" if m.group(1) else "") + ")",
                      text)
    os.execv(real, [real] + [emulated(a) for a in args])
n = int(arg("--n", 64))
np = int(os.environ.get("FAKE_NP", 1))
check = {"ran": "--check" in args, "passed": True, "max_rel_error": 1e-15}
ranks = [{"rank": r, "compute_s": 0.01, "comm_s": 0.0, "h2d_bytes": 3 * n * n * 8 // np,
          "d2h_bytes": n * n * 8 // np} for r in range(np)]
if any("(mem=" in a for a in args):
    # A device budget for fewer ranks than share it: the ranks give up copies for each other.
    for r in ranks:
        r["evictions"] = 3
if mode == "bad" and np == 4:
    for r in ranks:
        r["evictions"] = 2
out = {"schema": "hitmap.result/1", "ranks": np, "time_s": 0.05, "check": check, "per_rank": ranks,
       "imbalance": 1.01}
if name == "hit-cannon":
    out.update(app="cannon", gflops=2 * n ** 3 / 0.05 * 1e-9)
elif name == "hit-jacobi":
    times = {"weighted:w=1,0.1": 0.05, "blocksLB:factor=0.9": 0.06, "columns2d": 0.21}
    out["time_s"] = times.get(arg("--layout"), 0.2 if "cpu*3" in arg("--devices", "") else 0.05)
    out.update(app="jacobi", mcells_per_s=1000.0, checksum=12345.678901234567, residual=1e-5)
elif name == "hit-cholesky":
    out.update(app="cholesky", gflops=n ** 3 / 3 / 0.05 * 1e-9)
    if "--runtime" in args:
        hybrid = "(cores=1)" not in arg("--devices", "")
        out["runtime"] = {"tasks": 10, "workers": 2 if hybrid else 1,
                          "places": [{"tasks": 4}, {"tasks": 6}] if hybrid else [{"tasks": 10}]}
elif name == "hit-packages":
    if mode == "bad":
        time.sleep(60)
    out.update(app="packages", mcells_per_s=5000.0 * np,
               per_device=[{"rank": r, "device": "cuda:0" if r == 0 else f"cpu:{r - 1}",
                            "rows": n // np, "packages": 8 // np + 1} for r in range(np)])
elif name == "hit-cg":
    out.update(app="cg", iterations=50)
elif name == "hit-layout":
    # The advisor: blocks first before calibration; the GPU-heavy split after it.
    if "--calibrate" in args:
        ranked = [("weighted:w=1,0.1", 0.05), ("blocksLB:factor=0.9", 0.055), ("blocks", 0.2)]
        calibration = {"runs": 1, "compute": {"cuda": 0.5, "cpu": 0.4}, "compute_other": 0.45}
    else:
        ranked = [("blocks", 0.2), ("columns2d", 0.2), ("weighted:w=1,0.1", 0.3)]
        calibration = {"runs": 0, "compute": {}, "compute_other": 1.0}
    out = {"app": arg("--app"), "calibration": calibration,
           "candidates": [{"layout": l, "topology": "array", "predicted_s": t} for l, t in ranked]}
elif name.startswith("ref-"):
    out = {"app": name, "device": "NVIDIA H100 80GB HBM3", "n": n, "time_s": 0.045,
           "kernel_time_s": 0.03, "gflops": 1.0, "kernel_gflops": 2.0, "mcells_per_s": 1100.0,
           "kernel_mcells_per_s": 1500.0, "check": {"ran": "--check" in args, "passed": True}}
    if name == "ref-cuda-jacobi":
        out["checksum"] = 12345.678901234567 if mode == "good" else 12345.6
        if hit_bin:  # the grid itself, as ref-cuda-jacobi computes it
            iters = int(arg("--iters"))
            def init(i, j):
                if i == 0:
                    return 1.0
                return i / n if (i == n - 1 or j == 0 or j == n - 1) else 0.0
            u = [init(i, j) for i in range(n) for j in range(n)]
            v = list(u)
            for it in range(iters):
                a, b = (u, v) if it % 2 == 0 else (v, u)
                for i in range(1, n - 1):
                    for j in range(1, n - 1):
                        c = i * n + j
                        b[c] = 0.25 * (a[c - n] + a[c + n] + a[c - 1] + a[c + 1])
            total = 0.0
            for x in (u if iters % 2 == 0 else v):
                total += x
            out["checksum"] = total
print("some human line first")
print(json.dumps(out))
'''


def make_fake(work):
    bin_dir = os.path.join(work, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    fake = os.path.join(bin_dir, ".fake")
    with open(fake, "w") as f:
        f.write(FAKE)
    os.chmod(fake, 0o755)
    for name in ("mpiexec", "hit-cannon", "hit-jacobi", "hit-cholesky", "hit-packages",
                 "hit-cg", "hit-layout", "ref-cublas-gemm", "ref-cuda-jacobi", "ref-cusolver-potrf"):
        link = os.path.join(bin_dir, name)
        if not os.path.exists(link):
            os.symlink(".fake", link)
    ctest_dir = os.path.join(work, "ctest")
    os.makedirs(ctest_dir, exist_ok=True)
    with open(os.path.join(ctest_dir, "CTestTestfile.cmake"), "w") as f:
        f.write('add_test(fake.cuda "true")\nset_tests_properties(fake.cuda PROPERTIES LABELS "cuda")\n'
                'add_test(fake.other "false")\nset_tests_properties(fake.other PROPERTIES LABELS "cpu")\n')
    return bin_dir, ctest_dir


def run(source, work, bin_dir, ctest_dir, mode, extra, env_extra=None, timeout=120):
    docs = os.path.join(work, f"gpu-results-{mode}.md")
    shutil.copy(os.path.join(source, "docs", "gpu-results.md"), docs)
    out_dir = os.path.join(work, f"out-{mode}")
    shutil.rmtree(out_dir, ignore_errors=True)
    diag = os.path.join(work, "diagnosis.txt")
    with open(diag, "w") as f:
        f.write("GPU: 0, NVIDIA H100 80GB HBM3, 580.159.03, 81559 MiB, 9.0\n")
    env = dict(os.environ, FAKE_MODE=mode, **(env_extra or {}))
    cmd = [sys.executable, os.path.join(source, "scripts", "gpu_check.py"), "run", "--bin", bin_dir,
           "--mpiexec", os.path.join(bin_dir, "mpiexec"), "--ctest-dir", ctest_dir, "--docs", docs,
           "--out", out_dir, "--commit", "abc1234", "--diagnosis", diag, *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    print(f"---- {mode}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p, docs, out_dir


def expect(cond, what):
    if not cond:
        print(f"FAILED: {what}")
        sys.exit(1)


def main():
    source, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    bin_dir, ctest_dir = make_fake(work)

    p, docs, out_dir = run(source, work, bin_dir, ctest_dir, "good", [])
    expect(p.returncode == 0, "all checks pass: exit 0")
    expect("gpu-check: verdicts" in p.stdout, "the verdicts again at the end")
    verdicts = re.findall(r"^(PASS|FAIL|SKIP) (\S+):", p.stdout.split("gpu-check: verdicts")[1], re.M)
    expect([v for v, _ in verdicts] == ["PASS"] * 9, f"nine PASS lines, got {verdicts}")
    expect([n for _, n in verdicts] == ["tests", "cannon-1gpu", "jacobi-1gpu", "cholesky-1gpu",
                                        "cholesky-runtime-1gpu", "shared-gpu-4ranks",
                                        "packages-gpu-cpu", "advisor-gpu", "clustercl-gpu"],
           "check order")
    expect(re.search(r"^PASS clustercl-gpu: dcs [0-9.]+ s alone, x[0-9.]+ beside 2 CPU ranks; .*"
                     r"gsmv [0-9.]+ s alone, x[0-9.]+ beside 2 CPU ranks; every check passed",
                     p.stdout, re.M), "every clusterCL application alone and beside CPU ranks")
    expect(re.search(r"^PASS cholesky-runtime-1gpu: GPU alone .* GPU \+ host cores .* places "
                     r"\[\{'tasks': 4\}, \{'tasks': 6\}\]", p.stdout, re.M),
           "the runtime's Cholesky on the GPU alone and with the host cores")
    expect(re.search(r"^PASS advisor-gpu: not calibrated: first blocks on array predicted 0.2000 s, "
                     r"measured 0.2 s, regret 4 \(goal <= 1.10 not met\), Spearman -0.866 over 3; "
                     r"calibrated: first weighted:w=1,0.1 on array .* regret 1 \(goal <= 1.10 met\), "
                     r"Spearman 1 over 3; best measured weighted:w=1,0.1 on array 0.0500 s", p.stdout,
                     re.M), "the advisor's regret and rank correlation before and after calibration")
    expect(re.search(r"cuda:0 stencil x0.5, gemm x0.5, spmv x0.5, cpu stencil x0.4", p.stdout),
           "the calibration's factors of the GPU for the three kernels")
    expect("1/1 passed" in p.stdout, "ctest -L cuda ran the cuda test only")
    expect("checksums equal" in p.stdout, "Jacobi checksums compared")
    text = open(docs).read()
    expect("not yet run on a GPU" not in text.split("<!-- BEGIN gpu-check -->")[1],
           "the results section replaced")
    expect("## The checks" in text, "the rest of the page kept")
    expect("| `cannon-1gpu` | PASS |" in text and "NVIDIA H100" in text and "abc1234" in text,
           "verdicts, device and commit in the page")
    expect("bin/hit-cannon --n 8192" in text, "commands shown with bin/")
    results = json.load(open(os.path.join(out_dir, "gpu-results.json")))
    expect(len(results["checks"]) == 9 and results["commit"] == "abc1234", "gpu-results.json")
    for f in ("gpu-results.md", "gpu-commands.log"):
        expect(os.path.exists(os.path.join(out_dir, f)), f"{f} in the out folder")

    p, docs, out_dir = run(source, work, bin_dir, ctest_dir, "bad", ["--timeout", "3",
                                                                     "--only",
                                                                     "jacobi-1gpu,shared-gpu-4ranks,packages-gpu-cpu"])
    expect(p.returncode == 1, "a failed check: exit 1")
    expect(re.search(r"^FAIL jacobi-1gpu: .*checksums DIFFER", p.stdout, re.M), "checksum differs")
    expect(re.search(r"^PASS shared-gpu-4ranks: .*evict 2", p.stdout, re.M), "evictions shown")
    expect(re.search(r"^FAIL packages-gpu-cpu: timed out", p.stdout, re.M), "time limit")
    expect("not run (an earlier command timed out)" in p.stdout, "no second command after a hang")

    p, docs, out_dir = run(source, work, bin_dir, ctest_dir, "good", ["--budget", "5", "--only",
                                                                      "cannon-1gpu"])
    expect(p.returncode == 0, "a skipped check is no failure")
    expect(re.search(r"^SKIP cannon-1gpu: the time budget \(5 s\) is spent", p.stdout, re.M),
           "budget spent: SKIP")
    if len(sys.argv) > 4:
        hit_bin, mpiexec = os.path.abspath(sys.argv[3]), sys.argv[4]
        p, docs, out_dir = run(source, work, bin_dir, ctest_dir, "good", ["--size", "tiny"],
                               {"FAKE_HIT_BIN": hit_bin, "FAKE_MPIEXEC": mpiexec,
                                "OPENBLAS_NUM_THREADS": "1"}, timeout=360)
        verdicts = re.findall(r"^(PASS|FAIL|SKIP) (\S+):",
                              p.stdout.split("gpu-check: verdicts")[-1], re.M)
        expect(p.returncode == 0 and [v for v, _ in verdicts] == ["PASS"] * 9,
               f"the real programs on emulated devices: nine PASS lines, got {verdicts}")
        expect("checksums equal" in p.stdout, "hit-jacobi's checksum is the reference's")
    print("gpu_check_fake: passed")


if __name__ == "__main__":
    main()
