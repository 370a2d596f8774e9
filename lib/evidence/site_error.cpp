#include "evidence/site_error.h"

namespace cudadiag::evidence {

const report::FaultSite* exception_site(const std::vector<report::FaultSite>& sites) {
  for (const auto& s : sites)
    if (s.unreadable.empty() && !s.exception.empty()) return &s;
  return nullptr;
}

const report::FaultSite* dumped_site(const std::vector<report::FaultSite>& sites) {
  if (const auto* s = exception_site(sites)) return s;
  for (const auto& s : sites)
    if (s.unreadable.empty() && !s.kernel.empty()) return &s;
  return nullptr;
}

taxonomy::ErrorClass site_error_class(const report::FaultSite& s) {
  using taxonomy::ErrorClass;
  using report::ExceptionKind;
  if (s.exception.empty()) return ErrorClass::launch_failure;
  switch (s.exception_id) {
    case ExceptionKind::warp_misaligned_address:
    case ExceptionKind::lane_misaligned_address: return ErrorClass::misaligned;
    case ExceptionKind::warp_assert: return ErrorClass::device_assert;
    case ExceptionKind::warp_illegal_instruction:
    case ExceptionKind::warp_invalid_pc: return ErrorClass::illegal_instruction;
    case ExceptionKind::warp_illegal_address:
    case ExceptionKind::lane_illegal_address:
    case ExceptionKind::device_illegal_address:
    case ExceptionKind::warp_out_of_range_address:
    case ExceptionKind::cluster_out_of_range_address:
    case ExceptionKind::warp_invalid_address_space: return ErrorClass::memory_fault;
    default: return ErrorClass::unknown;
  }
}

const taxonomy::ErrorEntry* site_runtime_error(const report::FaultSite& s) {
  switch (site_error_class(s)) {
    case taxonomy::ErrorClass::misaligned: return taxonomy::find_by_name("cudaErrorMisalignedAddress");
    case taxonomy::ErrorClass::device_assert: return taxonomy::find_by_name("cudaErrorAssert");
    case taxonomy::ErrorClass::memory_fault: return taxonomy::find_by_name("cudaErrorIllegalAddress");
    case taxonomy::ErrorClass::illegal_instruction: return taxonomy::find_by_name("cudaErrorIllegalInstruction");
    case taxonomy::ErrorClass::launch_failure: return taxonomy::find_by_name("cudaErrorLaunchFailure");
    default: return nullptr;
  }
}

report::ErrorInfo site_error_info(const report::FaultSite& s) {
  report::ErrorInfo e;
  e.error_class = site_error_class(s);
  e.sticky = true;
  e.surfaced_at = "coredump";
  if (const auto* t = site_runtime_error(s)) {
    e.code = t->code;
    e.name = std::string(t->name);
    e.source = taxonomy::ErrorSource::runtime;
  } else {
    e.name = s.exception;
  }
  e.message = (s.exception.empty() ? "GPU core dump written at an exception it does not name (a trap's): "
                                   : "GPU core dump: ") +
              report::site_line(s) + "; the driver then ended the process";
  return e;
}

}  // namespace cudadiag::evidence
