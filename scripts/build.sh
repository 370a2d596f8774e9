#!/usr/bin/env bash
# Install missing dependencies, configure and build cudadiag into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=${CUDADIAG_JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-Release} >/dev/null
cmake --build build -j "$jobs"
