#include "coredump/exception_kind.h"

#include <array>

namespace cudadiag::coredump {
namespace {

// CUDBGException_t, codes 0..22 (CUDA 13); the ids are report::kExceptionKinds' words. Codes 11, 13, 15 and 16 are marked reserved
// since CUDA 13.1 and keep their older names here: older drivers still write them.
constexpr std::array<ExceptionInfo, 23> kTable{{
    {0, report::ExceptionKind::none, "No Exception", false},
    {1, report::ExceptionKind::lane_illegal_address, "Lane Illegal Address", true},
    {2, report::ExceptionKind::lane_user_stack_overflow, "Lane User Stack Overflow", false},
    {3, report::ExceptionKind::device_hardware_stack_overflow, "Device Hardware Stack Overflow", false},
    {4, report::ExceptionKind::warp_illegal_instruction, "Warp Illegal Instruction", false},
    {5, report::ExceptionKind::warp_out_of_range_address, "Warp Out-of-range Address", true},
    {6, report::ExceptionKind::warp_misaligned_address, "Warp Misaligned Address", true},
    {7, report::ExceptionKind::warp_invalid_address_space, "Warp Invalid Address Space", true},
    {8, report::ExceptionKind::warp_invalid_pc, "Warp Invalid PC", false},
    {9, report::ExceptionKind::warp_hardware_stack_overflow, "Warp Hardware Stack Overflow", false},
    {10, report::ExceptionKind::device_illegal_address, "Device Illegal Address", true},
    {11, report::ExceptionKind::lane_misaligned_address, "Lane Misaligned Address", true},
    {12, report::ExceptionKind::warp_assert, "Warp Assert", false},
    {13, report::ExceptionKind::lane_syscall_error, "Lane Syscall Error", false},
    {14, report::ExceptionKind::warp_illegal_address, "Warp Illegal Address", true},
    {15, report::ExceptionKind::lane_nonmigratable_atomsys, "Lane Nonmigratable Atomsys", true},
    {16, report::ExceptionKind::lane_invalid_atomsys, "Lane Invalid Atomsys", true},
    {17, report::ExceptionKind::cluster_out_of_range_address, "Cluster Out-of-range Address", true},
    {18, report::ExceptionKind::cluster_block_not_present, "Cluster Block Not Present", false},
    {19, report::ExceptionKind::warp_stack_canary, "Warp Stack Canary", false},
    {20, report::ExceptionKind::warp_tmem_access_check, "Warp Tensor Memory Access Check", true},
    {21, report::ExceptionKind::warp_tmem_leak, "Warp Tensor Memory Leak", false},
    {22, report::ExceptionKind::warp_call_requires_newer_driver, "Warp Call Requires Newer Driver", false},
}};

}  // namespace

ExceptionInfo exception_info(std::uint32_t code) {
  if (code < kTable.size()) return kTable[code];
  return ExceptionInfo{code, report::ExceptionKind::unknown, "", false};
}

std::string exception_name(std::uint32_t code) {
  const auto info = exception_info(code);
  if (info.name[0] != '\0') return info.name;
  return "exception code " + std::to_string(code);
}

}  // namespace cudadiag::coredump
