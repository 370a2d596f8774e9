#include "host/driver_probe.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "host/cuda_driver.h"
#include "runner/case_protocol.h"
#include "runner/runner.h"
#include "util/exit_codes.h"
#include "util/fd_io.h"
#include "util/interrupt.h"

namespace cudadiag::host {
namespace {

using report::json;

json failed_probe_json(const std::string& why) {
  return json{{"available", false},
              {"library", cuda_driver::kLibrary},
              {"status", "probe_failed"},
              {"reason", "the CUDA driver probe child " + why},
              {"detail", ""},
              {"version", nullptr},
              {"devices", json::array()}};
}

}  // namespace

json run_driver_probe(const std::string& self_exe, const DeviceBinding& binding, std::chrono::milliseconds deadline) {
  runner::ChildSpec spec;
  spec.argv = {self_exe, kProbeDriverCommand};
  spec.env_set = binding_env(binding);
  spec.deadline = deadline;
  spec.result_fd_env = runner::kResultFdEnv;
  spec.label = "driver-probe";
  const auto out = runner::run_child(spec, &stop_flag(), kStopGrace);
  switch (out.ending) {
    case runner::Ending::result:
      break;
    case runner::Ending::spawn_failed:
      return failed_probe_json("could not be started: " + out.spawn_error);
    case runner::Ending::timeout:
      if (stop_requested()) return failed_probe_json("was stopped by the interrupt");
      return failed_probe_json("did not answer within " + std::to_string(deadline.count() / 1000) +
                          " s (cuInit hung: check nvidia-smi and the kernel log)");
    case runner::Ending::signal:
      return failed_probe_json("was killed by " + out.signal_name + " in cuInit (broken driver install?)");
    default:
      if (out.result.empty())
        return failed_probe_json("ended (" + std::string(runner::to_string(out.ending)) + ") without an answer");
      break;
  }
  try {
    json j = json::parse(out.result.substr(0, out.result.find('\n')));
    if (!j.is_object() || !j.contains("status") || !j.contains("devices") || !j["devices"].is_array())
      return failed_probe_json("wrote an answer without status and devices");
    return j;
  } catch (const json::exception& e) {
    return failed_probe_json(std::string("wrote malformed JSON: ") + e.what());
  }
}

int write_driver_probe_answer() {
  const char* fd_text = std::getenv(runner::kResultFdEnv);
  const int fd = fd_text ? std::atoi(fd_text) : STDOUT_FILENO;
  if (!write_all(fd, cuda_driver_snapshot().dump() + "\n")) {
    std::fprintf(stderr, "cudadiag driver probe: cannot write the result to fd %d\n", fd);
    return kExitInternal;
  }
  return kExitOk;
}

}  // namespace cudadiag::host
