// write_file_atomically and read_file_or_stdin: whole replacement, no leftovers,
// errors that name the path.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/atomic_file.h"
#include "util/errors.h"

namespace fs = std::filesystem;
using cudadiag::read_file_or_stdin;
using cudadiag::UsageError;
using cudadiag::write_file_atomically;

namespace {

// A fresh empty directory under the system temp dir, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "cudadiag-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("write_file_atomically creates the file with the content", "[atomic_file]") {
  TempDir dir;
  const auto target = dir.path / "report.json";
  write_file_atomically(target.string(), "{\"a\": 1}\n");
  CHECK(slurp(target) == "{\"a\": 1}\n");
  CHECK(dir.entries() == std::vector<std::string>{"report.json"});
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
}

TEST_CASE("write_file_atomically replaces the whole content, leaving no temp file", "[atomic_file]") {
  TempDir dir;
  const auto target = dir.path / "out.txt";
  write_file_atomically(target.string(), std::string(10000, 'x'));
  write_file_atomically(target.string(), "short");
  CHECK(slurp(target) == "short");
  write_file_atomically(target.string(), "");
  CHECK(slurp(target).empty());
  CHECK(dir.entries() == std::vector<std::string>{"out.txt"});
}

TEST_CASE("write_file_atomically keeps binary content byte for byte", "[atomic_file]") {
  TempDir dir;
  const auto target = dir.path / "bin";
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  write_file_atomically(target.string(), bytes);
  CHECK(slurp(target) == bytes);
}

TEST_CASE("write_file_atomically into a missing directory names the path", "[atomic_file]") {
  TempDir dir;
  const auto target = dir.path / "no" / "such" / "dir" / "report.json";
  CHECK_THROWS_AS(write_file_atomically(target.string(), "x"), UsageError);
  CHECK_THROWS_WITH(write_file_atomically(target.string(), "x"), Catch::Contains(target.string()));
  CHECK(dir.entries().empty());
}

TEST_CASE("write_file_atomically onto a directory fails cleanly", "[atomic_file]") {
  TempDir dir;
  fs::create_directory(dir.path / "taken");
  fs::create_directory(dir.path / "taken" / "child");  // a non-empty directory cannot be renamed over
  const auto target = (dir.path / "taken").string();
  CHECK_THROWS_WITH(write_file_atomically(target, "x"), Catch::Contains(target));
  CHECK(dir.entries() == std::vector<std::string>{"taken"});
  CHECK(fs::is_directory(dir.path / "taken" / "child"));
}

TEST_CASE("write_file_atomically with a bare file name writes to the current directory", "[atomic_file]") {
  TempDir dir;
  const auto old = fs::current_path();
  fs::current_path(dir.path);
  write_file_atomically("plain.txt", "here");
  fs::current_path(old);
  CHECK(slurp(dir.path / "plain.txt") == "here");
  CHECK(dir.entries() == std::vector<std::string>{"plain.txt"});
}

TEST_CASE("read_file_or_stdin reads a whole file", "[atomic_file]") {
  TempDir dir;
  const auto target = dir.path / "in.json";
  write_file_atomically(target.string(), "line 1\nline 2\n");
  CHECK(read_file_or_stdin(target.string()) == "line 1\nline 2\n");
}

TEST_CASE("read_file_or_stdin on a missing file or a directory names the path", "[atomic_file]") {
  TempDir dir;
  const auto missing = (dir.path / "missing.json").string();
  CHECK_THROWS_AS(read_file_or_stdin(missing), UsageError);
  CHECK_THROWS_WITH(read_file_or_stdin(missing), Catch::Contains(missing) && Catch::Contains("cannot open"));
  CHECK_THROWS_WITH(read_file_or_stdin(dir.path.string()), Catch::Contains("is a directory"));
}
