#include "tma/tma_json.h"
#include "util/text_layout.h"

#include <cstdio>
#include <stdexcept>

namespace cudadiag::tma {
namespace {

template <typename E>
json enum_json(E v) {
  if (is_known(v)) return to_string(v);
  return static_cast<int>(v);
}

template <typename E, typename Parse>
E enum_from(const json& j, const char* key, E fallback, Parse parse) {
  if (!j.contains(key)) return fallback;
  const auto& v = j[key];
  if (v.is_number_integer()) return static_cast<E>(v.get<int>());
  if (v.is_string()) {
    if (auto e = parse(v.get<std::string>())) return *e;
    throw std::invalid_argument(std::string(key) + ": unknown value '" + v.get<std::string>() + "'");
  }
  throw std::invalid_argument(std::string(key) + ": expected a name or a number");
}

template <typename T>
std::vector<T> array_of(const json& j, const char* key, bool required) {
  std::vector<T> out;
  if (!j.contains(key)) {
    if (required) throw std::invalid_argument(std::string(key) + ": missing");
    return out;
  }
  if (!j[key].is_array()) throw std::invalid_argument(std::string(key) + ": expected an array of numbers");
  for (const auto& v : j[key]) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<long long>() >= 0))
      throw std::invalid_argument(std::string(key) + ": expected non-negative integers");
    out.push_back(static_cast<T>(v.get<unsigned long long>()));
  }
  return out;
}

}  // namespace

json to_json(const Descriptor& d) {
  char addr[32];
  std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(d.address));
  return json{{"dtype", enum_json(d.data_type)},
              {"rank", d.rank},
              {"dims", d.dims},
              {"strides", d.strides},
              {"box", d.box},
              {"element_strides", d.element_strides},
              {"interleave", enum_json(d.interleave)},
              {"swizzle", enum_json(d.swizzle)},
              {"l2_promotion", enum_json(d.l2_promotion)},
              {"oob_fill", enum_json(d.oob_fill)},
              {"address", addr}};
}

Descriptor descriptor_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("descriptor: expected an object");
  Descriptor d;
  d.data_type = enum_from(j, "dtype", DataType::bfloat16, parse_data_type);
  d.dims = array_of<std::uint64_t>(j, "dims", true);
  d.rank = j.contains("rank") ? j["rank"].get<unsigned>() : static_cast<unsigned>(d.dims.size());
  d.strides = array_of<std::uint64_t>(j, "strides", true);
  d.box = array_of<std::uint32_t>(j, "box", true);
  d.element_strides = array_of<std::uint32_t>(j, "element_strides", false);
  if (d.element_strides.empty()) d.element_strides.assign(d.rank, 1);
  d.interleave = enum_from(j, "interleave", Interleave::none, parse_interleave);
  d.swizzle = enum_from(j, "swizzle", Swizzle::none, parse_swizzle);
  d.l2_promotion = enum_from(j, "l2_promotion", L2Promotion::none, parse_l2_promotion);
  d.oob_fill = enum_from(j, "oob_fill", OobFill::none, parse_oob_fill);
  if (j.contains("address")) {
    const auto& a = j["address"];
    if (a.is_number_unsigned() || a.is_number_integer()) {
      d.address = a.get<std::uint64_t>();
    } else if (a.is_string()) {
      const auto s = a.get<std::string>();
      size_t used = 0;
      try {
        d.address = std::stoull(s, &used, 0);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != s.size() || s.empty()) throw std::invalid_argument("address: '" + s + "' is not a number");
    } else {
      throw std::invalid_argument("address: expected \"0x...\" or a number");
    }
  }
  return d;
}

json to_json(const Finding& f) {
  json j{{"rule", f.rule}, {"severity", to_string(f.severity)}, {"field", f.field}};
  if (f.index >= 0) j["index"] = f.index;
  j["value"] = f.value;
  j["message"] = f.message;
  j["fix"] = f.fix;
  return j;
}

json to_json(const Verdict& v) {
  json findings = json::array();
  for (const auto& f : v.findings) findings.push_back(to_json(f));
  return json{{"valid", v.valid()}, {"errors", v.errors()}, {"warnings", v.warnings()}, {"findings", findings}};
}

std::string format_findings(const Verdict& v) {
  std::string out;
  for (const auto& f : v.findings) {
    std::string head = f.rule + "  " + f.field;
    if (f.index >= 0) head += "[" + std::to_string(f.index) + "]";
    head += " = " + f.value;
    out += text::hanging(f.severity == Severity::error ? "  error    " : "  warning  ", "           ", head);
    out += text::hanging("      ", "      ", f.message);
    out += text::hanging("      fix: ", "           ", f.fix);
  }
  return out;
}

}  // namespace cudadiag::tma
