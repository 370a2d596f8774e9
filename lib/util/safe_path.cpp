#include "util/safe_path.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <string_view>

#include "util/errors.h"

namespace cudadiag {
namespace {

// As many links as the kernel follows in one lookup (MAXSYMLINKS).
constexpr int kMaxLinks = 40;

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw UsageError("cannot write " + path + ": " + why);
}
[[noreturn]] void fail_errno(const std::string& path, int err) { fail(path, std::strerror(err)); }

// The components of `text`, in order; "." and empty ones dropped.
void push_components(std::string_view text, std::deque<std::string>& out) {
  std::deque<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t slash = text.find('/', start);
    const size_t end = slash == std::string_view::npos ? text.size() : slash;
    const std::string_view part = text.substr(start, end - start);
    if (!part.empty() && part != ".") parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  out.insert(out.begin(), parts.begin(), parts.end());
}

UniqueFd open_root(bool absolute, const std::string& path) {
  UniqueFd fd(::open(absolute ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) fail_errno(path, errno);
  return fd;
}

std::string entry_path(int dir, const std::string& name) {
  std::string d = path_of(dir);
  return d == "/" ? "/" + name : d + "/" + name;
}

const char* shared_kind(const struct stat& dir) {
  return (dir.st_mode & S_ISVTX) != 0 ? "sticky directory" : "world-writable directory";
}

// The rule for a link: its owner is the writer or the owner of its directory.
void check_link(const std::string& path, int dir, const struct stat& dir_st, const std::string& name,
                const struct stat& link) {
  const uid_t me = ::geteuid();
  if (link.st_uid == me || link.st_uid == dir_st.st_uid) return;
  const std::string where = path_of(dir);
  if (is_shared_directory(dir_st)) {
    fail(path, "the symbolic link " + entry_path(dir, name) + " is owned by uid " + std::to_string(link.st_uid) +
                   " in " + shared_kind(dir_st) + " " + where +
                   ": refusing to follow it, as the kernel's protected_symlinks rule would");
  }
  fail(path, "the symbolic link " + entry_path(dir, name) + " is owned by uid " + std::to_string(link.st_uid) +
                 ", neither this user (uid " + std::to_string(me) + ") nor the owner of " + where + " (uid " +
                 std::to_string(dir_st.st_uid) + "): refusing to follow it");
}

ResolvedPath walk(const std::string& path) {
  if (path.empty()) fail(path, "empty path");
  std::deque<std::string> todo;
  push_components(path, todo);
  ResolvedPath r;
  r.dir = open_root(path.front() == '/', path);
  if (::fstat(r.dir.get(), &r.dir_stat) != 0) fail_errno(path, errno);
  const bool names_directory = path.back() == '/';
  int links = 0;
  while (!todo.empty()) {
    const std::string name = std::move(todo.front());
    todo.pop_front();
    const bool last = todo.empty();
    struct stat st {};
    if (::fstatat(r.dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT && last && !names_directory && name != "..") {
        r.name = name;
        r.exists = false;
        return r;
      }
      fail_errno(path, errno);
    }
    if (S_ISLNK(st.st_mode)) {
      check_link(path, r.dir.get(), r.dir_stat, name, st);
      if (++links > kMaxLinks) fail_errno(path, ELOOP);
      char text[PATH_MAX];
      const ssize_t n = ::readlinkat(r.dir.get(), name.c_str(), text, sizeof text);
      if (n < 0) fail_errno(path, errno);
      if (n == 0 || static_cast<size_t>(n) >= sizeof text) fail_errno(path, n == 0 ? ENOENT : ENAMETOOLONG);
      const std::string_view target(text, static_cast<size_t>(n));
      push_components(target, todo);
      if (target.front() == '/') {
        r.dir = open_root(true, path);
        if (::fstat(r.dir.get(), &r.dir_stat) != 0) fail_errno(path, errno);
      }
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      // O_NOFOLLOW|O_DIRECTORY: had the name become a link since fstatat, this fails.
      UniqueFd next(::openat(r.dir.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!next.valid()) fail_errno(path, errno);
      if (::fstat(next.get(), &r.dir_stat) != 0) fail_errno(path, errno);
      r.dir = std::move(next);
      continue;
    }
    if (!last || names_directory) fail_errno(path, ENOTDIR);
    r.name = name;
    r.exists = true;
    r.entry = st;
    return r;
  }
  r.name.clear();  // the path names a directory
  return r;
}

}  // namespace

bool is_shared_directory(const struct stat& dir) {
  const mode_t m = dir.st_mode;
  return (m & S_IWOTH) != 0 || ((m & S_ISVTX) != 0 && (m & S_IWGRP) != 0);
}

std::string path_of(int fd) {
  char buf[PATH_MAX];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof buf) return "?";
  return std::string(buf, static_cast<size_t>(n));
}

ResolvedPath resolve_path(const std::string& path) { return walk(path); }

UniqueFd open_directory(const std::string& path, struct stat* dir_stat) {
  ResolvedPath r = walk(path);
  if (!r.name.empty()) fail_errno(path, r.exists ? ENOTDIR : ENOENT);
  if (dir_stat) *dir_stat = r.dir_stat;
  return std::move(r.dir);
}

WriteKind check_writable(const std::string& path, const ResolvedPath& r) {
  if (r.name.empty()) fail(path, "is a directory");
  if (!r.exists) return WriteKind::create;
  const struct stat& e = r.entry;
  const mode_t type = e.st_mode & S_IFMT;
  const uid_t me = ::geteuid();
  if (is_shared_directory(r.dir_stat)) {
    if (type == S_IFCHR || type == S_IFBLK)
      fail(path, "a device in the " + std::string(shared_kind(r.dir_stat)) + " " + path_of(r.dir.get()) +
                     ": refusing to write into it");
    if (e.st_uid != me && e.st_uid != r.dir_stat.st_uid) {
      const char* rule = type == S_IFIFO ? "protected_fifos" : "protected_regular";
      fail(path, "owned by uid " + std::to_string(e.st_uid) + " in " + shared_kind(r.dir_stat) + " " +
                     path_of(r.dir.get()) + ": refusing, as the kernel's " + rule + " rule would");
    }
  }
  switch (type) {
    case S_IFREG:
      return WriteKind::replace;
    case S_IFIFO:
      fail(path, "is a FIFO: a report is never written into one (use -o - and a pipe)");
    case S_IFSOCK:
      fail(path, "is a socket: refusing to write into it");
    case S_IFBLK:
      fail(path, "is a block device: refusing to write into it");
    case S_IFCHR:
      if (e.st_uid != 0 && e.st_uid != me)
        fail(path, "a device owned by uid " + std::to_string(e.st_uid) + ": refusing to write into it");
      return WriteKind::write_device;
    default:
      fail(path, "is not a regular file: refusing to write into it");
  }
}

}  // namespace cudadiag
