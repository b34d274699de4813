#!/usr/bin/env bash
# The main demo: Cannon's matrix multiplication on 4 MPI processes of an emulated heterogeneous
# node (one accelerator emulated 4x slower than the host kernel, three CPU ranks), checked against
# a serial product; then again with a load-balancing layout. Installs what is missing and builds
# first.
#   bash scripts/demo.sh [extra hit-cannon flags]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export OPENBLAS_NUM_THREADS=1
devices=${HIT_DEMO_DEVICES:-'emu:0(slowdown=4)*1,cpu*3'}
echo "== hit-cannon on 4 processes, devices ${devices} =="
mpiexec.mpich -n 4 build/bin/hit-cannon --n 1024 --devices "${devices}" --check "$@"
echo
echo "== the same, with blocksLB giving the CPU-only block-row 65 % of the rows of A and C =="
mpiexec.mpich -n 4 build/bin/hit-cannon --n 1024 --devices "${devices}" --check \
  --layout-a 'blocksLB:factor=0.65,fast=cpu' --layout-c 'blocksLB:factor=0.65,fast=cpu' \
  --svg build/demo-layouts.svg "$@"
echo "(the layouts of A, B and C are drawn in build/demo-layouts.svg)"
