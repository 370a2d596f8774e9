#!/usr/bin/env bash
# Far reads on the device: a read that jumps a one-granule guard into the next buffer,
# which the fence catches only because a buffer's guard is as large as the buffer.
#   far_read (tests/programs/far_read.cu, nvcc)
#       two 4 MiB cudaMalloc buffers back to back; a kernel sums A's elements 2 MiB to
#       3.6 MiB past its end (where B sits natively). `cudadiag run --rungs native,fence`:
#       exposed, the fence rung faulting, the 4 MiB allocation named "... bytes past the end
#       of allocation", at least 2 MiB past it. The same with CUDADIAG_GUARD=granule
#       exported: the fence rung must NOT fault (the read lands in B's mapping behind A's
#       one-granule guard): the scaling is what catches it. Both printed.
#   torch_far_gather (tests/programs/torch_far_gather.py, PyTorch + Triton)
#       a gather of rows 2 to 4 MB past a 4 MB K chunk (the ring-attention bug):
#       `--rungs native,fence` exposed by the fence rung, K's 4 MiB allocation named past
#       its end.
# Prints where A and B lie natively, one table (program, guard, rung, outcome, attribution)
# and the checks. Reports under $OUT/62-far-read. Exits 1 on any mismatch.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
dir="$OUT/62-far-read"
rm -rf "$dir" && mkdir -p "$dir/bin"
PYTHON=${PYTHON:-python3}  # the one with torch and triton
PROGRAMS=tests/programs
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

"$nvcc" -O2 -lineinfo -arch=native -o "$dir/bin/far_read" "$PROGRAMS/far_read.cu" >"$dir/build.log" 2>&1 ||
  echo "building far_read failed (see $dir/build.log)"
# Natively, outside cudadiag: where B lies after A (the read is silent only if it is there).
"$dir/bin/far_read" >"$dir/native_direct.stdout" 2>&1
echo "far_read run directly (exit $?): $(tr '\n' ' ' <"$dir/native_direct.stdout")"

# one NAME GUARD CMD...: GUARD is "scaled" (the default, CUDADIAG_GUARD unset) or "granule".
one() {
  local name=$1 guard=$2
  shift 2
  if [[ $guard == granule ]]; then
    CUDADIAG_GUARD=granule "$CUDADIAG" run --rungs native,fence --sanitize never --timeout 300 --format json \
      -o "$dir/$name.$guard.json" -- "$@" >"$dir/$name.$guard.stdout" 2>"$dir/$name.$guard.stderr"
  else
    (unset CUDADIAG_GUARD
     "$CUDADIAG" run --rungs native,fence --sanitize never --timeout 300 --format json \
       -o "$dir/$name.$guard.json" -- "$@" >"$dir/$name.$guard.stdout" 2>"$dir/$name.$guard.stderr")
  fi
  echo $? >"$dir/$name.$guard.rc"
}
one far_read scaled "$dir/bin/far_read"
one far_read granule "$dir/bin/far_read"
one torch_far_gather scaled "$PYTHON" "$PROGRAMS/torch_far_gather.py"

python3 - "$dir" <<'PY'
import json, os, re, sys
d = sys.argv[1]
bad = []
MiB = 1 << 20

def check(n, cond, what):
    print(f"  [{'ok' if cond else 'MISMATCH'}] {n}: {what}")
    if not cond:
        bad.append(f"{n}: {what}")

def load(n):
    try:
        return json.load(open(os.path.join(d, n + ".json")))
    except Exception as e:
        err = open(os.path.join(d, n + ".stderr")).read()[-600:] if os.path.exists(os.path.join(d, n + ".stderr")) else ""
        bad.append(f"{n}: no report ({e}); stderr: {err}")
        return None

def rc(n):
    try:
        return int(open(os.path.join(d, n + ".rc")).read())
    except Exception:
        return None

def by_rung(rep):
    return {r["profile"]: r for r in rep["results"]}

def attribution(r):
    a = (r or {}).get("details", {}).get("attribution") or {}
    return a

def short(a):
    al = a.get("allocation") or {}
    if not al:
        return "-"
    return f"{a.get('relation')} {a.get('distance_min')}-{a.get('distance_max')} B of {al.get('bytes')} B"

def placements(rep):
    # Every text that names the faulting allocation: the verdict, the attribution, the sites.
    out = list(rep["verdict"].get("reasons", []))
    for r in rep["results"]:
        a = attribution(r)
        if a.get("summary"):
            out.append(a["summary"])
    for s in rep.get("fault_sites") or []:
        p = (s.get("access") or {}).get("placement")
        if p:
            out.append(p)
    return out

names = ["far_read.scaled", "far_read.granule", "torch_far_gather.scaled"]
reports = {n: load(n) for n in names}
print(f"\n  {'program':18} {'guard':8} {'rung':7} {'outcome':12} {'run outcome':18} {'attribution':40}")
for n in names:
    rep = reports[n]
    if rep is None:
        continue
    prog, guard = n.split(".")
    for r in rep["results"]:
        print(f"  {prog:18} {guard:8} {r['profile']:7} {r['outcome']:12} {r['details'].get('run_outcome', ''):18} "
              f"{short(attribution(r))[:40]:40}")
    print(f"  {prog:18} {guard:8} verdict {rep['verdict']['status']} (exit {rc(n)}): {rep['verdict']['reasons'][0][:140]}")
    cov = rep["verdict"].get("coverage") or {}
    seen = [s for s in cov.get("seen", []) if "past the end" in s]
    print(f"  {prog:18} {guard:8} coverage: guard={cov.get('guard')} reach={cov.get('guard_reach_bytes')} "
          f"{seen[0] if seen else '(no past-the-end line)'}")

direct = open(os.path.join(d, "native_direct.stdout")).read()
m = re.search(r"gap=(-?\d+)", direct)
gap = int(m.group(1)) if m else None
print(f"\n  natively B starts {gap} bytes after A's end" if gap is not None else "\n  far_read printed no gap")

print("\n== checks")
rep = reports["far_read.scaled"]
if rep:
    check("far_read", rep["verdict"]["status"] == "exposed" and rc("far_read.scaled") == 1,
          f"scaled guard: verdict exposed, exit 1 (got {rep['verdict']['status']}, {rc('far_read.scaled')})")
    fence = by_rung(rep).get("fence") or {}
    check("far_read", fence.get("details", {}).get("run_outcome") == "cuda_error",
          f"scaled guard: the fence rung faults (got {fence.get('outcome')}, {fence.get('details', {}).get('run_outcome')})")
    a = attribution(fence)
    al = a.get("allocation") or {}
    check("far_read", a.get("relation") == "past_end" and a.get("certain") and al.get("bytes") == 4 * MiB,
          f"scaled guard: past the end of the 4 MiB allocation, for certain (got {a.get('relation')}, "
          f"certain={a.get('certain')}, bytes={al.get('bytes')})")
    check("far_read", (a.get("distance_max") or 0) >= 2 * MiB,
          f"scaled guard: at least 2 MiB past the end (got {a.get('distance_min')}-{a.get('distance_max')})")
    check("far_read", any("bytes past the end of allocation" in t for t in placements(rep)),
          "the allocation named as '... bytes past the end of allocation'")
    if gap == 0:
        native = by_rung(rep).get("native") or {}
        check("far_read", native.get("details", {}).get("run_outcome") == "clean",
              f"native run clean: B sits right after A (got {native.get('details', {}).get('run_outcome')})")
        check("far_read", rep["run"].get("first_exposed_by") == "fence",
              f"first exposed by fence (got {rep['run'].get('first_exposed_by')})")
rep = reports["far_read.granule"]
if rep:
    fence = by_rung(rep).get("fence") or {}
    outcome = fence.get("details", {}).get("run_outcome")
    check("far_read", outcome == "clean",
          f"CUDADIAG_GUARD=granule: the fence rung does NOT fault, the read jumps the one-granule guard "
          f"(got {fence.get('outcome')}, {outcome}; {short(attribution(fence))})")
    cov = rep["verdict"].get("coverage") or {}
    check("far_read", cov.get("guard") == "granule",
          f"CUDADIAG_GUARD=granule: the coverage says one granule (got guard={cov.get('guard')})")
rep = reports["torch_far_gather.scaled"]
if rep:
    check("torch_far_gather", rep["verdict"]["status"] == "exposed" and rc("torch_far_gather.scaled") == 1,
          f"verdict exposed, exit 1 (got {rep['verdict']['status']}, {rc('torch_far_gather.scaled')})")
    fence = by_rung(rep).get("fence") or {}
    check("torch_far_gather", fence.get("details", {}).get("run_outcome") == "cuda_error",
          f"the fence rung faults (got {fence.get('outcome')}, {fence.get('details', {}).get('run_outcome')})")
    a = attribution(fence)
    al = a.get("allocation") or {}
    check("torch_far_gather", a.get("relation") == "past_end" and al.get("bytes") == 4 * MiB,
          f"K's 4 MiB allocation named past its end (got {short(a)})")

if bad:
    print("\n62-far-read: FAIL")
    for b in bad:
        print("  -", b)
    sys.exit(1)
print("\n62-far-read: PASS")
PY
