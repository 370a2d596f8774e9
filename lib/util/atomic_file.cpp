#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "util/errors.h"

namespace cudadiag {

void write_file_atomically(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    throw UsageError("cannot write " + path + ": " + std::strerror(errno));
  }
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw UsageError("cannot write " + path + ": " + std::strerror(err));
    }
    written += static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw UsageError("cannot write " + path + ": " + std::strerror(err));
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
