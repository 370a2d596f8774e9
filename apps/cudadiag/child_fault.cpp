// Child side of the fault catalog: prepares one reproducer, then runs it `repeat` times
// (fresh device-side inputs from each run's seed, the check on the device) and stops at
// the first CUDA error (most are sticky). The first run is also checked on the host.
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "cases/catalog.h"
#include "cases/run_seed.h"
#include "child_cases.h"
#include "kernels/faults/faults.h"
#include "kernels/runtime/repeat_runs.h"

namespace cudadiag::app::child {
namespace {

// Runs per wait once the series is under way (the first run is alone).
constexpr int kMaxBatch = 64;

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

json repeats_json(int runs, const std::map<std::string, int>& histogram, const gpu::RepeatResult& r) {
  int failures = 0;
  for (const auto& [outcome, n] : histogram)
    if (outcome != "ok") failures += n;
  return json{{"runs", runs},
              {"failures", failures},
              {"failure_rate", runs ? static_cast<double>(failures) / runs : 0.0},
              {"histogram", histogram},
              {"timing", {{"seconds", r.seconds},
                          {"host_check_seconds", r.on_run_seconds},
                          {"verified_runs_per_s", r.seconds > 0 ? r.runs / r.seconds : 0.0}}}};
}

json check_json(const faults::FaultCheck& c) {
  json j{{"checked", c.checked}, {"mismatches", c.mismatches}};
  if (!c.first_bad.empty()) j["first_bad"] = c.first_bad;
  return j;
}

}  // namespace

json run_fault_case(const cases::CaseSpec& spec) {
  const json params = cases::normalize_params("fault", spec.params);
  const faults::FaultParams fp = fault_params_of(params);
  std::optional<uint64_t> replay;
  if (params.contains("replay_seed")) replay = params["replay_seed"].get<uint64_t>();
  const int repeat = replay ? 1 : (spec.repeat < 1 ? 1 : spec.repeat);
  std::random_device entropy;
  const uint64_t base = params.contains("seed") ? params["seed"].get<uint64_t>()
                                                : (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
  auto session = open_session(spec);
  std::unique_ptr<faults::FaultRunner> runner;
  try {
    runner = std::make_unique<faults::FaultRunner>(*session, fp, kMaxBatch);
  } catch (const gpu::CudaError& e) {
    json line = cuda_error_line(e.failure(), session.get());
    line["details"] = json{{"seed", base}, {"run", 0}, {"phase", "prepare"}};
    line["repeats"] = json{{"runs", 1}, {"failures", 1}, {"failure_rate", 1.0}, {"histogram", {{"cuda_error", 1}}}};
    return line;
  }

  std::map<std::string, int> histogram;
  json details{{"seed", base}};
  if (replay) details["replay_seed"] = *replay;
  for (const auto& [key, value] : runner->facts()) details[key] = value;
  std::string reason;
  bool have_failure = false;
  const auto result = gpu::repeat_runs(
      repeat, kMaxBatch, base, replay, [&](const std::vector<uint64_t>& seeds) { return runner->run(seeds); },
      [&](int run, uint64_t seed, const gpu::RunCounters& counters) {
        const faults::FaultCheck device = runner->describe(counters, seed);
        bool failed = device.mismatches > 0;
        if (run == 0) {
          // The host's own check of the device check: same counts, same first element.
          const faults::FaultCheck host = runner->host_check(seed);
          const bool agree = host.checked == device.checked && host.mismatches == device.mismatches &&
                             host.first_bad == device.first_bad;
          details["host_check"] = check_json(host);
          details["host_check"]["agrees"] = agree;
          if (!agree) failed = true, reason = "the device check disagrees with the host check of run 0";
        }
        ++histogram[failed ? "mismatch" : "ok"];
        if (failed && !have_failure) {
          have_failure = true;
          details["first_failure"] = check_json(device);
          details["first_failure"]["run"] = run;
          details["first_failure"]["seed"] = seed;
          details["first_failure"]["replay"] = "--replay " + cases::format_seed(seed);
          if (reason.empty()) reason = device.first_bad;
        }
        if (!have_failure) {
          details["checked"] = device.checked;
          details["mismatches"] = device.mismatches;
        }
        return failed;
      });

  json line;
  if (result.error) {
    ++histogram["cuda_error"];
    line = cuda_error_line(*result.error, session.get());
    details["run"] = result.error_run;
    details["run_seed"] = result.error_seed;
    details["replay"] = "--replay " + cases::format_seed(result.error_seed);
  } else {
    line = json{{"outcome", have_failure ? "mismatch" : "ok"},
                {"launch_log", launch_log_json(*session)},
                {"buffers", buffers_json(*session)}};
    if (!reason.empty()) line["reason"] = reason;
  }
  line["details"] = details;
  line["repeats"] = repeats_json(result.runs, histogram, result);
  return line;
}

}  // namespace cudadiag::app::child
