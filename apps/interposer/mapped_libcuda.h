#pragma once
// Whether the driver library is mapped into this process, read from /proc/self/maps with
// open, read and close into stack buffers: no loader lock, no allocation, so that it is
// safe where only async-signal-safe calls are (an exec after fork or vfork, when another
// thread of the parent may have held the loader's lock or the heap's at the fork).
#include <cstddef>

namespace cudadiag::interposer {

// The path of the first mapping whose file's name starts with "libcuda.so" (cut to
// `size` - 1 bytes) into `out`; false when there is none or the file cannot be read.
bool find_mapped_libcuda(char* out, std::size_t size) noexcept;

// The same test on one line of /proc/<pid>/maps: the path when it names libcuda.so*, else
// null. Pure, for the tests.
const char* libcuda_path_in_maps_line(const char* line, std::size_t length, std::size_t& path_length) noexcept;

}  // namespace cudadiag::interposer
