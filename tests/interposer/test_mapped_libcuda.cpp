// Whether the driver library is mapped, read from /proc/self/maps without the loader
// (mapped_libcuda.h): the line test, and the whole read in this process.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstring>
#include <string>

#include "apps/interposer/mapped_libcuda.h"

using cudadiag::interposer::find_mapped_libcuda;
using cudadiag::interposer::libcuda_path_in_maps_line;

namespace {

std::string path_in(const std::string& line) {
  std::size_t n = 0;
  const char* p = libcuda_path_in_maps_line(line.data(), line.size(), n);
  return p ? std::string(p, n) : std::string("(none)");
}

}  // namespace

TEST_CASE("mapped libcuda: a maps line names the driver by its file's name", "[mapped_libcuda]") {
  CHECK(path_in("7f00-7f10 r-xp 00000000 08:01 1234    /usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05") ==
        "/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05");
  CHECK(path_in("7f00-7f10 r--p 00000000 08:01 1 /opt/my dir/libcuda.so.1") == "/opt/my dir/libcuda.so.1");
  CHECK(path_in("7f00-7f10 r-xp 00000000 08:01 1 /usr/lib/libcudart.so.12") == "(none)");
  CHECK(path_in("7f00-7f10 r-xp 00000000 08:01 1 /usr/lib/libcuda.so") == "/usr/lib/libcuda.so");
  CHECK(path_in("7f00-7f10 r-xp 00000000 08:01 1 /libcuda.so.1/libc.so.6") == "(none)");  // a folder of that name
  CHECK(path_in("7f00-7f10 rw-p 00000000 00:00 0 [heap]") == "(none)");
  CHECK(path_in("7f00-7f10 rw-p 00000000 00:00 0") == "(none)");
}

TEST_CASE("mapped libcuda: this process has none, and the path is cut to fit", "[mapped_libcuda]") {
  char out[64];
  std::memset(out, 'x', sizeof out);
  CHECK_FALSE(find_mapped_libcuda(out, sizeof out));
  CHECK(out[0] == 'x');  // left untouched
}
