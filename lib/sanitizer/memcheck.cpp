#include "sanitizer/memcheck.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "sanitizer/xml.h"
#include "util/demangle.h"

namespace cudadiag::sanitizer {
namespace {

using json = nlohmann::ordered_json;

std::optional<long long> to_int(const std::string& raw) {
  std::string s;
  for (char c : raw)
    if (c != ',') s += c;  // "4,000" as the text output prints sizes
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 0);  // decimal or 0x hex
  if (end == s.c_str() || *end != '\0') return std::nullopt;
  return v;
}

// Text of the first of several alternative child names.
std::string first_text(const XmlNode* n, std::initializer_list<std::string_view> names) {
  if (!n) return "";
  for (auto name : names) {
    const std::string t = n->child_text(name);
    if (!t.empty()) return t;
  }
  return "";
}

std::optional<std::array<long long, 3>> xyz(const XmlNode* n) {
  if (!n) return std::nullopt;
  std::array<long long, 3> v{0, 0, 0};
  const char* names[3] = {"x", "y", "z"};
  bool any = false;
  for (int i = 0; i < 3; ++i) {
    if (auto x = to_int(n->child_text(names[i]))) {
      v[static_cast<size_t>(i)] = *x;
      any = true;
    }
  }
  // Also "(1,2,3)" as plain text.
  if (!any) {
    const std::string t = n->trimmed_text();
    long long a = 0, b = 0, c = 0;
    if (std::sscanf(t.c_str(), "(%lld,%lld,%lld)", &a, &b, &c) == 3) return std::array<long long, 3>{a, b, c};
    return std::nullopt;
  }
  return v;
}

Frame frame_from(const XmlNode& f) {
  Frame fr;
  fr.function = first_text(&f, {"func", "function", "name"});
  fr.file = first_text(&f, {"path", "file", "filename"});
  fr.line = to_int(first_text(&f, {"line"}));
  fr.module = first_text(&f, {"module"});
  fr.pc = first_text(&f, {"pc", "offset", "address"});
  return fr;
}

std::vector<Frame> frames_of(const XmlNode* stack) {
  std::vector<Frame> out;
  if (!stack) return out;
  for (const auto* f : stack->children_named("frame")) out.push_back(frame_from(*f));
  return out;
}

void fill_from_message(Finding& f) {
  const AccessText a = parse_access_text(f.message);
  if (f.direction.empty()) f.direction = a.direction;
  if (f.space.empty()) f.space = a.space;
  if (!f.access_size) f.access_size = a.size;
}

Finding finding_from(const XmlNode& rec) {
  Finding f;
  f.record_kind = rec.child_text("kind");
  f.level = rec.child_text("level");
  const XmlNode* what = rec.child("what");
  const XmlNode* where = rec.child("where");
  const XmlNode* who = rec.child("who");

  std::string message = first_text(what, {"text", "description", "exception"});
  if (message.empty()) message = first_text(&rec, {"text", "description", "exception"});
  f.error = first_text(what, {"error"});
  // Keep the headline: the part before ": " details or the first sentence.
  f.message = message;
  if (const auto colon = message.find(": "); colon != std::string::npos && message.rfind("Invalid", 0) == 0)
    f.message = message.substr(0, colon);

  f.space = first_text(what, {"space", "memorySpace"});
  f.direction = first_text(what, {"direction", "accessType"});
  f.access_size = to_int(first_text(what, {"size", "accessSize"}));
  f.address = first_text(what, {"address", "accessAddress"});
  fill_from_message(f);

  f.kernel = first_text(where, {"func", "kernel", "function"});
  if (f.kernel.empty()) f.kernel = first_text(&rec, {"kernel", "func"});
  f.pc = first_text(where, {"pc", "offset"});
  f.file = first_text(where, {"path", "file", "filename"});
  f.line = to_int(first_text(where, {"line"}));

  const XmlNode* scope = who ? who : &rec;
  f.thread = xyz(scope->find("threadIdx") ? scope->find("threadIdx") : scope->find("thread"));
  f.block = xyz(scope->find("blockIdx") ? scope->find("blockIdx") : scope->find("block"));

  // API records: <what><api>cudaFoo</api><result>719</result></what>.
  const std::string api = first_text(what, {"api", "apiName", "function"});
  const std::string all = rec.all_text();
  if (auto parsed = parse_api_error(all)) {
    f.api = parsed;
  } else if (!api.empty()) {
    ApiError e;
    e.call = api;
    if (auto code = to_int(first_text(what, {"result", "returnValue", "error"})))
      e.code = static_cast<int>(*code);
    f.api = e;
  }
  if (f.api && f.api->call.empty()) f.api->call = api;

  // Nearest allocation: structured element when present, else the sentence.
  if (const XmlNode* alloc = rec.find("allocation")) {
    NearestAllocation n;
    n.address = first_text(alloc, {"address", "base"});
    n.size = to_int(first_text(alloc, {"size"}));
    if (auto d = to_int(first_text(alloc, {"distance", "offset"}))) n.distance_bytes = *d;
    n.relation = first_text(alloc, {"relation", "position"});
    if (!n.address.empty()) f.nearest = n;
  }
  if (!f.nearest) f.nearest = parse_nearest_allocation(all);

  f.host_frames = frames_of(rec.child("hostStack"));
  f.device_frames = frames_of(rec.child("deviceStack"));
  // A device assert reports __assertfail as the function; the kernel is the outermost
  // device frame.
  if ((f.kernel.empty() || f.kernel == "__assertfail") && !f.device_frames.empty()) {
    for (auto it = f.device_frames.rbegin(); it != f.device_frames.rend(); ++it) {
      if (!it->function.empty() && it->function != "__assertfail") {
        if (f.kernel == "__assertfail") f.device_function = f.kernel;
        f.kernel = it->function;
        break;
      }
    }
  }
  // Still unknown (the device stack holds only __assertfail): the host launch stack names
  // the kernel's stub, __device_stub__<mangled name>.
  if (f.kernel.empty() || f.kernel == "__assertfail") {
    for (const auto& h : f.host_frames) {
      const std::string stub = "__device_stub__";
      if (h.function.rfind(stub, 0) == 0 && h.function.size() > stub.size()) {
        if (f.kernel == "__assertfail") f.device_function = f.kernel;
        f.kernel = demangle("_" + h.function.substr(stub.size()));
        break;
      }
    }
  }
  if (f.message.empty() && f.api) {
    f.message = "CUDA API error " + (f.api->error_name.empty() ? std::string("?") : f.api->error_name) +
                " on " + f.api->call;
  }
  return f;
}

json xyz_json(const std::optional<std::array<long long, 3>>& v) {
  if (!v) return nullptr;
  return json::array({(*v)[0], (*v)[1], (*v)[2]});
}

json frame_json(const Frame& fr) {
  json j{{"function", fr.function}};
  if (!fr.file.empty()) j["file"] = fr.file;
  if (fr.line) j["line"] = *fr.line;
  if (!fr.module.empty()) j["module"] = fr.module;
  if (!fr.pc.empty()) j["pc"] = fr.pc;
  return j;
}

std::string skip_spaces(std::string_view t, size_t& i) {
  while (i < t.size() && t[i] == ' ') ++i;
  return "";
}

// Reads a token of non-space characters at i.
std::string token(std::string_view t, size_t& i) {
  skip_spaces(t, i);
  const size_t b = i;
  while (i < t.size() && !std::isspace(static_cast<unsigned char>(t[i]))) ++i;
  return std::string(t.substr(b, i - b));
}

std::string strip_punct(std::string s) {
  while (!s.empty() && (s.back() == '.' || s.back() == ',' || s.back() == ')')) s.pop_back();
  return s;
}

}  // namespace

AccessText parse_access_text(std::string_view m) {
  AccessText a;
  if (m.find(" write") != std::string_view::npos) a.direction = "write";
  else if (m.find(" read") != std::string_view::npos) a.direction = "read";
  for (const char* sp : {"__global__", "__shared__", "__local__", "__generic__"})
    if (m.find(sp) != std::string_view::npos) a.space = sp;
  const auto at = m.find("of size ");
  if (at != std::string_view::npos) {
    long long v = 0;
    std::size_t i = at + 8, digits = 0;
    for (; i < m.size() && m[i] >= '0' && m[i] <= '9' && digits < 18; ++i, ++digits) v = v * 10 + (m[i] - '0');
    if (digits > 0) a.size = v;
  }
  return a;
}

std::optional<NearestAllocation> parse_nearest_allocation(std::string_view text) {
  // "... is 4 bytes after the nearest allocation at 0x7f0 of size 4096 bytes"
  const auto at = text.find(" the nearest allocation at ");
  if (at == std::string_view::npos) return std::nullopt;
  NearestAllocation n;
  // Walk back: "is N bytes after|before" (or "is N bytes inside").
  const std::string_view head = text.substr(0, at);
  const auto is_at = head.rfind(" is ");
  if (is_at != std::string_view::npos) {
    size_t i = is_at + 4;
    const std::string num = token(head, i);
    const std::string unit = token(head, i);
    const std::string rel = token(head, i);
    if (auto v = to_int(num)) n.distance_bytes = *v;
    if (unit.rfind("byte", 0) == 0) n.relation = rel;
  }
  size_t i = at + std::string_view(" the nearest allocation at ").size();
  n.address = strip_punct(token(text, i));
  if (token(text, i) == "of" && token(text, i) == "size") {
    if (auto v = to_int(token(text, i))) n.size = *v;
  }
  return n;
}

std::optional<ApiError> parse_api_error(std::string_view text) {
  // "Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure"
  //  on CUDA API call to cudaDeviceSynchronize."
  const auto hit = text.find("Program hit ");
  if (hit == std::string_view::npos) return std::nullopt;
  ApiError e;
  size_t i = hit + 12;
  e.error_name = token(text, i);
  const auto err = text.find("(error ", i);
  if (err != std::string_view::npos && err < i + 4) {
    e.code = static_cast<int>(std::strtol(std::string(text.substr(err + 7, 8)).c_str(), nullptr, 10));
  }
  const auto due = text.find("due to \"", i);
  if (due != std::string_view::npos) {
    const auto close = text.find('"', due + 8);
    if (close != std::string_view::npos) e.description = std::string(text.substr(due + 8, close - due - 8));
  }
  const auto call = text.find("API call to ", i);
  if (call != std::string_view::npos) {
    size_t j = call + 12;
    e.call = strip_punct(token(text, j));
  }
  return e;
}

MemcheckReport parse_memcheck_xml(std::string_view xml) {
  const XmlNode root = parse_xml(xml);
  MemcheckReport r;
  for (const auto& rec : root.children) {
    if (rec.name == "record" || rec.name == "Error" || rec.name == "error") {
      Finding f = finding_from(rec);
      if (f.api && r.api_errors++ >= kKeptApiErrors) continue;  // counted, not kept
      r.findings.push_back(std::move(f));
    } else if (rec.name == "summary" || rec.name == "ErrorSummary" || rec.name == "errorSummary") {
      const std::string n = first_text(&rec, {"errorCount", "errors", "count"});
      if (auto v = to_int(n.empty() ? rec.trimmed_text() : n)) r.error_count = *v;
    }
    // Anything else (tool info, launch records of newer versions) is ignored.
  }
  return r;
}

json to_json(const Finding& f) {
  json j{{"kind", f.message}, {"record", f.record_kind}, {"level", f.level}};
  if (!f.kernel.empty()) j["kernel"] = f.kernel;
  if (!f.device_function.empty()) j["device_function"] = f.device_function;
  if (!f.error.empty()) j["error"] = f.error;
  if (!f.pc.empty()) j["pc"] = f.pc;
  if (!f.file.empty()) j["file"] = f.file;
  if (f.line) j["line"] = *f.line;
  if (!f.file.empty() && f.line) j["location"] = f.file + ":" + std::to_string(*f.line);
  if (f.thread) j["thread"] = xyz_json(f.thread);
  if (f.block) j["block"] = xyz_json(f.block);
  if (!f.address.empty()) j["address"] = f.address;
  if (!f.space.empty() || !f.direction.empty() || f.access_size) {
    json a = json::object();
    if (!f.space.empty()) a["space"] = f.space;
    if (!f.direction.empty()) a["direction"] = f.direction;
    if (f.access_size) a["size"] = *f.access_size;
    j["access"] = a;
  }
  if (f.nearest) {
    json n{{"distance_bytes", f.nearest->distance_bytes}, {"relation", f.nearest->relation},
           {"address", f.nearest->address}};
    if (!f.nearest->buffer.empty()) n["buffer"] = f.nearest->buffer;
    n["size"] = f.nearest->size ? json(*f.nearest->size) : json(nullptr);
    j["nearest_allocation"] = n;
  }
  if (f.api) {
    json a{{"call", f.api->call}, {"error_name", f.api->error_name}};
    a["code"] = f.api->code ? json(*f.api->code) : json(nullptr);
    if (!f.api->description.empty()) a["description"] = f.api->description;
    j["api"] = a;
  }
  if (!f.host_frames.empty()) {
    json fr = json::array();
    for (const auto& h : f.host_frames) fr.push_back(frame_json(h));
    j["host_frames"] = fr;
  }
  if (!f.device_frames.empty()) {
    json fr = json::array();
    for (const auto& d : f.device_frames) fr.push_back(frame_json(d));
    j["device_frames"] = fr;
  }
  return j;
}

namespace {

// Every record memcheck wrote: those kept, and the API error records counted beyond them.
long long record_count(const MemcheckReport& r) {
  const long long kept_api =
      std::count_if(r.findings.begin(), r.findings.end(), [](const Finding& f) { return f.api.has_value(); });
  return static_cast<long long>(r.findings.size()) - kept_api + std::max(kept_api, r.api_errors);
}

}  // namespace

json to_json(const MemcheckReport& r) {
  json findings = json::array();
  for (const auto& f : r.findings) findings.push_back(to_json(f));
  json j{{"tool", "memcheck"},
         {"errors", r.error_count ? *r.error_count : record_count(r)},
         {"findings", findings}};
  if (r.api_errors > 0) {
    j["api_errors"] = r.api_errors;
    j["api_errors_kept"] = std::min(r.api_errors, kKeptApiErrors);
  }
  // The first memory-access finding is the headline (API errors follow from it).
  std::string first;
  for (const auto& f : r.findings) {
    if (!f.api && !f.message.empty()) {  // NOLINT: headline
      first = f.message;
      if (!f.kernel.empty()) first += " in " + f.kernel;
      break;
    }
  }
  if (first.empty() && !r.findings.empty()) first = r.findings.front().message;
  j["first"] = first;
  return j;
}

std::vector<NearestAllocation> nearest_allocations_in_text(std::string_view text) {
  std::vector<NearestAllocation> out;
  size_t from = 0;
  for (;;) {
    const auto at = text.find("nearest allocation at ", from);
    if (at == std::string_view::npos) return out;
    // The sentence starts at the line holding "is N bytes"; take from the previous line
    // start (the text output splits it: "Access to X is out of bounds\n and is 1 bytes after").
    const auto line_start = text.rfind('\n', at);
    const auto prev_start = line_start == std::string_view::npos ? 0 : text.rfind('\n', line_start - 1);
    const size_t b = prev_start == std::string_view::npos ? 0 : prev_start + 1;
    auto line_end = text.find('\n', at);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string sentence(text.substr(b, line_end - b));
    for (auto& c : sentence)
      if (c == '\n') c = ' ';
    if (auto n = parse_nearest_allocation(sentence)) out.push_back(*n);
    from = line_end;
  }
}

void attach_text_allocations(MemcheckReport& r, std::string_view text_output) {
  auto found = nearest_allocations_in_text(text_output);
  size_t k = 0;
  for (auto& f : r.findings) {
    if (k >= found.size()) return;
    if (f.api || f.nearest || f.address.empty()) continue;
    f.nearest = found[k++];
  }
}

void attach_nearest_buffers(MemcheckReport& r, const std::vector<BufferRange>& buffers) {
  for (auto& f : r.findings) {
    if (f.address.empty() || buffers.empty()) continue;
    const auto addr = to_int(f.address);
    if (!addr) continue;
    const auto a = static_cast<unsigned long long>(*addr);
    const BufferRange* best = nullptr;
    unsigned long long best_dist = ~0ULL;
    std::string relation;
    for (const auto& b : buffers) {
      if (a >= b.address && a < b.address + b.bytes) {  // inside wins outright
        best = &b;
        best_dist = a - b.address;
        relation = "inside";
        break;
      }
      // memcheck counts "1 bytes after" for the first byte past the end.
      const bool before = a < b.address;
      const unsigned long long d = before ? b.address - a : a - (b.address + b.bytes) + 1;
      if (!best || d < best_dist) {
        best = &b;
        best_dist = d;
        relation = before ? "before" : "after";
      }
    }
    if (!best) continue;
    NearestAllocation n = f.nearest.value_or(NearestAllocation{});
    n.buffer = best->name;
    if (!f.nearest) {
      n.distance_bytes = static_cast<long long>(best_dist);
      n.relation = relation;
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%llx", best->address);
      n.address = hex;
      n.size = static_cast<long long>(best->bytes);
    }
    f.nearest = n;
  }
}

}  // namespace cudadiag::sanitizer
