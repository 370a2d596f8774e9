#pragma once
// Logging on stderr through spdlog. fmt and spdlog are used from their headers only
// (no shared library at run time); their out-of-line parts are compiled once, in
// third_party_impl.cpp, so that other files include the light headers.
#include <spdlog/spdlog.h>

namespace cudadiag {

// Installs the stderr logger "cudadiag" as default; colour only when `color`.
void init_logging(bool color);

}  // namespace cudadiag
