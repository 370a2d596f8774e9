#!/usr/bin/env bash
# Install, build, and run the whole test suite (unit, CLI; GPU tests skip without a GPU).
# Tests run four per core: most of them wait on the processes they start (the CLI, a Slurm
# cluster, the install tree); 55 s at two per core, 45 s at four on a 2-core machine.
# CUDADIAG_TEST_JOBS overrides.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j "${CUDADIAG_TEST_JOBS:-$((4 * $(nproc)))}"
