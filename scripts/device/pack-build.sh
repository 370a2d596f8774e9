#!/usr/bin/env bash
# Packs what the test suite needs of ./build (binaries, CTest files, generated scripts;
# no objects or static libraries) into one compressed file, for a GPU machine that has no
# compiler packages: scripts/device/suite-on-gpu.sh unpacks it there at the same path.
#   scripts/device/pack-build.sh [OUT]     # default: .device-carry/build.tar.xz
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.device-carry/build.tar.xz}
mkdir -p "$(dirname "$out")"
# The parent side's objects stay: house.parent_never_calls_cuda reads their symbols.
{ find build -type f ! -name '*.o' ! -name '*.a' ! -name '*.d' ! -path '*/Unity/*' ! -name '.ninja_*' -print0
  find build/apps/cudadiag/CMakeFiles -path '*cudadiag_parent.dir/*' -name '*.o' -print0; } |
  tar --null -T - -cf - | xz -T2 -6 >"$out.tmp"
mv "$out.tmp" "$out"
echo "pack-build: $out, $(du -h "$out" | cut -f1), built in $PWD"
