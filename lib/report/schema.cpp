#include "report/schema.h"

#include <cmath>
#include <map>
#include <regex>
#include <stdexcept>

namespace cudadiag::report {
namespace detail {
// Defined in the generated report_schema_text.cpp (lib/CMakeLists.txt).
extern const char kReportSchemaText[];
}  // namespace detail

namespace {

struct Violation {
  std::string pointer;  // JSON pointer of the offending value ("" is the root)
  std::string message;
  bool type_mismatch = false;  // the value's type does not fit the schema at all
};
using Violations = std::vector<Violation>;

std::string escape_pointer_token(const std::string& key) {
  std::string out;
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

// A value as it appears in a message: strings quoted, long values shortened.
std::string show(const json& v) {
  std::string s;
  if (v.is_string()) {
    s.append(1, '\'').append(v.get_ref<const std::string&>()).append(1, '\'');
  } else {
    s = v.dump();
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
      if (value != arg) out.push_back({ptr, "expected " + show(arg) + ", got " + show(value)});
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
      if (value == allowed) return;
    }
    out.push_back({ptr, show(value) + " is not one of " + show_list(arg)});
  }

  void check_ref(const json& value, const json& arg, const std::string& ptr, Violations& out) {
    const std::string ref = arg.get<std::string>();
    if (ref.empty() || ref[0] != '#')
      throw std::invalid_argument("schema: only local $ref (\"#/...\") is supported, got '" + ref + "'");
    if (++ref_depth_ > 64) throw std::invalid_argument("schema: $ref nesting deeper than 64 at '" + ref + "'");
    const json::json_pointer target(ref.substr(1));
    if (!root_.contains(target)) throw std::invalid_argument("schema: $ref '" + ref + "' points nowhere");
    check(value, root_.at(target), ptr, out);
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
        if (value.contains(name)) check(value.at(name), sub, ptr + "/" + escape_pointer_token(name), out);
      }
    } else {  // additionalProperties
      const json* declared = schema.contains("properties") ? &schema.at("properties") : nullptr;
      for (const auto& [name, member] : value.items()) {
        if (declared && declared->contains(name)) continue;
        if (arg.is_boolean() && !arg.get<bool>()) {
          out.push_back({ptr, "property '" + name + "' is not allowed"});
        } else {
          check(member, arg, ptr + "/" + escape_pointer_token(name), out);
        }
      }
    }
  }

  void check_array_keyword(const json& value, const json& schema, const std::string& keyword,
                           const json& arg, const std::string& ptr, Violations& out) {
    if (keyword == "minItems" && value.size() < arg.get<size_t>()) {
      out.push_back({ptr, "has " + std::to_string(value.size()) + " items, fewer than the minimum " + arg.dump()});
    } else if (keyword == "maxItems" && value.size() > arg.get<size_t>()) {
      out.push_back({ptr, "has " + std::to_string(value.size()) + " items, more than the maximum " + arg.dump()});
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
      if (!std::regex_search(s, regex_for(arg.get<std::string>())))
        out.push_back({ptr, show(json(s)) + " does not match the pattern " + arg.get<std::string>()});
    } else if (keyword == "minLength" && code_points(s) < arg.get<size_t>()) {
      out.push_back({ptr, "string " + show(json(s)) + " is shorter than " + arg.dump() + " character(s)"});
    } else if (keyword == "maxLength" && code_points(s) > arg.get<size_t>()) {
      out.push_back({ptr, "string " + show(json(s)) + " is longer than " + arg.dump() + " character(s)"});
    }
  }

  void check_number_keyword(const json& value, const std::string& keyword, const json& arg,
                            const std::string& ptr, Violations& out) {
    const double v = value.get<double>();
    const double limit = arg.get<double>();
    if (keyword == "minimum" && v < limit) {
      out.push_back({ptr, value.dump() + " is less than the minimum " + arg.dump()});
    } else if (keyword == "maximum" && v > limit) {
      out.push_back({ptr, value.dump() + " is greater than the maximum " + arg.dump()});
    } else if (keyword == "exclusiveMinimum" && v <= limit) {
      out.push_back({ptr, value.dump() + " is not greater than " + arg.dump()});
    } else if (keyword == "exclusiveMaximum" && v >= limit) {
      out.push_back({ptr, value.dump() + " is not less than " + arg.dump()});
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
  static const json schema = json::parse(report_schema_text());
  return schema;
}

std::vector<std::string> validate(const json& document, const json& schema) {
  Violations violations;
  Validator(schema).check(document, schema, "", violations);
  std::vector<std::string> messages;
  messages.reserve(violations.size());
  for (const auto& v : violations) messages.push_back((v.pointer.empty() ? "/" : v.pointer) + ": " + v.message);
  return messages;
}

std::vector<std::string> validate_report(const json& document) { return validate(document, report_schema()); }

}  // namespace cudadiag::report
