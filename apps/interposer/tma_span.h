#pragma once
// How far from its base a TMA descriptor's tensor reaches, from the arguments of
// cuTensorMapEncode*: the innermost dimension is contiguous, each outer one adds
// (dim - 1) strides. Saturating arithmetic: descriptors with deliberately huge logical
// shapes exist. cuda.h for its enum only.
#include <cuda.h>

#include <cstdint>

namespace cudadiag::interposer {

inline std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? ~0ull : r;
}

inline std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? ~0ull : r;
}

// Bits of memory one element takes; 0 for a type this build does not know. The packed
// types as laid out: 16 4-bit values in 8 bytes (16U4_ALIGN8B), or in 16 bytes with gaps
// (16U4_ALIGN16B, 16U6_ALIGN16B).
inline std::uint32_t tma_memory_bits(std::uint32_t data_type) noexcept {
  if (data_type > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B) return 0;
  switch (static_cast<CUtensorMapDataType>(data_type)) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 8;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 16;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 32;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 64;
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B:
    case CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B: return 8;
  }
  return 0;
}

inline constexpr std::uint32_t kTmaMaxRank = 5;

// Bytes from the base that `dims` (rank of them) and `strides` (rank - 1, bytes) cover,
// saturated; 0 when they describe no tensor (no dims, a zero dim, an unknown data type,
// rank 0 or above 5).
inline std::uint64_t tma_span_bytes(std::uint32_t data_type, std::uint32_t rank, const cuuint64_t* dims,
                                    const cuuint64_t* strides) noexcept {
  const std::uint32_t bits = tma_memory_bits(data_type);
  if (bits == 0 || rank == 0 || rank > kTmaMaxRank || !dims || (rank > 1 && !strides)) return 0;
  for (std::uint32_t i = 0; i < rank; ++i)
    if (dims[i] == 0) return 0;
  std::uint64_t span = saturating_mul(dims[0], bits);
  if (span != ~0ull) span = (span + 7) / 8;
  for (std::uint32_t i = 1; i < rank; ++i) span = saturating_add(span, saturating_mul(dims[i] - 1, strides[i - 1]));
  return span;
}

}  // namespace cudadiag::interposer
