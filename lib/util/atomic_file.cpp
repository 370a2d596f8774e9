#include "util/atomic_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "util/errors.h"

namespace cudadiag {
namespace {

[[noreturn]] void fail(const std::string& path, int err) {
  throw UsageError("cannot write " + path + ": " + std::strerror(err));
}

// Writes everything or returns the errno of the failure (0 on success).
int write_all(int fd, std::string_view content) {
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return ENOSPC;  // a device that takes nothing more
    written += static_cast<size_t>(n);
  }
  return 0;
}

void write_stdout(std::string_view content) {
  std::fflush(stdout);  // whatever stdio still holds goes first
  if (const int err = write_all(STDOUT_FILENO, content))
    throw UsageError(std::string("cannot write to standard output: ") + std::strerror(err));
}

// The path a chain of symbolic links ends at (the path itself when it is no link). A
// dangling link yields the name it points to, which is then created.
std::string final_target(const std::string& path) {
  namespace fs = std::filesystem;
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current;
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlink(current.c_str(), target.data(), target.size());
    if (n < 0) fail(path, errno);
    target.resize(static_cast<size_t>(n));
    const fs::path link(current);
    current = fs::path(target).is_absolute() || !link.has_parent_path() ? target
                                                                         : (link.parent_path() / target).string();
  }
  fail(path, ELOOP);
}

void write_through(const std::string& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) fail(path, errno);
  const int err = write_all(fd, content);
  if (::close(fd) != 0 && err == 0) fail(path, errno);
  if (err) fail(path, err);
}

mode_t creation_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

void replace_file(const std::string& path, const std::string& shown, const struct stat* existing,
                  std::string_view content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail(shown, errno);
  int err = write_all(fd, content);
  if (err == 0) {
    if (existing) {
      // Keep the file what it was: its permission bits, and its owner where allowed
      // (root, or a group the user is in); a failed chown leaves the writer's.
      if (::fchown(fd, existing->st_uid, existing->st_gid) != 0) (void)::fchown(fd, existing->st_uid, static_cast<gid_t>(-1));
      if (::fchmod(fd, existing->st_mode & 07777) != 0) err = errno;
    } else if (::fchmod(fd, creation_mode()) != 0) {
      err = errno;
    }
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmpl.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    ::unlink(tmpl.c_str());
    fail(shown, err);
  }
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string target = final_target(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT) fail(path, errno);
    return replace_file(target, path, nullptr, content);
  }
  if (S_ISDIR(st.st_mode)) throw UsageError("cannot write " + path + ": is a directory");
  if (S_ISREG(st.st_mode)) return replace_file(target, path, &st, content);
  // A FIFO, a character or block device (or a socket, which open refuses): the user
  // means the thing itself, so write into it.
  write_through(target, content);
}

void write_output(const std::string& path, std::string_view content) {
  if (path.empty() || path == "-") return write_stdout(content);
  write_file_atomically(path, content);
}

std::string read_file_or_stdin(const std::string& path) {
  std::string text;
  read_file_or_stdin(path, text);
  return text;
}

void read_file_or_stdin(const std::string& path, std::string& text) {
  text.clear();
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw UsageError(path + ": is a directory, expected a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(path + ": cannot open: " + std::strerror(errno));
  }
  // One read of the known size; files whose size is not known in advance (/proc,
  // pipes) are read as a stream.
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > 0 && in) {
    text.resize(static_cast<std::size_t>(size));
    in.read(text.data(), size);
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (in.gcount() < size || in.peek() == std::ifstream::traits_type::eof()) return;
  }
  in.clear();
  std::ostringstream rest;  // unknown size, or the file grew meanwhile
  rest << in.rdbuf();
  text += rest.str();
}

}  // namespace cudadiag
