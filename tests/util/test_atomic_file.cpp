// write_file_atomically, write_output, write_report and read_file_or_stdin: whole
// replacement, no leftovers, the writer's file with a mode within 0644, devices written,
// FIFOs refused without waiting, a failed report kept, errors that name the path.
// The rules about other users' files are in test_safe_path.cpp.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "tests/support/file_bytes.h"
#include "tests/support/temp_dir.h"
#include "util/atomic_file.h"
#include "util/errors.h"

namespace fs = std::filesystem;
using cudadiag::read_file_or_stdin;
using cudadiag::UsageError;
using cudadiag::write_file_atomically;
using cudadiag::write_output;

using cudadiag::test::TempDir;
using cudadiag::test::slurp;
using cudadiag::test::spit;

namespace {

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

TEST_CASE("write_file_atomically keeps the permission bits of the file it replaces, within 0644", "[atomic_file]") {
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
  // Never wider than 0644: a file anyone could write, or a setuid one, loses that.
  for (const mode_t wide : {mode_t{0666}, mode_t{0777}, mode_t{04755}}) {
    REQUIRE(::chmod(target.c_str(), wide) == 0);
    write_file_atomically(target.string(), "narrowed");
    REQUIRE(::stat(target.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
  }
  CHECK(dir.entries() == std::vector<std::string>{"secret.json"});
}

TEST_CASE("write_file_atomically creates a new file with 0644 under the umask", "[atomic_file]") {
  TempDir dir;
  const mode_t old = ::umask(027);
  write_file_atomically((dir.path / "new.json").string(), "x");
  ::umask(0);  // no umask: still never group- or world-writable
  write_file_atomically((dir.path / "open.json").string(), "x");
  ::umask(old);
  struct stat st {};
  REQUIRE(::stat((dir.path / "new.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  REQUIRE(::stat((dir.path / "open.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
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

TEST_CASE("write_file_atomically writes into character devices, never replacing them", "[atomic_file]") {
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
}

TEST_CASE("write_file_atomically refuses a FIFO at once, reader or not, and leaves it", "[atomic_file]") {
  TempDir dir;
  const auto fifo = dir.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // No reader: an open for writing would wait forever; there is no open at all.
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(write_file_atomically(fifo.string(), "x"), Catch::Contains(fifo.string()) && Catch::Contains("FIFO"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  // A reader waiting on it reads nothing (end of file once the writer side is known closed).
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  CHECK_THROWS_AS(write_file_atomically(fifo.string(), "x"), UsageError);
  char buf[8];
  CHECK(::read(reader, buf, sizeof buf) <= 0);
  ::close(reader);
  CHECK(fs::is_fifo(fifo));
  CHECK(dir.entries() == std::vector<std::string>{"pipe"});
}

TEST_CASE("write_output writes /dev/fd/N and /proc/self/fd/N into that descriptor of this process", "[atomic_file]") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  write_output("/dev/fd/" + std::to_string(p[1]), "through ");
  write_output("/proc/self/fd/" + std::to_string(p[1]), "the fd");
  ::close(p[1]);
  char buf[64] = {};
  CHECK(::read(p[0], buf, sizeof buf - 1) == 14);
  CHECK(std::string(buf) == "through the fd");
  ::close(p[0]);
  // A descriptor that is not open is an error naming the path.
  CHECK_THROWS_WITH(write_output("/dev/fd/1000", "x"), Catch::Contains("/dev/fd/1000") && Catch::Contains("Bad file"));
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

namespace {

// Sets an environment variable for the scope.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

// The path after "the report was kept in " in a message.
std::string kept_path(const std::string& message) {
  const std::string marker = "the report was kept in ";
  const auto at = message.find(marker);
  return at == std::string::npos ? std::string() : message.substr(at + marker.size());
}

}  // namespace

TEST_CASE("keep_report writes a new private file in $TMPDIR", "[atomic_file]") {
  TempDir dir;
  ScopedEnv tmp("TMPDIR", dir.path.string());
  const mode_t old = ::umask(0);
  const std::string a = cudadiag::keep_report("{\"kept\": 1}\n", "json");
  const std::string b = cudadiag::keep_report("second", "md");
  ::umask(old);
  CHECK(fs::path(a).parent_path() == dir.path);
  CHECK_THAT(fs::path(a).filename().string(), Catch::StartsWith("cudadiag-report-") && Catch::EndsWith(".json"));
  CHECK_THAT(b, Catch::EndsWith(".md"));
  CHECK(a != b);
  CHECK(slurp(a) == "{\"kept\": 1}\n");
  CHECK(slurp(b) == "second");
  struct stat st {};
  REQUIRE(::lstat(a.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(st.st_uid == ::geteuid());
}

TEST_CASE("keep_report falls back to /tmp when $TMPDIR cannot be used", "[atomic_file]") {
  TempDir dir;
  ScopedEnv tmp("TMPDIR", (dir.path / "missing").string());
  const std::string kept = cudadiag::keep_report("x", "txt");
  CHECK(fs::path(kept).parent_path() == fs::path("/tmp"));
  CHECK(slurp(kept) == "x");
  fs::remove(kept);
}

TEST_CASE("write_report: a failed write is an error naming the path, and the report is kept", "[atomic_file]") {
  TempDir dir;
  ScopedEnv tmp("TMPDIR", dir.path.string());
  const std::string target = (dir.path / "no" / "such" / "report.json").string();
  std::string message;
  try {
    cudadiag::write_report(target, "the report", "json");
  } catch (const UsageError& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::StartsWith("cannot write " + target + ": No such file or directory; the report was kept in " +
                                        dir.path.string() + "/cudadiag-report-"));
  const std::string kept = kept_path(message);
  REQUIRE_FALSE(kept.empty());
  CHECK(slurp(kept) == "the report");
  // A path that works is written, and nothing is kept.
  cudadiag::write_report((dir.path / "ok.json").string(), "fine", "json");
  CHECK(slurp(dir.path / "ok.json") == "fine");
  CHECK(dir.entries().size() == 2);
}

TEST_CASE("write_report: a stdout whose reader has gone is a failed write, and the report is kept", "[atomic_file]") {
  TempDir dir;
  ScopedEnv tmp("TMPDIR", dir.path.string());
  const auto old_pipe = std::signal(SIGPIPE, SIG_IGN);  // as main() has it
  int p[2];
  REQUIRE(::pipe(p) == 0);
  ::close(p[0]);  // the reader went away
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  ::dup2(p[1], STDOUT_FILENO);
  ::close(p[1]);
  std::string message;
  try {
    cudadiag::write_report("-", "lost?", "txt");
  } catch (const UsageError& e) {
    message = e.what();
  }
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::signal(SIGPIPE, old_pipe);
  CHECK_THAT(message, Catch::StartsWith("cannot write to standard output: Broken pipe; the report was kept in "));
  CHECK(slurp(kept_path(message)) == "lost?");
}
