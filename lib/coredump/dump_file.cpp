#include "coredump/dump_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cudadiag::coredump {

DumpFile::DumpFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw UnreadableDump(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UnreadableDump("not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    throw UnreadableDump("empty file");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw UnreadableDump(std::string("cannot map it: ") + std::strerror(err));
  }
}

DumpFile::~DumpFile() {
  if (map_ != nullptr) ::munmap(map_, size_);
}

}  // namespace cudadiag::coredump
