#!/usr/bin/env bash
# Captures real GPU core dumps as test data for the core-dump reader (run on the device;
# not a test). Small nvcc programs (one block each, built with -lineinfo) fault in known
# ways with the driver's dump armed (light flags, skip_abort); a hang is dumped through the
# user-trigger pipe. For each dump cuda-gdb's reading (exception, kernel, line, focus,
# faulting instruction, registers) is kept beside it as the expected answer.
# Everything lands in $OUT/coredumps.tar.gz; a table is printed last. About 1-2 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-./gpu-check-out}
mkdir -p "$OUT"
work=$(mktemp -d)
dumps="$work/coredumps"
src="$work/src"
mkdir -p "$dumps" "$src"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA_GDB=${CUDA_GDB:-$(command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)}
NVDISASM=${NVDISASM:-$(command -v nvdisasm || echo /usr/local/cuda/bin/nvdisasm)}

# The programs are the test data's own sources (tests/coredump/data/*.cu), so a dump and
# the program that made it stay together.
cp tests/coredump/data/*.cu "$src/"

bin="$work/bin"
mkdir -p "$bin"
for s in "$src"/*.cu; do
  n=$(basename "$s" .cu)
  "$NVCC" -O2 -lineinfo -arch=native -o "$bin/$n" "$s" -lcuda >"$dumps/build.$n.log" 2>&1 &
done
wait

flags=skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory,skip_constbank_memory,skip_abort
table=()
for n in far_write guard_write misaligned16 gather_bad_index device_assert use_after_free; do
  [ -x "$bin/$n" ] || { table+=("$n: build failed"); continue; }
  t0=$(date +%s.%N)
  f=$flags
  args=()
  # A store onto unmapped memory: the driver writes its dump after the program's
  # synchronize returned cudaSuccess, and only while the process lives (H100, driver
  # 580.159.04; scripts/device/store-dump-probe.sh): armed as `cudadiag run` arms it (no
  # skip_abort), the program stays 5 s after its synchronize, and the driver aborts it.
  [[ $n == guard_write ]] && f=${flags%,skip_abort} && args=(5)
  CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 CUDA_COREDUMP_FILE="$dumps/$n.nvcudmp" \
    CUDA_COREDUMP_GENERATION_FLAGS=$f timeout 60 "$bin/$n" ${args[@]+"${args[@]}"} >"$dumps/$n.out" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  size=$(stat -c %s "$dumps/$n.nvcudmp" 2>/dev/null || echo 0)
  table+=("$n: exit $rc, dump $size bytes, $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}') s")
done

# The hang: armed for a user-triggered dump; 1 MiB into the pipe (a byte may sit in its buffer).
if [ -x "$bin/hang" ]; then
  CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1 CUDA_COREDUMP_PIPE="$work/pipe_%p" \
    CUDA_COREDUMP_FILE="$dumps/hang.nvcudmp" CUDA_COREDUMP_GENERATION_FLAGS=$flags \
    timeout 60 "$bin/hang" >"$dumps/hang.out" 2>&1 &
  hp=$!
  pipe=
  for _ in $(seq 50); do
    pipe=$(ls "$work"/pipe_* 2>/dev/null | head -1)  # %p is the program's pid, not timeout's
    [ -n "$pipe" ] && [ -p "$pipe" ] && break
    sleep 0.2
  done
  sleep 1
  t0=$(date +%s.%N)
  [ -n "$pipe" ] && timeout 20 sh -c 'head -c 1048576 /dev/zero >"$1"' _ "$pipe" 2>/dev/null &
  for _ in $(seq 100); do [ -s "$dumps/hang.nvcudmp" ] && break; sleep 0.2; done
  sleep 2
  t1=$(date +%s.%N)
  kill -9 $hp 2>/dev/null
  wait $hp 2>/dev/null
  table+=("hang: dump $(stat -c %s "$dumps/hang.nvcudmp" 2>/dev/null || echo 0) bytes, $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}') s after the trigger")
fi

# Stores onto the fence's guard, dumped by `cudadiag run` itself (its fence rung places the
# buffer flush against the guard; the site run arms the dump without skip_abort), when
# build/bin/cudadiag is here (carried from the build machine): tests/programs/oob_write.cu
# (a store whose warp has left when the fault is reported: the SM's row names it) and a
# Triton kernel's unmasked store.
CUDADIAG=${CUDADIAG:-$PWD/build/bin/cudadiag}
kept_dump() {  # NAME CMD...: the first dump the fence rung's site run kept, as NAME.nvcudmp
  local name=$1 kept="$work/kept-$1"
  shift
  mkdir -p "$kept"
  "$CUDADIAG" run --rungs native,fence --keep-dumps "$kept" --format json -o "$dumps/$name.report.json" \
    -- "$@" >"$dumps/$name.out" 2>&1
  local first
  first=$(ls "$kept"/*.nvcudmp 2>/dev/null | head -1)
  if [[ -n $first ]]; then
    cp "$first" "$dumps/$name.nvcudmp"
    table+=("$name: dump $(stat -c %s "$first") bytes (cudadiag run, fence rung)")
  else
    table+=("$name: no dump kept (see $name.out)")
  fi
}
if [[ -x $CUDADIAG ]]; then
  cp tests/programs/oob_write.cu tests/programs/cuda_check.h "$src/"
  "$NVCC" -O2 -lineinfo -arch=native -o "$bin/oob_write" "$src/oob_write.cu" >"$dumps/build.oob_write.log" 2>&1 &&
    kept_dump guard_store "$bin/oob_write"
fi
if [[ -x $CUDADIAG ]] && python3 -c "import torch, triton" 2>/dev/null; then
  cat >"$src/triton_store.py" <<'PY'
import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, x * 2.0)  # the bug: no mask


n = 1000
x = torch.randn(n, device="cuda")
y = torch.empty_like(x)
scale[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
torch.cuda.synchronize()
print("finished")
PY
  kept_dump triton_store python3 "$src/triton_store.py"
fi

for d in "$dumps"/*.nvcudmp; do
  [ -s "$d" ] || continue
  n=$(basename "$d" .nvcudmp)
  readelf -S -W "$d" >"$dumps/$n.sections.txt" 2>&1
  timeout 120 "$CUDA_GDB" -batch -ex "target cudacore $d" -ex "info cuda kernels" -ex "info cuda warps" \
    -ex "info cuda lanes" -ex 'p $errorpc' -ex 'x/6i $errorpc' -ex 'x/6i $pc' -ex "info registers" -ex "bt" \
    >"$dumps/$n.cuda-gdb.txt" 2>&1
done
cp "$src"/*.cu "$dumps/"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$dumps/gpu.txt" 2>&1
"$NVCC" --version >>"$dumps/gpu.txt" 2>&1
command -v "$NVDISASM" >/dev/null && "$NVDISASM" --version >>"$dumps/gpu.txt" 2>&1
tar -C "$work" -czf "$OUT/coredumps.tar.gz" coredumps
echo "== core dumps ($(head -1 "$dumps/gpu.txt")) =="
printf '%s\n' "${table[@]}"
ls -la "$OUT/coredumps.tar.gz"
rm -rf "$work"
