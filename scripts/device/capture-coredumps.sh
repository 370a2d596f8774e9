#!/usr/bin/env bash
# Captures real GPU core dumps as test data for the core-dump reader (run on the device;
# not a test). Small nvcc programs (one block each, built with -lineinfo) fault in known
# ways with the driver's dump armed (light flags, skip_abort); a hang is dumped through the
# user-trigger pipe. For each dump cuda-gdb's reading (exception, kernel, line, focus,
# faulting instruction, registers) is kept beside it as the expected answer, with nvdisasm's
# view of the relocated image where the toolkit has it.
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

cat >"$src/far_write.cu" <<'CU'
// One block of 64 threads writes 1 GiB past the end of a 4 KiB buffer: thread t writes
// element (1 GiB / 4) + t, so every lane faults at a known address.
#include <cstdio>
__global__ void far_write(float* out, long long offset) {
  const int t = threadIdx.x;
  out[offset + t] = static_cast<float>(t);
}
int main() {
  float* p = nullptr;
  cudaMalloc(&p, 4096);
  std::printf("buffer=%p\n", static_cast<void*>(p));
  far_write<<<1, 64>>>(p, (1ll << 30) / 4);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}
CU
cat >"$src/misaligned16.cu" <<'CU'
// A 16-byte vector load from 4 bytes past a 16-byte boundary (seed 002's pattern).
#include <cstdio>
__global__ void load_vector(const float* in, float* out) {
  const float4 v = *reinterpret_cast<const float4*>(in + 1 + 4 * threadIdx.x);
  out[threadIdx.x] = v.x + v.y + v.z + v.w;
}
int main() {
  float *in = nullptr, *out = nullptr;
  cudaMalloc(&in, 1024 * sizeof(float));
  cudaMalloc(&out, 32 * sizeof(float));
  std::printf("in=%p\n", static_cast<void*>(in));
  load_vector<<<1, 32>>>(in, out);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}
CU
cat >"$src/gather_bad_index.cu" <<'CU'
// A row gather whose index table holds one bad row (seed 000's pattern): the load's
// destination register may overwrite half of its own address pair.
#include <cstdio>
__global__ void gather_rows(const float* src, const long long* idx, float* out, int cols) {
  const int row = blockIdx.x, col = threadIdx.x;
  out[row * cols + col] = src[idx[row] * cols + col];
}
int main() {
  const int rows = 4, cols = 32;
  float *src = nullptr, *out = nullptr;
  long long* idx = nullptr;
  cudaMalloc(&src, 1024 * cols * sizeof(float));
  cudaMalloc(&out, rows * cols * sizeof(float));
  cudaMalloc(&idx, rows * sizeof(long long));
  long long h[rows] = {0, 5, 200000000, 7};  // row 2 is 24 GiB past the source
  cudaMemcpy(idx, h, sizeof h, cudaMemcpyHostToDevice);
  std::printf("src=%p\n", static_cast<void*>(src));
  gather_rows<<<rows, cols>>>(src, idx, out, cols);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}
CU
cat >"$src/device_assert.cu" <<'CU'
// A device assert on one lane.
#include <cassert>
#include <cstdio>
__global__ void check_positive(const int* v) {
  const int x = v[threadIdx.x];
  assert(x >= 0);
}
int main() {
  int* v = nullptr;
  cudaMalloc(&v, 32 * sizeof(int));
  int h[32];
  for (int i = 0; i < 32; ++i) h[i] = i == 17 ? -1 : i;
  cudaMemcpy(v, h, sizeof h, cudaMemcpyHostToDevice);
  check_positive<<<1, 32>>>(v);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}
CU
cat >"$src/use_after_free.cu" <<'CU'
// Reads a buffer after cudaFree (64 threads of one block).
#include <cstdio>
__global__ void touch(float* p, int stride) {
  const int i = threadIdx.x * stride;
  p[i] += 1.0f;
}
int main() {
  float* p = nullptr;
  cudaMalloc(&p, 64 << 20);
  std::printf("freed=%p\n", static_cast<void*>(p));
  cudaFree(p);
  touch<<<1, 64>>>(p, 34);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}
CU
cat >"$src/hang.cu" <<'CU'
// One warp spins on a flag nobody sets: dumped through the user-trigger pipe.
#include <cstdio>
__global__ void wait_flag(volatile int* flag) {
  while (*flag == 0) {
  }
}
int main() {
  int* f = nullptr;
  cudaMalloc(&f, sizeof(int));
  cudaMemset(f, 0, sizeof(int));
  wait_flag<<<1, 32>>>(f);
  std::printf("launched\n");
  std::fflush(stdout);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorName(e));
  return 1;
}
CU

bin="$work/bin"
mkdir -p "$bin"
for s in "$src"/*.cu; do
  n=$(basename "$s" .cu)
  "$NVCC" -O2 -lineinfo -arch=native -o "$bin/$n" "$s" >"$dumps/build.$n.log" 2>&1 &
done
wait

flags=skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory,skip_constbank_memory,skip_abort
table=()
for n in far_write misaligned16 gather_bad_index device_assert use_after_free; do
  [ -x "$bin/$n" ] || { table+=("$n: build failed"); continue; }
  t0=$(date +%s.%N)
  CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 CUDA_COREDUMP_FILE="$dumps/$n.nvcudmp" \
    CUDA_COREDUMP_GENERATION_FLAGS=$flags timeout 60 "$bin/$n" >"$dumps/$n.out" 2>&1
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
