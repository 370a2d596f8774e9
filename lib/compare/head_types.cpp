#include "compare/head_types.h"

#include <string_view>

#include "compare/env_fields.h"
#include "util/errors.h"

namespace cudadiag::compare {
namespace {

using report::json;

const char* article(const char* type) {
  const std::string_view t(type);
  return t == "object" || t == "array" ? "an " : "a ";
}

[[noreturn]] void refuse(const std::string& file, const std::string& at, const std::string& wanted, const json& v) {
  throw InputError(file, at, "must be " + wanted + ", found " + article(v.type_name()) + v.type_name());
}

// Escaped as a JSON pointer token ("a/b" -> "a~1b").
std::string token(const std::string& key) {
  std::string out;
  for (const char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

class HeadChecker {
 public:
  HeadChecker(const json& head, const std::string& file) : head_(head), file_(file) {}

  void run() {
    object_section("tool", true);
    text_member("tool", "version");
    text_member("tool", "git_revision");
    text_member("tool", "cuda_toolkit");
    object_section("invocation", false);
    text_member("invocation", "command");
    object_section("host", true);
    text_member("host", "hostname");
    object_section("driver", true);
    object_section("suite", false);
    text_member("suite", "name");
    object_section("verdict", false);
    text_member("verdict", "status");
    gpu();
    environment();
    devices();
    fields();
  }

 private:
  // A section that must be an object when present (required ones are checked present elsewhere).
  void object_section(const char* key, bool required) {
    if (!head_.contains(key)) return;
    const auto& v = head_[key];
    if (v.is_object() || (!required && v.is_null())) return;
    refuse(file_, std::string("/") + key, "an object", v);
  }

  void text_member(const char* section, const char* key) {
    if (!head_.contains(section) || !head_[section].is_object() || !head_[section].contains(key)) return;
    const auto& v = head_[section][key];
    if (!v.is_string() && !v.is_null()) refuse(file_, std::string("/") + section + "/" + key, "a string", v);
  }

  void gpu() {
    object_section("gpu", false);
    if (!head_.contains("gpu") || !head_["gpu"].is_object()) return;
    const auto& g = head_["gpu"];
    if (g.contains("ran") && !g["ran"].is_boolean()) refuse(file_, "/gpu/ran", "a boolean", g["ran"]);
    text_member("gpu", "reason");
  }

  void environment() {
    object_section("environment", false);
    if (!head_.contains("environment") || !head_["environment"].is_object()) return;
    for (const auto& [name, v] : head_["environment"].items())
      if (!v.is_string() && !v.is_null()) refuse(file_, "/environment/" + token(name), "a string", v);
  }

  void devices() {
    const auto& devs = head_.at("devices");  // an array: check_required_sections
    for (std::size_t i = 0; i < devs.size(); ++i) {
      const auto& d = devs[i];
      const std::string at = "/devices/" + std::to_string(i);
      if (!d.is_object()) refuse(file_, at, "an object", d);
      if (d.contains("uuid") && !d["uuid"].is_string() && !d["uuid"].is_null())
        refuse(file_, at + "/uuid", "a string", d["uuid"]);
      if (d.contains("index") && !d["index"].is_number_integer() && !d["index"].is_null())
        refuse(file_, at + "/index", "an integer", d["index"]);
    }
  }

  static bool counter_leaves(const json& v) {
    if (v.is_object()) {
      for (const auto& sub : v) if (!counter_leaves(sub)) return false;
      return true;
    }
    return v.is_number() || v.is_boolean() || v.is_null();
  }

  static bool fits(FieldKind kind, const json& v) {
    switch (kind) {
      case FieldKind::text: return v.is_string();
      case FieldKind::scalar: return v.is_string() || v.is_number() || v.is_boolean();
      case FieldKind::counter: return v.is_number() || (v.is_object() && counter_leaves(v));
    }
    return false;
  }

  static const char* wanted(FieldKind kind) {
    switch (kind) {
      case FieldKind::text: return "a string";
      case FieldKind::scalar: return "a string, a number or a boolean";
      case FieldKind::counter: return "a count, or an object of counts";
    }
    return "";
  }

  // The value a field is read from (the first pointer present and not null, as
  // lookup_text reads it) must fit the field. A pointer that names an object an earlier
  // pointer of the field already looked inside (/host/kernel after /host/kernel/release)
  // is passed over.
  void field(const EnvField& f, const json& doc, const std::string& prefix) {
    for (std::size_t k = 0; k < f.pointers.size(); ++k) {
      const auto& p = f.pointers[k];
      const json::json_pointer ptr(p);
      if (!doc.contains(ptr)) continue;
      const auto& v = doc.at(ptr);
      if (v.is_null()) continue;
      if (fits(f.kind, v)) return;
      bool looked_inside = false;
      for (std::size_t e = 0; e < k; ++e)
        looked_inside = looked_inside || f.pointers[e].rfind(p + "/", 0) == 0;
      if (looked_inside && v.is_object()) continue;
      refuse(file_, prefix + p, wanted(f.kind), v);
    }
  }

  void fields() {
    const auto& devs = head_.at("devices");
    for (const auto& f : env_fields()) {
      if (!f.per_device) {
        field(f, head_, "");
        continue;
      }
      for (std::size_t i = 0; i < devs.size(); ++i) field(f, devs[i], "/devices/" + std::to_string(i));
    }
  }

  const json& head_;
  const std::string& file_;
};

}  // namespace

void check_head_types(const json& head, const std::string& file) { HeadChecker(head, file).run(); }

}  // namespace cudadiag::compare
