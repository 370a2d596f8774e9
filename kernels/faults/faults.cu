// Dispatch from a reproducer name to its host function.
#include <stdexcept>

#include "kernels/faults/faults.h"

namespace cudadiag::faults {
namespace {

using RunFn = FaultRun (*)(gpu::Session&, const FaultParams&);
struct Entry {
  const char* name;
  RunFn run;
};

// Catalog order.
constexpr Entry kEntries[] = {
    {"oob-write", run_oob_write},
    {"oob-read", run_oob_read},
    {"underrun-write", run_underrun_write},
    {"underrun-read", run_underrun_read},
    {"misaligned-vector-load", run_misaligned_vector_load},
    {"device-assert", run_device_assert},
    {"use-after-free", run_use_after_free},
    {"trap", run_trap},
    {"hang", run_hang},
    {"too-many-threads", run_too_many_threads},
    {"smem-over-limit", run_smem_over_limit},
    {"out-of-memory", run_out_of_memory},
    {"too-many-resources", run_too_many_resources},
    {"ok-control", run_ok_control},
};

}  // namespace

const std::vector<std::string>& reproducer_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& e : kEntries) v.emplace_back(e.name);
    return v;
  }();
  return names;
}

FaultRun run_fault(gpu::Session& s, const FaultParams& p) {
  for (const auto& e : kEntries)
    if (p.reproducer == e.name) return e.run(s, p);
  throw std::invalid_argument("unknown fault reproducer '" + p.reproducer + "'");
}

}  // namespace cudadiag::faults
