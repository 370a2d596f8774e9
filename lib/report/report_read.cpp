// The report read back from JSON, made from the field lists of report_fields.h: every
// wrong type, missing member or unknown word fails naming the source and the JSON pointer
// (report::report_from_json).
#include <algorithm>
#include <limits>
#include <map>

#include "report/json_reader.h"
#include "report/report_fields.h"

namespace cudadiag::report {
namespace {

// compute-sanitizer's findings as lib/sanitizer writes them (sanitizer::to_json).
std::optional<std::array<long long, 3>> read_xyz(const JsonReader& rd, const json& j, const char* key,
                                                 const std::string& p) {
  const json* v = rd.find(j, key, p);
  if (!v) return std::nullopt;
  const std::string xp = JsonReader::member_pointer(p, key);
  rd.array(*v, xp);
  if (v->size() != 3) rd.fail(xp, "expected 3 numbers, got " + std::to_string(v->size()));
  std::array<long long, 3> out{};
  for (std::size_t i = 0; i < 3; ++i)
    out[i] = rd.integer((*v)[i], JsonReader::element_pointer(xp, i), std::numeric_limits<long long>::min(),
                        std::numeric_limits<long long>::max());
  return out;
}

std::optional<long long> read_long(const JsonReader& rd, const json& j, const char* key, const std::string& p) {
  const json* v = rd.find(j, key, p);
  if (!v || v->is_null()) return std::nullopt;
  return rd.integer(*v, JsonReader::member_pointer(p, key), std::numeric_limits<long long>::min(),
                    std::numeric_limits<long long>::max());
}

sanitizer::Frame read_frame(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  sanitizer::Frame f;
  f.function = rd.string_or(j, "function", p);
  f.file = rd.string_or(j, "file", p);
  f.line = read_long(rd, j, "line", p);
  f.module = rd.string_or(j, "module", p);
  f.pc = rd.string_or(j, "pc", p);
  return f;
}

sanitizer::Finding read_finding(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  sanitizer::Finding f;
  f.message = rd.string_or(j, "kind", p);
  f.record_kind = rd.string_or(j, "record", p);
  f.level = rd.string_or(j, "level", p);
  f.kernel = rd.string_or(j, "kernel", p);
  f.device_function = rd.string_or(j, "device_function", p);
  f.error = rd.string_or(j, "error", p);
  f.pc = rd.string_or(j, "pc", p);
  f.file = rd.string_or(j, "file", p);
  f.line = read_long(rd, j, "line", p);
  f.thread = read_xyz(rd, j, "thread", p);
  f.block = read_xyz(rd, j, "block", p);
  f.address = rd.string_or(j, "address", p);
  if (const json* a = rd.find(j, "access", p)) {
    const std::string ap = JsonReader::member_pointer(p, "access");
    rd.object(*a, ap);
    f.space = rd.string_or(*a, "space", ap);
    f.direction = rd.string_or(*a, "direction", ap);
    f.access_size = read_long(rd, *a, "size", ap);
  }
  if (const json* n = rd.find(j, "nearest_allocation", p)) {
    const std::string np = JsonReader::member_pointer(p, "nearest_allocation");
    rd.object(*n, np);
    sanitizer::NearestAllocation near;
    near.distance_bytes = read_long(rd, *n, "distance_bytes", np).value_or(0);
    near.relation = rd.string_or(*n, "relation", np);
    near.address = rd.string_or(*n, "address", np);
    near.buffer = rd.string_or(*n, "buffer", np);
    near.size = read_long(rd, *n, "size", np);
    f.nearest = near;
  }
  if (const json* a = rd.find(j, "api", p)) {
    const std::string ap = JsonReader::member_pointer(p, "api");
    rd.object(*a, ap);
    sanitizer::ApiError api;
    api.call = rd.string_or(*a, "call", ap);
    api.error_name = rd.string_or(*a, "error_name", ap);
    if (const auto code = read_long(rd, *a, "code", ap)) api.code = static_cast<int>(*code);
    api.description = rd.string_or(*a, "description", ap);
    f.api = api;
  }
  for (const auto& [key, out] : {std::pair{"host_frames", &f.host_frames}, std::pair{"device_frames", &f.device_frames}}) {
    const json frames = rd.array_or_empty(j, key, p);
    const std::string fp = JsonReader::member_pointer(p, key);
    for (std::size_t i = 0; i < frames.size(); ++i) out->push_back(read_frame(rd, frames[i], JsonReader::element_pointer(fp, i)));
  }
  return f;
}

SanitizerFindings read_sanitizer(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  SanitizerFindings s;
  s.tool = rd.string_or(j, "tool", p, "memcheck");
  if (const json* e = rd.find(j, "error", p); e && !rd.find(j, "findings", p)) {
    s.error = rd.string(*e, JsonReader::member_pointer(p, "error"));
    return s;
  }
  sanitizer::MemcheckReport m;
  const json findings = rd.array_or_empty(j, "findings", p);
  const std::string fp = JsonReader::member_pointer(p, "findings");
  for (std::size_t i = 0; i < findings.size(); ++i)
    m.findings.push_back(read_finding(rd, findings[i], JsonReader::element_pointer(fp, i)));
  m.error_count = read_long(rd, j, "errors", p);
  m.api_errors = read_long(rd, j, "api_errors", p).value_or(0);
  s.memcheck = std::move(m);
  return s;
}

using fields::Listed;

template <Listed S>
S read_object(const JsonReader& rd, const json& j, const std::string& p);

void read_value(const JsonReader& rd, const json& v, const std::string& p, int& out) {
  out = static_cast<int>(rd.integer(v, p, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}
void read_value(const JsonReader& rd, const json& v, const std::string& p, unsigned long& out) {
  out = rd.unsigned_integer(v, p);
}
void read_value(const JsonReader& rd, const json& v, const std::string& p, unsigned long long& out) {
  out = rd.unsigned_integer(v, p);
}
void read_value(const JsonReader& rd, const json& v, const std::string& p, double& out) { out = rd.number(v, p); }
void read_value(const JsonReader& rd, const json& v, const std::string& p, bool& out) { out = rd.boolean(v, p); }
void read_value(const JsonReader& rd, const json& v, const std::string& p, std::string& out) {
  out = rd.string(v, p);
}
void read_value(const JsonReader& rd, const json& v, const std::string& p, Device& out) {
  out = parse_device(rd.string(v, p));
}

void read_value(const JsonReader& rd, const json& v, const std::string& p, AddressRange& out) {
  const std::string text = rd.string(v, p);
  const auto range = parse_address_range(text);
  if (!range) rd.fail(p, "expected \"0x<start>-0x<end>\", got \"" + text + "\"");
  out = *range;
}

void read_value(const JsonReader& rd, const json& v, const std::string& p, std::array<std::uint64_t, 3>& out) {
  rd.array(v, p);
  if (v.size() != 3) rd.fail(p, "expected 3 numbers, got " + std::to_string(v.size()));
  for (std::size_t i = 0; i < 3; ++i) out[i] = rd.unsigned_integer(v[i], JsonReader::element_pointer(p, i));
}

void read_value(const JsonReader& rd, const json& v, const std::string& p, std::map<std::string, int>& out) {
  rd.object(v, p);
  for (const auto& [k, n] : v.items()) read_value(rd, n, JsonReader::member_pointer(p, k), out[k]);
}

void read_value(const JsonReader& rd, const json& v, const std::string& p,
                std::vector<std::pair<Outcome, int>>& out) {
  rd.object(v, p);
  for (const auto& [name, n] : v.items()) {
    const std::string np = JsonReader::member_pointer(p, name);
    const auto outcome = parse_outcome(name);
    if (!outcome) rd.fail(np, "unknown outcome '" + name + "'");
    read_value(rd, n, np, out.emplace_back(*outcome, 0).second);
  }
}

// The sections and values with readers of their own.
void read_value(const JsonReader& rd, const json& v, const std::string& p, Fields& out) {
  out = fields_from_json(rd.object(v, p));
}
void read_value(const JsonReader& rd, const json& v, const std::string& p, HostInfo& out) {
  out = read_host(rd, v, p);
}
void read_value(const JsonReader& rd, const json& v, const std::string& p, DriverInfo& out) {
  out = read_driver(rd, v, p);
}
void read_value(const JsonReader& rd, const json& v, const std::string& p, DeviceInfo& out) {
  out = read_device(rd, v, p);
}
void read_value(const JsonReader& rd, const json& v, const std::string& p, Environment& out) {
  out = read_environment(rd, v, p);
}
void read_value(const JsonReader& rd, const json& v, const std::string& p, FaultSite& out) {
  out = read_fault_site(rd, v, p);
}
void read_value(const JsonReader& rd, const json& v, const std::string& p, SanitizerFindings& out) {
  out = read_sanitizer(rd, v, p);
}

template <Listed S>
void read_value(const JsonReader& rd, const json& v, const std::string& p, S& out) {
  out = read_object<S>(rd, v, p);
}

template <typename T>
void read_value(const JsonReader& rd, const json& v, const std::string& p, std::vector<T>& out) {
  rd.array(v, p);
  out.clear();
  for (std::size_t i = 0; i < v.size(); ++i) read_value(rd, v[i], JsonReader::element_pointer(p, i), out.emplace_back());
}

template <typename T>
void decode(fields::Plain, const JsonReader& rd, const json& v, const std::string& p, T& out) {
  read_value(rd, v, p, out);
}

template <typename E>
void decode(const fields::Word<E>& word, const JsonReader& rd, const json& v, const std::string& p, E& out) {
  const std::string text = rd.string(v, p);
  const auto parsed = word.parse(text);
  if (!parsed)
    rd.fail(p, "unknown " + std::string(word.what) + " '" + text + "'" + (word.words ? " (" + word.words() + ")" : ""));
  out = *parsed;
}

template <typename C, typename T>
void decode(const fields::Each<C>& each, const JsonReader& rd, const json& v, const std::string& p,
            std::vector<T>& out) {
  rd.array(v, p);
  out.clear();
  for (std::size_t i = 0; i < v.size(); ++i)
    decode(each.element, rd, v[i], JsonReader::element_pointer(p, i), out.emplace_back());
}

template <typename C, typename T>
void decode(const fields::UnsetWhenEmpty<C>& c, const JsonReader& rd, const json& v, const std::string& p,
            std::optional<T>& out) {
  if (rd.string(v, p).empty()) {
    out.reset();
    return;
  }
  decode(c.word, rd, v, p, out.emplace());
}

void decode(fields::Bounded b, const JsonReader& rd, const json& v, const std::string& p, int& out) {
  out = static_cast<int>(rd.integer(v, p, b.lo, b.hi));
}

template <typename S>
void decode(fields::EmptyWhenUnset, const JsonReader& rd, const json& v, const std::string& p,
            std::optional<S>& out) {
  if (rd.object(v, p).empty()) {
    out.reset();
    return;
  }
  out = read_object<S>(rd, v, p);
}

void decode(fields::Architectures, const JsonReader&, const json& v, const std::string&,
            std::vector<std::string>& out) {
  out.clear();
  if (v.is_string()) out.push_back(v.get<std::string>());
  if (v.is_array())
    for (const auto& a : v)
      if (a.is_string()) out.push_back(a.get<std::string>());
}

class FieldReader {
 public:
  FieldReader(const JsonReader& rd, const json& j, const std::string& p) : rd_(rd), j_(j), p_(p) {}

  void schema(const char*) {}

  template <typename T, typename C = fields::Plain>
  void field(const char* key, T& v, const C& c = {}) {
    if (const json* x = rd_.find(j_, key, p_)) decode(c, rd_, *x, at(key), v);
  }
  template <typename T, typename C = fields::Plain>
  void defaulted(const char* key, T& v, const json& absent, const C& c = {}) {
    const json* x = rd_.find(j_, key, p_);
    decode(c, rd_, x ? *x : absent, at(key), v);
  }
  template <typename T, typename C = fields::Plain>
  void required(const char* key, T& v, const C& c = {}) {
    decode(c, rd_, rd_.required(j_, key, p_), at(key), v);
  }
  template <typename T, typename C = fields::Plain>
  void nonempty(const char* key, T& v, const C& c = {}) {
    field(key, v, c);
  }
  template <typename T, typename C = fields::Plain>
  void when(bool, const char* key, T& v, const C& c = {}) {
    field(key, v, c);
  }
  template <typename T, typename C = fields::Plain>
  void optional(const char* key, std::optional<T>& v, const C& c = {}) {
    if (const json* x = rd_.find(j_, key, p_)) decode(c, rd_, *x, at(key), v.emplace());
  }
  template <typename T, typename C = fields::Plain>
  void optional_or_null(const char* key, std::optional<T>& v, const C& c = {}) {
    if (const json* x = rd_.find(j_, key, p_); x && !x->is_null()) decode(c, rd_, *x, at(key), v.emplace());
  }
  template <typename T, typename C = fields::Plain>
  void nullable(const char* key, std::optional<T>& v, const C& c = {}) {
    optional_or_null(key, v, c);
  }

 private:
  std::string at(const char* key) const { return JsonReader::member_pointer(p_, key); }

  const JsonReader& rd_;
  const json& j_;
  const std::string& p_;
};

template <Listed S>
S read_object(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  S s{};
  FieldReader r(rd, j, p);
  fields::list(r, s);
  return s;
}

}  // namespace

ErrorInfo error_from_json(const json& j, const std::string& source) {
  return read_object<ErrorInfo>(JsonReader(source), j, "");
}

Result result_from_json(const json& j, const std::string& source) {
  return read_object<Result>(JsonReader(source), j, "");
}

Report report_from_json(const json& j, const std::string& source) {
  const JsonReader rd(source);
  Report r = read_object<Report>(rd, j, "");
  // Members the list does not name are the command-specific sections, kept as they are.
  static const std::vector<fields::Key> known = fields::describe<Report>().keys;
  for (const auto& [k, v] : j.items()) {
    const std::string& key = k;  // a named reference: lambdas cannot capture bindings in clang 14
    if (std::none_of(known.begin(), known.end(), [&](const fields::Key& f) { return f.name == key; }))
      r.extra.set(key, value_from_json(v));
  }
  return r;
}

}  // namespace cudadiag::report
