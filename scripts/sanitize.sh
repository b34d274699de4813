#!/usr/bin/env bash
# The whole test suite built with AddressSanitizer and UndefinedBehaviorSanitizer (preset
# `sanitize`, CUDA off: the CUDA runtime and ASan do not mix). Any memory error or undefined
# behaviour fails the test that hit it. Leak detection is off: MPICH keeps allocations until exit.
# The four cli.jacobi.error.fail_alloc_on_rank* tests are left out: they inject an 8 TB allocation
# and check that stderr holds one line, and ASan adds its own line about the refused allocation.
# Takes about 15 minutes on 2 cores (a separate build in build-sanitize/).
#   bash scripts/sanitize.sh [ctest arguments, e.g. -R cli.cannon]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --deps-only
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake --preset sanitize "${launcher[@]}" >/dev/null
cmake --build --preset sanitize -j "$(nproc)"
ctest --preset sanitize -j 2 "$@"
