#pragma once
// Parser for the descriptor block CuTe (and FlashInfer through it) prints when
// cuTensorMapEncodeTiled fails:
//
//   TMA Desc Addr:   0x7ffd054484c0
//   format         9
//   dim            3
//   gmem_address   0x7f4c49e08800
//   globalDim      (128,1,32,1,1)
//   globalStrides  (2,2,256,0,0)
//   boxDim         (64,128,1,1,1)
//   elementStrides (1,1,1,1,1)
//   interleave     0
//   swizzle        3
//   l2Promotion    2
//   oobFill        0
//   Error: Failed to initialize the TMA descriptor 1
//
// The printed globalStrides starts with the element stride in bytes, which the driver
// does not receive: the driver gets entries 1..dim-1. A log may hold several blocks
// with other lines around them (and a common prefix such as "[rank0]: " on each line).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tma/descriptor.h"

namespace cudadiag::tma {

struct PrintedDescriptor {
  int line = 0;                              // 1-based line of "TMA Desc Addr:"
  std::string desc_address;                  // host address of the CUtensorMap as printed
  Descriptor descriptor;                     // what the driver was given
  std::vector<std::uint64_t> printed_strides;  // globalStrides as printed (element stride first)
  std::optional<int> encode_result;          // N of "Error: Failed to initialize the TMA descriptor N"
  int error_line = 0;                        // line of that error, 0 when none
};

// Throws cudadiag::InputError(source, "line N", what was expected) on a malformed or
// truncated block. Text without any block yields an empty vector.
std::vector<PrintedDescriptor> parse_printout(std::string_view text, const std::string& source);

}  // namespace cudadiag::tma
