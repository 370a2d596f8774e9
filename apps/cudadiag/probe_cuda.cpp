// The parent side of the CUDA probe: spawns the `__probe-cuda` child (child_probe.cpp)
// and reads its answer. Nothing here calls CUDA.
#include "probe_cuda.h"

#include <string>

#include "evidence/cuda_start.h"
#include "host/device_binding.h"
#include "report/report.h"
#include "runner/runner.h"
#include "util/interrupt.h"
#include "util/log.h"

namespace cudadiag::app {

using report::json;

host::ProbeSummary run_cuda_probe(const std::string& self_exe, std::chrono::milliseconds deadline,
                                  const std::map<std::string, std::string>& env_set) {
  runner::ChildSpec spec;
  spec.argv = {self_exe, kProbeCudaCommand};
  spec.env_set = env_set;
  spec.deadline = deadline;
  spec.result_fd_env = runner::kResultFdEnv;
  spec.label = "cuda-probe";
  // An interrupt ends the probe too: the command writes what it has at once.
  const auto out = runner::run_child(spec, &stop_flag(), kStopGrace);
  spdlog::debug("cuda probe: ending {} after {:.0f} ms", runner::to_string(out.ending), out.wall_ms);
  switch (out.ending) {
    case runner::Ending::result:
      break;
    case runner::Ending::spawn_failed:
      return host::probe_failed("could not be started: " + out.spawn_error);
    case runner::Ending::timeout:
      if (stop_requested()) return host::probe_failed("was stopped by the interrupt");
      return host::probe_failed("did not answer within " + std::to_string(deadline.count() / 1000) +
                                " s (CUDA initialisation hung: check nvidia-smi and the kernel log)");
    case runner::Ending::signal:
      return host::probe_failed("was killed by " + out.signal_name +
                                " during CUDA initialisation (broken driver install?)");
    default:
      if (out.result.empty())
        return host::probe_failed("ended (" + std::string(runner::to_string(out.ending)) +
                                  (out.exit_code ? ", exit " + std::to_string(*out.exit_code) : "") +
                                  ") without an answer; stderr: " + out.err.text().substr(0, 300));
      break;
  }
  const auto nl = out.result.find('\n');
  const auto line = out.result.substr(0, nl);
  try {
    return host::summarize_probe(json::parse(line));
  } catch (const json::exception& e) {
    return host::probe_failed(std::string("wrote malformed JSON: ") + e.what());
  }
}

host::ProbeSummary probe_cuda_on(const host::HostFacts& facts, const std::string& self_exe,
                                 std::chrono::milliseconds deadline) {
  if (std::string why = evidence::gpu_unavailable(facts); !why.empty()) {
    host::ProbeSummary s;
    // A driver that lists devices but is too old for the runtime is a CUDA error.
    s.status = facts.gpu_status == report::DriverStatus::ok ? report::DriverStatus::cuda_error : facts.gpu_status;
    s.reason = std::move(why);
    return s;
  }
  return run_cuda_probe(self_exe, deadline, host::binding_env(facts.binding));
}

}  // namespace cudadiag::app
