#!/usr/bin/env bash
# Captures what real programs print when they fail on the GPU, as test data for
# lib/run/error_text (run on the device; not a test). Each program fails in a known
# way; its stdout, stderr, exit code and time are kept, with the NVIDIA kernel-log lines
# (Xid) of the run and the versions used:
#   PyTorch   index_select with an invalid index (device assert), with and without
#             CUDA_LAUNCH_BLOCKING; advanced indexing out of range; out of memory
#   Triton    a store 256 GiB past a tensor (illegal address; the program prints the
#             address so the Xid 31 page can be checked against it), a misaligned load,
#             tl.device_assert
#   CuPy      a misaligned load, a far write, a one-element overrun under compute-sanitizer
#             (text, and XML with --padding exactly as lib/profiles/sanitizer_tool builds it)
#   JAX       a Pallas kernel reading far out of bounds, under the default BFC pool and
#             under XLA_PYTHON_CLIENT_ALLOCATOR=platform
#   shell     a segfault and an abort reported by bash, a command that is not found
# It also checks the framework caching switches of lib/run/rungs.cpp (PyTorch's
# reserved memory after a free, JAX's device memory with and without preallocation).
# Everything lands in one file, $OUT/error-texts.tar.gz (unpack into tests/run/data as
# device_*), and a table is printed last. Runs in about 2-3 minutes (at most 5).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-./gpu-check-out}
mkdir -p "$OUT"
work=$(mktemp -d)
dir="$work/error-texts"
progs="$work/progs"
mkdir -p "$dir" "$progs"
SANITIZER=${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}

# ---- the programs -----------------------------------------------------------------------
cat >"$progs/torch_index_select_oob.py" <<'PY'
import os, torch
print(f"pid={os.getpid()} torch={torch.__version__}", flush=True)
x = torch.randn(1000, 64, device="cuda")
idx = torch.tensor([0, 5, 100000], device="cuda")
y = torch.index_select(x, 0, idx)
torch.cuda.synchronize()
print("no error", y.shape, flush=True)
PY
cat >"$progs/torch_getitem_oob.py" <<'PY'
import os, torch
print(f"pid={os.getpid()} torch={torch.__version__}", flush=True)
x = torch.arange(10, device="cuda")
i = torch.tensor([3, 12], device="cuda")
print(x[i].sum().item(), flush=True)
PY
cat >"$progs/torch_oom.py" <<'PY'
import os, torch
print(f"pid={os.getpid()} torch={torch.__version__}", flush=True)
x = torch.empty(1 << 50, dtype=torch.uint8, device="cuda")
print("no error", flush=True)
PY
cat >"$progs/torch_caching.py" <<'PY'
import json, os, torch
x = torch.empty(1 << 20, device="cuda")
del x
torch.cuda.synchronize()
print(json.dumps({"pid": os.getpid(), "torch": torch.__version__,
                  "PYTORCH_NO_CUDA_MEMORY_CACHING": os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING"),
                  "reserved_after_free": torch.cuda.memory_reserved()}), flush=True)
PY
cat >"$progs/triton_far_write.py" <<'PY'
import os, torch, triton, triton.language as tl
print(f"pid={os.getpid()} torch={torch.__version__} triton={triton.__version__}", flush=True)

@triton.jit
def far_write(ptr, far, n, BLOCK: tl.constexpr):
    lane = tl.arange(0, BLOCK)
    tl.store(ptr + (lane.to(tl.int64) + far), 1.0, mask=lane < n)

x = torch.zeros(1024, device="cuda")
far = (256 << 30) // 4  # elements: 256 GiB past the start
target = x.data_ptr() + far * 4
print(f"base=0x{x.data_ptr():x} bytes={x.numel() * 4} target=0x{target:x} page=0x{target & ~0xfff:x}", flush=True)
far_write[(1,)](x, far, 128, BLOCK=128)
torch.cuda.synchronize()
print("no error", flush=True)
PY
cat >"$progs/triton_misaligned.py" <<'PY'
import os, torch, triton, triton.language as tl
print(f"pid={os.getpid()} torch={torch.__version__} triton={triton.__version__}", flush=True)

@triton.jit
def misaligned_load(addr, out):
    p = addr.to(tl.pointer_type(tl.int32))
    tl.store(out, tl.load(p))

x = torch.zeros(64, dtype=torch.int32, device="cuda")
out = torch.zeros(1, dtype=torch.int32, device="cuda")
misaligned_load[(1,)](x.data_ptr() + 1, out)
torch.cuda.synchronize()
print("no error", out.item(), flush=True)
PY
cat >"$progs/triton_device_assert.py" <<'PY'
import os, torch, triton, triton.language as tl
print(f"pid={os.getpid()} torch={torch.__version__} triton={triton.__version__}", flush=True)

@triton.jit
def check(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.device_assert(x < 5, "value out of range")

x = torch.arange(16, device="cuda", dtype=torch.int32)
check[(1,)](x, 16, BLOCK=16)
torch.cuda.synchronize()
print("no error", flush=True)
PY
cat >"$progs/cupy_misaligned.py" <<'PY'
import os, cupy as cp
print(f"pid={os.getpid()} cupy={cp.__version__}", flush=True)
k = cp.RawKernel(r'''
extern "C" __global__ void misaligned(const char* p, int* out) { *out = *(const int*)(p + 1); }
''', "misaligned")
buf = cp.zeros(64, dtype=cp.int8)
out = cp.zeros(1, dtype=cp.int32)
k((1,), (1,), (buf, out))
cp.cuda.Device().synchronize()
print("no error", int(out[0]), flush=True)
PY
cat >"$progs/cupy_far_write.py" <<'PY'
import os, cupy as cp
print(f"pid={os.getpid()} cupy={cp.__version__}", flush=True)
k = cp.RawKernel(r'''
extern "C" __global__ void far_write(float* p) { p[1LL << 36] = 1.0f; }
''', "far_write")
buf = cp.zeros(1024, dtype=cp.float32)
print(f"base=0x{buf.data.ptr:x} target=0x{buf.data.ptr + (1 << 38):x}", flush=True)
k((1,), (1,), (buf,))
cp.cuda.Device().synchronize()
print("no error", flush=True)
PY
cat >"$progs/cupy_overrun_one.py" <<'PY'
import os, cupy as cp
print(f"pid={os.getpid()} cupy={cp.__version__}", flush=True)
cp.cuda.set_allocator(None)  # one cudaMalloc per array: memcheck knows each one's size
k = cp.RawKernel(r'''
extern "C" __global__ void overrun(float* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i <= n) p[i] = 1.0f; }
''', "overrun")
n = 1000
buf = cp.zeros(n, dtype=cp.float32)
print(f"base=0x{buf.data.ptr:x} bytes={n * 4}", flush=True)
k((4,), (256,), (buf, cp.int32(n)))
cp.cuda.Device().synchronize()
print("finished", flush=True)
PY
cat >"$progs/jax_pallas_oob.py" <<'PY'
import os, jax, jax.numpy as jnp
from jax.experimental import pallas as pl
print(f"pid={os.getpid()} jax={jax.__version__} allocator={os.environ.get('XLA_PYTHON_CLIENT_ALLOCATOR')}", flush=True)

def kernel(idx_ref, x_ref, o_ref):
    i = idx_ref[0]
    o_ref[...] = x_ref[pl.ds(i, 128)]

x = jnp.arange(128, dtype=jnp.float32)
idx = jnp.array([2**31 - 256], dtype=jnp.int32)  # about 8 GiB past the start
y = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((128,), jnp.float32))(idx, x)
print("sum", float(y.sum()), flush=True)
PY
cat >"$progs/jax_memory.py" <<'PY'
import json, os, subprocess, jax, jax.numpy as jnp
x = jnp.ones((1 << 20,), jnp.float32).block_until_ready()
def smi(q):
    try:
        return subprocess.run(["nvidia-smi", q, "--format=csv,noheader,nounits"], capture_output=True, text=True,
                              timeout=20).stdout.strip()
    except Exception as e:
        return repr(e)
try:
    stats = jax.devices()[0].memory_stats()
except Exception as e:
    stats = repr(e)
print(json.dumps({"pid": os.getpid(), "jax": jax.__version__,
                  "env": {k: v for k, v in os.environ.items() if k.startswith("XLA_PYTHON_CLIENT")},
                  "memory_stats": stats, "gpu_memory_used_mib": smi("--query-gpu=memory.used"),
                  "apps": smi("--query-compute-apps=pid,used_memory")}, default=str), flush=True)
PY

# ---- running them -----------------------------------------------------------------------
# case NAME [ENV=VALUE ...] -- COMMAND...: stdout/stderr/rc/seconds into $dir/NAME.*
# Each program gets 60 s; once the script has run 225 s, the remaining cases are skipped
# (rc "skipped") so that the whole capture stays under 5 minutes.
case_run() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  if [ "$SECONDS" -ge 225 ]; then
    echo skipped >"$dir/$name.rc"
    echo "skipped: the capture's time budget was spent" >"$dir/$name.stderr"
    : >"$dir/$name.stdout"
    return
  fi
  local t0 t1
  t0=$(date +%s.%N)
  env "${envs[@]}" timeout -k 5 60 "$@" >"$dir/$name.stdout" 2>"$dir/$name.stderr" </dev/null
  echo $? >"$dir/$name.rc"
  t1=$(date +%s.%N)
  python3 -c "print(round($t1 - $t0, 2))" >"$dir/$name.seconds"
  printf '%s' "${envs[*]:-}" >"$dir/$name.env"
}

# /dev/kmsg: "kmsg.py seq" prints the last record's sequence number, "kmsg.py since N" the
# NVRM records after N (nothing, or a comment line, when the log cannot be read).
cat >"$progs/kmsg.py" <<'PY'
import os, sys
try:
    fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
except OSError as e:
    print(f"# /dev/kmsg: {e}" if sys.argv[1] == "since" else "")
    raise SystemExit(0)
start = int(sys.argv[2]) if sys.argv[1] == "since" and len(sys.argv) > 2 and sys.argv[2] else -1
last = ""
while True:
    try:
        rec = os.read(fd, 8192)
    except BlockingIOError:
        break
    except OSError:  # EPIPE: records were overwritten while reading
        continue
    if not rec:
        break
    text = rec.decode(errors="replace").rstrip("\n")
    last = text.split(",")[1]
    if sys.argv[1] == "since" and int(last) > start and "NVRM" in text:
        print(text)
if sys.argv[1] == "seq":
    print(last)
PY
seq0=$(timeout 5 python3 "$progs/kmsg.py" seq 2>/dev/null)

{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  python3 -c 'import torch; print("torch:", torch.__version__, torch.version.cuda)' 2>&1
  python3 -c 'import triton; print("triton:", triton.__version__)' 2>&1
  python3 -c 'import jax, jaxlib; print("jax:", jax.__version__, "jaxlib:", jaxlib.__version__)' 2>&1
  python3 -c 'import cupy; print("cupy:", cupy.__version__)' 2>&1
  echo "compute-sanitizer: $("$SANITIZER" --version 2>&1 | tail -1)"
} >"$dir/versions.txt"
"$SANITIZER" --help >"$dir/sanitizer_help.txt" 2>&1

case_run torch_index_select_oob -- python3 "$progs/torch_index_select_oob.py"
case_run torch_index_select_oob_blocking CUDA_LAUNCH_BLOCKING=1 -- python3 "$progs/torch_index_select_oob.py"
case_run torch_getitem_oob -- python3 "$progs/torch_getitem_oob.py"
case_run torch_oom -- python3 "$progs/torch_oom.py"
case_run triton_far_write -- python3 "$progs/triton_far_write.py"
case_run triton_far_write_blocking CUDA_LAUNCH_BLOCKING=1 -- python3 "$progs/triton_far_write.py"
case_run triton_misaligned -- python3 "$progs/triton_misaligned.py"
case_run triton_device_assert TRITON_DEBUG=1 -- python3 "$progs/triton_device_assert.py"
case_run cupy_misaligned -- python3 "$progs/cupy_misaligned.py"
case_run cupy_far_write -- python3 "$progs/cupy_far_write.py"
case_run cupy_overrun_one -- python3 "$progs/cupy_overrun_one.py"
case_run sanitizer_text_cupy_overrun -- "$SANITIZER" --tool memcheck python3 "$progs/cupy_overrun_one.py"
# The argv lib/profiles/sanitizer_argv builds for `cudadiag run` (padding 64 KiB).
case_run sanitizer_xml_padding -- "$SANITIZER" --tool memcheck --padding 65536 --xml --save \
  "$dir/sanitizer_xml_padding.xml" --print-limit 100 python3 "$progs/cupy_overrun_one.py"
case_run jax_pallas_oob_default -- python3 "$progs/jax_pallas_oob.py"
case_run jax_pallas_oob_platform XLA_PYTHON_CLIENT_ALLOCATOR=platform XLA_PYTHON_CLIENT_PREALLOCATE=false -- \
  python3 "$progs/jax_pallas_oob.py"
case_run shell_segfault -- bash -c 'python3 -c "import ctypes; ctypes.string_at(0)"; true'
case_run shell_abort -- bash -c 'python3 -c "import os; os.abort()"; true'
case_run not_found_sh -- sh -c 'no-such-command-cudadiag --x'
case_run not_found_python -- python3 /nonexistent/cudadiag/train.py
# The caching switches of lib/run/rungs.cpp.
case_run caching_torch_default -- python3 "$progs/torch_caching.py"
case_run caching_torch_nocache PYTORCH_NO_CUDA_MEMORY_CACHING=1 -- python3 "$progs/torch_caching.py"
case_run caching_jax_default -- python3 "$progs/jax_memory.py"
case_run caching_jax_no_prealloc XLA_PYTHON_CLIENT_PREALLOCATE=false -- python3 "$progs/jax_memory.py"
case_run caching_jax_platform XLA_PYTHON_CLIENT_ALLOCATOR=platform XLA_PYTHON_CLIENT_PREALLOCATE=false -- \
  python3 "$progs/jax_memory.py"

# NVIDIA kernel-log lines logged during the runs (/dev/kmsg records after the last one
# seen at the start), and the programs themselves.
timeout 10 python3 "$progs/kmsg.py" since "$seq0" >"$dir/kmsg_nvrm.txt" 2>/dev/null
cp "$progs"/*.py "$dir/"

tar -czf "$OUT/error-texts.tar.gz" -C "$work" error-texts

# ---- the table --------------------------------------------------------------------------
python3 - "$dir" "$OUT" <<'PY' | tee "$OUT/error-texts-summary.txt"
import json, os, re, sys
d, out = sys.argv[1], sys.argv[2]
pattern = re.compile(r"CUDA|cuda[A-Z]|Assertion|Segmentation|Aborted|not found|No such file|Error|error|=========")
names = sorted({f.rsplit(".", 1)[0] for f in os.listdir(d) if f.endswith(".rc")})

def read(name, ext):
    try:
        return open(os.path.join(d, f"{name}.{ext}"), errors="replace").read()
    except OSError:
        return ""

print("== captured outputs (first line that looks like an error; stderr first)")
print(f"  {'case':34} {'rc':>4} {'s':>6}  line")
for n in names:
    if n.startswith("caching_"):
        continue
    first = ""
    for stream in ("stderr", "stdout"):
        for line in read(n, stream).splitlines():
            if pattern.search(line) and not line.startswith("pid="):
                first = line.strip()
                break
        if first:
            break
    secs = read(n, "seconds").strip() or "?"
    try:
        secs = f"{float(secs):.1f}"
    except ValueError:
        pass
    print(f"  {n:34} {read(n, 'rc').strip():>4} {secs:>6}  {first[:110]}")

def last_json(name):
    for line in reversed(read(name, "stdout").splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return None

print("== framework caching switches (lib/run/rungs.cpp)")
a, b = last_json("caching_torch_default"), last_json("caching_torch_nocache")
if a and b:
    ok = a["reserved_after_free"] > 0 and b["reserved_after_free"] == 0
    print(f"  PYTORCH_NO_CUDA_MEMORY_CACHING=1: reserved after free {a['reserved_after_free']} -> "
          f"{b['reserved_after_free']} bytes: {'VERIFIED' if ok else 'NOT verified'}")
else:
    print("  PYTORCH_NO_CUDA_MEMORY_CACHING=1: no result (see caching_torch_*.stderr)")
for n in ("caching_jax_default", "caching_jax_no_prealloc", "caching_jax_platform"):
    j = last_json(n)
    if not j:
        print(f"  {n}: no result (see {n}.stderr)")
        continue
    stats = j.get("memory_stats")
    brief = {k: stats[k] for k in ("bytes_in_use", "bytes_reserved", "pool_bytes", "bytes_limit")
             if isinstance(stats, dict) and k in stats}
    print(f"  {n}: GPU memory used {j.get('gpu_memory_used_mib')} MiB; memory_stats {brief or stats}")
print("  XLA_PYTHON_CLIENT_PREALLOCATE=false is verified when no_prealloc uses far less than default;")
print("  XLA_PYTHON_CLIENT_ALLOCATOR=platform when jax_pallas_oob_platform faults and _default does not.")
print(f"== files: {os.path.join(out, 'error-texts.tar.gz')} (unpack into tests/run/data)")
PY
rm -rf "$work"
