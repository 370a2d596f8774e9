#include <cstring>

#include <catch2/catch.hpp>

#include "tma/load_reference.h"

using namespace cudadiag::tma;

namespace {

Descriptor make(DataType t, std::vector<std::uint64_t> dims, std::vector<std::uint64_t> strides,
                std::vector<std::uint32_t> box) {
  Descriptor d;
  d.data_type = t;
  d.rank = static_cast<unsigned>(dims.size());
  d.dims = std::move(dims);
  d.strides = std::move(strides);
  d.box = std::move(box);
  d.element_strides.assign(d.rank, 1);
  return d;
}

std::vector<std::uint8_t> pattern(size_t n) {
  std::vector<std::uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 37 + 11);
  return v;
}

}  // namespace

TEST_CASE("load plan of the seed's seq_len 2 descriptor", "[tma][load]") {
  auto d = make(DataType::bfloat16, {128, 2, 32}, {8192, 256}, {64, 128, 1});
  d.swizzle = Swizzle::b128;
  const auto p = plan_load(d);
  REQUIRE(p.possible);
  CHECK(p.element_bytes == 2);
  CHECK(p.box_bytes == 64 * 128 * 2);
  CHECK(p.boxes == 2 * 1 * 32);
  CHECK(p.source_bytes == 127 * 2 + 8192 + 31 * 256 + 2);
  CHECK(box_origin(d, p, 0) == std::vector<std::int32_t>{0, 0, 0});
  CHECK(box_origin(d, p, 1) == std::vector<std::int32_t>{64, 0, 0});
  CHECK(box_origin(d, p, 3) == std::vector<std::int32_t>{64, 0, 1});
}

TEST_CASE("load plan refuses what the kernel does not model", "[tma][load]") {
  auto d = make(DataType::bfloat16, {128, 8}, {256}, {64, 8});
  d.interleave = Interleave::b16;
  CHECK_FALSE(plan_load(d).possible);
  d.interleave = Interleave::none;
  d.data_type = DataType::u4x16_align8b;
  CHECK_THAT(plan_load(d).reason, Catch::Contains("1/2/4/8-byte"));
  d.data_type = DataType::bfloat16;
  d.swizzle = Swizzle::b128_atom_32b;
  CHECK_FALSE(plan_load(d).possible);
  auto big = make(DataType::uint8, {256, 256, 256}, {256, 65536}, {256, 256, 4});
  CHECK_THAT(plan_load(big).reason, Catch::Contains("shared memory"));
}

TEST_CASE("swizzle moves 16-byte chunks by the 128-byte row index", "[tma][load]") {
  CHECK(swizzled_offset(Swizzle::none, 200) == 200);
  CHECK(swizzled_offset(Swizzle::b128, 0) == 0);
  CHECK(swizzled_offset(Swizzle::b128, 128) == 144);        // row 1, chunk 0 -> chunk 1
  CHECK(swizzled_offset(Swizzle::b128, 7 * 128 + 3) == 7 * 128 + 7 * 16 + 3);
  CHECK(swizzled_offset(Swizzle::b128, 8 * 128) == 8 * 128);  // repeats every 1024 bytes
  CHECK(swizzled_offset(Swizzle::b64, 3 * 128 + 16) == 3 * 128 + 32);  // chunk 1 ^ 3 = 2
  CHECK(swizzled_offset(Swizzle::b32, 128) == 144);
  CHECK(swizzled_offset(Swizzle::b32, 256) == 256);
}

TEST_CASE("check_load: a box past the tensor's edge must hold the fill", "[tma][load]") {
  const auto d = make(DataType::float32, {20}, {}, {16});
  const auto p = plan_load(d);
  REQUIRE(p.possible);
  REQUIRE(p.boxes == 2);
  const auto src = pattern(p.source_bytes);
  REQUIRE(src.size() == 80);
  std::vector<std::uint8_t> boxes(2 * 64, 0);
  std::memcpy(boxes.data(), src.data(), 64);        // box 0: elements 0..15
  std::memcpy(boxes.data() + 64, src.data() + 64, 16);  // box 1: elements 16..19, then fill
  auto r = check_load(d, p, src, boxes);
  CHECK(r.elements == 32);
  CHECK(r.oob_elements == 12);
  CHECK(r.mismatches == 0);

  auto bad = boxes;
  bad[64 + 16] = 0x7f;  // element 20 (out of bounds) not zero
  r = check_load(d, p, src, bad);
  CHECK(r.mismatches == 1);
  CHECK_THAT(r.first_mismatch, Catch::Contains("box 1 at (16), element (20)"));
  CHECK_THAT(r.first_mismatch, Catch::Contains("expected 0 (out-of-bounds fill)"));

  auto nan_d = d;
  nan_d.oob_fill = OobFill::nan_request_zero_fma;
  CHECK(check_load(nan_d, p, src, boxes).mismatches == 12);  // zeros are not NaN
  auto nan_boxes = boxes;
  for (int i = 0; i < 12; ++i) {
    const std::uint32_t qnan = 0x7fffffffu;
    std::memcpy(nan_boxes.data() + 64 + 16 + 4 * i, &qnan, 4);
  }
  CHECK(check_load(nan_d, p, src, nan_boxes).mismatches == 0);
}

TEST_CASE("check_load: strided 2D source and 128B swizzle", "[tma][load]") {
  // bf16 rows of 64 (128 bytes) with a padded pitch of 160 bytes, 8 rows, one box.
  auto d = make(DataType::bfloat16, {64, 8}, {160}, {64, 8});
  d.swizzle = Swizzle::b128;
  const auto p = plan_load(d);
  REQUIRE(p.possible);
  const auto src = pattern(p.source_bytes);
  std::vector<std::uint8_t> box(p.box_bytes);
  for (unsigned row = 0; row < 8; ++row)
    for (unsigned chunk = 0; chunk < 8; ++chunk)
      std::memcpy(box.data() + row * 128 + ((chunk ^ row) * 16), src.data() + row * 160 + chunk * 16, 16);
  CHECK(check_load(d, p, src, box).mismatches == 0);
  d.swizzle = Swizzle::none;  // the same bytes read without swizzle do not match
  CHECK(check_load(d, p, src, box).mismatches > 0);
}
