#pragma once
// Locating compute-sanitizer for the `sanitizer` profile, and the argv prefix a child
// runs under. Looked for on PATH, under $CUDA_HOME / $CUDA_PATH, /usr/local/cuda, and
// next to nvcc; when absent the profile's cases are skipped with the reason.
#include <functional>
#include <string>
#include <vector>

namespace cudadiag::profiles {

struct SanitizerTool {
  bool found = false;
  std::string path;    // absolute path of the executable when found
  std::string reason;  // why it was not found (the places searched)
};

// getenv is injectable for tests; is_executable defaults to access(X_OK) on a regular file.
using EnvLookup = std::function<const char*(const char*)>;
using ExecCheck = std::function<bool(const std::string&)>;
SanitizerTool find_compute_sanitizer(const EnvLookup& getenv_fn = nullptr,
                                     const ExecCheck& is_executable = nullptr);

// Candidate paths in search order (exposed for tests and for the skip reason).
std::vector<std::string> compute_sanitizer_candidates(const EnvLookup& getenv_fn);

// memcheck's --padding in every sanitizer run (repro's `sanitizer` profile and the
// sanitizer rung of `run`): bytes of unallocated memory after every allocation. Small
// cudaMallocs are packed back to back, and memcheck accepts an access that lands in any
// live allocation: without padding an overrun into the neighbour goes unreported.
inline constexpr unsigned long long kSanitizerPaddingBytes = 64 * 1024;

// argv prefix: memcheck, XML saved to xml_path, at most 100 records. The child's own exit
// code is kept (no --error-exitcode): the parent judges the result lines and the XML,
// not the sanitizer's exit status. padding_bytes > 0 adds `--padding N`: memcheck puts N
// unallocated bytes after every allocation, so an overrun of up to N bytes can no longer
// land in the next allocation (which memcheck would accept as a valid access).
std::vector<std::string> sanitizer_argv(const std::string& tool_path, const std::string& xml_path,
                                        unsigned long long padding_bytes = 0);

}  // namespace cudadiag::profiles
