#!/usr/bin/env bash
# Proves that the GPU bundle needs nothing of the machine it runs on but the kernel and the CUDA
# libraries it leaves out: unpacks gpu-bundle.tar.xz into an empty folder, and runs from it
#   1. in a chroot of that folder (nothing else copied in; /proc, /sys and a tmpfs /dev/shm
#      mounted, the CUDA toolkit's library folder bound read-only at /machine/cuda, standing for
#      the GPU machine's — the bundle does not carry cuBLAS / cuSOLVER), through the bundled
#      mpiexec: hit-cannon --n 256 --devices cpu --check on 4 ranks, and hit-info;
#   2. outside the chroot, with an empty environment (env -i: no LD_LIBRARY_PATH, no PATH): the
#      bundled loader with --library-path alone, and the loader's own view of where every
#      library of hit-cannon comes from.
# Needs root (unshare, mount, chroot).
#   bash scripts/gpu/prove-bundle.sh [gpu-bundle.tar.xz] [CUDA_LIB_DIR]
set -euo pipefail
bundle=$(realpath "${1:-gpu-bundle.tar.xz}")
cuda_lib=$(realpath "${2:-/usr/local/cuda/lib64}")
root=$(mktemp -d /tmp/gpu-bundle-proof.XXXXXX)
trap 'rm -rf "$root"' EXIT
tar -C "$root" -xJf "$bundle" --strip-components=1
echo "proof: unpacked $(basename "$bundle") into $root: $(cd "$root" && echo *)"
mkdir -p "$root/proc" "$root/sys" "$root/dev/shm" "$root/machine/cuda" "$root/tmp"

echo "proof: 1. chroot $root (only the bundle inside)"
# shellcheck disable=SC2016 # the inner shell expands them
unshare --mount --fork env -i PATH=/bin:/usr/sbin:/usr/bin:/sbin HIT_BUNDLE_MACHINE_LIBS=/machine/cuda HYDRA_LAUNCHER=fork \
  OPENBLAS_NUM_THREADS=1 HOME=/tmp ROOT="$root" CUDA_LIB="$cuda_lib" /bin/sh -c '
  set -e
  mount -t proc proc "$ROOT/proc"
  mount -t sysfs sys "$ROOT/sys"
  mount -t tmpfs tmpfs "$ROOT/dev/shm"
  mount --bind "$CUDA_LIB" "$ROOT/machine/cuda"
  mount -o remount,bind,ro "$ROOT/machine/cuda"
  echo "\$ chroot $ROOT /bin/hit-info --version"
  chroot "$ROOT" /bin/hit-info --version
  echo "\$ chroot $ROOT /bin/mpiexec -n 4 /bin/hit-cannon --n 256 --devices cpu --check --reps 1"
  chroot "$ROOT" /bin/mpiexec -n 4 /bin/hit-cannon --n 256 --devices cpu --check --reps 1
'

echo "proof: 2. env -i, the bundled loader with --library-path alone"
cd "$root/tmp"
echo "\$ env -i $root/lib/ld-linux-x86-64.so.2 --library-path $root/lib:$cuda_lib $root/bin/.real/hit-info --version"
env -i "$root/lib/ld-linux-x86-64.so.2" --library-path "$root/lib:$cuda_lib" \
  "$root/bin/.real/hit-info" --version
echo "\$ env -i $root/lib/ld-linux-x86-64.so.2 --library-path $root/lib:$cuda_lib --list $root/bin/.real/hit-cannon"
env -i "$root/lib/ld-linux-x86-64.so.2" --library-path "$root/lib:$cuda_lib" --list \
  "$root/bin/.real/hit-cannon" | sed "s|$root|<bundle>|g"
if env -i "$root/lib/ld-linux-x86-64.so.2" --library-path "$root/lib:$cuda_lib" --list \
  "$root/bin/.real/hit-cannon" | grep -v "$root/\|$cuda_lib/\|linux-vdso" | grep -q .; then
  echo "proof: FAILED: a library comes from neither the bundle nor the CUDA folder" >&2
  exit 1
fi
echo "proof: passed"
