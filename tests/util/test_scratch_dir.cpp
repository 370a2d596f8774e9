#include <catch2/catch.hpp>

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "util/errors.h"
#include "util/scratch_dir.h"

using cudadiag::ScratchDir;

TEST_CASE("scratch dir: private, named for its purpose, removed with its files", "[scratch_dir]") {
  std::filesystem::path kept;
  {
    const ScratchDir d("test");
    kept = d.path();
    CHECK(std::filesystem::is_directory(kept));
    CHECK(kept.filename().string().rfind("cudadiag-test-", 0) == 0);
    std::filesystem::create_directories(kept / "sub");
    std::ofstream(kept / "sub" / "ring") << "x";
    const ScratchDir other("test");
    CHECK(other.path() != d.path());
  }
  CHECK_FALSE(std::filesystem::exists(kept));
}

TEST_CASE("scratch dir: a TMPDIR that does not exist is an environment error", "[scratch_dir]") {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", "/nonexistent/cudadiag-tmp", 1);
  CHECK_THROWS_AS(ScratchDir("test"), cudadiag::EnvironmentError);
  if (old) ::setenv("TMPDIR", saved.c_str(), 1);
  else ::unsetenv("TMPDIR");
}

TEST_CASE("scratch dir: removed from a signal handler's path too (links not followed)", "[scratch_dir]") {
  namespace fs = std::filesystem;
  // A directory of someone else's (not a scratch directory) that a link points into.
  std::string outside = (fs::temp_directory_path() / "cudadiag-outside-XXXXXX").string();
  REQUIRE(::mkdtemp(outside.data()));
  std::ofstream(fs::path(outside) / "keep") << "x";
  std::string removed;
  {
    const ScratchDir d("test");
    removed = d.path();
    fs::create_directories(fs::path(removed) / "sub" / "deeper");
    std::ofstream(fs::path(removed) / "ring") << "x";
    std::ofstream(fs::path(removed) / "sub" / "deeper" / "xml") << "x";
    fs::create_directory_symlink(outside, fs::path(removed) / "link");
    cudadiag::remove_scratch_dirs_now();
    CHECK_FALSE(fs::exists(removed));
  }  // the destructor finds nothing left to remove
  CHECK(fs::exists(fs::path(outside) / "keep"));  // not through the link
  fs::remove_all(outside);
}
