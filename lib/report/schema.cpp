#include "report/schema.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <stdexcept>

#include "report/json_reader.h"

namespace cudadiag::report {
namespace detail {
// Defined in the generated report_schema_text.cpp (lib/CMakeLists.txt).
extern const char kReportSchemaText[];
}  // namespace detail

namespace {

constexpr size_t kMaxPatternSubject = 4096;

struct Violation {
  std::string pointer;  // JSON pointer of the offending value ("" is the root)
  std::string message;
  bool type_mismatch = false;  // the value's type does not fit the schema at all
};
using Violations = std::vector<Violation>;

// A value as it appears in a message: strings quoted, long values shortened.
std::string show(const json& v) {
  std::string s;
  if (v.is_string()) {
    s.append(1, '\'').append(v.get_ref<const std::string&>()).append(1, '\'');
  } else {
    s = dump_json(v);
  }
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

std::string show_list(const json& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + show(values[i]);
  return out + "]";
}

bool is_integral(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

std::string type_of(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  return v.is_number_integer() ? "integer" : "number";
}

bool has_type(const json& v, const std::string& type) {
  if (type == "null") return v.is_null();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "integer") return is_integral(v);
  throw std::invalid_argument("schema: unknown type name '" + type + "'");
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (const unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_annotation(const std::string& keyword) {
  static const char* names[] = {"$schema", "$id",     "$comment", "title",
                                "description", "default", "examples", "$defs"};
  for (const char* n : names) {
    if (keyword == n) return true;
  }
  return false;
}

// JSON Schema equality (enum, const): numbers by value (1 == 1.0), objects regardless of
// member order. ordered_json's own == compares objects in order, which is not it.
bool schema_equal(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return a == b;
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, v] : a.items()) {
      const auto it = b.find(k);
      if (it == b.end() || !schema_equal(v, *it)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!schema_equal(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

// The JSON pointer of a local $ref ("#/$defs/a%25b" -> "/$defs/a%b"): the fragment is
// URI-encoded. Throws std::invalid_argument for anything but a local pointer.
json::json_pointer ref_pointer(const std::string& ref) {
  if (ref.empty() || ref[0] != '#' || (ref.size() > 1 && ref[1] != '/'))
    throw std::invalid_argument("schema: only local JSON-pointer $ref (\"#\" or \"#/...\") is supported, got '" +
                                ref + "'");
  std::string decoded;
  for (size_t i = 1; i < ref.size(); ++i) {
    const auto hex = [](char c) {
      return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    };
    if (ref[i] == '%' && i + 2 < ref.size() && hex(ref[i + 1]) >= 0 && hex(ref[i + 2]) >= 0) {
      decoded += static_cast<char>(hex(ref[i + 1]) * 16 + hex(ref[i + 2]));
      i += 2;
    } else {
      decoded += ref[i];
    }
  }
  try {
    return json::json_pointer(decoded);
  } catch (const json::exception&) {
    throw std::invalid_argument("schema: $ref '" + ref + "' is not a valid JSON pointer");
  }
}

// Checks a whole schema once, before any document: every keyword must be one this
// validator implements, with an argument of the right shape, and every $ref must
// resolve. A keyword in a branch no document reaches is refused all the same.
class SchemaChecker {
 public:
  explicit SchemaChecker(const json& root) : root_(root) {}

  void check(const json& schema, const std::string& ptr) {
    if (schema.is_boolean()) return;
    if (!schema.is_object()) fail(ptr, "a schema must be an object or a boolean, got " + std::string(schema.type_name()));
    for (const auto& [keyword, arg] : schema.items()) check_keyword(keyword, arg, JsonReader::member_pointer(ptr, keyword));
  }

 private:
  [[noreturn]] static void fail(const std::string& ptr, const std::string& what) {
    throw std::invalid_argument("schema at " + (ptr.empty() ? "/" : ptr) + ": " + what);
  }

  void check_keyword(const std::string& keyword, const json& arg, const std::string& ptr) {
    if (keyword == "$defs") {
      if (!arg.is_object()) fail(ptr, "$defs must be an object of schemas");
      for (const auto& [name, sub] : arg.items()) check(sub, JsonReader::member_pointer(ptr, name));
    } else if (is_annotation(keyword)) {
      return;
    } else if (keyword == "type") {
      if (!arg.is_string() && !(arg.is_array() && !arg.empty()))
        fail(ptr, "type must be a name or a non-empty array of names");
      for (const auto& t : arg.is_array() ? arg : json::array({arg})) {
        if (!t.is_string()) fail(ptr, "type names must be strings");
        has_type(json(), t.get<std::string>());  // throws for an unknown name
      }
    } else if (keyword == "enum") {
      if (!arg.is_array()) fail(ptr, "enum must be an array");
    } else if (keyword == "const") {
      return;
    } else if (keyword == "$ref") {
      if (!arg.is_string()) fail(ptr, "$ref must be a string");
      if (!root_.contains(ref_pointer(arg.get<std::string>())))
        fail(ptr, "$ref '" + arg.get<std::string>() + "' points nowhere");
    } else if (keyword == "allOf" || keyword == "anyOf" || keyword == "oneOf") {
      if (!arg.is_array() || arg.empty()) fail(ptr, keyword + " must be a non-empty array of schemas");
      for (size_t i = 0; i < arg.size(); ++i) check(arg[i], ptr + "/" + std::to_string(i));
    } else if (keyword == "not" || keyword == "additionalProperties" || keyword == "items") {
      if (keyword == "items" && arg.is_array())
        fail(ptr, "items as an array is the draft-7 tuple form; use prefixItems (draft 2020-12)");
      check(arg, ptr);
    } else if (keyword == "prefixItems") {
      if (!arg.is_array() || arg.empty()) fail(ptr, "prefixItems must be a non-empty array of schemas");
      for (size_t i = 0; i < arg.size(); ++i) check(arg[i], ptr + "/" + std::to_string(i));
    } else if (keyword == "properties") {
      if (!arg.is_object()) fail(ptr, "properties must be an object of schemas");
      for (const auto& [name, sub] : arg.items()) check(sub, JsonReader::member_pointer(ptr, name));
    } else if (keyword == "required") {
      if (!arg.is_array() || !std::all_of(arg.begin(), arg.end(), [](const json& n) { return n.is_string(); }))
        fail(ptr, "required must be an array of strings");
    } else if (keyword == "minItems" || keyword == "maxItems" || keyword == "minLength" || keyword == "maxLength") {
      if (!is_integral(arg) || arg.get<double>() < 0) fail(ptr, keyword + " must be a non-negative integer");
    } else if (keyword == "minimum" || keyword == "maximum" || keyword == "exclusiveMinimum" ||
               keyword == "exclusiveMaximum") {
      if (!arg.is_number()) fail(ptr, keyword + " must be a number");
    } else if (keyword == "pattern") {
      if (!arg.is_string()) fail(ptr, "pattern must be a string");
      try {
        std::regex(arg.get<std::string>(), std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        fail(ptr, "bad pattern '" + arg.get<std::string>() + "': " + e.what());
      }
    } else {
      fail(ptr, "keyword '" + keyword + "' is not supported by this validator");
    }
  }

  const json& root_;
};

class Validator {
 public:
  explicit Validator(const json& root) : root_(root) {}

  void check(const json& value, const json& schema, const std::string& ptr, Violations& out) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) out.push_back({ptr, "no value is allowed here"});
      return;
    }
    if (!schema.is_object()) throw std::invalid_argument("schema at " + ptr + ": not an object or boolean");
    for (const auto& [keyword, arg] : schema.items()) {
      if (is_annotation(keyword)) continue;
      check_keyword(value, schema, keyword, arg, ptr, out);
    }
  }

 private:
  void check_keyword(const json& value, const json& schema, const std::string& keyword,
                     const json& arg, const std::string& ptr, Violations& out) {
    if (keyword == "type") return check_type(value, arg, ptr, out);
    if (keyword == "enum") return check_enum(value, arg, ptr, out);
    if (keyword == "const") {
      if (!schema_equal(value, arg)) out.push_back({ptr, "expected " + show(arg) + ", got " + show(value)});
      return;
    }
    if (keyword == "$ref") return check_ref(value, arg, ptr, out);
    if (keyword == "allOf") {
      for (const auto& sub : arg) check(value, sub, ptr, out);
      return;
    }
    if (keyword == "anyOf" || keyword == "oneOf") return check_alternatives(value, keyword, arg, ptr, out);
    if (keyword == "not") {
      Violations sub;
      check(value, arg, ptr, sub);
      if (sub.empty()) out.push_back({ptr, "must not match the schema under 'not'"});
      return;
    }
    if (keyword == "properties" || keyword == "additionalProperties" || keyword == "required") {
      if (value.is_object()) check_object_keyword(value, schema, keyword, arg, ptr, out);
      return;
    }
    if (keyword == "items" || keyword == "prefixItems" || keyword == "minItems" || keyword == "maxItems") {
      if (value.is_array()) check_array_keyword(value, schema, keyword, arg, ptr, out);
      return;
    }
    if (keyword == "pattern" || keyword == "minLength" || keyword == "maxLength") {
      if (value.is_string()) check_string_keyword(value.get<std::string>(), keyword, arg, ptr, out);
      return;
    }
    if (keyword == "minimum" || keyword == "maximum" || keyword == "exclusiveMinimum" ||
        keyword == "exclusiveMaximum") {
      if (value.is_number()) check_number_keyword(value, keyword, arg, ptr, out);
      return;
    }
    throw std::invalid_argument("schema at " + (ptr.empty() ? "/" : ptr) + ": keyword '" + keyword +
                                "' is not supported by this validator");
  }

  void check_type(const json& value, const json& arg, const std::string& ptr, Violations& out) {
    if (arg.is_string()) {
      if (!has_type(value, arg.get<std::string>()))
        out.push_back({ptr, "expected " + arg.get<std::string>() + ", got " + type_of(value), true});
      return;
    }
    std::string names;
    for (const auto& t : arg) {
      if (has_type(value, t.get<std::string>())) return;
      names += (names.empty() ? "" : " or ") + t.get<std::string>();
    }
    out.push_back({ptr, "expected " + names + ", got " + type_of(value), true});
  }

  void check_enum(const json& value, const json& arg, const std::string& ptr, Violations& out) {
    for (const auto& allowed : arg) {
      if (schema_equal(value, allowed)) return;
    }
    out.push_back({ptr, show(value) + " is not one of " + show_list(arg)});
  }

  void check_ref(const json& value, const json& arg, const std::string& ptr, Violations& out) {
    const std::string ref = arg.get<std::string>();
    // A $ref cycle that consumes no input ({"$ref": "#"}) would recurse forever; the
    // document's own depth is bounded when it is read (report/json_document.h).
    if (++ref_depth_ > 64) throw std::invalid_argument("schema: $ref nesting deeper than 64 at '" + ref + "'");
    check(value, root_.at(ref_pointer(ref)), ptr, out);
    --ref_depth_;
  }

  void check_alternatives(const json& value, const std::string& keyword, const json& arg,
                          const std::string& ptr, Violations& out) {
    std::vector<Violations> failed;
    size_t matched = 0;
    for (const auto& sub : arg) {
      Violations v;
      check(value, sub, ptr, v);
      if (v.empty()) {
        ++matched;
      } else {
        failed.push_back(std::move(v));
      }
    }
    if (keyword == "oneOf" && matched > 1) {
      out.push_back({ptr, "matches " + std::to_string(matched) + " alternatives of oneOf, expected exactly one"});
      return;
    }
    if (matched > 0) return;
    // The alternatives whose type fits say more than "expected null, got object":
    // when only one is left, its violations are the precise answer.
    std::vector<const Violations*> fitting;
    for (const auto& v : failed) {
      const bool wrong_type = v.size() == 1 && v[0].type_mismatch && v[0].pointer == ptr;
      if (!wrong_type) fitting.push_back(&v);
    }
    if (fitting.size() == 1) {
      out.insert(out.end(), fitting[0]->begin(), fitting[0]->end());
      return;
    }
    std::string detail;
    for (const auto& v : failed) {
      detail += (detail.empty() ? "" : " | ") + v[0].message;
      if (!v[0].pointer.empty() && v[0].pointer != ptr) detail += " at " + v[0].pointer;
    }
    const bool all_wrong_type = fitting.empty();
    out.push_back({ptr, "matches none of the " + std::to_string(arg.size()) + " alternatives of " + keyword +
                            " (" + detail + ")",
                   all_wrong_type});
  }

  void check_object_keyword(const json& value, const json& schema, const std::string& keyword,
                            const json& arg, const std::string& ptr, Violations& out) {
    if (keyword == "required") {
      for (const auto& name : arg) {
        if (!value.contains(name.get<std::string>()))
          out.push_back({ptr, "missing required property '" + name.get<std::string>() + "'"});
      }
    } else if (keyword == "properties") {
      for (const auto& [name, sub] : arg.items()) {
        if (value.contains(name)) check(value.at(name), sub, JsonReader::member_pointer(ptr, name), out);
      }
    } else {  // additionalProperties
      const json* declared = schema.contains("properties") ? &schema.at("properties") : nullptr;
      for (const auto& [name, member] : value.items()) {
        if (declared && declared->contains(name)) continue;
        if (arg.is_boolean() && !arg.get<bool>()) {
          out.push_back({ptr, "property '" + name + "' is not allowed"});
        } else {
          check(member, arg, JsonReader::member_pointer(ptr, name), out);
        }
      }
    }
  }

  void check_array_keyword(const json& value, const json& schema, const std::string& keyword,
                           const json& arg, const std::string& ptr, Violations& out) {
    if (keyword == "minItems" && value.size() < arg.get<size_t>()) {
      out.push_back({ptr, "has " + std::to_string(value.size()) + " items, fewer than the minimum " + dump_json(arg)});
    } else if (keyword == "maxItems" && value.size() > arg.get<size_t>()) {
      out.push_back({ptr, "has " + std::to_string(value.size()) + " items, more than the maximum " + dump_json(arg)});
    } else if (keyword == "prefixItems") {
      for (size_t i = 0; i < arg.size() && i < value.size(); ++i)
        check(value[i], arg[i], ptr + "/" + std::to_string(i), out);
    } else if (keyword == "items") {
      const size_t first = schema.contains("prefixItems") ? schema.at("prefixItems").size() : 0;
      for (size_t i = first; i < value.size(); ++i) check(value[i], arg, ptr + "/" + std::to_string(i), out);
    }
  }

  void check_string_keyword(const std::string& s, const std::string& keyword, const json& arg,
                            const std::string& ptr, Violations& out) {
    if (keyword == "pattern") {
      // std::regex recurses once per character: a 100 kB string would overflow the
      // stack. Longer strings are a violation, stated as such, never a crash.
      if (s.size() > kMaxPatternSubject) {
        out.push_back({ptr, "string of " + std::to_string(s.size()) + " bytes is too long to check against the pattern " +
                                arg.get<std::string>() + " (at most " + std::to_string(kMaxPatternSubject) + ")"});
      } else if (!std::regex_search(s, regex_for(arg.get<std::string>())))
        out.push_back({ptr, show(json(s)) + " does not match the pattern " + arg.get<std::string>()});
    } else if (keyword == "minLength" && code_points(s) < arg.get<size_t>()) {
      out.push_back({ptr, "string " + show(json(s)) + " is shorter than " + dump_json(arg) + " character(s)"});
    } else if (keyword == "maxLength" && code_points(s) > arg.get<size_t>()) {
      out.push_back({ptr, "string " + show(json(s)) + " is longer than " + dump_json(arg) + " character(s)"});
    }
  }

  void check_number_keyword(const json& value, const std::string& keyword, const json& arg,
                            const std::string& ptr, Violations& out) {
    const double v = value.get<double>();
    const double limit = arg.get<double>();
    if (keyword == "minimum" && v < limit) {
      out.push_back({ptr, dump_json(value) + " is less than the minimum " + dump_json(arg)});
    } else if (keyword == "maximum" && v > limit) {
      out.push_back({ptr, dump_json(value) + " is greater than the maximum " + dump_json(arg)});
    } else if (keyword == "exclusiveMinimum" && v <= limit) {
      out.push_back({ptr, dump_json(value) + " is not greater than " + dump_json(arg)});
    } else if (keyword == "exclusiveMaximum" && v >= limit) {
      out.push_back({ptr, dump_json(value) + " is not less than " + dump_json(arg)});
    }
  }

  const std::regex& regex_for(const std::string& pattern) {
    auto it = regex_cache_.find(pattern);
    if (it == regex_cache_.end()) {
      try {
        it = regex_cache_.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
      } catch (const std::regex_error& e) {
        throw std::invalid_argument("schema: bad pattern '" + pattern + "': " + e.what());
      }
    }
    return it->second;
  }

  const json& root_;
  std::map<std::string, std::regex> regex_cache_;
  int ref_depth_ = 0;
};

}  // namespace

const std::string& report_schema_text() {
  static const std::string text(detail::kReportSchemaText);
  return text;
}

const json& report_schema() {
  static const json schema = [] {
    json parsed = json::parse(report_schema_text());
    check_schema(parsed);
    return parsed;
  }();
  return schema;
}

void check_schema(const json& schema) { SchemaChecker(schema).check(schema, ""); }

std::vector<std::string> validate(const json& document, const json& schema) {
  check_schema(schema);
  Violations violations;
  Validator(schema).check(document, schema, "", violations);
  std::vector<std::string> messages;
  messages.reserve(violations.size());
  for (const auto& v : violations) messages.push_back((v.pointer.empty() ? "/" : v.pointer) + ": " + v.message);
  return messages;
}

std::vector<std::string> validate_report(const json& document) { return validate(document, report_schema()); }

}  // namespace cudadiag::report
