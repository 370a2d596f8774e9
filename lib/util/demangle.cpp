#include "util/demangle.h"

#include <cxxabi.h>

#include <cstdlib>

namespace cudadiag {

std::string demangle(const std::string& mangled) {
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out) return mangled;
  std::string s(out);
  std::free(out);
  return s;
}

}  // namespace cudadiag
