#pragma once
// What a TMA load does to an element on its way from global to shared memory. Most
// types arrive bit for bit; the tf32 types do not: global memory holds fp32, shared
// memory receives tf32 (the 13 low mantissa bits zero). The load check
// (load_reference.h) compares against this.
//
// How the hardware converts is not stated in the CUDA driver documentation. The PTX ISA
// (5.5.1 "Tensor Dimension, size and format") lists the tensor element types ".f16,
// .bf16, .tf32, .f32, .f64 (rounded to nearest even)"; the other candidates (truncation,
// the nearest-away rounding of cvt.rna.tf32.f32, and the _ftz types flushing subnormal
// inputs to zero, as their name suggests) are modelled too, and
// scripts/device/tma-tf32-probe.sh loads inputs that tell them apart. On an H100
// (driver 580.159.04) the one model that fits all 4096 probe elements of every type is
// the default below: tf32 and tf32_ftz round to nearest even, subnormals included, and
// nothing is flushed (fp32_ftz arrives bit for bit; flushing would miss 25 elements).
#include <cstdint>
#include <optional>
#include <string>

#include "tma/descriptor.h"

namespace cudadiag::tma {

enum class Tf32Rounding { truncate, nearest_even, nearest_away };
inline constexpr Tf32Rounding kTf32Rounding = Tf32Rounding::nearest_even;

struct ConversionModel {
  Tf32Rounding tf32_rounding = kTf32Rounding;
  bool ftz_flushes_subnormals = false;  // true: fp32_ftz and tf32_ftz turn a subnormal input into +-0
};

std::string to_string(Tf32Rounding r);
std::optional<Tf32Rounding> parse_tf32_rounding(const std::string& text);

// True for the types whose bits change on a load (fp32_ftz, tf32, tf32_ftz).
bool converts_on_load(DataType t);

// fp32 bits rounded to tf32 (NaN and infinity are returned unchanged; a finite value
// may round up to infinity).
std::uint32_t to_tf32(std::uint32_t fp32_bits, Tf32Rounding r);

// The bits an element of type `t` holds in shared memory, from its fp32 bits in global
// memory. Only meaningful when converts_on_load(t); NaN inputs stay NaN (the payload the
// hardware keeps is not modelled: compare NaN with NaN).
std::uint32_t loaded_bits(DataType t, std::uint32_t fp32_bits, const ConversionModel& m);

bool is_fp32_nan(std::uint32_t bits);

}  // namespace cudadiag::tma
