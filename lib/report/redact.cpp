// --redact: identifying values become stable hashes. Two passes over the document:
//  1. fields that identify by name (hostname, uuid, serial, PCI bus ids, results[].device)
//     are hashed, and their original values remembered;
//  2. every string (and object key) anywhere has GPU/MIG UUIDs, PCI ids and the
//     remembered values replaced by their hashes, so a hostname inside argv or a UUID
//     inside a stderr excerpt does not leak.
// UUIDs are hashed lower-cased and PCI ids as domain:bus:device, so the NVML form
// "00000000:3B:00.0", the CUDA form "0000:3b:00.0" and the Xid form "0000:3b:00" of
// one GPU get the same hash, and redacted reports of one host still pair up.
#include "report/redact.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>
#include <set>
#include <vector>

namespace cudadiag::report {
namespace {

constexpr const char* kPrefix = "redacted:";

const std::regex& uuid_pattern() {
  static const std::regex re(
      "(GPU-|MIG-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
  return re;
}

// domain:bus:device[.function]; the domain is 4 (CUDA, kernel log) or 8 (NVML) digits.
const std::regex& pci_pattern() {
  static const std::regex re("([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(\\.[0-7])?");
  return re;
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The canonical form of a PCI id match: 4-digit domain, lower case, no function.
std::string canonical_pci(const std::smatch& m) {
  std::string domain = lower(m[1].str());
  domain = domain.substr(domain.size() - 4);
  return domain + ":" + lower(m[2].str()) + ":" + lower(m[3].str());
}

bool is_identifying_key(const std::string& key) {
  static const std::set<std::string> keys = {"hostname", "uuid",   "serial",   "board_serial",
                                             "pci_bus_id", "bus_id", "busId", "pci_bus_id_legacy"};
  return keys.count(key) != 0;
}

class Redactor {
 public:
  // Pass 1: hash named fields and remember their values for pass 2.
  void redact_named_fields(json& doc) {
    walk_named(doc);
    if (doc.is_object() && doc.contains("results") && doc["results"].is_array()) {
      for (auto& res : doc["results"]) {
        if (!res.is_object() || !res.contains("device") || !res["device"].is_string()) continue;
        const std::string device = res["device"].get<std::string>();
        if (device.empty() || device == "host") continue;  // "host" identifies nothing
        res["device"] = hash_and_remember(device);
      }
    }
  }

  // Pass 2: scrub every string and key.
  void scrub_document(json& doc) {
    // Longest first, so that a hostname that contains another value is replaced whole.
    literals_by_length_.assign(literals_.begin(), literals_.end());
    std::sort(literals_by_length_.begin(), literals_by_length_.end(),
              [](const auto& a, const auto& b) { return a.size() > b.size(); });
    scrub(doc);
  }

 private:
  void scrub(json& v) {
    if (v.is_string()) {
      v = scrub_text(v.get<std::string>());
    } else if (v.is_array()) {
      for (auto& e : v) scrub(e);
    } else if (v.is_object()) {
      json out = json::object();
      for (auto& [key, member] : v.items()) {
        scrub(member);
        out[scrub_text(key)] = std::move(member);
      }
      v = std::move(out);
    }
  }

  void walk_named(json& v) {
    if (v.is_array()) {
      for (auto& e : v) walk_named(e);
      return;
    }
    if (!v.is_object()) return;
    for (auto& [key, member] : v.items()) {
      if (member.is_string() && is_identifying_key(key)) {
        member = hash_and_remember(member.get<std::string>());
      } else {
        walk_named(member);
      }
    }
  }

  std::string hash_and_remember(const std::string& value) {
    if (value.empty() || value.rfind(kPrefix, 0) == 0) return value;
    // Whole values that are UUIDs or PCI ids are hashed in their canonical form.
    std::string scrubbed = scrub_patterns(value);
    if (scrubbed != value && scrubbed.rfind(kPrefix, 0) == 0 && scrubbed.find(' ') == std::string::npos)
      return scrubbed;
    if (value.size() >= 4) literals_.insert(value);  // shorter ones would scrub ordinary words
    return redact_value(value);
  }

  std::string scrub_text(const std::string& text) {
    std::string s = scrub_patterns(text);
    for (const auto& value : literals_by_length_) {
      const std::string hash = redact_value(value);
      for (size_t pos = s.find(value); pos != std::string::npos; pos = s.find(value, pos + hash.size())) {
        s.replace(pos, value.size(), hash);
      }
    }
    return s;
  }

  static std::string scrub_patterns(const std::string& text) {
    std::string s = replace_all(text, uuid_pattern(), [](const std::smatch& m, const std::string&) {
      return redact_value(lower(m.str()));
    });
    return replace_all(s, pci_pattern(), [](const std::smatch& m, const std::string& whole) -> std::string {
      // Only a whole token: not glued to more hex digits or colons on either side.
      const auto begin = static_cast<size_t>(m.position(0));
      const size_t end = begin + static_cast<size_t>(m.length(0));
      const bool glued_before = begin > 0 && is_hex(whole[begin - 1]);
      const bool glued_after = end < whole.size() && (is_hex(whole[end]) || whole[end] == ':');
      if (glued_before || glued_after) return m.str();
      return redact_value(canonical_pci(m));
    });
  }

  template <typename Fn>
  static std::string replace_all(const std::string& text, const std::regex& re, Fn replacement) {
    std::string out;
    size_t last = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
      const auto& m = *it;
      out.append(text, last, static_cast<size_t>(m.position(0)) - last);
      out += replacement(m, text);
      last = static_cast<size_t>(m.position(0) + m.length(0));
    }
    out.append(text, last, std::string::npos);
    return out;
  }

  std::set<std::string> literals_;
  std::vector<std::string> literals_by_length_;
};

}  // namespace

std::string redact_value(const std::string& value) {
  // FNV-1a 64: stable across hosts and runs.
  unsigned long long h = 1469598103934665603ULL;
  for (const unsigned char c : value) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%08llx", kPrefix, h & 0xffffffffULL);
  return buf;
}

void redact(json& document) {
  Redactor r;
  r.redact_named_fields(document);
  r.scrub_document(document);
}

}  // namespace cudadiag::report
