// Child side of index_select: runs one configuration `repeat` times, each in a fresh
// session with fresh random K and V, compares both outputs bit-exactly with the CPU
// reference, and stops at the first CUDA error.
#include <map>
#include <memory>
#include <random>
#include <string>

#include "cases/index_select_params.h"
#include "child_cases.h"
#include "kernels/index_select/index_select.h"

namespace cudadiag::app::child {
namespace {

index_select::GatherProblem problem_of(const cases::IndexSelectParams& p) {
  index_select::GatherProblem g;
  g.B = p.B;
  g.S = p.S;
  g.H = p.H;
  g.D = p.D;
  g.h0 = p.h0;
  g.h1 = p.h1;
  g.dtype = p.dtype == "fp32" ? index_select::Dtype::fp32
            : p.dtype == "bf16" ? index_select::Dtype::bf16
                                : index_select::Dtype::fp16;
  g.index64 = p.index_dtype == "int64";
  g.checked = p.bounds == "checked";
  const cases::GatherSource src = cases::gather_source(p);
  g.via_copy = src.from_copy;
  g.base_offset = src.base_offset;
  g.stride_b = src.stride_b;
  g.stride_s = src.stride_s;
  g.stride_h = src.stride_h;
  return g;
}

std::unique_ptr<gpu::Session> open_session(const cases::CaseSpec& spec) {
  const auto mode = spec.fence_buffers ? gpu::AllocatorMode::direct : allocator_of(spec);
  auto s = std::make_unique<gpu::Session>(mode);
  apply_fence_buffers(spec, *s);
  return s;
}

json setup_details(const cases::IndexSelectParams& p, const std::vector<long long>& idx, std::uint64_t seed) {
  const cases::ReadExtent r = cases::read_extent(p);
  const cases::GatherSource g = cases::gather_source(p);
  return json{{"seed", seed},
              {"positions", idx.size()},
              {"first_position", idx.front()},
              {"last_position", idx.back()},
              {"source_strides", {g.stride_b, g.stride_s, g.stride_h, 1}},
              {"source_offset", g.base_offset},
              {"read_extent", {{"buffer", r.buffer}, {"elements", r.elements}, {"lo", r.lo}, {"hi", r.hi}}}};
}

}  // namespace

json run_index_select_case(const cases::CaseSpec& spec) {
  const cases::IndexSelectParams p = cases::index_select_params_from_json(spec.params);
  const index_select::GatherProblem problem = problem_of(p);
  const std::vector<long long> idx = cases::gather_indices(p);
  const int repeat = spec.repeat < 1 ? 1 : spec.repeat;
  std::random_device entropy;
  std::map<std::string, int> histogram;
  int runs = 0;
  json line;
  for (int r = 0; r < repeat; ++r) {
    ++runs;
    const std::uint64_t seed = (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
    const auto k = cases::random_tensor(p, p.source_elements(), seed);
    const auto v = cases::random_tensor(p, p.source_elements(), seed ^ 0x9e3779b97f4a7c15ull);
    auto session = open_session(spec);
    try {
      std::vector<std::uint8_t> k_out, v_out;
      index_select::run_gather_pair(*session, problem, k, v, idx, k_out, v_out);
      const auto ck = cases::compare_gather(p, "k", k_out, cases::reference_gather(p, k, idx), idx);
      const auto cv = cases::compare_gather(p, "v", v_out, cases::reference_gather(p, v, idx), idx);
      const long long mismatches = ck.mismatches + cv.mismatches;
      const std::string outcome = mismatches == 0 ? "ok" : "mismatch";
      ++histogram[outcome];
      if (line.is_null() || (outcome == "mismatch" && line["outcome"] == "ok")) {
        json details = setup_details(p, idx, seed);
        details["compared"] = ck.compared + cv.compared;
        details["mismatches"] = mismatches;
        details["invalid_index_elements"] = ck.invalid_rows + cv.invalid_rows;
        if (!ck.first_bad.is_null()) details["first_bad"] = ck.first_bad;
        else if (!cv.first_bad.is_null()) details["first_bad"] = cv.first_bad;
        line = json{{"outcome", outcome},
                    {"details", details},
                    {"launch_log", launch_log_json(*session)},
                    {"buffers", buffers_json(*session)}};
        if (mismatches > 0)
          line["reason"] = std::to_string(mismatches) + " of " + std::to_string(ck.compared + cv.compared) +
                           " output elements differ from the CPU reference";
      }
    } catch (const gpu::CudaError& e) {
      ++histogram["cuda_error"];
      line = cuda_error_line(e.failure(), session.get());
      line["details"] = setup_details(p, idx, seed);
      break;
    }
  }
  int failures = 0;
  for (const auto& [outcome, n] : histogram)
    if (outcome != "ok") failures += n;
  line["repeats"] = json{{"runs", runs},
                         {"failures", failures},
                         {"failure_rate", runs ? static_cast<double>(failures) / runs : 0.0},
                         {"histogram", histogram}};
  return line;
}

}  // namespace cudadiag::app::child
