#!/usr/bin/env bash
# The main demo: SUMMA's matrix multiplication on 4 MPI processes of an emulated heterogeneous
# node (one accelerator emulated 8x slower than a host core, three CPU ranks), checked against a
# serial product; first with the plain `blocks` layout, which gives every process a quarter of the
# matrices, then with `columns2d`, which sizes each process's block by its device's speed. The
# last line is the speed-up of the balanced layout. Installs what is missing and builds first.
#   bash scripts/demo.sh [extra hit-summa flags]
# HIT_DEMO_DEVICES replaces the devices, HIT_DEMO_N the size (2048), HIT_DEMO_BIN the folder of
# hit-summa (then nothing is installed or built: the test of this script uses it).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${HIT_DEMO_BIN:-}
if [ -z "${bin}" ]; then
  bash scripts/setup.sh
  bin=build/bin
fi
export OPENBLAS_NUM_THREADS=1
# The accelerator's time is its kernel's CPU time times 8 (clock=cpu): the processes sharing this
# machine's cores cannot make it faster or slower, so the balanced layout wins however busy the
# cores are.
devices=${HIT_DEMO_DEVICES:-'emu:0(slowdown=8,clock=cpu,cores=1),cpu(cores=1)*3'}
n=${HIT_DEMO_N:-2048}
svg=$(dirname "${bin}")/demo-layouts.svg
results=$(mktemp -d)
trap 'rm -rf "${results}"' EXIT

run() {  # layout, then extra flags
  local layout=$1
  shift
  mpiexec.mpich -n 4 "${bin}/hit-summa" --n "${n}" --devices "${devices}" --layout "${layout}" \
    --check "$@" | tee "${results}/${layout}.txt"
}
# The median time of a run, from its summary's line "  time T s (median of R, ...)".
median() { awk '$1 == "time" && $3 == "s" { print $2; exit }' "${results}/$1.txt"; }

echo "== hit-summa on 4 processes, devices ${devices}: every process a quarter (blocks) =="
run blocks "$@"
echo
echo "== the same with columns2d: each process's block sized by its device's speed =="
run columns2d --svg "${svg}" "$@"
echo "(the layouts of A, B and C are drawn in ${svg})"
plain=$(median blocks)
balanced=$(median columns2d)
awk -v p="${plain}" -v b="${balanced}" 'BEGIN {
  printf "columns2d over blocks: %.2fx the speed (%.4f s against %.4f s)\n", p / b, b, p }'
