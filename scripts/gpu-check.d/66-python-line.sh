#!/usr/bin/env bash
# The Python line that made the buffer a kernel overran, on the device: PyTorch and CuPy
# allocate with the interpreter's lock released, and the interposer reads the allocating
# thread's own frames. Programs written below (not in the repository), each on
# `cudadiag run --rungs native,fence --sanitize never`:
#   torch_slack   a Triton store one float past a 1001-float tensor: into the fence's
#                 alignment slack, found at free (no kernel log, no core dump needed)
#   torch_read    a Triton load one float past a 1024-float tensor: onto the guard; the
#                 core dump (--coredump) places the address in the allocation
#   cupy_read     the same with CuPy and its memory pool (a RawKernel)
# Each buffer is made at a line marked "# the buffer", inside a function of the program;
# the check: the fence rung exposes the overrun, and the report says the buffer was
# allocated at that file and line, the user's own frame (in the allocation's origin, or
# in the finding's text). Prints one row per program and the line the report names.
# Reports under $OUT/66-python-line. Exits 1 on any mismatch.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
dir="$OUT/66-python-line"
rm -rf "$dir" && mkdir -p "$dir/progs"
PYTHON=${PYTHON:-python3}  # the one with torch, triton and cupy

cat >"$dir/progs/torch_slack.py" <<'PY'
import torch
import triton
import triton.language as tl


@triton.jit
def store_inclusive(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 1.0, mask=offs <= n)  # offs == n: one past the end


def make_output(n):
    return torch.empty(n, device="cuda")  # the buffer


y = make_output(1001)
store_inclusive[(1,)](y, 1001, BLOCK=2048)
torch.cuda.synchronize()
del y
torch.cuda.synchronize()
print("finished")
PY
cat >"$dir/progs/torch_read.py" <<'PY'
import torch
import triton
import triton.language as tl


@triton.jit
def copy_inclusive(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs <= n), mask=offs < n)  # reads x[n]


def make_input(n):
    return torch.ones(n, device="cuda")  # the buffer


x = make_input(1024)
y = torch.empty(1024, device="cuda")
copy_inclusive[(1,)](x, y, 1024, BLOCK=2048)
torch.cuda.synchronize()
print("finished", float(y.sum()))
PY
cat >"$dir/progs/cupy_read.py" <<'PY'
import cupy as cp

kernel = cp.RawKernel(r'''
extern "C" __global__ void copy_inclusive(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) y[i < n ? i : 0] += x[i];  // i == n: reads one past the end
}''', "copy_inclusive")


def make_input(n):
    return cp.ones(n, dtype=cp.float32)  # the buffer


x = make_input(1024)
y = cp.zeros(1024, dtype=cp.float32)
kernel((5,), (256,), (x, y, cp.int32(1024)))
cp.cuda.Device().synchronize()
print("finished", float(y.sum()))
PY

one() {  # NAME [EXTRA cudadiag run OPTIONS...]
  local name=$1
  shift
  "$CUDADIAG" run --rungs native,fence --sanitize never --timeout 300 "$@" --format json -o "$dir/$name.json" \
    -- "$PYTHON" "$dir/progs/$name.py" >"$dir/$name.stdout" 2>"$dir/$name.stderr"
  echo $? >"$dir/$name.rc"
}
one torch_slack --no-kernel-log
one torch_read --coredump
one cupy_read --coredump

python3 - "$dir" <<'PY'
import json, os, re, sys
d = sys.argv[1]
bad = []


def marked_line(path):
    for i, text in enumerate(open(path), 1):
        if text.rstrip().endswith("# the buffer"):
            return i
    return None


def origins(node):
    # Every allocation origin in the report, wherever the evidence put one.
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "allocated_at" and isinstance(v, dict):
                yield v
            else:
                yield from origins(v)
    elif isinstance(node, list):
        for v in node:
            yield from origins(v)


def texts(node):
    if isinstance(node, dict):
        for v in node.values():
            yield from texts(v)
    elif isinstance(node, list):
        for v in node:
            yield from texts(v)
    elif isinstance(node, str):
        yield node


print(f"\n  {'program':12} {'fence rung':12} {'verdict':10} {'buffer made at':26} {'report names':26} result")
for name in ("torch_slack", "torch_read", "cupy_read"):
    prog = os.path.join(d, "progs", name + ".py")
    want = f"{name}.py:{marked_line(prog)}"
    try:
        rep = json.load(open(os.path.join(d, name + ".json")))
    except Exception as e:
        bad.append(f"{name}: no report ({e}): {open(os.path.join(d, name + '.stderr')).read()[-400:]}")
        continue
    fence = next((r for r in rep["results"] if r["profile"] == "fence"), {})
    named = []
    for o in origins(rep):
        for f in o.get("python", []):
            if f.get("user"):
                named.append(f"{os.path.basename(f['file'])}:{f['line']}")
    for t in texts(rep):
        named += [os.path.basename(m) for m in re.findall(r"allocated at (\S+\.py:\d+)", t)]
    got = want if want in named else (named[0] if named else "-")
    ok = rep["verdict"]["status"] == "exposed" and fence.get("outcome") not in (None, "ok", "clean") and want in named
    print(f"  {name:12} {fence.get('outcome', '-'):12} {rep['verdict']['status']:10} {want:26} {got:26} "
          f"{'PASS' if ok else 'FAIL'}")
    if not ok:
        notes = sorted({o.get("python_note", "") for o in origins(rep)} - {""})
        bad.append(f"{name}: the fence rung's evidence does not name {want} (names {sorted(set(named)) or '-'}"
                   f"{'; ' + notes[0] if notes else ''}; verdict {rep['verdict']['status']})")
    reason = next((r for r in rep["verdict"].get("reasons", []) if want in r), rep["verdict"].get("reasons", ["-"])[0])
    print(f"  {'':12} {reason[:200]}")
print(f"\n66-python-line: {'all checks passed' if not bad else str(len(bad)) + ' mismatch(es)'}")
for b in bad:
    print("  MISMATCH", b)
sys.exit(1 if bad else 0)
PY
