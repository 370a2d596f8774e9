#include "host/system_info.h"

#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include "util/trim.h"

namespace cudadiag::host {
namespace {

std::string read_small_file(const char* path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}


// Calls fn(key, value) for each "key<sep>value" line.
template <typename Fn>
void for_each_pair(std::string_view text, char sep, Fn&& fn) {
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto line = text.substr(0, nl);
    const auto at = line.find(sep);
    if (at != std::string_view::npos) {
      if (fn(util::trim_blanks(line.substr(0, at)), util::trim_blanks(line.substr(at + 1)))) return;
    }
    if (nl == std::string_view::npos) return;
    text.remove_prefix(nl + 1);
  }
}

report::json string_or_null(const std::string& s) {
  return s.empty() ? report::json(nullptr) : report::json(s);
}

}  // namespace

std::string parse_os_release_pretty(std::string_view os_release) {
  std::string out;
  for_each_pair(os_release, '=', [&](std::string_view k, std::string_view v) {
    if (k != "PRETTY_NAME") return false;
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
      v = v.substr(1, v.size() - 2);
    out = std::string(v);
    return true;
  });
  return out;
}

std::string parse_cpu_model(std::string_view cpuinfo) {
  std::string model, arm_model, arm_part;
  for_each_pair(cpuinfo, ':', [&](std::string_view k, std::string_view v) {
    if (k == "model name" && model.empty()) model = std::string(v);
    if (k == "Model" && arm_model.empty()) arm_model = std::string(v);
    if (k == "CPU part" && arm_part.empty()) arm_part = "CPU part " + std::string(v);
    return !model.empty();
  });
  if (!model.empty()) return model;
  if (!arm_model.empty()) return arm_model;
  return arm_part;
}

unsigned long long parse_meminfo_total_bytes(std::string_view meminfo) {
  unsigned long long bytes = 0;
  for_each_pair(meminfo, ':', [&](std::string_view k, std::string_view v) {
    if (k != "MemTotal") return false;
    unsigned long long kib = 0;
    for (const char c : v) {
      if (c < '0' || c > '9') break;
      kib = kib * 10 + static_cast<unsigned long long>(c - '0');
    }
    bytes = kib * 1024ULL;
    return true;
  });
  return bytes;
}

report::json host_json() {
  report::json h;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) h["hostname"] = std::string(name);  // schema: string or absent
  std::string os = parse_os_release_pretty(read_small_file("/etc/os-release"));
  if (os.empty()) os = parse_os_release_pretty(read_small_file("/usr/lib/os-release"));
  h["os"] = string_or_null(os);
  utsname u{};
  if (::uname(&u) == 0) {
    h["kernel"] = report::json{{"release", u.release}, {"version", u.version}, {"machine", u.machine}};
  } else {
    h["kernel"] = nullptr;
  }
  h["glibc"] = gnu_get_libc_version();
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  h["cpu"] = report::json{{"model", string_or_null(parse_cpu_model(read_small_file("/proc/cpuinfo")))},
                          {"logical_cores", online > 0 ? report::json(online) : report::json(nullptr)}};
  const auto mem = parse_meminfo_total_bytes(read_small_file("/proc/meminfo"));
  h["memory_bytes"] = mem ? report::json(mem) : report::json(nullptr);
  return h;
}

}  // namespace cudadiag::host
