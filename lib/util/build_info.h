#pragma once
// Facts about this build, baked in at configure time (report.tool).
#include <string>
#include <vector>

namespace cudadiag {

struct BuildInfo {
  std::string version;
  std::string git_revision;
  std::string cuda_toolkit;                 // toolkit the binary was built with, e.g. "13.0.88"
  std::vector<std::string> architectures;   // e.g. {"sm_80", "sm_90", "compute_90"}
};

const BuildInfo& build_info();

}  // namespace cudadiag
