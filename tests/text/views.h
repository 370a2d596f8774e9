#pragma once
// The commands whose text a person reads, each run through the real binary on saved
// fixtures (or on this machine, which may have no GPU: the no-GPU text is a view too).
#include <filesystem>
#include <string>
#include <vector>

#include "tests/hostile/run_binary.h"
#include "util/text_layout.h"

namespace cudadiag::test {

inline std::filesystem::path source_dir() { return CUDADIAG_SOURCE_DIR; }

// Every line wider than 80 display columns, with its width: "[93] text".
inline std::vector<std::string> wide_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(start, nl - start);
    const std::size_t w = text::display_width(line);
    if (w > text::kColumns) out.push_back("[" + std::to_string(w) + "] " + line);
    start = nl + 1;
  }
  return out;
}

// The subcommands a user sees in `cudadiag --help` (hidden ones are not listed there).
inline std::vector<std::string> listed_subcommands(const std::filesystem::path& dir) {
  const Run r = run_binary({"--help"}, dir);
  std::vector<std::string> out;
  const auto at = r.out.find("Subcommands:\n");
  if (at == std::string::npos) return out;
  std::size_t start = at + 13;
  while (start < r.out.size() && r.out[start] != '\n') {
    std::size_t nl = r.out.find('\n', start);
    if (nl == std::string::npos) nl = r.out.size();
    const std::string line = r.out.substr(start, nl - start);
    if (line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
      out.push_back(line.substr(2, line.find(' ', 2) - 2));
    start = nl + 1;
  }
  return out;
}

}  // namespace cudadiag::test
