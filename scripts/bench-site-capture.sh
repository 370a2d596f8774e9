#!/usr/bin/env bash
# What capturing an allocation's site costs, on the CPU (not a test): a real CPython
# allocating through the fake driver (tests/interposer/fake_driver) with the interpreter's
# lock released, each call from under four levels of C calling back into Python (qsort
# with a Python comparator), so that the host stack is deep (about 40 frames, as
# PyTorch's) and the Python stack too. The interposer records only (CUDADIAG_FENCE_SIDE=
# none: no VMM calls), so what differs between the settings is the capture:
#   native     no interposer
#   sites=0    the interposer, CUDADIAG_RING_SITES=0
#   sites      the interposer as it runs by default
# N allocations and frees a run (the fake driver makes at most 4096 blocks), ROUNDS
# interleaved rounds; prints microseconds per allocation and free, the median of the
# rounds, and the capture's share (sites - sites=0). With CALLGRIND=1 (valgrind
# installed): instructions of capture_allocation_site per allocation, once.
#   scripts/bench-site-capture.sh [BUILD_DIR]   # default ./build
#   PYTHON=python3.12 INTERPOSER=/other/libcudadiag_fence.so scripts/bench-site-capture.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
build=${1:-./build}
PYTHON=${PYTHON:-python3}
INTERPOSER=$(realpath "${INTERPOSER:-$build/bin/libcudadiag_fence.so}")
FAKE=$(realpath "$build/tests/interposer/fake_driver")
N=${N:-3000}
ROUNDS=${ROUNDS:-5}
[[ -f $INTERPOSER && -f $FAKE/libcuda.so.1 ]] || {
  echo "bench-site-capture: build cudadiag_fence and interposer_fake_cuda in $build first" >&2
  exit 2
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/bench.py" <<'PY'
import ctypes
import sys
import time

cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
libc = ctypes.CDLL(None)
COMPARE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
n, levels = int(sys.argv[1]), int(sys.argv[2])
p = ctypes.c_uint64()


def burst(count):
    for _ in range(count):
        assert cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(4096)) == 0
        assert cuda.cuMemFree_v2(p) == 0


def nested(level, count):
    if level == 0:
        return burst(count)
    done = []

    def compare(a, b):
        if not done:
            done.append(1)
            nested(level - 1, count)
        return 0

    libc.qsort((ctypes.c_int * 2)(2, 1), 2, 4, COMPARE(compare))


nested(levels, 50)
start = time.perf_counter()
nested(levels, n)
print(f"{(time.perf_counter() - start) / n * 1e6:.3f}")
PY
once() {  # SETTING: microseconds per allocation and free
  local -a env=(LD_LIBRARY_PATH="$FAKE")
  case $1 in
    sites=0) env+=(LD_PRELOAD="$INTERPOSER" CUDADIAG_FENCE_SIDE=none CUDADIAG_RING="$work/ring" CUDADIAG_RING_SITES=0) ;;
    sites) env+=(LD_PRELOAD="$INTERPOSER" CUDADIAG_FENCE_SIDE=none CUDADIAG_RING="$work/ring") ;;
  esac
  rm -f "$work/ring"
  env "${env[@]}" "$PYTHON" "$work/bench.py" "$N" 4
}
declare -A runs
settings=(native sites=0 sites)
for r in $(seq 1 "$ROUNDS"); do
  for i in 0 1 2; do
    s=${settings[$(((i + r) % 3))]}
    runs[$s]+="$(once "$s") "
  done
done
echo "$($PYTHON --version 2>&1), $N allocations and frees a run, $ROUNDS rounds; interposer $INTERPOSER"
python3 - "${runs[native]}" "${runs[sites=0]}" "${runs[sites]}" <<'PY'
import statistics, sys
names = ("native", "sites=0", "sites")
med = {}
for name, text in zip(names, sys.argv[1:]):
    values = [float(v) for v in text.split()]
    med[name] = statistics.median(values)
    print(f"  {name:8} {med[name]:7.2f} us per allocation and free (runs: {' '.join(f'{v:.2f}' for v in values)})")
print(f"  capture: {med['sites'] - med['sites=0']:+.2f} us per allocation")
PY
if [[ ${CALLGRIND:-0} == 1 ]] && command -v valgrind >/dev/null; then
  rm -f "$work/ring"
  env LD_LIBRARY_PATH="$FAKE" LD_PRELOAD="$INTERPOSER" CUDADIAG_FENCE_SIDE=none CUDADIAG_RING="$work/ring" \
    valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$PYTHON" "$work/bench.py" "$N" 4 \
    >/dev/null 2>&1
  calls=$((N + 50))
  callgrind_annotate --inclusive=yes "$work/callgrind.out" 2>/dev/null |
    awk -v calls="$calls" '/capture_allocation_site/ {gsub(",", "", $1); printf "  callgrind: %d instructions per capture\n", $1 / calls; exit}'
fi
