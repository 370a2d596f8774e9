#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

#include "util/errors.h"
#include "util/safe_path.h"
#include "util/unique_fd.h"

namespace cudadiag {
namespace {

// A file written by cudadiag is never more open than this.
constexpr mode_t kWidestMode = 0644;

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

// The descriptor number an fd alias names: /dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N, /proc/thread-self/fd/N, /proc/<this pid>/fd/N. These are magic links
// into this process's own descriptors, which a walk by link text cannot follow.
std::optional<int> fd_alias(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  const std::string prefixes[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/",
                                  "/proc/" + std::to_string(::getpid()) + "/fd/"};
  for (const auto& prefix : prefixes) {
    if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) continue;
    const char* first = path.data() + prefix.size();
    const char* last = path.data() + path.size();
    int fd = -1;
    const auto [end, ec] = std::from_chars(first, last, fd);
    if (ec == std::errc() && end == last && fd >= 0) return fd;
  }
  return std::nullopt;
}

void write_descriptor(const std::string& path, int fd, std::string_view content) {
  if (fd == STDOUT_FILENO) std::fflush(stdout);
  if (::fcntl(fd, F_GETFD) < 0) fail(path, errno);
  if (const int err = write_all(fd, content)) fail(path, err);
}

// n letters and digits from the kernel's random source: a name nobody can guess ahead.
std::string random_name(size_t n) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[32];
  n = std::min(n, sizeof bytes);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::getrandom(bytes + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  if (got < n) {  // no getrandom (an old kernel): the C++ library's device
    std::random_device rd;
    for (size_t i = got; i < n; ++i) bytes[i] = static_cast<unsigned char>(rd());
  }
  std::string out;
  for (size_t i = 0; i < n; ++i) out += kAlphabet[bytes[i] % (sizeof kAlphabet - 1)];
  return out;
}

// A new file in `dir` named prefix + random + suffix, created O_EXCL|O_NOFOLLOW with
// mode 0600; returns the descriptor (name set) or -1 with errno.
int create_private(int dir, const std::string& prefix, const std::string& suffix, std::string& name) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = prefix + random_name(12) + suffix;
    const int fd = ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

mode_t umask_now() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

// The temporary file's name in the target's directory: hidden, naming the target where
// the name leaves room (NAME_MAX), then unpredictable.
std::string temp_prefix(const std::string& name) {
  constexpr size_t kRoom = 255 - 1 - 5 - 12;  // ".", ".tmp.", the random part
  std::string prefix(1, '.');
  prefix.append(name, 0, kRoom);
  return prefix.append(".tmp.");
}

void replace_file(const std::string& path, const ResolvedPath& r, std::string_view content) {
  const mode_t mode = r.exists ? (r.entry.st_mode & kWidestMode) : (kWidestMode & ~umask_now());
  const int dir = r.dir.get();
  std::string tmp;
  UniqueFd fd(create_private(dir, temp_prefix(r.name), "", tmp));
  if (!fd.valid()) fail(path, errno);
  int err = write_all(fd.get(), content);
  // The mode is set once the content is in: until then only the writer can open it.
  if (err == 0 && ::fchmod(fd.get(), mode) != 0) err = errno;
  if (err == 0 && ::fsync(fd.get()) != 0) err = errno;
  if (fd.close() != 0 && err == 0) err = errno;
  // renameat never follows a link at the destination: whatever appeared at the name
  // since it was checked is replaced, not written through.
  if (err == 0 && ::renameat(dir, tmp.c_str(), dir, r.name.c_str()) != 0) err = errno;
  if (err) {
    ::unlinkat(dir, tmp.c_str(), 0);
    fail(path, err);
  }
  // The rename itself made durable, where the directory can be opened for that.
  UniqueFd sync_dir(::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (sync_dir.valid()) (void)::fsync(sync_dir.get());
}

void write_device(const std::string& path, const ResolvedPath& r, std::string_view content) {
  UniqueFd fd(::openat(r.dir.get(), r.name.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) fail(path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail(path, errno);
  if (!S_ISCHR(st.st_mode) || st.st_rdev != r.entry.st_rdev || st.st_ino != r.entry.st_ino)
    throw UsageError("cannot write " + path + ": it changed while being opened");
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) (void)::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  int err = write_all(fd.get(), content);
  if (fd.close() != 0 && err == 0) err = errno;
  if (err) fail(path, err);
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view content) {
  const ResolvedPath r = resolve_path(path);
  switch (check_writable(path, r)) {
    case WriteKind::create:
    case WriteKind::replace:
      return replace_file(path, r, content);
    case WriteKind::write_device:
      return write_device(path, r, content);
  }
}

void write_output(const std::string& path, std::string_view content) {
  if (path.empty() || path == "-") return write_stdout(content);
  if (const auto fd = fd_alias(path)) return write_descriptor(path, *fd, content);
  write_file_atomically(path, content);
}

void check_output_path(const std::string& path) {
  if (path.empty() || path == "-" || fd_alias(path)) return;
  const ResolvedPath r = resolve_path(path);
  switch (check_writable(path, r)) {
    case WriteKind::create:
    case WriteKind::replace:
      // The new file is created in this directory, then renamed onto the name.
      if (::faccessat(r.dir.get(), ".", W_OK | X_OK, AT_EACCESS) != 0) fail(path, errno);
      return;
    case WriteKind::write_device:
      return;
  }
}

std::string keep_report(std::string_view content, std::string_view extension) {
  std::vector<std::string> dirs;
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) dirs.emplace_back(tmp);
  dirs.emplace_back("/tmp");
  dirs.emplace_back(".");
  std::string last_error = "no directory to keep it in";
  std::string suffix;
  if (!extension.empty()) suffix.append(1, '.').append(extension);
  for (const auto& d : dirs) {
    try {
      const UniqueFd dir = open_directory(d);
      std::string name;
      UniqueFd fd(create_private(dir.get(), "cudadiag-report-", suffix, name));
      if (!fd.valid()) fail(d, errno);
      int err = ::fchmod(fd.get(), 0600) != 0 ? errno : 0;
      if (err == 0) err = write_all(fd.get(), content);
      if (err == 0 && ::fsync(fd.get()) != 0) err = errno;
      if (fd.close() != 0 && err == 0) err = errno;
      if (err) {
        ::unlinkat(dir.get(), name.c_str(), 0);
        fail(d + "/" + name, err);
      }
      const std::string where = path_of(dir.get());
      return (where == "/" ? "" : where) + "/" + name;
    } catch (const UsageError& e) {
      last_error = e.what();
    }
  }
  throw UsageError(last_error);
}

void write_report(const std::string& path, std::string_view content, std::string_view extension) {
  try {
    write_output(path, content);
  } catch (const UsageError& e) {
    std::string kept;
    try {
      kept = keep_report(content, extension);
    } catch (const UsageError& k) {
      throw UsageError(std::string(e.what()) + "; the report could not be kept either (" + k.what() + ")");
    }
    throw UsageError(std::string(e.what()) + "; the report was kept in " + kept);
  }
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
