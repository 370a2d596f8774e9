#!/usr/bin/env bash
# Install, build, and run the whole test suite (unit, CLI; GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j "${CUDADIAG_JOBS:-$(nproc)}"
