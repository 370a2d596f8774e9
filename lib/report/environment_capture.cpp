// The allowlisted environment a report records.
#include "report/report.h"

namespace cudadiag::report {
bool is_allowlisted_env(const std::string& name) {
  static const char* prefixes[] = {"CUDA_", "PYTORCH_", "TORCH_", "NCCL_", "CUDADIAG_"};
  for (const char* p : prefixes) {
    if (name.rfind(p, 0) == 0) return true;
  }
  static const char* names[] = {"NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
                                "AOTI_RUNTIME_CHECK_INPUTS", "TORCHINDUCTOR_NAN_ASSERTS"};
  for (const char* n : names) {
    if (name == n) return true;
  }
  return false;
}

Environment capture_environment(char** envp) {
  Environment env;
  if (!envp) return env;
  std::map<std::string, std::string> sorted;
  for (char** e = envp; *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string name = kv.substr(0, eq);
    if (is_allowlisted_env(name)) sorted[name] = kv.substr(eq + 1);
  }
  for (auto& [k, v] : sorted) env.vars.push_back({k, v});
  return env;
}

}  // namespace cudadiag::report
