// The one directory walker (scratch_dir's signal-time removal and runner's /proc walks).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "util/dir_entries.h"

namespace fs = std::filesystem;
using cudadiag::for_each_dir_entry;
using cudadiag::open_directory;
using cudadiag::test::TempDir;

namespace {

void touch(const fs::path& p) { std::ofstream(p) << "x"; }

// How many times each name was visited.
std::map<std::string, int> visits(const fs::path& dir) {
  std::map<std::string, int> seen;
  CHECK(for_each_dir_entry(dir.c_str(), [&](const char* name) { ++seen[name]; }));
  return seen;
}

}  // namespace

TEST_CASE("dir entries: every entry once, without . and ..", "[dir_entries]") {
  const TempDir d;
  touch(d.path / "a");
  touch(d.path / ".hidden");
  fs::create_directory(d.path / "sub");
  touch(d.path / "sub" / "inner");
  const auto seen = visits(d.path);
  CHECK(seen == std::map<std::string, int>{{".hidden", 1}, {"a", 1}, {"sub", 1}});
}

TEST_CASE("dir entries: an empty directory has none", "[dir_entries]") {
  const TempDir d;
  CHECK(visits(d.path).empty());
}

TEST_CASE("dir entries: a directory larger than one read is read whole", "[dir_entries]") {
  const TempDir d;
  // 400 entries of 60-byte names: about 32 KiB of records, several getdents64 reads.
  std::map<std::string, int> expected;
  for (int i = 0; i < 400; ++i) {
    std::string name = "entry-" + std::to_string(i);
    name.resize(60, 'x');
    touch(d.path / name);
    expected[name] = 1;
  }
  CHECK(visits(d.path) == expected);
}

TEST_CASE("dir entries: the callback may remove the entry it was given", "[dir_entries]") {
  const TempDir d;
  for (int i = 0; i < 300; ++i) {
    std::string name = std::to_string(i);
    name.append(40, 'y');
    touch(d.path / name);
  }
  const int dir = open_directory(AT_FDCWD, d.path.c_str());
  REQUIRE(dir >= 0);
  int removed = 0;
  CHECK(for_each_dir_entry(dir, [&](const char* name) {
    if (::unlinkat(dir, name, 0) == 0) ++removed;
  }));
  // The fd is the caller's: still open after the walk.
  CHECK(::fcntl(dir, F_GETFD) >= 0);
  ::close(dir);
  CHECK(removed == 300);
  CHECK(fs::is_empty(d.path));
}

TEST_CASE("dir entries: missing paths, files and links are not walked", "[dir_entries]") {
  const TempDir d;
  touch(d.path / "file");
  fs::create_directory(d.path / "real");
  touch(d.path / "real" / "secret");
  fs::create_directory_symlink(d.path / "real", d.path / "link");
  int calls = 0;
  const auto count = [&](const char*) { ++calls; };
  CHECK_FALSE(for_each_dir_entry((d.path / "missing").c_str(), count));
  CHECK_FALSE(for_each_dir_entry((d.path / "file").c_str(), count));
  CHECK_FALSE(for_each_dir_entry((d.path / "link").c_str(), count));  // never followed
  CHECK(calls == 0);
  CHECK(open_directory(AT_FDCWD, (d.path / "link").c_str()) == -1);
  const int at = open_directory(AT_FDCWD, d.path.c_str());
  REQUIRE(at >= 0);
  const int real = open_directory(at, "real");  // relative to a directory fd
  CHECK(real >= 0);
  CHECK(open_directory(at, "link") == -1);
  if (real >= 0) ::close(real);
  ::close(at);
}

namespace {
int g_handler_dir = -1;
volatile sig_atomic_t g_handler_entries = 0;
extern "C" void walk_in_handler(int) {
  for_each_dir_entry(g_handler_dir, [](const char*) { g_handler_entries = g_handler_entries + 1; });
}
}  // namespace

TEST_CASE("dir entries: walked from a signal handler, as scratch_dir's last stop does", "[dir_entries]") {
  const TempDir d;
  for (int i = 0; i < 5; ++i) touch(d.path / std::to_string(i));
  g_handler_dir = open_directory(AT_FDCWD, d.path.c_str());
  REQUIRE(g_handler_dir >= 0);
  struct sigaction sa {};
  sa.sa_handler = walk_in_handler;
  struct sigaction old {};
  REQUIRE(::sigaction(SIGUSR2, &sa, &old) == 0);
  ::raise(SIGUSR2);
  ::sigaction(SIGUSR2, &old, nullptr);
  ::close(g_handler_dir);
  CHECK(g_handler_entries == 5);
}
