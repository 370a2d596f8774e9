#include "tma/descriptor.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace cudadiag::tma {
namespace {

struct TypeInfo {
  const char* name;     // the name cudadiag prints
  const char* cuda;     // the cuda.h enumerator
  unsigned bits;
  bool floating;
  // Other names people write for it (framework dtype names, C names, short forms);
  // the cuda.h enumerator without its prefix and the numeric code are accepted too.
  std::array<const char*, 4> aliases;
};

// Indexed by the CUtensorMapDataType value: the one table for names, codes and sizes.
constexpr std::array<TypeInfo, kDataTypeCount> kTypes{{
    {"uint8", "CU_TENSOR_MAP_DATA_TYPE_UINT8", 8, false, {"u8", "ubyte"}},
    {"uint16", "CU_TENSOR_MAP_DATA_TYPE_UINT16", 16, false, {"u16", "ushort"}},
    {"uint32", "CU_TENSOR_MAP_DATA_TYPE_UINT32", 32, false, {"u32", "uint"}},
    {"int32", "CU_TENSOR_MAP_DATA_TYPE_INT32", 32, false, {"i32", "s32", "int"}},
    {"uint64", "CU_TENSOR_MAP_DATA_TYPE_UINT64", 64, false, {"u64"}},
    {"int64", "CU_TENSOR_MAP_DATA_TYPE_INT64", 64, false, {"i64", "s64", "long"}},
    {"fp16", "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 16, true, {"f16", "half", "float16"}},
    {"fp32", "CU_TENSOR_MAP_DATA_TYPE_FLOAT32", 32, true, {"f32", "float", "float32"}},
    {"fp64", "CU_TENSOR_MAP_DATA_TYPE_FLOAT64", 64, true, {"f64", "double", "float64"}},
    {"bf16", "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", 16, true, {"bfloat16"}},
    {"fp32_ftz", "CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ", 32, true, {"f32_ftz", "float32_ftz"}},
    {"tf32", "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32", 32, true, {"tfloat32"}},
    {"tf32_ftz", "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ", 32, true, {"tfloat32_ftz"}},
    // The packed types hold integers (U4/U6 codes); NaN fill is documented as not allowed.
    {"16u4_align8b", "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B", 4, false, {}},
    {"16u4_align16b", "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B", 4, false, {}},
    {"16u6_align16b", "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B", 6, false, {}},
}};

constexpr std::string_view kCudaPrefix = "cu_tensor_map_data_type_";

constexpr std::array<const char*, kInterleaveCount> kInterleaveNames{"none", "16B", "32B"};
constexpr std::array<const char*, kSwizzleCount> kSwizzleNames{
    "none", "32B", "64B", "128B", "128B_atom_32B", "128B_atom_32B_flip_8B", "128B_atom_64B"};
constexpr std::array<const char*, kL2PromotionCount> kL2Names{"none", "64B", "128B", "256B"};
constexpr std::array<const char*, kOobFillCount> kOobNames{"none", "nan"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

template <typename E, size_t N>
std::string name_of(E v, const std::array<const char*, N>& names) {
  const int i = static_cast<int>(v);
  if (i >= 0 && static_cast<size_t>(i) < N) return names[static_cast<size_t>(i)];
  return "unknown(" + std::to_string(i) + ")";
}

template <typename E, size_t N>
std::optional<E> parse_named(const std::string& text, const std::array<const char*, N>& names) {
  const std::string t = lower(text);
  for (size_t i = 0; i < N; ++i)
    if (t == lower(names[i])) return static_cast<E>(i);
  return std::nullopt;
}

template <typename T>
std::string join(const std::vector<T>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + ")";
}

}  // namespace

bool is_known(DataType t) { return static_cast<int>(t) >= 0 && static_cast<int>(t) < kDataTypeCount; }
bool is_known(Interleave v) { return static_cast<int>(v) >= 0 && static_cast<int>(v) < kInterleaveCount; }
bool is_known(Swizzle v) { return static_cast<int>(v) >= 0 && static_cast<int>(v) < kSwizzleCount; }
bool is_known(L2Promotion v) { return static_cast<int>(v) >= 0 && static_cast<int>(v) < kL2PromotionCount; }
bool is_known(OobFill v) { return static_cast<int>(v) >= 0 && static_cast<int>(v) < kOobFillCount; }

unsigned element_bits(DataType t) {
  return is_known(t) ? kTypes[static_cast<size_t>(t)].bits : 0;
}

std::uint64_t bytes_of(DataType t, std::uint64_t count) {
  return (count * element_bits(t) + 7) / 8;
}

bool is_floating(DataType t) { return is_known(t) && kTypes[static_cast<size_t>(t)].floating; }

bool is_packed(DataType t) {
  return t == DataType::u4x16_align8b || t == DataType::u4x16_align16b || t == DataType::u6x16_align16b;
}

bool is_packed_align16(DataType t) {
  return t == DataType::u4x16_align16b || t == DataType::u6x16_align16b;
}

std::string to_string(DataType t) {
  if (is_known(t)) return kTypes[static_cast<size_t>(t)].name;
  return "unknown(" + std::to_string(static_cast<int>(t)) + ")";
}
std::string to_string(Interleave v) { return name_of(v, kInterleaveNames); }
std::string to_string(Swizzle v) { return name_of(v, kSwizzleNames); }
std::string to_string(L2Promotion v) { return name_of(v, kL2Names); }
std::string to_string(OobFill v) { return name_of(v, kOobNames); }

std::string cuda_name(DataType t) {
  if (is_known(t)) return kTypes[static_cast<size_t>(t)].cuda;
  return "unknown(" + std::to_string(static_cast<int>(t)) + ")";
}

std::optional<DataType> parse_data_type(const std::string& text) {
  std::string t = lower(text);
  if (!t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // A CUtensorMapDataType code as printouts show it ("format 9").
    if (t.size() > 2) return std::nullopt;
    const int code = std::stoi(t);
    if (code < kDataTypeCount) return static_cast<DataType>(code);
    return std::nullopt;
  }
  for (int i = 0; i < kDataTypeCount; ++i) {
    const auto& info = kTypes[static_cast<size_t>(i)];
    const std::string cuda = lower(info.cuda);
    bool match = t == info.name || t == cuda || t == cuda.substr(kCudaPrefix.size());
    for (const char* alias : info.aliases) match = match || (alias && t == alias);
    if (match) return static_cast<DataType>(i);
  }
  return std::nullopt;
}

std::optional<Interleave> parse_interleave(const std::string& text) {
  return parse_named<Interleave>(text, kInterleaveNames);
}
std::optional<Swizzle> parse_swizzle(const std::string& text) {
  return parse_named<Swizzle>(text, kSwizzleNames);
}
std::optional<L2Promotion> parse_l2_promotion(const std::string& text) {
  return parse_named<L2Promotion>(text, kL2Names);
}
std::optional<OobFill> parse_oob_fill(const std::string& text) {
  return parse_named<OobFill>(text, kOobNames);
}

std::string data_type_names() {
  std::string s;
  for (const auto& t : kTypes) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

std::string data_type_help() {
  std::string s;
  for (size_t i = 0; i < kTypes.size(); ++i) {
    std::string also;
    for (const char* alias : kTypes[i].aliases)
      if (alias) also += std::string(", ") + alias;
    s += (s.empty() ? "" : "; ") + std::string(kTypes[i].name) + " (" + std::to_string(i) + also + ")";
  }
  return s;
}

std::string summary(const Descriptor& d) {
  return to_string(d.data_type) + " rank " + std::to_string(d.rank) + " dims " + join(d.dims) +
         " strides " + join(d.strides) + " box " + join(d.box) + " elementStrides " +
         join(d.element_strides) + " interleave " + to_string(d.interleave) + " swizzle " +
         to_string(d.swizzle) + " l2 " + to_string(d.l2_promotion) + " oob " + to_string(d.oob_fill);
}

}  // namespace cudadiag::tma
