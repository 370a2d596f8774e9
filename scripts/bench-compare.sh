#!/usr/bin/env bash
# Benchmark of `cudadiag compare` at fleet scale (CPU only; not a test):
#   scripts/bench-compare.sh [N ...]        (default: 1000 10000)
# Makes N reports from a real H100 repro report (tests/fixtures/compare/device_h100.json),
# one per host, with planted bad hosts: five on another driver where a TMA load fails,
# and one flaky host whose attention case fails 9 of 50 runs where every other host
# passes 50 of 50. Then times `cudadiag compare DIR` in text and in JSON under
# /usr/bin/time -v, checks that the verdict names the planted hosts, and prints
# reports/s and peak memory as a table last. Targets: 10,000 reports in under 30 s and
# under 1 GB. Needs python3 (to write the reports); work files go to $BENCH_DIR
# (default: a temp dir, removed at the end unless KEEP=1).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
CUDADIAG=${CUDADIAG:-./build/bin/cudadiag}
FIXTURE=tests/fixtures/compare/device_h100.json
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(1000 10000)
[ -x "$CUDADIAG" ] || { echo "bench-compare: $CUDADIAG not found (build it, or set CUDADIAG)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-compare: /usr/bin/time not found (apt-get install time)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench-compare: python3 is needed to write the reports" >&2; exit 2; }

work=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/cudadiag-bench-compare.XXXXXX")}
mkdir -p "$work"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

max=0
for n in "${sizes[@]}"; do [ "$n" -gt "$max" ] && max=$n; done

# Planted hosts sit among the first 1000, so every size from 1000 up holds them.
python3 - "$FIXTURE" "$work/all" "$max" <<'PY' || { echo "bench-compare: writing the reports failed" >&2; exit 2; }
import copy, json, os, sys

fixture, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(out, exist_ok=True)
base = json.load(open(fixture))
FLAKY_CASE, BAD_CASE = "fa.seed.bm64-bn64-w4.s64", "tma.seed-seq2.load"
BAD_DRIVER = {17, 401, 402, 403, 404}
FLAKY = {777}

def result(doc, case_id):
    return next(r for r in doc["results"] if r["case_id"] == case_id and r["profile"] == "default")

# Every host repeats the attention case 50 times and passes every run.
r = result(base, FLAKY_CASE)
r["repeats"] = {"runs": 50, "failures": 0, "failure_rate": 0.0, "histogram": {"ok": 50}}

def name(i):
    return "node%05d" % i

def planted(i):
    doc = copy.deepcopy(base)
    doc["host"]["hostname"] = name(i)
    if i in BAD_DRIVER:
        doc["driver"]["version"] = "575.57.08"
        r = result(doc, BAD_CASE)
        r.update(outcome="cuda_error", expectation_met=False,
                 error={"code": 1, "name": "cudaErrorInvalidValue", "class": "invalid_value", "sticky": False,
                        "surfaced_at": "encode", "api_call": "cuTensorMapEncodeTiled"})
        r["repeats"] = {"runs": 1, "failures": 1, "failure_rate": 1.0, "histogram": {"cuda_error": 1}}
    if i in FLAKY:
        r = result(doc, FLAKY_CASE)
        r.update(outcome="mismatch", expectation_met=False)
        r["repeats"] = {"runs": 50, "failures": 9, "failure_rate": 0.18, "histogram": {"ok": 41, "mismatch": 9}}
    doc["verdict"] = {"status": "suspect", "reasons": ["planted"]}
    return json.dumps(doc, indent=2)

marker = "@@HOSTNAME@@"
base["host"]["hostname"] = marker
head, tail = json.dumps(base, indent=2).split(marker)
for i in range(n):
    with open(os.path.join(out, name(i) + ".json"), "w") as f:
        f.write(planted(i) if i in BAD_DRIVER | FLAKY else head + name(i) + tail)
PY

rows=()
status=0
for n in "${sizes[@]}"; do
  dir="$work/n$n"
  mkdir -p "$dir"
  find "$work/all" -name 'node*.json' | sort | head -n "$n" | xargs ln -f -t "$dir"
  for format in text json; do
    out="$work/compare-$n.$format"
    /usr/bin/time -v "$CUDADIAG" compare "$dir" --format "$format" -q -o "$out" 2>"$work/time-$n-$format.txt"
    rc=$?
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$work/time-$n-$format.txt")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time-$n-$format.txt")
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$work/time-$n-$format.txt")
    size=$(stat -c %s "$out" 2>/dev/null || echo 0)
    found=yes
    for host in node00017 node00401 node00777; do grep -q "$host" "$out" || found=no; done
    [ "$rc" = 1 ] && [ "$found" = yes ] || status=1
    rows+=("$(printf '%7d  %-6s  %6.2f  %5.2f  %9.0f  %7.0f  %9.0f  %3s  %s' "$n" "$format" "$wall" "$cpu" \
      "$(awk -v n="$n" -v w="$wall" 'BEGIN {print (w > 0 ? n / w : 0)}')" "$((rss / 1024))" "$((size / 1024))" "$rc" "$found")")
  done
done

echo
grep -m1 '^cudadiag compare' "$work/compare-${sizes[0]}.text"
sed -n 2,2p "$work/compare-${sizes[0]}.text"
echo
echo "cudadiag compare, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "reports  format  wall s  cpu s  reports/s  peak MB  output KB  rc  planted hosts named"
for r in "${rows[@]}"; do echo "$r"; done
exit $status
