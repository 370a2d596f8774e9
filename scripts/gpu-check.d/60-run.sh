#!/usr/bin/env bash
# `cudadiag run -- CMD` on the device: the programs of tests/programs (the nvcc ones built
# here, nvcc's default static cudart), and three programs written below that are not in
# the repository, each on the ladder native -> blocking -> fence (-> sanitizer). Prints
# the table program x rung -> outcome, attribution, time, then one check per program:
#   overruns (PyTorch custom op, Triton store without its mask, static-cudart nvcc
#   program, CuPy pool)     exposed first by the fence rung, the allocation attributed
#                           from the Xid 31 page: past its end, its size named
#   use-after-free          exposed (natively already), the fence-front rung (its quarantine)
#                           attributes it to the freed buffer
#   misaligned, device assert, index_select with a bad index
#                           exposed natively, with 716 / 710 / the assert line
#   JAX, a Pallas read 8 GiB out of bounds
#                           silent natively (XLA's pool), exposed by the blocking rung
#                           (XLA_PYTHON_CLIENT_ALLOCATOR=platform)
#   clean nvcc program, real training loop
#                           clean, the fence effective; the loop's loss identical on every rung;
#                           both ends checked (fence and fence-front rungs)
#   underrun (coverage_bugs underrun: out[-1])
#                           exposed first by the fence-front rung
#   odd-sized overrun inside the slack (coverage_bugs slack: one fp16 past 1001 elements)
#                           exposed by the fence rung: a slack write seen at free, the kernel named
#   managed memory one-element overrun (coverage_bugs managed)
#                           --sanitize auto escalates to memcheck (the fence cannot fence managed
#                           memory): exposed by the sanitizer rung
#   CUDA IPC through torch.multiprocessing (a correct program)
#                           the blocking rung's PYTORCH_NO_CUDA_MEMORY_CACHING=1 is named as what
#                           breaks it; never "the program's own failure", never exposed
#   a kernel spinning on a flag (coverage_bugs hang, --rungs native,blocking,fence: a hang
#   the native rung's dump names would otherwise stop the ladder there, 65-site checks that)
#                           exposed as a GPU hang naming wait_for, from the fence rung's ring
# memcheck runs where it is quick (--sanitize auto on the nvcc and CuPy programs); PyTorch,
# Triton and JAX programs take --sanitize never here (scripts/bench-run.sh times memcheck
# on the training loop). Reports and logs under $OUT/60-run. Exits 1 on any mismatch.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
dir="$OUT/60-run"
rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/progs"
PYTHON=${PYTHON:-python3}  # the one with torch, triton, jax and cupy
PROGRAMS=tests/programs
started=$(date +%s)

# --- nvcc programs (oob_static: nvcc's default, static cudart) -------------------------
source "$(dirname "$0")/../lib/test-programs.sh"
build_test_runs "$dir/bin" "$dir"

# --- programs that are not in the repository ------------------------------------------
# CuPy with its default memory pool: 1024 floats (a multiple of the pool's 512-byte
# rounding), a RawKernel writing one element past the end.
cat >"$dir/progs/cupy_pool_overrun.py" <<'PY'
import cupy as cp
k = cp.RawKernel(r'''
extern "C" __global__ void scale_inclusive(float* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) v[i] *= 2.0f;  // i == n: one past the end
}''', "scale_inclusive")
v = cp.ones(1024, dtype=cp.float32)
k((5,), (256,), (v, cp.int32(1024)))
cp.cuda.Device().synchronize()
print("finished: sum", float(v.sum()))
PY
# torch.index_select with an index past the rows: PyTorch's device assert.
cat >"$dir/progs/torch_index_select_bad.py" <<'PY'
import torch
table = torch.randn(512, 32, device="cuda")
rows = torch.tensor([1, 7, 511, 512], device="cuda")  # 512 is one row too far
out = torch.index_select(table, 0, rows)
torch.cuda.synchronize()
print("finished:", tuple(out.shape))
PY
# JAX: a Pallas kernel reading 8 GiB past a small array. XLA's BFC pool maps that range,
# so natively the read returns garbage; with the platform allocator it faults.
cat >"$dir/progs/jax_pallas_far_read.py" <<'PY'
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def copy_window(start_ref, x_ref, o_ref):
    o_ref[...] = x_ref[pl.ds(start_ref[0], 256)]

x = jnp.linspace(0.0, 1.0, 256, dtype=jnp.float32)
start = jnp.array([2**31 - 1024], dtype=jnp.int32)
y = pl.pallas_call(copy_window, out_shape=jax.ShapeDtypeStruct((256,), jnp.float32))(start, x)
print("finished: mean", float(y.mean()))
PY

# --- runs -----------------------------------------------------------------------------
# case NAME SANITIZE CMD...: the report in NAME.json, stdout/stderr beside it; CASE_ARGS
# adds options.
case_run() {
  local name=$1 sanitize=$2
  shift 2
  local t0
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$CUDADIAG" run --format json -o "$dir/$name.json" --timeout "${CASE_TIMEOUT:-180}" --sanitize "$sanitize" \
    ${CASE_ARGS:-} -v -- "$@" \
    >"$dir/$name.stdout" 2>"$dir/$name.stderr"
  echo $? >"$dir/$name.rc"
  echo "$t0 $(date +%s.%N)" >"$dir/$name.time"
}
case_run torch_custom_op never "$PYTHON" "$PROGRAMS/torch_custom_op.py" "$dir/bin/libwrite_past_end.so"
case_run triton_no_mask never "$PYTHON" "$PROGRAMS/triton_no_mask.py"
case_run oob_static auto "$dir/bin/oob_static"
case_run use_after_free auto "$dir/bin/use_after_free"
case_run misaligned auto "$dir/bin/misaligned"
case_run device_assert auto "$dir/bin/device_assert"
case_run clean auto "$dir/bin/clean"
case_run train_loop auto "$PYTHON" "$PROGRAMS/train_loop.py"
case_run cupy_pool_overrun auto "$PYTHON" "$dir/progs/cupy_pool_overrun.py"
case_run torch_index_select_bad never "$PYTHON" "$dir/progs/torch_index_select_bad.py"
case_run jax_pallas_far_read never "$PYTHON" "$dir/progs/jax_pallas_far_read.py"
case_run underrun never "$dir/bin/coverage_bugs" underrun
case_run slack_overrun never "$dir/bin/coverage_bugs" slack
case_run managed_overrun auto "$dir/bin/coverage_bugs" managed
case_run torch_ipc never "$PYTHON" "$PROGRAMS/torch_ipc.py"
CASE_TIMEOUT=20 CASE_ARGS="--rungs native,blocking,fence" case_run gpu_hang never "$dir/bin/coverage_bugs" hang

python3 - "$dir" "$(($(date +%s) - started))" <<'PY'
import json, os, re, sys
d, total = sys.argv[1], sys.argv[2]
bad = []
names = ["torch_custom_op", "triton_no_mask", "oob_static", "use_after_free", "misaligned", "device_assert",
         "clean", "train_loop", "cupy_pool_overrun", "torch_index_select_bad", "jax_pallas_far_read",
         "underrun", "slack_overrun", "managed_overrun", "torch_ipc", "gpu_hang"]

def load(n):
    try:
        return json.load(open(os.path.join(d, n + ".json")))
    except Exception as e:
        bad.append(f"{n}: no report ({e}); stderr: {open(os.path.join(d, n + '.stderr')).read()[-600:]}")
        return None

def by_rung(rep):
    return {r["profile"]: r for r in rep["results"]}

def attribution(r):
    a = r.get("details", {}).get("attribution")
    if a and a.get("allocation"):
        al = a["allocation"]
        dist = (f"{a['distance_min']}" if a["distance_min"] == a["distance_max"]
                else f"{a['distance_min']}-{a['distance_max']}")
        return f"{a['relation']} {dist} B, #{al['seq']} {al['bytes']} B{'' if a['certain'] else ' (nearest)'}"
    e = r.get("error")
    if e:
        return f"{e.get('code')} {e.get('name')}"[:40]
    return "-"

reports = {n: load(n) for n in names}
print(f"\n  {'program':24} {'rung':10} {'outcome':12} {'run outcome':20} {'attribution / error':46} {'s':>6}")
for n in names:
    rep = reports[n]
    if rep is None:
        continue
    for r in rep["results"]:
        print(f"  {n:24} {r['profile']:10} {r['outcome']:12} {r['details'].get('run_outcome', ''):20} "
              f"{attribution(r)[:46]:46} {r['duration_ms'] / 1000:6.1f}")
    run = rep["run"]
    for line in run["ladder"]:
        if "not run" in line:
            print(f"  {n:24} {line}")
    print(f"  {n:24} verdict {rep['verdict']['status']} (exit {open(os.path.join(d, n + '.rc')).read().strip()}):"
          f" {rep['verdict']['reasons'][0][:150]}")

def check(n, cond, what):
    print(f"  [{'ok' if cond else 'MISMATCH'}] {n}: {what}")
    if not cond:
        bad.append(f"{n}: {what}")

print("\n== checks")
def rc(n):
    return int(open(os.path.join(d, n + ".rc")).read())

def exposed(n, first):
    rep = reports[n]
    if rep is None:
        return None
    check(n, rep["verdict"]["status"] == "exposed" and rc(n) == 1, f"verdict exposed, exit 1 (got {rep['verdict']['status']}, {rc(n)})")
    got = rep["run"]["first_exposed_by"]
    check(n, got == first, f"first exposed by {first} (got {got})")
    return rep

def fence_attributed(n, rep, relation, size, rung="fence"):
    r = by_rung(rep).get(rung) if rep else None
    a = (r or {}).get("details", {}).get("attribution") or {}
    al = a.get("allocation") or {}
    ok = a.get("relation") == relation and a.get("certain") and al.get("bytes") == size
    check(n, ok, f"{rung}: {relation} of the {size}-byte allocation, from the Xid 31 page "
                 f"(got {a.get('relation')}, certain={a.get('certain')}, bytes={al.get('bytes')})")

any_rep = next((r for r in reports.values() if r), None)
if any_rep:
    check("kernel log", any_rep["run"]["kernel_log"]["read"], "readable (attribution needs the Xid 31 page): "
          + any_rep["run"]["kernel_log"]["reason"])
for n, size in (("torch_custom_op", 4000), ("triton_no_mask", 4000), ("oob_static", 4000), ("cupy_pool_overrun", 4096)):
    rep = exposed(n, "fence")
    if rep:
        native = by_rung(rep).get("native", {})
        check(n, native.get("details", {}).get("run_outcome") == "clean", "native run clean (the overrun is silent)")
        fence_attributed(n, rep, "past_end", size)
rep = exposed("use_after_free", "native")
if rep:
    # The fence rung recycles freed buffers (no use-after-free watch); fence-front quarantines.
    fence_attributed("use_after_free", rep, "use_after_free", 4000, "fence-front")
for n, code in (("misaligned", 716), ("device_assert", 710), ("torch_index_select_bad", 710)):
    rep = exposed(n, "native")
    if rep:
        e = by_rung(rep)["native"].get("error") or {}
        check(n, e.get("code") == code, f"native error {code} (got {e.get('code')})")
rep = reports["torch_index_select_bad"]
if rep:
    lines = by_rung(rep)["native"]["details"].get("error_lines", [])
    check("torch_index_select_bad", any(l["kind"] == "device_assert" and "Indexing.cu" in l.get("assert", {}).get("file", "")
                                        for l in lines), "the Indexing.cu assert line recognised")
rep = exposed("jax_pallas_far_read", "blocking")
for n in ("clean", "train_loop"):
    rep = reports[n]
    if rep is None:
        continue
    check(n, rep["verdict"]["status"] == "clean" and rc(n) == 0, f"verdict clean, exit 0 (got {rep['verdict']['status']}, {rc(n)})")
    f = rep["run"]["fence"]
    check(n, f.get("effective") is True, f"fence effective: {f.get('reason')}")
    cov = rep["verdict"].get("coverage") or {}
    check(n, cov.get("directions") == ["past_end", "before_start"],
          f"both ends checked (got {cov.get('directions')})")

rep = exposed("underrun", "fence-front")
rep = exposed("slack_overrun", "fence")
if rep:
    f = by_rung(rep).get("fence", {})
    check("slack_overrun", f.get("details", {}).get("run_outcome") == "slack_write", "fence run: slack_write")
    ev = rep["run"]["evidence"]
    check("slack_overrun", "inside the alignment slack" in ev and "seen at free" in ev and "fill_half_inclusive" in ev,
          f"evidence names the slack write and the kernel (got {ev[:160]})")
rep = exposed("managed_overrun", "sanitizer")
if rep:
    why = rep["run"].get("memcheck", {}).get("why") or ""
    check("managed_overrun", "managed memory" in why, f"memcheck escalated for the managed buffer (got {why!r})")
rep = reports["torch_ipc"]
if rep:
    reasons = " | ".join(rep["verdict"]["reasons"])
    check("torch_ipc", rep["verdict"]["status"] != "exposed" and "program's own failure" not in reasons,
          f"not the program's failure (got {rep['verdict']['status']}: {reasons[:160]})")
    check("torch_ipc", "PYTORCH_NO_CUDA_MEMORY_CACHING=1 breaks this program" in reasons,
          "the blocking rung's setting is named as what breaks it")
rep = reports["gpu_hang"]
if rep:
    # The fence rung's ring names the launch that never returned; a dump that names the
    # kernel and line where its warps wait (native's, built with -lineinfo) comes first.
    got = rep["run"]["first_exposed_by"]
    check("gpu_hang", rep["verdict"]["status"] == "exposed" and rc("gpu_hang") == 1 and got in ("native", "fence"),
          f"verdict exposed by native or fence, exit 1 (got {rep['verdict']['status']} by {got}, {rc('gpu_hang')})")
    r0 = rep["verdict"]["reasons"][0]
    check("gpu_hang", "GPU hang" in r0 and "wait_for" in r0, f"a GPU hang naming wait_for (got {r0[:160]})")
    fence = by_rung(rep).get("fence", {})
    check("gpu_hang", fence.get("details", {}).get("run_outcome") == "timeout", "the fence rung ran (--rungs) and timed out")

rep = reports["train_loop"]
if rep:
    losses = {}
    for r in rep["results"]:
        m = re.search(r"final_loss=([0-9.]+)", r["child"]["stdout"]["text"])
        losses[r["profile"]] = m.group(1) if m else None
    print(f"  train_loop final loss per rung: {losses}")
    check("train_loop", len(set(losses.values())) == 1 and None not in losses.values(), "final loss identical on every rung")
    t = {r["profile"]: r["duration_ms"] for r in rep["results"]}
    if "native" in t and "fence" in t:
        print(f"  train_loop fence / native wall time: {t['fence'] / t['native']:.2f}x "
              f"({t['fence'] / 1000:.1f} s / {t['native'] / 1000:.1f} s; scripts/bench-run.sh measures it properly)")

print(f"\n60-run: {len(names)} programs in {total} s; {'all checks passed' if not bad else str(len(bad)) + ' mismatch(es)'}")
for b in bad:
    print("  MISMATCH", b)
sys.exit(1 if bad else 0)
PY
