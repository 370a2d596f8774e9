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
# CTest's files run the configuring CMake's own path (/usr/bin/cmake here) for the CLI
# tests' scripts; a GPU machine may have CMake elsewhere. (The packaging test needs the
# configuring CMake's CPack itself and says it skipped that part.)
configured_cmake=$(sed -n 's/^CMAKE_COMMAND:INTERNAL=//p' build/CMakeCache.txt)
if [[ -n $configured_cmake && ! -x $configured_cmake ]] && command -v cmake >/dev/null; then
  ln -s "$(command -v cmake)" "$configured_cmake"
fi
ctest --test-dir build -j "$((2 * $(nproc)))" --output-on-failure >"$out/ctest.log" 2>&1
rc=$?
grep -E 'tests passed|Total Test time|\((Failed|Timeout|Not Run)\)|Skipped' "$out/ctest.log"
exit $rc
