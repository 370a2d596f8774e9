#pragma once
// Whole-file reads and writes for tests that plant or inspect files.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cudadiag::test {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace cudadiag::test
