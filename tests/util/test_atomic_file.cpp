// write_file_atomically, write_output and read_file_or_stdin: whole replacement, no
// leftovers, what the path is kept (device, FIFO, symlink, mode), errors that name the path.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/temp_dir.h"
#include "util/atomic_file.h"
#include "util/errors.h"

namespace fs = std::filesystem;
using cudadiag::read_file_or_stdin;
using cudadiag::UsageError;
using cudadiag::write_file_atomically;
using cudadiag::write_output;

using cudadiag::test::TempDir;

namespace {

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

TEST_CASE("write_file_atomically keeps the permission bits of the file it replaces", "[atomic_file]") {
  TempDir dir;
  const auto target = dir.path / "secret.json";
  write_file_atomically(target.string(), "old");
  REQUIRE(::chmod(target.c_str(), 0600) == 0);
  write_file_atomically(target.string(), "new");
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(slurp(target) == "new");
  REQUIRE(::chmod(target.c_str(), 0640) == 0);
  write_file_atomically(target.string(), "newer");
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
}

TEST_CASE("write_file_atomically creates a new file with 0666 under the umask", "[atomic_file]") {
  TempDir dir;
  const mode_t old = ::umask(027);
  write_file_atomically((dir.path / "new.json").string(), "x");
  ::umask(old);
  struct stat st {};
  REQUIRE(::stat((dir.path / "new.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
}

TEST_CASE("write_file_atomically through a symlink replaces the target, keeping the link", "[atomic_file]") {
  TempDir dir;
  fs::create_directory(dir.path / "real");
  const auto target = dir.path / "real" / "report.json";
  write_file_atomically(target.string(), "old");
  REQUIRE(::chmod(target.c_str(), 0600) == 0);
  fs::create_symlink("real/report.json", dir.path / "link.json");
  fs::create_symlink(dir.path / "link.json", dir.path / "link2.json");  // a chain, absolute
  write_file_atomically((dir.path / "link2.json").string(), "new");
  CHECK(fs::is_symlink(dir.path / "link.json"));
  CHECK(fs::is_symlink(dir.path / "link2.json"));
  CHECK(slurp(target) == "new");
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(dir.entries() == std::vector<std::string>{"link.json", "link2.json", "real"});
  // A dangling link: the file it names is created.
  fs::create_symlink("made.json", dir.path / "dangling.json");
  write_file_atomically((dir.path / "dangling.json").string(), "made");
  CHECK(fs::is_symlink(dir.path / "dangling.json"));
  CHECK(slurp(dir.path / "made.json") == "made");
  // A loop is an error naming the path.
  fs::create_symlink("loop-b", dir.path / "loop-a");
  fs::create_symlink("loop-a", dir.path / "loop-b");
  CHECK_THROWS_WITH(write_file_atomically((dir.path / "loop-a").string(), "x"),
                    Catch::Contains("loop-a") && Catch::Contains("symbolic links"));
}

TEST_CASE("write_file_atomically writes into devices and FIFOs instead of replacing them", "[atomic_file]") {
  write_file_atomically("/dev/null", "discarded");
  struct stat st {};
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // A full device is an error that names it and says why.
  if (fs::exists("/dev/full")) {
    CHECK_THROWS_AS(write_file_atomically("/dev/full", "x"), UsageError);
    CHECK_THROWS_WITH(write_file_atomically("/dev/full", "x"),
                      Catch::Contains("/dev/full") && Catch::Contains("No space left"));
    REQUIRE(::stat("/dev/full", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  }
  TempDir dir;
  const auto fifo = dir.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const pid_t reader = ::fork();
  if (reader == 0) {
    const int fd = ::open(fifo.c_str(), O_RDONLY);
    char buf[64] = {};
    const ssize_t n = fd < 0 ? -1 : ::read(fd, buf, sizeof buf - 1);
    ::_exit(n == 7 && std::string(buf) == "through" ? 0 : 1);
  }
  write_file_atomically(fifo.string(), "through");
  int status = 0;
  REQUIRE(::waitpid(reader, &status, 0) == reader);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CHECK(fs::is_fifo(fifo));
}

TEST_CASE("write_output: - and empty mean standard output, and a write error there is named", "[atomic_file]") {
  TempDir dir;
  const auto captured = dir.path / "stdout.txt";
  std::fflush(stdout);  // what the test runner wrote so far stays on the real stdout
  const int saved = ::dup(STDOUT_FILENO);
  const int fd = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  ::dup2(fd, STDOUT_FILENO);
  write_output("-", "one ");
  write_output("", "two");
  const int full = ::open("/dev/full", O_WRONLY);
  std::string error;
  if (full >= 0) {
    ::dup2(full, STDOUT_FILENO);
    try {
      write_output("-", "x");
    } catch (const UsageError& e) {
      error = e.what();
    }
    ::close(full);
  }
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(fd);
  CHECK(slurp(captured) == "one two");
  if (full >= 0) CHECK_THAT(error, Catch::Contains("standard output") && Catch::Contains("No space left"));
  CHECK_FALSE(fs::exists("-"));
}
