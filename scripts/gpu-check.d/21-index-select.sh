#!/usr/bin/env bash
# index_select on the device: layouts x allocators x index kinds (the seed's matrix),
# the dtypes, the bounds assert, CUDA_LAUNCH_BLOCKING, and bisection of the fence faults.
# Prints observed vs expected per cell; exits 1 when any cell is not as expected.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
dir="$OUT/21-index-select"
rm -rf "$dir" && mkdir -p "$dir/runs"

{
  for layout in stride assume-contiguous copy offset-twice; do
    for a in pool direct fence-back fence-front; do
      for idx in valid oob negative; do
        echo "$layout.$a.$idx.unchecked --layout $layout --allocator $a --indices $idx --bounds unchecked --no-bisect"
      done
      echo "$layout.$a.oob.checked --layout $layout --allocator $a --indices oob --bounds checked --no-bisect"
    done
  done
  for dt in fp16 bf16 fp32; do
    for it in int32 int64; do
      echo "dtype-$dt-$it --dtype $dt --index-dtype $it --allocator fence-back --no-bisect"
      echo "dtype-$dt-$it-ac --dtype $dt --index-dtype $it --layout assume-contiguous --no-bisect"
    done
  done
  echo "blocking-offset-twice --layout offset-twice --allocator fence-back --blocking --no-bisect"
  echo "blocking-assert --indices oob --allocator pool --blocking --no-bisect"
  echo "odd-shape --shape 3,37,5,24 --heads 1:4 --dilation 3 --layout copy --allocator fence-back --no-bisect"
  echo "repeat --layout assume-contiguous --repeat 5 --no-bisect"
  # Bisection: the overread of offset-twice is in K (the first gather) at its end.
  echo "bisect-offset-twice --layout offset-twice --allocator fence-back"
  echo "bisect-negative --indices negative --bounds unchecked --allocator fence-front"
} | xargs -P 4 -L 1 bash -c '
  name=$0
  "'"$CUDADIAG"'" index-select "$@" -q --format json -o "'"$dir"'/runs/$name.json" 2>"'"$dir"'/runs/$name.stderr"
  echo $? >"'"$dir"'/runs/$name.rc"'

python3 - "$dir" <<'PY'
import json, os, sys
d = os.path.join(sys.argv[1], "runs")
# A negative index reads a whole S-row before K. When that lands outside every mapping
# even with no fence (the baseline run with all buffers direct faults, as on an H100 with
# driver 580), bisection cannot blame a buffer and says so: both answers are right.
want_bisect = {"bisect-offset-twice": [("k", "end_overrun")],
               "bisect-negative": [("k", "start_underrun"), (None, None)]}
rows, bad = [], 0
for name in sorted({f[:-3] for f in os.listdir(d) if f.endswith(".rc")}):
    try:
        rep = json.load(open(os.path.join(d, name + ".json")))
        r = rep["results"][0]
    except Exception:
        rows.append((name, "NO REPORT", "?", "", "FAIL")); bad += 1; continue
    err = r.get("error") or {}
    obs = r["outcome"] + (f" {err.get('code')}@{err.get('surfaced_at')}" if err else "")
    det = r.get("details") or {}
    if r["outcome"] == "mismatch":
        obs += f" ({det.get('mismatches')}/{det.get('compared')})"
    rep_ = r.get("repeats") or {}
    if rep_.get("runs", 1) > 1:
        obs += f" x{rep_['runs']}"
    ok = r.get("expectation_met") is True
    extra = ""
    if name in want_bisect:
        fb = r.get("faulting_buffer") or {}
        extra = f"buffer={fb.get('name')} {fb.get('direction')} runs={fb.get('extra_runs')}"
        if not fb:
            extra += f" ({str(det.get('bisection', ''))[:60]})"
        ok = ok and (fb.get("name"), fb.get("direction")) in want_bisect[name]
    bad += 0 if ok else 1
    rows.append((name, obs, r.get("expected", ""), extra, "ok" if ok else "FAIL"))
hdr = ("run", "observed", "expected", "bisection", "")
w = [max(len(str(x[i])) for x in rows + [hdr]) for i in range(5)]
fmt = "  ".join("{:<%d}" % n for n in w)
print(fmt.format(*hdr))
for row in rows:
    print(fmt.format(*row))
print(f"\n{len(rows)} runs, {bad} not as expected")
sys.exit(1 if bad else 0)
PY
