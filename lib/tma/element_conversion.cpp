#include "tma/element_conversion.h"

namespace cudadiag::tma {
namespace {

constexpr std::uint32_t kSign = 0x80000000u;
constexpr std::uint32_t kExponent = 0x7f800000u;
constexpr std::uint32_t kTf32Dropped = 0x1fffu;  // the 13 mantissa bits tf32 does not keep
constexpr std::uint32_t kHalf = 0x1000u;         // half a tf32 ulp

bool is_subnormal(std::uint32_t bits) { return (bits & kExponent) == 0 && (bits & ~kSign) != 0; }

}  // namespace

std::string to_string(Tf32Rounding r) {
  switch (r) {
    case Tf32Rounding::truncate: return "truncate";
    case Tf32Rounding::nearest_even: return "nearest_even";
    case Tf32Rounding::nearest_away: return "nearest_away";
  }
  return "?";
}

std::optional<Tf32Rounding> parse_tf32_rounding(const std::string& text) {
  for (const auto r : {Tf32Rounding::truncate, Tf32Rounding::nearest_even, Tf32Rounding::nearest_away})
    if (text == to_string(r)) return r;
  return std::nullopt;
}

bool converts_on_load(DataType t) {
  return t == DataType::float32_ftz || t == DataType::tfloat32 || t == DataType::tfloat32_ftz;
}

bool is_fp32_nan(std::uint32_t bits) { return (bits & kExponent) == kExponent && (bits & 0x007fffffu) != 0; }

std::uint32_t to_tf32(std::uint32_t bits, Tf32Rounding r) {
  if ((bits & kExponent) == kExponent) return bits;  // infinity and NaN
  // Rounding on the bit pattern: a carry out of the mantissa steps the exponent, which
  // is exactly the next representable value (subnormal to normal, max to infinity).
  const std::uint32_t dropped = bits & kTf32Dropped;
  std::uint32_t kept = bits & ~kTf32Dropped;
  bool up = false;
  switch (r) {
    case Tf32Rounding::truncate: break;
    case Tf32Rounding::nearest_away: up = dropped >= kHalf; break;
    case Tf32Rounding::nearest_even:
      up = dropped > kHalf || (dropped == kHalf && (kept & (kTf32Dropped + 1)) != 0);
      break;
  }
  if (up) kept += kTf32Dropped + 1;
  return kept;
}

std::uint32_t loaded_bits(DataType t, std::uint32_t bits, const ConversionModel& m) {
  const bool ftz = t == DataType::float32_ftz || t == DataType::tfloat32_ftz;
  if (ftz && m.ftz_flushes_subnormals && is_subnormal(bits)) bits &= kSign;
  if (t == DataType::tfloat32 || t == DataType::tfloat32_ftz) bits = to_tf32(bits, m.tf32_rounding);
  return bits;
}

}  // namespace cudadiag::tma
