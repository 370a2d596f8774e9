#!/usr/bin/env bash
# Install, build, and run `cudadiag repro` with the default suite. Without a GPU the
# host-side checks still run and the report says what was skipped and why.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
exec ./build/bin/cudadiag repro "$@"
