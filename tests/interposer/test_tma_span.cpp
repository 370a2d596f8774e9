#include <catch2/catch.hpp>

#include "apps/interposer/tma_span.h"

using namespace cudadiag::interposer;

TEST_CASE("tma span: dims and strides from the base", "[tma_span]") {
  // 64 x 64 floats, rows 256 bytes apart: 63 rows of 256 bytes and one of 64 floats.
  const cuuint64_t dims[2] = {64, 64}, strides[1] = {256};
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dims, strides) == 63 * 256 + 64 * 4);
  // Padded rows: the last row ends after its elements, not after its stride.
  const cuuint64_t padded[1] = {1024};
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, dims, padded) == 63 * 1024 + 64 * 2);
  const cuuint64_t one[1] = {1000};
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, one, nullptr) == 1000);
  const cuuint64_t d5[5] = {8, 2, 3, 4, 5}, s5[4] = {64, 256, 1024, 8192};
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 5, d5, s5) == 64 + 64 + 2 * 256 + 3 * 1024 + 4 * 8192);
}

TEST_CASE("tma span: packed types as laid out in memory", "[tma_span]") {
  const cuuint64_t dims[1] = {33};
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B, 1, dims, nullptr) == 17);  // 4 bits each, rounded up
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B, 1, dims, nullptr) == 33);
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B, 1, dims, nullptr) == 33);
}

TEST_CASE("tma span: huge logical shapes saturate, non-tensors give 0", "[tma_span]") {
  const cuuint64_t huge[4] = {128, 64, 1, 1ull << 40}, strides[3] = {256, 256, 1ull << 30};
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, huge, strides) == ~0ull);
  const cuuint64_t wide[1] = {~0ull};
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, wide, nullptr) == ~0ull);
  const cuuint64_t dims[2] = {64, 64}, s[1] = {256}, zero[2] = {64, 0};
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 0, dims, s) == 0);
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 6, dims, s) == 0);
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, zero, s) == 0);
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dims, nullptr) == 0);
  CHECK(tma_span_bytes(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, nullptr, s) == 0);
  CHECK(tma_span_bytes(99, 2, dims, s) == 0);
}
