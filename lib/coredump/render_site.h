#pragma once
// A fault site as people read it: text (a terminal) or Markdown (an issue or a PR).
#include <string>
#include <vector>

#include "coredump/fault_site.h"

namespace cudadiag::coredump {

std::string render_site_text(const FaultSite& s);
std::string render_site_markdown(const FaultSite& s);

// "a 16-byte global read at 0x7f457be00004, aligned to 4 bytes": the access in a phrase,
// or why the address is not given.
std::string describe_access(const FaultSite& s);

}  // namespace cudadiag::coredump
