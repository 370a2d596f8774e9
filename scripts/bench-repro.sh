#!/usr/bin/env bash
# Benchmark of `cudadiag repro` (run on the device; not a test):
#  1. wall time of the default suite (>= 30 case runs; target <= 5 s on an H100), and of
#     the same cases under the sanitizer profile, in the same run;
#  2. time to catch each overrun of the catalog (cases a fence catches) under the fence
#     profile vs the sanitizer profile (target: fence >= 10x faster).
# Prints tables; JSON reports go to $OUT/bench-repro.
set -uo pipefail
cd "$(dirname "$0")/.."
CUDADIAG=${CUDADIAG:-./build/bin/cudadiag}
OUT=${OUT:-./gpu-check-out}
dir="$OUT/bench-repro"
rm -rf "$dir" && mkdir -p "$dir"

timed() {  # name args...: runs cudadiag, records wall seconds and exit code
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$CUDADIAG" "$@" --format json -q -o "$dir/$name.json" 2>"$dir/$name.stderr"
  echo $? >"$dir/$name.rc"
  t1=$(date +%s.%N)
  echo "$t0 $t1" >"$dir/$name.time"
}

# 1. whole suite, default profiles vs sanitizer (warm-up run first: page cache, driver)
"$CUDADIAG" repro --case 'fault.ok-control' -q --format json -o "$dir/warmup.json" 2>/dev/null
timed suite-default repro --suite default
timed suite-sanitizer repro --suite default --profiles sanitizer

# 2. every overrun the fence catches: one case at a time, fence vs sanitizer
overruns=$("$CUDADIAG" list --format json | python3 -c '
import json, sys
for c in json.load(sys.stdin)["cases"]:
    exp = c.get("expected", {})
    if "memory_fault" in exp.get("fence", "") and not c.get("host_only"):
        print(c["id"])')
# A one-case suite for each: not every catalog case is in the default suite.
for c in $overruns; do
  printf '{"suite": "bench-%s", "version": 1, "cases": [{"id": "%s"}]}\n' "$c" "$c" >"$dir/suite.$c.json"
  timed "fence.$c" repro --suite "$dir/suite.$c.json" --profiles fence
  timed "sanitizer.$c" repro --suite "$dir/suite.$c.json" --profiles sanitizer
done

python3 - "$dir" $overruns <<'PY'
import json, os, sys
d, overruns = sys.argv[1], sys.argv[2:]

def load(name):
    try:
        rep = json.load(open(os.path.join(d, name + ".json")))
    except Exception:
        rep = None
    t0, t1 = map(float, open(os.path.join(d, name + ".time")).read().split())
    return rep, t1 - t0, int(open(os.path.join(d, name + ".rc")).read())

print("== suite wall time")
print(f"  {'run':18} {'case runs':>9} {'children':>8} {'wall s':>7} {'verdict':12} exit")
for name in ("suite-default", "suite-sanitizer"):
    rep, wall, rc = load(name)
    plan = (rep or {}).get("suite", {}).get("plan", {})
    print(f"  {name:18} {plan.get('case_runs', '?'):>9} {plan.get('children_started', '?'):>8} {wall:7.2f} "
          f"{(rep or {}).get('verdict', {}).get('status', 'none'):12} {rc}")
_, wd, _ = load("suite-default")
print(f"  target: default suite <= 5 s -> {'met' if wd <= 5.0 else 'NOT met'} ({wd:.2f} s)")

print("\n== time to catch an overrun: fence vs sanitizer")
print(f"  {'case':44} {'fence':>10} {'s':>6} {'sanitizer':>10} {'s':>6} {'ratio':>6}")
tf = ts = 0.0
all_caught = True
for c in overruns:
    fr, fw, _ = load("fence." + c)
    sr, sw, _ = load("sanitizer." + c)
    f = (fr or {}).get("results", [{}])
    s = (sr or {}).get("results", [{}])
    f_caught = bool(f) and f[0].get("outcome") == "cuda_error"
    san = (s[0].get("sanitizer") or {}) if s else {}
    s_caught = bool(san.get("findings"))
    all_caught = all_caught and f_caught
    tf += fw
    ts += sw
    print(f"  {c[:44]:44} {('caught' if f_caught else 'MISSED'):>10} {fw:6.2f} "
          f"{('caught' if s_caught else 'missed'):>10} {sw:6.2f} {sw / fw if fw else 0:6.1f}")
if overruns:
    print(f"  {'total':44} {'':>10} {tf:6.2f} {'':>10} {ts:6.2f} {ts / tf if tf else 0:6.1f}")
    print(f"  target: fence catches every overrun -> {'met' if all_caught else 'NOT met'}; "
          f">= 10x faster than sanitizer -> {'met' if tf and ts / tf >= 10 else 'NOT met'}")
PY
