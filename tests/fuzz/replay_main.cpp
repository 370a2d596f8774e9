// Replays files through a fuzz target's entry point: each argument is a file or a
// directory of files (README files and dotfiles skipped). Prints each file before it
// runs, so a crash names its input; exits 1 when an exception escapes the target.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_target.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path p(argv[i]);
    if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p)) {
        const auto name = e.path().filename().string();
        if (e.is_regular_file() && name[0] != '.' && name.rfind("README", 0) != 0) files.push_back(e.path());
      }
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input files\n");
    return 2;
  }
  for (const auto& f : files) {
    std::printf("replay %s\n", f.string().c_str());
    std::fflush(stdout);
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      std::printf("FAIL %s: exception escaped the target: %s\n", f.string().c_str(), e.what());
      return 1;
    }
  }
  std::printf("replayed %zu input(s)\n", files.size());
  return 0;
}
