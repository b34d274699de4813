#!/usr/bin/env bash
# Installs the Debian 12 packages hitmap++ needs (as root, --no-install-recommends), then
# configures and builds with the default preset. Safe to run again: it installs only what is
# missing and rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config ccache python3
  mpich libmpich-dev          # MPICH, used explicitly (mpicxx.mpich, mpiexec.mpich)
  libopenblas-dev             # CBLAS
  libhwloc-dev                # physical topology
  libmetis-dev                # METIS 5, the `metis` sparse layout
  libgtest-dev libgmock-dev   # tests
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libscalapack-mpich-dev      # ScaLAPACK's PDGEMM, the reference of hit-summa's benchmark
  libhdf5-mpich-dev hdf5-tools  # parallel HDF5 on MPICH (FILE.h5:/dataset); h5dump for the tests
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# `--deps-only`: the packages alone (scripts/sanitize.sh configures its own build).
if [ "${1:-}" = "--deps-only" ]; then exit 0; fi

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache); fi
cmake --preset default "${launcher[@]}" >/dev/null
cmake --build --preset default -j "$(nproc)"
