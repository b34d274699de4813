#!/bin/sh
# Builds bench/ref/petsc_cg.c into DIR/petsc-cg (default: build/bin) with PETSc's pkg-config file
# and Open MPI's compiler wrapper. Not part of the CMake build: Debian's PETSc is built on Open MPI
# (the rest of hitmap++ uses MPICH) and CI has no PETSc. Run it with Open MPI's launcher:
#   bench/ref/build_petsc_cg.sh build/bin
#   mpiexec.openmpi -n 2 build/bin/petsc-cg --generate poisson3d:n=64 --json
# (as root: mpiexec.openmpi --allow-run-as-root --oversubscribe ...)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-build/bin}
cc=${MPICC:-mpicc.openmpi}

if ! command -v pkg-config >/dev/null 2>&1; then
  echo "build_petsc_cg.sh: pkg-config is missing (apt-get install pkg-config)" >&2
  exit 1
fi
pc=
for name in PETSc petsc; do
  if pkg-config --exists "$name"; then pc=$name; break; fi
done
if [ -z "$pc" ]; then
  echo "build_petsc_cg.sh: PETSc not found by pkg-config: install Debian's petsc-dev" \
       "(apt-get install petsc-dev) or set PKG_CONFIG_PATH to PETSc's lib/pkgconfig" >&2
  exit 1
fi
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "build_petsc_cg.sh: $cc not found: PETSc's MPI compiler wrapper (Debian: libopenmpi-dev," \
       "or set MPICC)" >&2
  exit 1
fi
mkdir -p "$out"
# shellcheck disable=SC2046  # pkg-config's flags are meant to split into words
"$cc" -std=c11 -O3 -Wall -Wextra -o "$out/petsc-cg" "$here/petsc_cg.c" \
  $(pkg-config --cflags "$pc") $(pkg-config --libs "$pc") -lm
echo "built $out/petsc-cg (PETSc $(pkg-config --modversion "$pc"), $cc)"
