// Finding nvdisasm: the toolkit's, or the nvidia-cuda-nvdisasm wheel inside a Python
// environment; when there is none, the reason says how to get it.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "../support/temp_dir.h"
#include "coredump/disassembler.h"

using namespace cudadiag::coredump;
namespace fs = std::filesystem;

namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [held](const char* name) -> const char* {
    const auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}

void make_executable(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "#!/bin/sh\nexit 0\n";
  ::chmod(p.c_str(), 0755);
}

}  // namespace

TEST_CASE("the wheel's nvdisasm is found beside a Python environment on PATH, and in a venv") {
  cudadiag::test::TempDir dir;
  const fs::path env = dir.path / "venv";
  const fs::path tool = env / "lib/python3.11/site-packages/nvidia/cu13/bin/nvdisasm";
  make_executable(tool);
  fs::create_directories(env / "bin");
  // The toolkit's own nvdisasm comes first where it is installed (a GPU machine): the wheel
  // is then found only where there is none, and is still among the candidates after it.
  const bool toolkit = ::access("/usr/local/cuda/bin/nvdisasm", X_OK) == 0;
  const auto found_for = [&](const std::map<std::string, std::string>& vars) {
    const auto candidates = nvdisasm_candidates(env_of(vars));
    const auto at = std::find_if(candidates.begin(), candidates.end(),
                                 [&](const std::string& c) { return fs::exists(c) && fs::equivalent(c, tool); });
    CHECK(at != candidates.end());
    const auto found = find_nvdisasm("", env_of(vars));
    if (toolkit) CHECK(found.path == "/usr/local/cuda/bin/nvdisasm");
    else CHECK(fs::equivalent(found.path, tool));
  };
  found_for({{"PATH", (env / "bin").string()}, {"HOME", "/nonexistent"}});
  found_for({{"VIRTUAL_ENV", env.string()}, {"HOME", "/nonexistent"}});
  auto found = find_nvdisasm("", env_of({{"PYENV_ROOT", dir.path.string() + "/pyenv"}, {"HOME", "/nonexistent"}}));
  if (found.path.empty() || found.path == "/usr/local/cuda/bin/nvdisasm") {
    const fs::path pyenv_tool = dir.path / "pyenv/versions/3.12.1/lib/python3.12/site-packages/nvidia/cu12/bin/nvdisasm";
    make_executable(pyenv_tool);
    found = find_nvdisasm("", env_of({{"PYENV_ROOT", dir.path.string() + "/pyenv"}, {"HOME", "/nonexistent"}}));
    if (found.path != "/usr/local/cuda/bin/nvdisasm") CHECK(fs::equivalent(found.path, pyenv_tool));
  }
  // --nvdisasm wins, and a wrong one is named.
  CHECK(find_nvdisasm(tool.string()).path == tool.string());
  CHECK(find_nvdisasm((dir.path / "missing").string()).reason.find("not an executable file") != std::string::npos);
}

TEST_CASE("without nvdisasm the reason says how to get it") {
  const auto d = find_nvdisasm("", env_of({{"HOME", "/nonexistent"}}));
  if (!d.path.empty()) {
    std::printf("SKIPPED: this machine has %s, so the not-found reason cannot be produced\n", d.path.c_str());
    return;
  }
  CHECK(d.reason.find("pip install nvidia-cuda-nvdisasm") != std::string::npos);
  CHECK(d.reason.find("--nvdisasm PATH") != std::string::npos);
}

TEST_CASE("a disassembler that is no nvdisasm fails with its name, not a crash") {
  cudadiag::test::TempDir dir;
  const fs::path fake = dir.path / "nvdisasm";
  fs::create_directories(dir.path);
  std::ofstream(fake) << "#!/bin/sh\necho broken >&2\nexit 3\n";
  ::chmod(fake.c_str(), 0755);
  const std::string cubin = "not a cubin";
  const auto listing = disassemble_function(Disassembler{fake.string(), ""}, Bytes(cubin), FunctionSymbol{"k", 1, 0, 16});
  CHECK(listing.text.empty());
  CHECK(listing.error.find("failed (exit 3): broken") != std::string::npos);
}
