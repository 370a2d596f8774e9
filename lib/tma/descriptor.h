#pragma once
// A tiled TMA descriptor as cuTensorMapEncodeTiled receives it, in plain C++ (no CUDA
// headers): the enums mirror CUtensorMapDataType / Interleave / Swizzle / L2promotion /
// FloatOOBfill with the same numeric values as cuda.h (tests/tma static_asserts that).
// Enum fields may hold values outside the known range: a printout or a flag can carry
// any number, and the validator reports it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::tma {

enum class DataType : int {
  uint8 = 0,
  uint16,
  uint32,
  int32,
  uint64,
  int64,
  float16,
  float32,
  float64,
  bfloat16,
  float32_ftz,
  tfloat32,
  tfloat32_ftz,
  u4x16_align8b,   // CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B
  u4x16_align16b,  // CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B
  u6x16_align16b,  // CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B
};
inline constexpr int kDataTypeCount = 16;

enum class Interleave : int { none = 0, b16, b32 };
inline constexpr int kInterleaveCount = 3;

enum class Swizzle : int { none = 0, b32, b64, b128, b128_atom_32b, b128_atom_32b_flip_8b, b128_atom_64b };
inline constexpr int kSwizzleCount = 7;

enum class L2Promotion : int { none = 0, b64, b128, b256 };
inline constexpr int kL2PromotionCount = 4;

enum class OobFill : int { none = 0, nan_request_zero_fma };
inline constexpr int kOobFillCount = 2;

inline constexpr unsigned kMaxRank = 5;

struct Descriptor {
  DataType data_type = DataType::bfloat16;
  unsigned rank = 0;
  std::uint64_t address = 0;                  // globalAddress
  std::vector<std::uint64_t> dims;            // globalDim, rank entries (elements)
  std::vector<std::uint64_t> strides;         // globalStrides, rank-1 entries (bytes, dims 1..rank-1)
  std::vector<std::uint32_t> box;             // boxDim, rank entries
  std::vector<std::uint32_t> element_strides; // elementStrides, rank entries
  Interleave interleave = Interleave::none;
  Swizzle swizzle = Swizzle::none;
  L2Promotion l2_promotion = L2Promotion::none;
  OobFill oob_fill = OobFill::none;
};

// Known enum value (inside the documented range)?
bool is_known(DataType t);
bool is_known(Interleave v);
bool is_known(Swizzle v);
bool is_known(L2Promotion v);
bool is_known(OobFill v);

// Size of one element in bits (4 or 6 for the packed types; 0 for an unknown type).
unsigned element_bits(DataType t);
// Bytes that `count` elements occupy in global memory (packed types round up).
std::uint64_t bytes_of(DataType t, std::uint64_t count);
bool is_floating(DataType t);
bool is_packed(DataType t);              // the 16U4/16U6 types
bool is_packed_align16(DataType t);      // 16U4_ALIGN16B or 16U6_ALIGN16B

// Short names used on the command line and in reports ("bf16", "128B", ...). Unknown
// values print as "unknown(N)".
std::string to_string(DataType t);
std::string to_string(Interleave v);
std::string to_string(Swizzle v);
std::string to_string(L2Promotion v);
std::string to_string(OobFill v);
// The cuda.h enumerator name ("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16").
std::string cuda_name(DataType t);

// A data type by any name people use for it, case-insensitive: cudadiag's ("bf16"),
// framework and C names ("bfloat16", "half", "float32", "int64", "u8", ...), the cuda.h
// enumerator with or without its prefix ("CU_TENSOR_MAP_DATA_TYPE_TFLOAT32",
// "TFLOAT32"), or the numeric CUtensorMapDataType code a printout shows ("9").
std::optional<DataType> parse_data_type(const std::string& text);
std::optional<Interleave> parse_interleave(const std::string& text);
std::optional<Swizzle> parse_swizzle(const std::string& text);
std::optional<L2Promotion> parse_l2_promotion(const std::string& text);
std::optional<OobFill> parse_oob_fill(const std::string& text);
// Comma-separated lists of the names above, for error messages.
std::string data_type_names();
// Every type with its code and aliases, from the same table, for --help:
// "uint8 (0, u8, ubyte); ...; bf16 (9, bfloat16); ...".
std::string data_type_help();

// One-line summary: "bf16 rank 3 dims (128,1,32) strides (2,256) box (64,128,1) ...".
std::string summary(const Descriptor& d);

}  // namespace cudadiag::tma
