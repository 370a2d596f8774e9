#include "util/build_info.h"

#include <sstream>

#include "util/build_config.h"
#include "util/git_revision.h"

namespace cudadiag {
namespace {

// "80-real,90-real,90-virtual" -> sm_80, sm_90, compute_90
std::vector<std::string> parse_architectures(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto dash = item.find('-');
    const std::string number = item.substr(0, dash);
    const std::string kind = dash == std::string::npos ? "" : item.substr(dash + 1);
    if (kind == "virtual") {
      out.push_back("compute_" + number);
    } else if (kind == "real") {
      out.push_back("sm_" + number);
    } else {
      out.push_back("sm_" + number);
      out.push_back("compute_" + number);
    }
  }
  return out;
}

}  // namespace

const BuildInfo& build_info() {
  static const BuildInfo info{CUDADIAG_VERSION, CUDADIAG_GIT_REVISION, CUDADIAG_CUDA_TOOLKIT,
                              parse_architectures(CUDADIAG_CUDA_ARCHITECTURES)};
  return info;
}

}  // namespace cudadiag
