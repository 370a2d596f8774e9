#!/usr/bin/env bash
# Fault catalog on the device: every case under every allocator, with and without
# CUDA_LAUNCH_BLOCKING, then fault bisection on the cases that fault under a fence.
# Unarmed (--no-coredump): the matrix is what a program sees without GPU core dumps
# (65-site runs the catalog with the defaults: a failing case's site run is armed).
# Prints observed vs expected per cell; exits 1 when any cell is not as expected.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
dir="$OUT/20-faults"
rm -rf "$dir" && mkdir -p "$dir/matrix" "$dir/bisect"

cases=$("$CUDADIAG" list --kernel fault --format json | python3 -c 'import json,sys; print(" ".join(c["id"] for c in json.load(sys.stdin)["cases"]))')
[[ -n $cases ]] || { echo "no fault cases listed"; exit 1; }

# One line per run: case allocator blocking-flag; four children at a time (faults in
# one CUDA context do not affect the others).
for c in $cases; do
  for a in pool direct fence-back fence-front; do
    echo "$c $a plain"
    echo "$c $a blocking"
  done
done | xargs -P 4 -L 1 bash -c '
  c=$0 a=$1 b=$2
  flag=""; [[ $b == blocking ]] && flag=--blocking
  "'"$CUDADIAG"'" fault "$c" --allocator "$a" $flag --no-bisect --no-coredump -q --format json -o "'"$dir"'/matrix/$c.$a.$b.json" \
    2>"'"$dir"'/matrix/$c.$a.$b.stderr"
  echo $? >"'"$dir"'/matrix/$c.$a.$b.rc"'

# Bisection: which buffer, which end.
run_bisect() {  # case allocator expected-buffer expected-direction
  "$CUDADIAG" fault "$1" --allocator "$2" --no-coredump -q --format json -o "$dir/bisect/$1.$2.json" 2>"$dir/bisect/$1.$2.stderr"
  echo "$1 $2 $3 $4" >>"$dir/bisect/expected.txt"
}
: >"$dir/bisect/expected.txt"
run_bisect fault.oob-write fence-back out end_overrun
run_bisect fault.oob-read fence-back in end_overrun
run_bisect fault.underrun-write fence-front out start_underrun
run_bisect fault.underrun-read fence-front in start_underrun

python3 - "$dir" <<'PY'
import json, os, sys
d = sys.argv[1]
bad = 0
rows = []
for name in sorted(os.listdir(os.path.join(d, "matrix"))):
    if not name.endswith(".json"):
        continue
    case, alloc, mode = name[:-5].rsplit(".", 2)
    try:
        r = json.load(open(os.path.join(d, "matrix", name)))["results"][0]
    except Exception as e:  # a report that did not come: itself a failure
        rows.append((case, alloc, mode, "NO REPORT", "?", "FAIL")); bad += 1; continue
    err = r.get("error") or {}
    obs = r["outcome"] + (f" {err.get('code')}@{err.get('surfaced_at')}" if err else "")
    met = r.get("expectation_met")
    ok = met is True
    bad += 0 if ok else 1
    rows.append((case, alloc, mode, obs, r.get("expected", ""), "ok" if ok else "FAIL"))
w = [max(len(str(x[i])) for x in rows + [("case", "allocator", "launch", "observed", "expected", "")]) for i in range(6)]
fmt = "  ".join("{:<%d}" % n for n in w)
print(fmt.format("case", "allocator", "launch", "observed", "expected", ""))
for row in rows:
    print(fmt.format(*row))

print("\nbisection (fence fault -> buffer, direction):")
for line in open(os.path.join(d, "bisect", "expected.txt")):
    case, alloc, want_buf, want_dir = line.split()
    try:
        r = json.load(open(os.path.join(d, "bisect", f"{case}.{alloc}.json")))["results"][0]
        fb = r.get("faulting_buffer") or {}
        got = f"{fb.get('name')} {fb.get('direction')} ({fb.get('extra_runs')} extra runs)" if fb else \
              "none: " + str((r.get("details") or {}).get("bisection"))
        ok = fb.get("name") == want_buf and fb.get("direction") == want_dir
    except Exception as e:
        got, ok = f"NO REPORT ({e})", False
    bad += 0 if ok else 1
    print(f"  {case:<24} {alloc:<12} got {got:<45} want {want_buf} {want_dir}  {'ok' if ok else 'FAIL'}")
print(f"\n{len(rows)} runs, {bad} not as expected")
sys.exit(1 if bad else 0)
PY
