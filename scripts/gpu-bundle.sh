#!/usr/bin/env bash
# Makes the self-contained bundle that scripts/gpu-check.sh runs on a GPU machine whose image has
# none of the Debian packages hitmap++ builds on (and nothing can be fetched there):
#
#   gpu-bundle/bin/<program>        links to one static launcher (scripts/gpu/launch.c) that runs
#   gpu-bundle/bin/.real/<program>  the real program through the bundle's own loader and libraries
#   gpu-bundle/lib/                 libhitmap, the ldd closure of every program (glibc and its
#                                   loader, libstdc++, MPICH and UCX, OpenBLAS, hwloc, fmt, gtest,
#                                   the CUDA runtime) — not the CUDA driver, cuBLAS or cuSOLVER,
#                                   which come from the machine (too large: 0.7 GiB)
#   gpu-bundle/tests.json           the tests labelled `cuda` and the CudaTest gtests, with paths
#                                   made bundle-relative
#   gpu-bundle/MANIFEST             commit, build machine, contents and what the machine must give
#
# packed as gpu-bundle.tar.xz in the repository root (git ignores it), at most 64 MiB.
#
#   bash scripts/gpu-bundle.sh [--build DIR] [--output FILE] [--no-build | --build-only] [--jobs N]
#
# --build DIR: a CUDA-enabled build folder to reuse (default build-gpu/, configured here with the
# default preset's settings plus HIT_CUDA=ON, CMAKE_CUDA_ARCHITECTURES=90 and ccache when present);
# only the targets the GPU checks need are built. --no-build: pack what DIR already holds;
# --build-only: build, pack nothing (scripts/gpu-check.sh on a Debian machine with a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

build="build-gpu"
output=gpu-bundle.tar.xz
do_build=1
build_only=0
jobs=${HIT_JOBS:-2}
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --build-only) build_only=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "gpu-bundle: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

# What the GPU checks run: the programs, the hand-written CUDA references and the test binaries
# that hold the CUDA gtests (tests/devices/cuda_test.cpp; the partition test of the cuda default).
programs=(hit-info hit-cannon hit-jacobi hit-cholesky hit-packages hit-cg hit-heat hit-layout
          ref-cublas-gemm ref-cuda-jacobi ref-cusolver-potrf)
test_binaries=(test_devices test_partitions test_sparse)
# Left to the machine: the CUDA driver (it must match the kernel module) and the large CUDA
# libraries (cuBLAS 54 MiB + cuBLASLt 517 MiB, cuSOLVER 135 MiB and what it needs).
machine_libs_re='^(linux-vdso|libcuda\.so|libnvidia-|libcublas|libcublasLt|libcusolver|libcusparse|libnvJitLink)'

if ((do_build)); then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    launcher=()
    if command -v ccache > /dev/null; then
      export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
      launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
    fi
    generator=()
    if command -v ninja > /dev/null; then generator=(-G Ninja); fi
    echo "gpu-bundle: configuring $build (HIT_CUDA=ON, sm_90)"
    cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DHIT_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 "${launcher[@]}" > "$build.configure.log" 2>&1 ||
      { cat "$build.configure.log" >&2; exit 1; }
  fi
  echo "gpu-bundle: building ${programs[*]} ${test_binaries[*]} in $build (-j $jobs)"
  cmake --build "$build" -j "$jobs" --target "${programs[@]}" "${test_binaries[@]}"
fi
if ((build_only)); then exit 0; fi
for p in "${programs[@]}" "${test_binaries[@]}"; do
  if [ ! -x "$build/bin/$p" ]; then
    echo "gpu-bundle: $build/bin/$p is missing (is $build configured with the CUDA backend?)" >&2
    exit 1
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/gpu-bundle
mkdir -p "$stage/bin/.real" "$stage/lib/ucx"

# Programs, test binaries, MPICH's launcher and proxy (Debian's mpiexec.mpich is a link to
# mpiexec.hydra).
for p in "${programs[@]}" "${test_binaries[@]}"; do cp -L "$build/bin/$p" "$stage/bin/.real/"; done
hydra=$(readlink -f "$(command -v mpiexec.mpich || command -v mpiexec.hydra)")
proxy=$(command -v hydra_pmi_proxy || echo "$(dirname "$hydra")/hydra_pmi_proxy")
cp -L "$hydra" "$stage/bin/.real/mpiexec.hydra"
cp -L "$proxy" "$stage/bin/.real/hydra_pmi_proxy"
ln -s mpiexec.hydra "$stage/bin/.real/mpiexec"
ln -s mpiexec.hydra "$stage/bin/.real/mpiexec.mpich"
# UCX's shared-memory transport by cross-memory attach (MPICH is ch4:ucx); UCX loads its
# modules from ucx/ beside libucs.
ucx_dir=$(dirname "$(ldconfig -p | awk '/libucs\.so\.0 .*x86-64/ {print $NF; exit}')")/ucx
if [ -e "$ucx_dir/libuct_cma.so.0" ]; then cp -L "$ucx_dir/libuct_cma.so.0" "$stage/lib/ucx/"; fi

# The ldd closure of all of them (ldd lists the transitive closure), less what the machine gives.
declare -A seen=()
left_out=()
elves=("$stage"/bin/.real/* "$stage"/lib/ucx/*)
for elf in "${elves[@]}"; do
  [ -L "$elf" ] && continue
  while read -r name path; do
    if [[ $name =~ $machine_libs_re ]]; then
      [[ $name == linux-vdso* ]] || left_out+=("$name")
      continue
    fi
    [ -n "${seen[$name]:-}" ] && continue
    if [ "$path" = "not found" ] || [ -z "$path" ]; then
      echo "gpu-bundle: $(basename "$elf") needs $name, which is not found here" >&2
      exit 1
    fi
    seen[$name]=$path
    cp -L "$path" "$stage/lib/$name"
  done < <(LD_LIBRARY_PATH="$build/lib" ldd "$elf" |
             awk '/=>/ {print $1, ($3 == "not" ? "not found" : $3); next}
                  /ld-linux/ {next}
                  NF {print $1, ""}')
done
cp -L /lib64/ld-linux-x86-64.so.2 "$stage/lib/ld-linux-x86-64.so.2"
# Smaller: symbols the loader does not need go (glibc's own files stay as they are).
for f in "$stage"/lib/*.so* "$stage"/lib/ucx/*.so* "$stage"/bin/.real/*; do
  [ -L "$f" ] && continue
  case $(basename "$f") in ld-linux* | libc.so* | libm.so* | libpthread* | libdl* | librt* | libresolv*) continue ;; esac
  strip --strip-unneeded "$f" 2> /dev/null || true
done

# The launcher, and one link to it per program.
gcc -static -O2 -Wall -Wextra -o "$stage/bin/.launch" scripts/gpu/launch.c
for f in "$stage"/bin/.real/*; do ln -s .launch "$stage/bin/$(basename "$f")"; done

# The tests: every test labelled `cuda`, and the CudaTest gtests (their ctest label is `unit`),
# with bundle-relative paths (@BUNDLE@, @SOURCE@, @MPIEXEC@, @PYTHON@ are filled in there).
ctest --test-dir "$build" -L cuda --show-only=json-v1 > "$work/cuda.json"
(cd "$build" && ctest -R 'CudaTest|Cuda' --show-only=json-v1) > "$work/gtests.json"
python3 scripts/gpu_check.py pack-tests --build "$build" --source "$root" \
  --mpiexec "$(command -v mpiexec.mpich)" --labelled "$work/cuda.json" --gtests "$work/gtests.json" \
  --packed "$stage/bin/.real" --output "$stage/tests.json"

{
  echo "hitmap++ GPU bundle"
  echo "commit: $(git rev-parse --short HEAD 2> /dev/null || echo unknown)$(git diff --quiet HEAD 2> /dev/null || echo -dirty)"
  # shellcheck disable=SC1091
  echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  echo "cuda: $("$nvcc" --version | grep -o 'release [0-9.]*'), CMAKE_CUDA_ARCHITECTURES=$(grep -m1 '^CMAKE_CUDA_ARCHITECTURES' "$build/CMakeCache.txt" | cut -d= -f2)"
  echo "from the machine: libcuda.so.1 (the driver, opened by the CUDA runtime) $(printf '%s\n' "${left_out[@]}" | sort -u | tr '\n' ' ')"
  echo "programs: $(cd "$stage/bin/.real" && echo *)"
  echo "libraries: $(cd "$stage/lib" && echo *.so* | tr ' ' '\n' | sort | tr '\n' ' ')"
} > "$stage/MANIFEST"

tar -C "$work" -cf - gpu-bundle | xz -T "$jobs" -6 > "$work/bundle.tar.xz"
mv "$work/bundle.tar.xz" "$output"
size=$(stat -c %s "$output")
unpacked=$(du -sb "$stage" | cut -f1)
awk -v f="$output" -v s="$size" -v u="$unpacked" \
  'BEGIN {printf "gpu-bundle: %s: %.1f MiB (%.1f MiB unpacked)\n", f, s / 1048576, u / 1048576}'
if ((size > 64 * 1048576)); then
  echo "gpu-bundle: larger than the 64 MiB a run can carry" >&2
  exit 1
fi
