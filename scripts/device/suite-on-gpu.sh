#!/usr/bin/env bash
# The whole test suite on a GPU machine, from a build made on another one: unpacks the file
# scripts/device/pack-build.sh wrote into ./build, makes the checkout reachable at the path
# it was built in (CTest's files name it), and runs ctest, GPU tests included. The log goes
# to $OUT/ctest.log.
#   scripts/device/suite-on-gpu.sh BUILT_IN [PACK]   # BUILT_IN: the checkout's path there
set -uo pipefail
cd "$(dirname "$0")/../.."
built_in=$1
pack=${2:-.device-carry/build.tar.xz}
out=${OUT:-.}
xz -dc "$pack" | tar -xf -
if [[ $PWD != "$built_in" ]]; then
  mkdir -p "$(dirname "$built_in")"
  [[ -e $built_in ]] || ln -s "$PWD" "$built_in"
fi
cd "$built_in"
ctest --test-dir build -j "$((2 * $(nproc)))" --output-on-failure >"$out/ctest.log" 2>&1
rc=$?
grep -E 'tests passed|Total Test time|\((Failed|Timeout|Not Run)\)|Skipped' "$out/ctest.log"
exit $rc
