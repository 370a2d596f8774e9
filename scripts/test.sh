#!/usr/bin/env bash
# Install, build, and run the whole test suite (unit, CLI; GPU tests skip without a GPU).
# Tests run two per core: many of them wait on the processes they start (the CLI, a Slurm
# cluster, the install tree). CUDADIAG_TEST_JOBS overrides.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j "${CUDADIAG_TEST_JOBS:-$((2 * $(nproc)))}"
