#!/usr/bin/env bash
# Install missing dependencies, configure and build cudadiag into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# One compile job more than cores: nvcc's steps and the links wait on files, and a third job
# fills that time (a fresh build on 2 cores: 4 min 53 s with 3 jobs, 5 min 20 s with 2, 5 min
# 10 s with 4). CUDADIAG_JOBS overrides.
jobs=${CUDADIAG_JOBS:-$(($(nproc) + 1))}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-Release} >/dev/null
cmake --build build -j "$jobs"
