#include <cuda.h>

#include <catch2/catch.hpp>

#include "tma/descriptor.h"

using namespace cudadiag::tma;

// Our enums mirror cuda.h value for value, so a descriptor can be handed to the driver
// with a cast and a printout's numbers decode to the driver's meaning.
static_assert(static_cast<int>(DataType::uint8) == CU_TENSOR_MAP_DATA_TYPE_UINT8);
static_assert(static_cast<int>(DataType::float16) == CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
static_assert(static_cast<int>(DataType::bfloat16) == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
static_assert(static_cast<int>(DataType::tfloat32_ftz) == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ);
static_assert(static_cast<int>(DataType::u4x16_align8b) == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B);
static_assert(static_cast<int>(DataType::u4x16_align16b) == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B);
static_assert(static_cast<int>(DataType::u6x16_align16b) == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B);
static_assert(kDataTypeCount == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B + 1);
static_assert(static_cast<int>(Interleave::b16) == CU_TENSOR_MAP_INTERLEAVE_16B);
static_assert(static_cast<int>(Interleave::b32) == CU_TENSOR_MAP_INTERLEAVE_32B);
static_assert(static_cast<int>(Swizzle::b32) == CU_TENSOR_MAP_SWIZZLE_32B);
static_assert(static_cast<int>(Swizzle::b64) == CU_TENSOR_MAP_SWIZZLE_64B);
static_assert(static_cast<int>(Swizzle::b128) == CU_TENSOR_MAP_SWIZZLE_128B);
static_assert(static_cast<int>(Swizzle::b128_atom_32b) == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B);
static_assert(static_cast<int>(Swizzle::b128_atom_32b_flip_8b) == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B);
static_assert(static_cast<int>(Swizzle::b128_atom_64b) == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B);
static_assert(kSwizzleCount == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B + 1);
static_assert(static_cast<int>(L2Promotion::b64) == CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
static_assert(static_cast<int>(L2Promotion::b128) == CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
static_assert(static_cast<int>(L2Promotion::b256) == CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
static_assert(static_cast<int>(OobFill::nan_request_zero_fma) == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);

TEST_CASE("enum numbers decode to the driver's meaning", "[tma][descriptor]") {
  CHECK(to_string(static_cast<DataType>(9)) == "bf16");
  CHECK(cuda_name(static_cast<DataType>(9)) == "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16");
  CHECK(to_string(static_cast<DataType>(6)) == "fp16");
  CHECK(to_string(static_cast<Swizzle>(3)) == "128B");
  CHECK(to_string(static_cast<L2Promotion>(2)) == "128B");
  CHECK(to_string(static_cast<Interleave>(0)) == "none");
  CHECK(to_string(static_cast<OobFill>(1)) == "nan");
  CHECK(to_string(static_cast<DataType>(42)) == "unknown(42)");
  CHECK(to_string(static_cast<Swizzle>(-1)) == "unknown(-1)");
}

TEST_CASE("names parse back, case-insensitively, with aliases", "[tma][descriptor]") {
  for (int i = 0; i < kDataTypeCount; ++i) {
    const auto t = static_cast<DataType>(i);
    REQUIRE(parse_data_type(to_string(t)) == t);
  }
  CHECK(parse_data_type("BF16") == DataType::bfloat16);
  CHECK(parse_data_type("half") == DataType::float16);
  CHECK_FALSE(parse_data_type("bf17").has_value());
  CHECK(parse_swizzle("128b") == Swizzle::b128);
  CHECK(parse_interleave("32B") == Interleave::b32);
  CHECK(parse_l2_promotion("256B") == L2Promotion::b256);
  CHECK(parse_oob_fill("nan") == OobFill::nan_request_zero_fma);
  CHECK_FALSE(parse_swizzle("16B").has_value());
}

TEST_CASE("element sizes, packed types round up", "[tma][descriptor]") {
  CHECK(element_bits(DataType::bfloat16) == 16);
  CHECK(element_bits(DataType::float64) == 64);
  CHECK(bytes_of(DataType::bfloat16, 128) == 256);
  CHECK(bytes_of(DataType::u4x16_align8b, 3) == 2);
  CHECK(bytes_of(DataType::u6x16_align16b, 128) == 96);
  CHECK(is_floating(DataType::tfloat32));
  CHECK_FALSE(is_floating(DataType::int32));
  CHECK_FALSE(is_floating(DataType::u4x16_align16b));
}

TEST_CASE("data types by every name people use, by cuda.h name and by code", "[tma][descriptor]") {
  const std::pair<const char*, DataType> names[] = {
      {"f16", DataType::float16},       {"half", DataType::float16},          {"float16", DataType::float16},
      {"FP16", DataType::float16},      {"f32", DataType::float32},           {"float32", DataType::float32},
      {"fp32", DataType::float32},      {"float", DataType::float32},         {"bf16", DataType::bfloat16},
      {"bfloat16", DataType::bfloat16}, {"u8", DataType::uint8},              {"uint8", DataType::uint8},
      {"i32", DataType::int32},         {"int32", DataType::int32},           {"s32", DataType::int32},
      {"i64", DataType::int64},         {"int64", DataType::int64},           {"f64", DataType::float64},
      {"float64", DataType::float64},   {"double", DataType::float64},        {"tf32", DataType::tfloat32},
      {"tfloat32", DataType::tfloat32}, {"tf32_ftz", DataType::tfloat32_ftz}, {"u16", DataType::uint16},
      {"u32", DataType::uint32},        {"u64", DataType::uint64},            {"fp32_ftz", DataType::float32_ftz},
      {"CU_TENSOR_MAP_DATA_TYPE_TFLOAT32", DataType::tfloat32},
      {"tfloat32_ftz", DataType::tfloat32_ftz}, {"BFLOAT16", DataType::bfloat16}};
  for (const auto& [name, type] : names) {
    INFO(name);
    CHECK(parse_data_type(name) == type);
  }
  for (int code = 0; code < kDataTypeCount; ++code) CHECK(parse_data_type(std::to_string(code)) == static_cast<DataType>(code));
  CHECK(parse_data_type("9") == DataType::bfloat16);
  CHECK(parse_data_type("11") == DataType::tfloat32);
  CHECK_FALSE(parse_data_type("16").has_value());
  CHECK_FALSE(parse_data_type("99999999999999999999").has_value());
  CHECK_FALSE(parse_data_type("-1").has_value());
  CHECK_FALSE(parse_data_type("").has_value());
  CHECK_FALSE(parse_data_type("CU_TENSOR_MAP_DATA_TYPE_").has_value());
}

TEST_CASE("the --help list of data types comes from the table: every name, code and alias", "[tma][descriptor]") {
  const auto help = data_type_help();
  CHECK_THAT(help, Catch::Contains("uint8 (0, u8, ubyte)"));
  CHECK_THAT(help, Catch::Contains("bf16 (9, bfloat16)"));
  CHECK_THAT(help, Catch::Contains("tf32 (11, tfloat32)"));
  CHECK_THAT(help, Catch::Contains("fp16 (6, f16, half, float16)"));
  for (int i = 0; i < kDataTypeCount; ++i) CHECK_THAT(help, Catch::Contains(to_string(static_cast<DataType>(i)) + " ("));
}
