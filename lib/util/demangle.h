#pragma once
// C++ symbol names as people read them (kernel names from the driver, sanitizer reports).
#include <string>

namespace cudadiag {

// The demangled name, or `mangled` itself when it is not a mangled C++ name.
std::string demangle(const std::string& mangled);

}  // namespace cudadiag
