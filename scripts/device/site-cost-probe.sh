#!/usr/bin/env bash
# What capturing allocation sites costs the fence rung (run on the device; not a test):
# tests/programs/gpt_loop.py (16k allocations with PyTorch's caching off) on
# `cudadiag run --rungs fence`, with sites captured (the default) and with
# CUDADIAG_RING_SITES=0, ROUNDS interleaved rounds. Prints the wall time and the loop's
# own time (loop_seconds) of every run and the medians' ratio. Reports go to $OUT/site-cost.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
CUDADIAG=${CUDADIAG:-./build/bin/cudadiag}
OUT=${OUT:-./gpu-check-out}
ROUNDS=${ROUNDS:-3}
dir="$OUT/site-cost"
rm -rf "$dir" && mkdir -p "$dir"
once() {  # NAME MODE
  local -a extra=()
  [[ $2 == off ]] && extra=(--env CUDADIAG_RING_SITES=0)
  "$CUDADIAG" run --rungs fence ${extra[@]+"${extra[@]}"} --timeout 600 --format json -q -o "$dir/$1.json" \
    -- python3 tests/programs/gpt_loop.py 2>"$dir/$1.stderr"
}
for r in $(seq 1 "$ROUNDS"); do
  if ((r % 2)); then once "on.$r" on; once "off.$r" off; else once "off.$r" off; once "on.$r" on; fi
done
python3 - "$dir" "$ROUNDS" <<'PY'
import json, re, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
res = {}
for mode in ("on", "off"):
    for i in range(1, rounds + 1):
        r = json.load(open(f"{d}/{mode}.{i}.json"))["results"][0]
        m = re.search(r"loop_seconds=([0-9.]+)", r["child"]["stdout"]["text"])
        res.setdefault(mode, []).append((r["duration_ms"] / 1000, float(m.group(1)) if m else None, r["outcome"]))
for mode, runs in res.items():
    print(f"  sites {mode:3}: " + "  ".join(f"{w:.2f}s/loop {l:.2f}s ({o})" for w, l, o in runs))
w = {m: statistics.median(x[0] for x in v) for m, v in res.items()}
l = {m: statistics.median(x[1] for x in v if x[1] is not None) for m, v in res.items()}
print(f"  captured / not captured: wall {w['on'] / w['off']:.3f}x, loop {l['on'] / l['off']:.3f}x")
PY
