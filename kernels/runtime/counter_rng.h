#pragma once
// Counter-based random numbers shared by the host and the device: the value of element
// i of stream t in a run is a pure function of (run seed, t, i), so a device kernel can
// generate every element independently, a check kernel can recompute what an input was
// without reading it, and the host can reproduce any element of a run from its seed
// (replay, error messages). Plain C++ with __host__ __device__ under nvcc.
#include <cstdint>

#if defined(__CUDACC__)
#define CUDADIAG_HD __host__ __device__ __forceinline__
#else
#define CUDADIAG_HD inline
#endif

namespace cudadiag::rng {

// splitmix64's finaliser: a bijection of 64-bit words with full avalanche.
CUDADIAG_HD uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// 64 random bits of element `index` of stream `stream` (one stream per tensor).
CUDADIAG_HD uint64_t element_bits(uint64_t seed, uint32_t stream, uint64_t index) {
  return mix64(mix64(seed ^ (0xd1b54a32d192ed03ull * (uint64_t(stream) + 1))) + index);
}

// Uniform in [-1, 1) on a grid of 2^-23: the top 24 bits scaled by a power of two,
// exact in fp32, so host and device produce the same float bit for bit.
CUDADIAG_HD float uniform_pm1(uint64_t bits) {
  return static_cast<float>(static_cast<uint32_t>(bits >> 40)) * 1.1920928955078125e-7f - 1.0f;
}

// Uniform in [0, 1) from the low 32 bits (for per-CTA decisions such as the race knob).
CUDADIAG_HD float uniform_01(uint64_t bits) {
  return static_cast<float>(static_cast<uint32_t>(bits) >> 8) * 5.9604644775390625e-8f;
}

}  // namespace cudadiag::rng
