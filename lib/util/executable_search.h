#pragma once
// Finding a toolkit program (compute-sanitizer, nvdisasm) the way a shell would: the
// directories of a PATH-style list, and whether a candidate can be run.
#include <string>
#include <vector>

namespace cudadiag {

// The non-empty directories of a colon-separated list such as $PATH, in order.
std::vector<std::string> split_search_path(const std::string& list);

// A regular file the caller may execute (access(X_OK)); false for directories.
bool is_executable_file(const std::string& path);

}  // namespace cudadiag
