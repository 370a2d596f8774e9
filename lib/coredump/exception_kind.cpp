#include "coredump/exception_kind.h"

#include <array>

namespace cudadiag::coredump {
namespace {

// CUDBGException_t, codes 0..22 (CUDA 13). Codes 11, 13, 15 and 16 are marked reserved
// since CUDA 13.1 and keep their older names here: older drivers still write them.
constexpr std::array<ExceptionInfo, 23> kTable{{
    {0, "none", "No Exception", false},
    {1, "lane_illegal_address", "Lane Illegal Address", true},
    {2, "lane_user_stack_overflow", "Lane User Stack Overflow", false},
    {3, "device_hardware_stack_overflow", "Device Hardware Stack Overflow", false},
    {4, "warp_illegal_instruction", "Warp Illegal Instruction", false},
    {5, "warp_out_of_range_address", "Warp Out-of-range Address", true},
    {6, "warp_misaligned_address", "Warp Misaligned Address", true},
    {7, "warp_invalid_address_space", "Warp Invalid Address Space", true},
    {8, "warp_invalid_pc", "Warp Invalid PC", false},
    {9, "warp_hardware_stack_overflow", "Warp Hardware Stack Overflow", false},
    {10, "device_illegal_address", "Device Illegal Address", true},
    {11, "lane_misaligned_address", "Lane Misaligned Address", true},
    {12, "warp_assert", "Warp Assert", false},
    {13, "lane_syscall_error", "Lane Syscall Error", false},
    {14, "warp_illegal_address", "Warp Illegal Address", true},
    {15, "lane_nonmigratable_atomsys", "Lane Nonmigratable Atomsys", true},
    {16, "lane_invalid_atomsys", "Lane Invalid Atomsys", true},
    {17, "cluster_out_of_range_address", "Cluster Out-of-range Address", true},
    {18, "cluster_block_not_present", "Cluster Block Not Present", false},
    {19, "warp_stack_canary", "Warp Stack Canary", false},
    {20, "warp_tmem_access_check", "Warp Tensor Memory Access Check", true},
    {21, "warp_tmem_leak", "Warp Tensor Memory Leak", false},
    {22, "warp_call_requires_newer_driver", "Warp Call Requires Newer Driver", false},
}};

}  // namespace

ExceptionInfo exception_info(std::uint32_t code) {
  if (code < kTable.size()) return kTable[code];
  return ExceptionInfo{code, "unknown", "", false};
}

std::string exception_name(std::uint32_t code) {
  const auto info = exception_info(code);
  if (info.name[0] != '\0') return info.name;
  return "exception code " + std::to_string(code);
}

}  // namespace cudadiag::coredump
