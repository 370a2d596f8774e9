#!/usr/bin/env bash
# Fuzz the parsers of outside input with libFuzzer (clang, ASan + UBSan), SECONDS each:
# the TMA printout parser, the report loader, the suite parser, the sanitizer XML
# parser, the Xid line parser and the interposer's ring reader (tests/fuzz/). A separate
# configuration in build-fuzz/. Each input gets a time and memory limit (-timeout,
# -rss_limit_mb: 10 s and 2048 MiB, or the target's own, tests/fuzz/CMakeLists.txt): an
# input that exceeds them is a finding.
#
#   scripts/fuzz.sh 60            # every target, 60 s each
#   scripts/fuzz.sh 60 suite      # only targets whose name contains "suite"
#
# Each target starts from its seeds (test data) and its committed corpus
# (tests/fuzz/corpus/<target>/), grows a working corpus in build-fuzz/corpus/<target>/,
# and every crashing input it finds is copied into tests/fuzz/corpus/<target>/: commit
# it with the fix. ctest (fuzz.<target>) replays that directory on every normal build.
# Exit 1 when a target found something.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: scripts/fuzz.sh SECONDS [NAME-FILTER]}
filter=${2:-}
build=${CUDADIAG_FUZZ_BUILD:-build-fuzz}
clangxx=${CLANGXX:-$(command -v clang++ || command -v clang++-14 || true)}
if [[ -z $clangxx ]]; then
  echo "fuzz: clang++ not found (Debian: clang and libclang-rt-14-dev)" >&2
  exit 2
fi
export CCACHE_DIR=${CCACHE_DIR:-/work/.ccache}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
mkdir -p "$build"
cmake -S . -B "$build" -G Ninja -DCUDADIAG_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$clangxx" "${launcher[@]}" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 2; }
# Only the targets the filter selects.
targets=()
while IFS=$'\t' read -r name _; do
  [[ -n $name && ( -z $filter || $name == *"$filter"* ) ]] && targets+=("fuzz_$name")
done <"$build/fuzz-targets.txt"
((${#targets[@]})) || { echo "fuzz: no target matches '$filter'" >&2; exit 2; }
cmake --build "$build" -j "${CUDADIAG_JOBS:-2}" --target "${targets[@]}" || exit 2

status=0
declare -a summary
while IFS=$'\t' read -r name binary corpus seeds options; do
  [[ -n $name ]] || continue
  [[ -z $filter || $name == *"$filter"* ]] || continue
  work="$build/corpus/$name"
  artifacts="$build/artifacts/$name"
  # What an earlier session left there is no finding of this one.
  rm -f "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-* 2>/dev/null
  mkdir -p "$work" "$artifacts" "$corpus"
  # shellcheck disable=SC2086
  cp -f $seeds "$work"/ 2>/dev/null
  cp -f "$corpus"/* "$work"/ 2>/dev/null
  echo "== $name: $seconds s"
  limits=(-timeout=10 -rss_limit_mb=2048)
  # shellcheck disable=SC2206
  [[ -n ${options:-} ]] && limits=($options)
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$binary" "$work" -max_total_time="$seconds" "${limits[@]}" -max_len=262144 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 >"$build/$name.log" 2>&1
  rc=$?
  runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$build/$name.log" | grep -Eo '[0-9]+$' || echo "?")
  found=0
  for f in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
    [[ -e $f ]] || continue
    cp -f "$f" "$corpus/"
    echo "   finding: $corpus/$(basename "$f")"
    found=$((found + 1))
  done
  result=clean
  if ((rc != 0 || found > 0)); then
    result="FOUND ($found input(s), exit $rc; log $build/$name.log)"
    status=1
  fi
  summary+=("$(printf '%-16s %10s runs  %s' "$name" "$runs" "$result")")
done <"$build/fuzz-targets.txt"

echo
echo "== fuzz summary ($seconds s per target)"
printf '%s\n' "${summary[@]}"
exit $status
