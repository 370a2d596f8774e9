// A gather that reads far past the end of its buffer: a kernel sums elements of buffer A
// at offsets 1.5 to 1.9 times A's size from its start, that is 0.5 to 0.9 times A's size
// past its end (2 MiB to 3.6 MiB past a 4 MiB buffer), as a bad index or a strided view
// does. Buffer B, allocated right after A, sits there natively (cudaMalloc places them back
// to back): the read is silent. A one-granule guard (2 MiB on an H100) is jumped as well;
// a guard as large as A catches it. Prints where A and B lie (the gap between A's end and
// B's start), then the sum.
#include <cstdint>

#include "cuda_check.h"

__global__ void far_sum(const float* a, std::size_t first, std::size_t count, std::size_t stride, float* out) {
  float s = 0.0f;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    s += a[first + i * stride];  // the bug: first + i * stride is past a's end
  atomicAdd(out, s);
}

int main() {
  constexpr std::size_t kBytes = 4u << 20;  // 4 MiB each
  constexpr std::size_t kElements = kBytes / sizeof(float);
  float* out = nullptr;
  float* a = nullptr;
  float* b = nullptr;
  PROBE_CHECK(cudaMalloc(&out, sizeof(float)));
  PROBE_CHECK(cudaMalloc(&a, kBytes));
  PROBE_CHECK(cudaMalloc(&b, kBytes));
  PROBE_CHECK(cudaMemset(out, 0, sizeof(float)));
  PROBE_CHECK(cudaMemset(a, 0, kBytes));
  PROBE_CHECK(cudaMemset(b, 0, kBytes));
  const auto a_end = reinterpret_cast<std::uintptr_t>(a) + kBytes;
  const auto b_at = reinterpret_cast<std::uintptr_t>(b);
  std::printf("A=%#llx B=%#llx gap=%lld\n", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(a)),
              static_cast<unsigned long long>(b_at), static_cast<long long>(b_at) - static_cast<long long>(a_end));
  // Elements [1.5, 1.9) x A's size from its start: 2 MiB to 3.6 MiB past its end.
  const std::size_t first = kElements * 3 / 2;
  const std::size_t last = kElements * 19 / 10;
  const std::size_t stride = 256;  // one float per KiB
  far_sum<<<64, 128>>>(a, first, (last - first) / stride, stride, out);
  PROBE_CHECK_LAUNCH();
  PROBE_CHECK(cudaDeviceSynchronize());
  float sum = -1;
  PROBE_CHECK(cudaMemcpy(&sum, out, sizeof sum, cudaMemcpyDeviceToHost));
  PROBE_CHECK(cudaFree(b));
  PROBE_CHECK(cudaFree(a));
  PROBE_CHECK(cudaFree(out));
  std::printf("finished: sum=%g (the read %zu to %zu bytes past the end went unnoticed)\n", sum,
              (first - kElements) * sizeof(float), (last - kElements) * sizeof(float));
  return 0;
}
