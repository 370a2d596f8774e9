#pragma once
// Write a file so that readers see either the old content or the whole new content:
// a temporary file in the same directory, fsync, then rename over the target.
#include <string>
#include <string_view>

namespace cudadiag {

// Throws UsageError naming the path when the directory is missing or not writable.
void write_file_atomically(const std::string& path, std::string_view content);

// Reads a whole file ("-" reads standard input). Throws UsageError naming the path.
std::string read_file_or_stdin(const std::string& path);
// The same into `text`, reusing its capacity (for reading many files in a row).
void read_file_or_stdin(const std::string& path, std::string& text);

}  // namespace cudadiag
