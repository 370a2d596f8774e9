// The rules of util/safe_path.h through write_file_atomically: in a shared (sticky,
// world-writable) directory another user's link, file or FIFO is refused the way the
// kernel's protected_symlinks / protected_regular / protected_fifos would, whatever the
// sysctls say; links are followed only when they belong to the writer or to the owner
// of their directory; a replaced file becomes the writer's. Planting a file that belongs
// to another user needs root (chown); without it these cases print SKIPPED.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <grp.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/file_bytes.h"
#include "tests/support/temp_dir.h"
#include "util/atomic_file.h"
#include "util/errors.h"
#include "util/safe_path.h"

namespace fs = std::filesystem;
using cudadiag::UsageError;
using cudadiag::write_file_atomically;
using cudadiag::test::TempDir;
using cudadiag::test::slurp;
using cudadiag::test::spit;

namespace {

constexpr uid_t kNobody = 65534;

bool root_or_skip() {
  if (::geteuid() == 0) return true;
  std::printf("SKIPPED: planting another user's files needs root (chown)\n");
  return false;
}

// A sticky world-writable directory like /tmp, owned by root, inside a temp dir.
fs::path make_sticky(const TempDir& dir) {
  REQUIRE(::chmod(dir.path.c_str(), 0755) == 0);  // another user may reach it
  const auto shared = dir.path / "shared";
  fs::create_directory(shared);
  REQUIRE(::chmod(shared.c_str(), 01777) == 0);
  return shared;
}

// What write_file_atomically says, or "" when it wrote.
std::string write_error(const fs::path& target, const std::string& content = "report") {
  try {
    write_file_atomically(target.string(), content);
  } catch (const UsageError& e) {
    return e.what();
  }
  return {};
}

struct stat lstat_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st;
}

}  // namespace

TEST_CASE("safe_path: shared directories are world-writable ones and sticky group-writable ones", "[safe_path]") {
  struct stat st {};
  st.st_mode = S_IFDIR | 01777;
  CHECK(cudadiag::is_shared_directory(st));
  st.st_mode = S_IFDIR | 0777;
  CHECK(cudadiag::is_shared_directory(st));
  st.st_mode = S_IFDIR | 01770;
  CHECK(cudadiag::is_shared_directory(st));
  st.st_mode = S_IFDIR | 0775;  // a project folder of a group: the group's business
  CHECK_FALSE(cudadiag::is_shared_directory(st));
  st.st_mode = S_IFDIR | 0755;
  CHECK_FALSE(cudadiag::is_shared_directory(st));
}

TEST_CASE("safe_path: another user's symlink in a sticky directory is not followed", "[safe_path][root]") {
  if (!root_or_skip()) return;
  TempDir dir;
  const auto shared = make_sticky(dir);
  const auto victim = dir.path / "victim.conf";  // root's file outside
  spit(victim, "precious\n");
  REQUIRE(::chmod(victim.c_str(), 0600) == 0);
  const auto link = shared / "r.json";
  fs::create_symlink(victim, link);
  REQUIRE(::lchown(link.c_str(), kNobody, kNobody) == 0);

  const std::string error = write_error(link);
  CHECK_THAT(error, Catch::Contains("cannot write " + link.string()) && Catch::Contains("owned by uid 65534") &&
                        Catch::Contains("sticky directory " + shared.string()) &&
                        Catch::Contains("protected_symlinks"));
  CHECK(slurp(victim) == "precious\n");
  CHECK((lstat_of(victim).st_mode & 07777) == 0600);
  CHECK(fs::is_symlink(link));
  CHECK(std::distance(fs::directory_iterator(shared), fs::directory_iterator()) == 1);  // no temp file left

  // The same link as a directory on the way: refused too.
  const auto victim_dir = dir.path / "etc";
  fs::create_directory(victim_dir);
  const auto dir_link = shared / "d";
  fs::create_symlink(victim_dir, dir_link);
  REQUIRE(::lchown(dir_link.c_str(), kNobody, kNobody) == 0);
  CHECK_THAT(write_error(dir_link / "passwd"), Catch::Contains("protected_symlinks"));
  CHECK(fs::is_empty(victim_dir));
}

TEST_CASE("safe_path: a link in a sticky directory owned by the writer or the directory's owner is followed",
          "[safe_path][root]") {
  if (!root_or_skip()) return;
  TempDir dir;
  const auto shared = make_sticky(dir);
  fs::create_directory(dir.path / "out");
  fs::create_symlink(dir.path / "out" / "mine.json", shared / "mine.json");  // root's own link
  CHECK(write_error(shared / "mine.json").empty());
  CHECK(slurp(dir.path / "out" / "mine.json") == "report");
  CHECK(fs::is_symlink(shared / "mine.json"));
  // A link owned by the directory's owner, written by another user: allowed as well.
  // (Checked in a child that runs as that user.)
  const auto theirs = shared / "to-shared.json";
  fs::create_symlink("written.json", theirs);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kNobody, kNobody, kNobody) != 0 ||
        ::setresuid(kNobody, kNobody, kNobody) != 0)
      ::_exit(3);
    ::_exit(write_error(theirs).empty() ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CHECK(slurp(shared / "written.json") == "report");
  CHECK(lstat_of(shared / "written.json").st_uid == kNobody);
}

TEST_CASE("safe_path: another user's regular file in a sticky directory is refused and left as it was",
          "[safe_path][root]") {
  if (!root_or_skip()) return;
  TempDir dir;
  const auto shared = make_sticky(dir);
  const auto planted = shared / "r.json";
  spit(planted, "theirs");
  REQUIRE(::chown(planted.c_str(), kNobody, kNobody) == 0);
  REQUIRE(::chmod(planted.c_str(), 0666) == 0);

  CHECK_THAT(write_error(planted), Catch::Contains("owned by uid 65534 in sticky directory " + shared.string()) &&
                                       Catch::Contains("protected_regular"));
  const auto st = lstat_of(planted);
  CHECK(st.st_uid == kNobody);
  CHECK((st.st_mode & 07777) == 0666);
  CHECK(slurp(planted) == "theirs");
}

TEST_CASE("safe_path: another user's FIFO in a sticky directory is refused at once", "[safe_path][root]") {
  if (!root_or_skip()) return;
  TempDir dir;
  const auto shared = make_sticky(dir);
  const auto fifo = shared / "r.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
  REQUIRE(::chown(fifo.c_str(), kNobody, kNobody) == 0);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THAT(write_error(fifo), Catch::Contains("owned by uid 65534") && Catch::Contains("protected_fifos"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK(S_ISFIFO(lstat_of(fifo).st_mode));
}

TEST_CASE("safe_path: a file replaced outside shared directories becomes the writer's, mode within 0644",
          "[safe_path][root]") {
  if (!root_or_skip()) return;
  TempDir dir;  // root's own 0700 directory
  const auto target = dir.path / "r.json";
  spit(target, "theirs");
  REQUIRE(::chown(target.c_str(), kNobody, kNobody) == 0);
  REQUIRE(::chmod(target.c_str(), 0666) == 0);
  CHECK(write_error(target, "root's").empty());
  const auto st = lstat_of(target);
  CHECK(st.st_uid == 0);
  CHECK(st.st_gid == ::getegid());
  CHECK((st.st_mode & 07777) == 0644);
  CHECK(slurp(target) == "root's");
}

TEST_CASE("safe_path: a third user's link in a group-writable directory is not followed", "[safe_path][root]") {
  if (!root_or_skip()) return;
  TempDir dir;
  const auto group_dir = dir.path / "project";
  fs::create_directory(group_dir);
  REQUIRE(::chmod(group_dir.c_str(), 0775) == 0);
  REQUIRE(::chown(group_dir.c_str(), 1, 1) == 0);  // owned by uid 1, writable by its group
  const auto victim = dir.path / "victim";
  spit(victim, "precious");
  fs::create_symlink(victim, group_dir / "r.json");
  REQUIRE(::lchown((group_dir / "r.json").c_str(), kNobody, kNobody) == 0);
  CHECK_THAT(write_error(group_dir / "r.json"),
             Catch::Contains("owned by uid 65534, neither this user (uid 0) nor the owner of " + group_dir.string()));
  CHECK(slurp(victim) == "precious");
  // The directory owner's link there is followed.
  REQUIRE(::lchown((group_dir / "r.json").c_str(), 1, 1) == 0);
  CHECK(write_error(group_dir / "r.json", "followed").empty());
  CHECK(slurp(victim) == "followed");
}

TEST_CASE("safe_path: a device in a shared directory, a block device or a socket is refused", "[safe_path][root]") {
  if (!root_or_skip()) return;
  TempDir dir;
  const auto shared = make_sticky(dir);
  if (::mknod((shared / "null").c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) {
    std::printf("SKIPPED: mknod is not allowed here\n");
    return;
  }
  CHECK_THAT(write_error(shared / "null"), Catch::Contains("a device in the sticky directory"));
  REQUIRE(::mknod((dir.path / "loop").c_str(), S_IFBLK | 0600, ::makedev(7, 200)) == 0);
  CHECK_THAT(write_error(dir.path / "loop"), Catch::Contains("is a block device"));
  CHECK(S_ISBLK(lstat_of(dir.path / "loop").st_mode));
}
