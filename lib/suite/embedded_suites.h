#pragma once
// The table generated at configure time from repro/*.json (embed_suites.cmake).
#include <utility>
#include <vector>

namespace cudadiag::suite {

// {name (file stem), JSON text}, sorted by name.
const std::vector<std::pair<const char*, const char*>>& embedded_suite_table();

}  // namespace cudadiag::suite
