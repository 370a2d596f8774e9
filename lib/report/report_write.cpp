// The report written as JSON (report::to_json), made from the field lists of
// report_fields.h.
#include <map>

#include "report/report_fields.h"

namespace cudadiag::report {
namespace {

using fields::Listed;

template <Listed S>
json write_object(const S& s);

json value_json(int v) { return v; }
json value_json(unsigned long v) { return v; }
json value_json(unsigned long long v) { return v; }
json value_json(double v) { return v; }
json value_json(bool v) { return v; }
json value_json(const std::string& v) { return v; }
json value_json(const Device& d) { return to_string(d); }
json value_json(const AddressRange& r) { return to_string(r); }
json value_json(const std::array<std::uint64_t, 3>& dims) { return {dims[0], dims[1], dims[2]}; }

json value_json(const std::map<std::string, int>& counts) {
  json j = json::object();
  for (const auto& [k, n] : counts) j[k] = n;
  return j;
}

json value_json(const std::vector<std::pair<Outcome, int>>& counts) {
  json j = json::object();
  for (const auto& [outcome, n] : counts) j[std::string(to_string(outcome))] = n;
  return j;
}

// A listed struct by its list; the sections and values with writers of their own
// (host, driver, devices, environment, fault sites, sanitizer findings, Fields) by those.
template <typename T>
json value_json(const T& v) {
  if constexpr (Listed<T>) {
    return write_object(v);
  } else {
    return to_json(v);
  }
}

template <typename T>
json value_json(const std::vector<T>& items) {
  json a = json::array();
  for (const auto& item : items) a.push_back(value_json(item));
  return a;
}

template <typename T>
json encode(fields::Plain, const T& v) {
  return value_json(v);
}

template <typename E>
json encode(const fields::Word<E>& word, E e) {
  return std::string(word.name(e));
}

template <typename C, typename T>
json encode(const fields::Each<C>& each, const std::vector<T>& items) {
  json a = json::array();
  for (const auto& item : items) a.push_back(encode(each.element, item));
  return a;
}

// Written only when set (the field's condition).
template <typename C, typename T>
json encode(const fields::UnsetWhenEmpty<C>& c, const std::optional<T>& v) {
  return encode(c.word, *v);
}

json encode(fields::Bounded, int v) { return v; }

template <typename S>
json encode(fields::EmptyWhenUnset, const std::optional<S>& v) {
  return v ? value_json(*v) : json::object();
}

json encode(fields::Architectures, const std::vector<std::string>& names) { return names; }

class FieldWriter {
 public:
  json out = json::object();

  void schema(const char*) {}

  template <typename T, typename C = fields::Plain>
  void field(const char* key, const T& v, const C& c = {}) {
    out[key] = encode(c, v);
  }
  template <typename T, typename C = fields::Plain>
  void defaulted(const char* key, const T& v, const json&, const C& c = {}) {
    field(key, v, c);
  }
  template <typename T, typename C = fields::Plain>
  void required(const char* key, const T& v, const C& c = {}) {
    field(key, v, c);
  }
  template <typename T, typename C = fields::Plain>
  void nonempty(const char* key, const T& v, const C& c = {}) {
    if (!v.empty()) field(key, v, c);
  }
  template <typename T, typename C = fields::Plain>
  void when(bool written, const char* key, const T& v, const C& c = {}) {
    if (written) field(key, v, c);
  }
  template <typename T, typename C = fields::Plain>
  void optional(const char* key, const std::optional<T>& v, const C& c = {}) {
    if (v) field(key, *v, c);
  }
  template <typename T, typename C = fields::Plain>
  void optional_or_null(const char* key, const std::optional<T>& v, const C& c = {}) {
    optional(key, v, c);
  }
  template <typename T, typename C = fields::Plain>
  void nullable(const char* key, const std::optional<T>& v, const C& c = {}) {
    out[key] = v ? encode(c, *v) : json(nullptr);
  }
};

template <Listed S>
json write_object(const S& s) {
  FieldWriter w;
  fields::list(w, s);
  return std::move(w.out);
}

}  // namespace

json to_json(const ErrorInfo& e) { return write_object(e); }
json to_json(const ChildInfo& c) { return write_object(c); }
json to_json(const FaultingBuffer& f) { return write_object(f); }
json to_json(const RepeatStats& r) { return write_object(r); }
json to_json(const GpuStatus& g) { return write_object(g); }
json to_json(const Invocation& i) { return write_object(i); }
json to_json(const Tool& t) { return write_object(t); }
json to_json(const LaunchRecord& l) { return write_object(l); }
json to_json(const BufferRecord& b) { return write_object(b); }
json to_json(const XidLine& x) { return write_object(x); }
json to_json(const Result& r) { return write_object(r); }
json to_json(const Summary& s) { return write_object(s); }

// Parsed findings as lib/sanitizer writes them, or why there are none.
json to_json(const SanitizerFindings& s) {
  if (s.memcheck) return sanitizer::to_json(*s.memcheck);
  return json{{"tool", s.tool}, {"error", s.error}};
}

json to_json(const Report& r) {
  json j = write_object(r);
  for (const auto& m : r.extra.items()) j[m.name] = to_json(m.value);
  return j;
}

}  // namespace cudadiag::report
