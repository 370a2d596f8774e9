#!/usr/bin/env bash
# What the fence rung costs, and what capturing allocation sites (host stack and Python
# line) adds (run on the device; not a test): tests/programs/gpt_loop.py (16k allocations
# on the fence rung, PyTorch's caching off) run ROUNDS interleaved rounds of four:
#   native         `cudadiag run --rungs native` (PyTorch's caching on, no interposer)
#   fence-off      the fence rung with CUDADIAG_RING_SITES=0 (no site captured)
#   fence-on       the fence rung as it runs by default (sites and Python lines captured,
#                  each buffer's guard as large as the buffer)
#   fence-granule  the fence rung with CUDADIAG_GUARD=granule (one-granule guards)
#   fence-blocking the fence rung as it runs, with CUDA_LAUNCH_BLOCKING=1 (as under
#                  --no-coredump and in a failure's site run)
# Prints the loop's own time (loop_seconds: the 30 steps, without Python's start-up) and
# the wall time of every run, the medians, the fence runs' medians over native's, and
# what scaling the guards costs: fence-on over fence-granule (target: at most 1.05).
# Then one more fence run, not timed, with CUDADIAG_FENCE_DEBUG=1: how many sites were
# worked out in full and how many host stacks needed glibc's backtrace, from the
# interposer's own line at exit. Reports go to $OUT/site-cost.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
CUDADIAG=${CUDADIAG:-./build/bin/cudadiag}
OUT=${OUT:-./gpu-check-out}
ROUNDS=${ROUNDS:-3}
PYTHON=${PYTHON:-python3}
dir="$OUT/site-cost"
rm -rf "$dir" && mkdir -p "$dir"
once() {  # NAME MODE
  local -a rung=(--rungs fence)
  case $2 in
    native) rung=(--rungs native) ;;
    fence-off) rung+=(--env CUDADIAG_RING_SITES=0) ;;
    fence-granule) rung+=(--env CUDADIAG_GUARD=granule) ;;
    fence-blocking) rung+=(--env CUDA_LAUNCH_BLOCKING=1) ;;
    debug) rung+=(--env CUDADIAG_FENCE_DEBUG=1) ;;
  esac
  "$CUDADIAG" run "${rung[@]}" --sanitize never --timeout 600 --format json -q -o "$dir/$1.json" \
    -- "$PYTHON" tests/programs/gpt_loop.py 2>"$dir/$1.stderr"
}
modes=(native fence-off fence-on fence-granule fence-blocking)
for r in $(seq 1 "$ROUNDS"); do
  # Each round in another order, so that no setting always runs first (a warm cache).
  for i in "${!modes[@]}"; do
    m=${modes[$(((i + r) % ${#modes[@]}))]}
    once "$m.$r" "$m"
  done
done
once debug debug
python3 - "$dir" "$ROUNDS" <<'PY'
import json, re, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
res = {}
for mode in ("native", "fence-off", "fence-on", "fence-granule", "fence-blocking"):
    for i in range(1, rounds + 1):
        try:
            r = json.load(open(f"{d}/{mode}.{i}.json"))["results"][0]
        except Exception as e:
            print(f"  {mode} round {i}: no report ({e})")
            continue
        m = re.search(r"loop_seconds=([0-9.]+)", r["child"]["stdout"]["text"])
        res.setdefault(mode, []).append((r["duration_ms"] / 1000, float(m.group(1)) if m else None, r["outcome"]))
for mode, runs in res.items():
    print(f"  {mode:9}: " + "  ".join(f"loop {l if l is None else f'{l:.2f}s'} (wall {w:.1f}s, {o})" for w, l, o in runs))
loop = {m: statistics.median(x[1] for x in v if x[1] is not None) for m, v in res.items() if any(x[1] for x in v)}
wall = {m: statistics.median(x[0] for x in v) for m, v in res.items()}
print("  medians: " + "  ".join(f"{m} loop {loop[m]:.3f}s wall {wall[m]:.1f}s" for m in loop))
if "native" in loop:
    for m in ("fence-off", "fence-on", "fence-granule", "fence-blocking"):
        if m in loop:
            print(f"  {m} / native: loop {loop[m] / loop['native']:.3f}x, wall {wall[m] / wall['native']:.3f}x")
if "fence-off" in loop and "fence-on" in loop:
    print(f"  sites captured / not captured: loop {loop['fence-on'] / loop['fence-off']:.3f}x")
if "fence-on" in loop and "fence-granule" in loop:
    ratio = loop["fence-on"] / loop["fence-granule"]
    print(f"  guards scaled / one granule (CUDADIAG_GUARD=granule): loop {ratio:.3f}x, "
          f"wall {wall['fence-on'] / wall['fence-granule']:.3f}x "
          f"({'within' if ratio <= 1.05 else 'ABOVE'} the 1.05 target)")
try:
    r = json.load(open(f"{d}/debug.json"))["results"][0]
    text = r["child"]["stderr"]["text"]
    m = re.search(r"allocation sites: .*", text)
    print(f"  capture ({r['outcome']}): {m.group(0) if m else 'no line from the interposer'}")
except Exception as e:
    print(f"  capture: no report ({e})")
PY
