#include "profiles/sanitizer_tool.h"

#include <cstdlib>

#include "util/executable_search.h"

namespace cudadiag::profiles {

std::vector<std::string> compute_sanitizer_candidates(const EnvLookup& getenv_fn) {
  const EnvLookup env = getenv_fn ? getenv_fn : [](const char* n) { return std::getenv(n); };
  const std::string exe = "compute-sanitizer";
  std::vector<std::string> out;
  auto add_root = [&](const std::string& root) {
    if (root.empty()) return;
    out.push_back(root + "/bin/" + exe);
    out.push_back(root + "/compute-sanitizer/" + exe);  // where the toolkit installs it
  };
  std::vector<std::string> path_dirs;
  if (const char* p = env("PATH")) path_dirs = split_search_path(p);
  for (const auto& d : path_dirs) out.push_back(d + "/" + exe);
  if (const char* h = env("CUDA_HOME")) add_root(h);
  if (const char* h = env("CUDA_PATH")) add_root(h);
  add_root("/usr/local/cuda");
  // Next to nvcc: <root>/bin/nvcc -> <root>/compute-sanitizer/compute-sanitizer.
  for (const auto& d : path_dirs) {
    out.push_back(d + "/../compute-sanitizer/" + exe);
  }
  return out;
}

SanitizerTool find_compute_sanitizer(const EnvLookup& getenv_fn, const ExecCheck& is_executable) {
  const ExecCheck check = is_executable ? is_executable : is_executable_file;
  const auto candidates = compute_sanitizer_candidates(getenv_fn);
  SanitizerTool t;
  for (const auto& c : candidates) {
    if (check(c)) {
      t.found = true;
      t.path = c;
      return t;
    }
  }
  t.reason = "compute-sanitizer not found (searched PATH, $CUDA_HOME, $CUDA_PATH, "
             "/usr/local/cuda and next to nvcc); install the CUDA toolkit's compute-sanitizer "
             "or put it on PATH";
  return t;
}

std::vector<std::string> sanitizer_argv(const std::string& tool_path, const std::string& xml_path,
                                        unsigned long long padding_bytes) {
  std::vector<std::string> argv{tool_path, "--tool", "memcheck"};
  if (padding_bytes > 0) {
    argv.push_back("--padding");
    argv.push_back(std::to_string(padding_bytes));
  }
  for (const char* a : {"--xml", "--save"}) argv.push_back(a);
  argv.push_back(xml_path);
  argv.push_back("--print-limit");
  argv.push_back("100");
  return argv;
}

}  // namespace cudadiag::profiles
