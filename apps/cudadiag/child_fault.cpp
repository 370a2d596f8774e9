// Child side of the fault catalog: runs one reproducer `repeat` times, each in a fresh
// session with fresh inputs, and stops at the first CUDA error (most are sticky).
#include <map>
#include <memory>
#include <random>
#include <string>

#include "cases/catalog.h"
#include "child_cases.h"
#include "kernels/faults/faults.h"

namespace cudadiag::app::child {
namespace {

faults::FaultParams fault_params_of(const json& p) {
  faults::FaultParams fp;
  fp.reproducer = p.at("reproducer").get<std::string>();
  fp.elements = p.value("elements", fp.elements);
  fp.k = p.value("k", fp.k);
  fp.offset_bytes = p.value("offset_bytes", fp.offset_bytes);
  return fp;
}

std::unique_ptr<gpu::Session> open_session(const cases::CaseSpec& spec) {
  // Bisection: the fenced buffers are overrides, every other buffer is direct.
  const auto mode = spec.fence_buffers ? gpu::AllocatorMode::direct : allocator_of(spec);
  auto s = std::make_unique<gpu::Session>(mode);
  apply_fence_buffers(spec, *s);
  return s;
}

json repeats_json(int runs, const std::map<std::string, int>& histogram) {
  int failures = 0;
  for (const auto& [outcome, n] : histogram)
    if (outcome != "ok") failures += n;
  return json{{"runs", runs},
              {"failures", failures},
              {"failure_rate", runs ? static_cast<double>(failures) / runs : 0.0},
              {"histogram", histogram}};
}

}  // namespace

json run_fault_case(const cases::CaseSpec& spec) {
  const json params = cases::normalize_params("fault", spec.params);
  faults::FaultParams fp = fault_params_of(params);
  const int repeat = spec.repeat < 1 ? 1 : spec.repeat;
  std::random_device entropy;
  std::map<std::string, int> histogram;
  json line;
  int runs = 0;
  for (int r = 0; r < repeat; ++r) {
    ++runs;
    fp.seed = (static_cast<unsigned long long>(entropy()) << 32) ^ entropy();
    auto session = open_session(spec);
    try {
      const faults::FaultRun run = faults::run_fault(*session, fp);
      const std::string outcome = run.mismatches == 0 ? "ok" : "mismatch";
      ++histogram[outcome];
      // Keep the first mismatch's details (the interesting run), else the last run's.
      if (line.is_null() || (outcome == "mismatch" && line["outcome"] == "ok")) {
        json details{{"seed", fp.seed}, {"checked", run.checked}, {"mismatches", run.mismatches}};
        if (!run.first_bad.empty()) details["first_bad"] = run.first_bad;
        for (const auto& [key, value] : run.facts) details[key] = value;
        line = json{{"outcome", outcome},
                    {"details", details},
                    {"reason", run.first_bad},
                    {"launch_log", launch_log_json(*session)},
                    {"buffers", buffers_json(*session)}};
      }
    } catch (const gpu::CudaError& e) {
      ++histogram["cuda_error"];
      line = cuda_error_line(e.failure(), session.get());
      line["details"] = json{{"seed", fp.seed}, {"run", r}};
      break;  // the context may be unusable; the error is the finding
    }
  }
  line["repeats"] = repeats_json(runs, histogram);
  return line;
}

}  // namespace cudadiag::app::child
