#include "report/redact.h"

#include <cstdio>

namespace cudadiag::report {

std::string redact_value(const std::string& value) {
  // FNV-1a 64: stable across hosts and runs.
  unsigned long long h = 1469598103934665603ULL;
  for (const unsigned char c : value) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "redacted:%08llx", h & 0xffffffffULL);
  return buf;
}

void redact(json& document) {
  if (document.contains("host") && document["host"].contains("hostname"))
    document["host"]["hostname"] = redact_value(document["host"]["hostname"].get<std::string>());
}

}  // namespace cudadiag::report
