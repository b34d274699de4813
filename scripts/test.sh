#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test (unit, multi-process
# under mpiexec.mpich at several process counts, and command-line tests of the programs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Several MPI ranks share two cores in CI: one BLAS thread per rank.
export OPENBLAS_NUM_THREADS=1
ctest --preset default -j 2 "$@"
# Which tables of docs/benchmarks.md were measured on older code (a report; it fails nothing).
if command -v git > /dev/null && [ -d .git ]; then python3 bench/stale_tables.py || true; fi
