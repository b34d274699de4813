#!/usr/bin/env bash
# The GPU checks of hitmap++ on a machine with an NVIDIA GPU, in one call that both diagnoses the
# machine and measures:
#   1. what it found: OS, C library, driver and GPU, CUDA toolkit, and where every library of the
#      programs comes from (the bundle or the machine);
#   2. `ctest -L cuda`: every test labelled cuda (the programs' CUDA bodies) and the CudaTest
#      gtests;
#   3. the GPU benchmarks: hit-cannon on one GPU against cuBLAS dgemm alone (transfers included and
#      excluded), hit-jacobi against a hand-written CUDA Jacobi, hit-cholesky against cuSOLVER
#      potrf alone, four processes sharing one GPU, work packages with a GPU beside CPU ranks,
#      the layout advisor's ranking for hit-jacobi on a GPU beside CPU ranks against real runs,
#      and clusterCL's ten applications on a GPU alone and beside CPU ranks (--check);
# one verdict line per check (PASS / FAIL / SKIP name: figures), the results in
# docs/gpu-results.md and, when $OUT is set, gpu-check.log, gpu-results.json, gpu-results.md and
# gpu-commands.log in $OUT. Each command has a time limit (120 s) and all the checks a budget
# (420 s), so a hang cannot take the machine's time.
#
# The programs come from the bundle made by scripts/gpu-bundle.sh (gpu-bundle.tar.xz in the
# repository root, or --bundle FILE|DIR): nothing is built on the GPU machine then. Without a
# bundle, on a Debian machine with the packages of scripts/setup.sh and nvcc, it builds build-gpu/
# first (scripts/gpu-bundle.sh --build-only).
#
# Without a GPU it says so and exits 0, running nothing.
#
#   bash scripts/gpu-check.sh [--bundle FILE|DIR] [--size quick|full|tiny] [--only a,b] [--plan]
#                             [--timeout S] [--budget S]
# --plan prints the commands it would run (even without a GPU); HIT_GPU_CHECK_FORCE=1 runs the
# checks where no GPU is seen (they fail: for testing this script).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bundle=${HIT_GPU_BUNDLE:-}
size=quick
only=
plan=0
timeout_s=120
budget_s=420
while (($#)); do
  case $1 in
    --bundle) bundle=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --plan) plan=1; shift ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --budget) budget_s=$2; shift 2 ;;
    -h | --help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

# ---- a GPU? --------------------------------------------------------------------------------------
reason=
gpus=
for d in /usr/local/nvidia/bin /usr/lib/wsl/lib; do
  if [ -x "$d/nvidia-smi" ] && ! command -v nvidia-smi > /dev/null 2>&1; then PATH=$PATH:$d; fi
done
if ! command -v nvidia-smi > /dev/null 2>&1; then
  reason="nvidia-smi not found"
elif ! gpus=$(nvidia-smi -L 2>&1); then
  reason="nvidia-smi -L failed: $(head -1 <<< "$gpus")"
elif ! grep -q '^GPU [0-9]' <<< "$gpus"; then
  reason="nvidia-smi -L lists no GPU"
elif [ ! -e /dev/nvidia0 ]; then
  reason="no /dev/nvidia0"
fi
if [ -n "$reason" ] && [ -z "${HIT_GPU_CHECK_FORCE:-}" ] && ((!plan)); then
  echo "gpu-check: no NVIDIA GPU here ($reason); nothing run"
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT" && echo "gpu-check: no NVIDIA GPU here ($reason); nothing run" > "$OUT/gpu-check.log"
  fi
  exit 0
fi

if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  exec > >(tee "$OUT/gpu-check.log") 2>&1
  tee_pid=$!
fi
started=$(date +%s)
work=$root/.gpu-check
rm -rf "$work"
mkdir -p "$work"
diag=$work/diagnosis.txt
: > "$diag"
say() { echo "$*" | tee -a "$diag"; }

# ---- what this machine is ------------------------------------------------------------------------
# shellcheck disable=SC1091
os=$( (. /etc/os-release 2> /dev/null && echo "${PRETTY_NAME:-$ID}") || uname -s)
libc=$(getconf GNU_LIBC_VERSION 2> /dev/null || ldd --version 2> /dev/null | head -1 || echo unknown)
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2> /dev/null || echo unknown)
say "machine: $os, kernel $(uname -r), $(nproc) cores ($cpu), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
say "C library: $libc"
if [ -n "$reason" ]; then
  say "GPU: none ($reason)"
else
  nvidia-smi 2>&1 || true
  while IFS= read -r line; do say "GPU: $line"; done < <(nvidia-smi \
    --query-gpu=index,name,driver_version,memory.total,compute_cap --format=csv,noheader 2> /dev/null ||
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1)
fi
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2> /dev/null || true)
say "CUDA toolkit: ${nvcc:-no nvcc}${nvcc:+ ($("$nvcc" --version | grep -o 'release [0-9.]*' || true))}"
say "tools: $(cmake --version 2> /dev/null | head -1 || echo 'no cmake'), $(command -v ctest > /dev/null && echo ctest || echo 'no ctest'), $(python3 --version 2>&1)"

# The machine's folders of what the bundle leaves out: the CUDA driver, cuBLAS and cuSOLVER.
machine_libs=(libcuda.so.1 libcublas.so.13 libcublasLt.so.13 libcusolver.so.12 libcusparse.so.12
              libnvJitLink.so.13)
candidate_dirs() {
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib \
           /usr/local/cuda-*/lib64 /usr/local/cuda-*/targets/x86_64-linux/lib \
           /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 \
           /usr/lib/wsl/lib /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib \
           /usr/local/lib/python3*/dist-packages/nvidia/*/lib \
           /usr/lib/python3/dist-packages/nvidia/*/lib; do
    [ -d "$d" ] && echo "$d"
  done
  return 0
}
mapfile -t dirs < <(candidate_dirs)
found_dirs=()
missing=()
for lib in "${machine_libs[@]}"; do
  where=
  for d in "${dirs[@]}"; do
    if [ -e "$d/$lib" ]; then where=$d; break; fi
  done
  if [ -z "$where" ]; then
    where=$( (ldconfig -p || /sbin/ldconfig -p) 2> /dev/null |
      awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}' || true)
    where=${where:+$(dirname "$where")}
  fi
  if [ -z "$where" ]; then
    missing+=("$lib")
    continue
  fi
  case " ${found_dirs[*]} " in *" $where "*) ;; *) found_dirs+=("$where") ;; esac
done
HIT_BUNDLE_MACHINE_LIBS=$(IFS=:; echo "${found_dirs[*]}")
export HIT_BUNDLE_MACHINE_LIBS
say "from the machine: ${machine_libs[*]} in ${HIT_BUNDLE_MACHINE_LIBS:-(none found)}${missing:+; MISSING: ${missing[*]}}"

# ---- the programs: the bundle, or a build here ------------------------------------------------------
if [ -z "$bundle" ]; then
  if [ -f gpu-bundle.tar.xz ]; then bundle=gpu-bundle.tar.xz; fi
fi
if [ -n "$bundle" ]; then
  if [ -d "$bundle" ]; then
    B=$(cd "$bundle" && pwd)
  else
    echo "gpu-check: unpacking $bundle"
    if command -v xz > /dev/null; then
      tar -C "$work" -xJf "$bundle"
    else
      python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
        "$bundle" "$work"
    fi
    B=$work/gpu-bundle
  fi
  say "bundle: $(grep -E '^(commit|made):' "$B/MANIFEST" | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
  commit=$(awk '/^commit:/ {print $2}' "$B/MANIFEST")
  bin=$B/bin
  mpiexec=$B/bin/mpiexec
  # One host: hydra starts its proxy by fork, no ssh. The bundle's mpiexec first on PATH (for
  # anything that looks for one, e.g. a singleton MPI_Init).
  export HYDRA_LAUNCHER=fork
  export PATH=$B/bin:$PATH
  # Where each library of the programs comes from, as the bundle's loader resolves them.
  for prog in hit-cholesky ref-cusolver-potrf; do
    listing=$("$B/lib/ld-linux-x86-64.so.2" --library-path "$B/lib:$HIT_BUNDLE_MACHINE_LIBS" \
      --list "$B/bin/.real/$prog" 2>&1 || true)
    from_bundle=$(awk -v b="$B/lib/" '$2 == "=>" && index($3, b) == 1 {print $1}' <<< "$listing" | sort | tr '\n' ' ')
    from_machine=$(awk -v b="$B/lib/" '$2 == "=>" && index($3, b) != 1 {print $1 " (" $3 ")"}' <<< "$listing" | sort | tr '\n' ' ')
    say "$prog: from the bundle: $from_bundle"
    say "$prog: from the machine: ${from_machine:-nothing}"
  done
  if version=$("$bin/hit-info" --version 2>&1); then
    say "bundle runs: hit-info --version: $version"
  else
    say "bundle does not run: hit-info --version: $version"
  fi
  # The tests, with this machine's paths.
  python3 scripts/gpu_check.py ctestfile --tests "$B/tests.json" --bin "$bin" --mpiexec "$mpiexec" \
    --source "$root" --dir "$work/ctest"
else
  if [ ! -x build-gpu/bin/ref-cublas-gemm ]; then
    if ! command -v mpicxx.mpich > /dev/null || [ -z "$nvcc" ]; then
      echo "gpu-check: no bundle (gpu-bundle.tar.xz; make it with scripts/gpu-bundle.sh where the" \
        "Debian packages are) and no MPICH or nvcc to build here" >&2
      exit 1
    fi
    if ((!plan)); then bash scripts/gpu-bundle.sh --build-only --jobs "$(nproc)"; fi
  fi
  say "programs: built here in build-gpu/"
  commit=
  bin=$root/build-gpu/bin
  mpiexec=$(command -v mpiexec.mpich)
  if [ -f build-gpu/CTestTestfile.cmake ]; then
    ctest --test-dir build-gpu -L cuda --show-only=json-v1 > "$work/cuda.json"
    (cd build-gpu && ctest -R 'Cuda' --show-only=json-v1) > "$work/gtests.json"
    python3 scripts/gpu_check.py pack-tests --build build-gpu --source "$root" --mpiexec "$mpiexec" \
      --labelled "$work/cuda.json" --gtests "$work/gtests.json" --output "$work/tests.json"
    python3 scripts/gpu_check.py ctestfile --tests "$work/tests.json" --bin "$bin" \
      --mpiexec "$mpiexec" --source "$root" --dir "$work/ctest"
  fi
fi
# What hitmap++ itself sees (hit-info: the GPUs found, or why none).
if [ -x "$bin/hit-info" ]; then
  seen=$("$bin/hit-info" --json 2> /dev/null | python3 -c '
import json, sys
for node in json.load(sys.stdin)["nodes"]:
    gpus = node.get("gpus") or []
    if gpus:
        print(str(len(gpus)) + " GPU(s): " + json.dumps(gpus))
    else:
        print("no GPU (" + node.get("gpu_note", "") + ")")
' 2>&1 || true)
  say "hitmap++ sees: ${seen:-nothing (hit-info --json failed)}"
fi
say "setup took $(($(date +%s) - started)) s"

# ---- the checks ---------------------------------------------------------------------------------------
run_args=(--bin "$bin" --mpiexec "$mpiexec" --ctest-dir "$work/ctest" --size "$size"
          --timeout "$timeout_s" --budget "$budget_s" --diagnosis "$diag" --docs docs/gpu-results.md)
if [ -n "$only" ]; then run_args+=(--only "$only"); fi
if ((plan)); then run_args+=(--plan); fi
if [ -n "${OUT:-}" ]; then run_args+=(--out "$OUT"); fi
if [ -n "$commit" ]; then run_args+=(--commit "$commit"); fi
status=0
python3 scripts/gpu_check.py run "${run_args[@]}" || status=$?
echo "gpu-check: $(($(date +%s) - started)) s in all"
if [ -n "${tee_pid:-}" ]; then
  exec > /dev/null 2>&1  # the log in $OUT complete before this script ends
  wait "$tee_pid" || true
fi
exit "$status"
