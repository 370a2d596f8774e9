#pragma once
// A dump file mapped read-only: dumps run from kilobytes to gigabytes (with global memory),
// so they are mapped, never copied. Only a regular file is opened (a FIFO would block).
#include <cstddef>
#include <string>

#include "coredump/bytes.h"

namespace cudadiag::coredump {

class DumpFile {
 public:
  // Throws UnreadableDump naming the problem (missing, not a regular file, empty).
  explicit DumpFile(const std::string& path);
  ~DumpFile();
  DumpFile(const DumpFile&) = delete;
  DumpFile& operator=(const DumpFile&) = delete;
  Bytes bytes() const { return Bytes(static_cast<const std::uint8_t*>(map_), size_); }

 private:
  void* map_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cudadiag::coredump
