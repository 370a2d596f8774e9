#pragma once
// The cases fake_child ran ({"log": path} in a case's params): one line per case run,
// "<case_id> armed|unarmed", in a file of a fresh temp directory.
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace cudadiag::test {

struct FakeRunLog {
  TempDir dir;
  std::string path = (dir / "runs.log").string();
  // In the order they were written.
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
};

}  // namespace cudadiag::test
