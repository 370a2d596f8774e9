#include <cstdlib>
#include <stdexcept>

#include "child_cases.h"

namespace cudadiag::app::child {

json failure_json(const gpu::CudaFailure& f) {
  json j{{"code", f.code},
         {"name", f.name},
         {"source", f.driver ? "driver" : "runtime"},
         {"message", f.message},
         {"surfaced_at", f.surfaced_at},
         {"api_call", f.api_call}};
  if (!f.location.empty()) j["location"] = f.location;
  if (!f.last_kernel.empty()) j["last_kernel"] = f.last_kernel;
  return j;
}

json launch_log_json(const gpu::Session& s, size_t tail) {
  json out = json::array();
  const auto& launches = s.launches();
  const size_t first = launches.size() > tail ? launches.size() - tail : 0;
  for (size_t i = first; i < launches.size(); ++i) {
    const auto& l = launches[i];
    out.push_back(json{{"seq", l.seq},
                       {"kernel", l.kernel},
                       {"grid", {l.grid[0], l.grid[1], l.grid[2]}},
                       {"block", {l.block[0], l.block[1], l.block[2]}},
                       {"dynamic_smem", l.dynamic_smem},
                       {"buffers", l.buffers}});
  }
  return out;
}

json buffers_json(const gpu::Session& s) {
  json out = json::array();
  char range[64];
  for (const auto& b : s.buffers()) {
    std::snprintf(range, sizeof range, "0x%llx-0x%llx", b.address, b.address + b.bytes);
    out.push_back(json{{"name", b.name},
                       {"bytes", b.bytes},
                       {"range", range},
                       {"allocator", gpu::to_string(b.mode)},
                       {"freed", b.freed}});
  }
  return out;
}

json cuda_error_line(const gpu::CudaFailure& f, const gpu::Session* s) {
  json j{{"outcome", "cuda_error"}, {"error", failure_json(f)}};
  if (s) {
    j["launch_log"] = launch_log_json(*s);
    j["buffers"] = buffers_json(*s);
  }
  return j;
}

gpu::AllocatorMode allocator_of(const cases::CaseSpec& spec) {
  gpu::AllocatorMode mode;
  if (!gpu::parse_allocator(spec.allocator, mode))
    throw std::invalid_argument("unknown allocator '" + spec.allocator + "'");
  return mode;
}

void apply_fence_buffers(const cases::CaseSpec& spec, gpu::Session& s) {
  if (!spec.fence_buffers) return;
  // Bisection: the named buffers keep the case's allocator, every other one is direct.
  // Session::mode_for falls back to the default mode, so the default becomes direct
  // and the fenced buffers are overrides.
  for (const auto& name : *spec.fence_buffers) s.set_buffer_mode(name, allocator_of(spec));
}

}  // namespace cudadiag::app::child
