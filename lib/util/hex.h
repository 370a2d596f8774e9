#pragma once
// A number as cudadiag prints addresses and raw values: "0x" and lower-case hex digits.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

namespace cudadiag::util {

inline std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

}  // namespace cudadiag::util
