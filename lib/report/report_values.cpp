// The report's values at the JSON edge: semantic versions, devices, address ranges,
// and the one way JSON is dumped.
#include "report/report.h"

#include <cinttypes>
#include <cstdio>

namespace cudadiag::report {
namespace {

bool parse_number(const std::string& s, size_t& pos, int& out) {
  const size_t start = pos;
  long long v = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && pos - start < 9) v = v * 10 + (s[pos++] - '0');
  if (pos == start || (s[start] == '0' && pos - start > 1)) return false;
  out = static_cast<int>(v);
  return true;
}

}  // namespace

std::optional<SemVer> parse_semver(const std::string& text) {
  SemVer v;
  size_t pos = 0;
  if (!parse_number(text, pos, v.major) || pos >= text.size() || text[pos++] != '.') return std::nullopt;
  if (!parse_number(text, pos, v.minor) || pos >= text.size() || text[pos++] != '.') return std::nullopt;
  if (!parse_number(text, pos, v.patch)) return std::nullopt;
  if (pos < text.size() && text[pos] != '-' && text[pos] != '+') return std::nullopt;
  return v;
}

Device parse_device(const std::string& text) {
  if (text.empty()) return Device{};
  if (text == "host") return Device::host_only();
  return Device::gpu(text);
}

std::string to_string(const Device& d) {
  switch (d.kind) {
    case Device::Kind::unset: return "";
    case Device::Kind::host: return "host";
    case Device::Kind::gpu: return d.uuid;
  }
  return "";
}

std::optional<AddressRange> parse_address_range(std::string_view text) {
  auto hex = [](std::string_view t, std::uint64_t& out) {
    if (t.size() < 3 || t[0] != '0' || (t[1] != 'x' && t[1] != 'X') || t.size() > 18) return false;
    out = 0;
    for (const char c : t.substr(2)) {
      int d;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      else return false;
      out = out * 16 + static_cast<std::uint64_t>(d);
    }
    return true;
  };
  const auto dash = text.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  AddressRange r;
  if (!hex(text.substr(0, dash), r.begin) || !hex(text.substr(dash + 1), r.end)) return std::nullopt;
  return r;
}

std::string to_string(const AddressRange& r) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64 "-0x%" PRIx64, r.begin, r.end);
  return buf;
}

std::string dump_json(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace cudadiag::report
