#pragma once
// The exception a lane, warp or SM reports in a GPU core dump (CUDBGException_t in
// NVIDIA's cudadebugger.h): code, the name cuda-gdb prints, a stable id for JSON, and
// whether it is a memory access (so the faulting instruction has an address to find).
#include <cstdint>
#include <string>
#include <string_view>

#include "report/fault_site.h"

namespace cudadiag::coredump {

struct ExceptionInfo {
  std::uint32_t code = 0;
  report::ExceptionKind kind = report::ExceptionKind::unknown;  // unknown for a code not in the table
  const char* name = "";  // "Warp Illegal Address", as cuda-gdb prints it
  bool memory_access = false;
  // "warp_illegal_address": the word of report::kExceptionKinds.
  std::string_view id() const { return choice_name(report::kExceptionKinds, kind); }
};

// Code 0 is "none"; a code outside the table gives id "unknown" and name "exception code N".
ExceptionInfo exception_info(std::uint32_t code);
std::string exception_name(std::uint32_t code);  // the name, with the number for unknown codes

inline constexpr std::uint32_t kExceptionNone = 0;
inline constexpr std::uint32_t kExceptionWarpAssert = 12;
inline constexpr std::uint32_t kExceptionUnknown = 0xffffffffu;

}  // namespace cudadiag::coredump
