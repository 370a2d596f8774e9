#include "report/json_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/errors.h"

namespace cudadiag::report {
namespace {

// A value as it appears in a message: short, whatever it holds.
std::string shown(const json& v) {
  std::string s = v.is_string() ? "\"" + v.get_ref<const std::string&>() + "\""
                                : v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

const char* type_word(JsonReader::Type t) {
  switch (t) {
    case JsonReader::Type::string: return "a string";
    case JsonReader::Type::boolean: return "true or false";
    case JsonReader::Type::number: return "a number";
    case JsonReader::Type::integer: return "an integer";
    case JsonReader::Type::object: return "an object";
    case JsonReader::Type::array: return "an array";
    case JsonReader::Type::strings: return "an array of strings";
  }
  return "?";
}

bool has_type(const json& v, JsonReader::Type t) {
  switch (t) {
    case JsonReader::Type::string: return v.is_string();
    case JsonReader::Type::boolean: return v.is_boolean();
    case JsonReader::Type::number: return v.is_number();
    case JsonReader::Type::integer:
      return v.is_number_integer() || (v.is_number_float() && std::nearbyint(v.get<double>()) == v.get<double>());
    case JsonReader::Type::object: return v.is_object();
    case JsonReader::Type::array: return v.is_array();
    case JsonReader::Type::strings:
      return v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_string(); });
  }
  return false;
}

}  // namespace

void JsonReader::fail(const std::string& pointer, const std::string& what) const {
  throw InputError(source_, pointer.empty() ? "/" : pointer, what);
}

std::string JsonReader::member_pointer(const std::string& pointer, std::string_view key) {
  std::string out = pointer + "/";
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string JsonReader::element_pointer(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

const json& JsonReader::object(const json& v, const std::string& pointer) const {
  if (!v.is_object()) fail(pointer, std::string("expected an object, got ") + v.type_name());
  return v;
}

const json& JsonReader::array(const json& v, const std::string& pointer) const {
  if (!v.is_array()) fail(pointer, std::string("expected an array, got ") + v.type_name());
  return v;
}

std::string JsonReader::string(const json& v, const std::string& pointer) const {
  if (!v.is_string()) fail(pointer, std::string("expected a string, got ") + v.type_name() + " " + shown(v));
  return v.get<std::string>();
}

bool JsonReader::boolean(const json& v, const std::string& pointer) const {
  if (!v.is_boolean()) fail(pointer, std::string("expected true or false, got ") + v.type_name() + " " + shown(v));
  return v.get<bool>();
}

double JsonReader::number(const json& v, const std::string& pointer) const {
  if (!v.is_number()) fail(pointer, std::string("expected a number, got ") + v.type_name() + " " + shown(v));
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(pointer, "expected a finite number, got " + shown(v));
  return d;
}

long long JsonReader::integer(const json& v, const std::string& pointer, long long lo, long long hi) const {
  if (!has_type(v, Type::integer))
    fail(pointer, std::string("expected an integer, got ") + v.type_name() + " " + shown(v));
  const std::string range = " is outside " + std::to_string(lo) + ".." + std::to_string(hi);
  if (v.is_number_unsigned()) {
    // Non-negative integers arrive unsigned; past the signed range nothing can hold them.
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<long long>::max())) fail(pointer, shown(v) + range);
    const auto x = static_cast<long long>(u);
    if (x < lo || x > hi) fail(pointer, shown(v) + range);
    return x;
  }
  if (v.is_number_integer()) {
    const auto x = v.get<long long>();
    if (x < lo || x > hi) fail(pointer, shown(v) + range);
    return x;
  }
  // An integral float: compare as double before converting (a cast out of range is UB).
  const double d = v.get<double>();
  if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi))) fail(pointer, shown(v) + range);
  return static_cast<long long>(d);
}

std::uint64_t JsonReader::unsigned_integer(const json& v, const std::string& pointer) const {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  return static_cast<std::uint64_t>(integer(v, pointer, 0, std::numeric_limits<long long>::max()));
}

std::vector<std::string> JsonReader::strings(const json& v, const std::string& pointer) const {
  array(v, pointer);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(string(v[i], element_pointer(pointer, i)));
  return out;
}

const json* JsonReader::find(const json& obj, std::string_view key, const std::string& pointer) const {
  object(obj, pointer);
  const auto it = obj.find(std::string(key));
  return it == obj.end() ? nullptr : &*it;
}

const json& JsonReader::required(const json& obj, std::string_view key, const std::string& pointer) const {
  const json* v = find(obj, key, pointer);
  if (!v) fail(member_pointer(pointer, key), "missing");
  return *v;
}

std::string JsonReader::string_or(const json& obj, std::string_view key, const std::string& pointer,
                                  const std::string& fallback) const {
  const json* v = find(obj, key, pointer);
  return v ? string(*v, member_pointer(pointer, key)) : fallback;
}

bool JsonReader::boolean_or(const json& obj, std::string_view key, const std::string& pointer,
                            bool fallback) const {
  const json* v = find(obj, key, pointer);
  return v ? boolean(*v, member_pointer(pointer, key)) : fallback;
}

double JsonReader::number_or(const json& obj, std::string_view key, const std::string& pointer,
                             double fallback) const {
  const json* v = find(obj, key, pointer);
  return v ? number(*v, member_pointer(pointer, key)) : fallback;
}

int JsonReader::int_or(const json& obj, std::string_view key, const std::string& pointer, int fallback) const {
  const json* v = find(obj, key, pointer);
  if (!v) return fallback;
  return static_cast<int>(integer(*v, member_pointer(pointer, key), std::numeric_limits<int>::min(),
                                   std::numeric_limits<int>::max()));
}

std::uint64_t JsonReader::unsigned_or(const json& obj, std::string_view key, const std::string& pointer,
                                      std::uint64_t fallback) const {
  const json* v = find(obj, key, pointer);
  return v ? unsigned_integer(*v, member_pointer(pointer, key)) : fallback;
}

json JsonReader::object_or_empty(const json& obj, std::string_view key, const std::string& pointer) const {
  const json* v = find(obj, key, pointer);
  return v ? object(*v, member_pointer(pointer, key)) : json::object();
}

json JsonReader::array_or_empty(const json& obj, std::string_view key, const std::string& pointer) const {
  const json* v = find(obj, key, pointer);
  return v ? array(*v, member_pointer(pointer, key)) : json::array();
}

void JsonReader::check_members(const json& obj, const std::string& pointer,
                               std::initializer_list<Typed> members) const {
  for (const auto& m : members) {
    const json* v = find(obj, m.key, pointer);
    if (!v) continue;
    const std::string p = member_pointer(pointer, m.key);
    if (m.type == Type::integer) {
      integer(*v, p, std::numeric_limits<long long>::min(), std::numeric_limits<long long>::max());
    } else if (m.type == Type::number) {
      number(*v, p);
    } else if (m.type == Type::strings) {
      strings(*v, p);
    } else if (!has_type(*v, m.type)) {
      fail(p, std::string("expected ") + type_word(m.type) + ", got " + v->type_name() + " " + shown(*v));
    }
  }
}

void JsonReader::only_keys(const json& obj, const std::string& pointer,
                           std::initializer_list<const char*> allowed) const {
  object(obj, pointer);
  for (const auto& item : obj.items()) {
    const std::string& k = item.key();  // a named reference: lambdas cannot capture bindings in clang 14
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; })) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(member_pointer(pointer, k), "unknown key '" + k + "' (allowed: " + list + ")");
    }
  }
}

}  // namespace cudadiag::report
