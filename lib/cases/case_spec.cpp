#include "cases/case_spec.h"

#include <stdexcept>

namespace cudadiag::cases {

json to_json(const CaseSpec& c) {
  json j{{"index", c.index},   {"case_id", c.case_id},     {"kernel", c.kernel},
         {"params", c.params}, {"allocator", c.allocator}, {"repeat", c.repeat}};
  if (c.fence_buffers) j["fence_buffers"] = *c.fence_buffers;
  return j;
}

json to_json(const ChildRequest& r) {
  json cases = json::array();
  for (const auto& c : r.cases) cases.push_back(to_json(c));
  return json{{"device_ordinal", r.device_ordinal}, {"cases", cases}};
}

CaseSpec case_spec_from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error("case: not an object");
  CaseSpec c;
  try {
    c.index = j.value("index", 0);
    c.case_id = j.at("case_id").get<std::string>();
    c.kernel = j.at("kernel").get<std::string>();
    c.params = j.value("params", json::object());
    c.allocator = j.value("allocator", "pool");
    c.repeat = j.value("repeat", 1);
    if (j.contains("fence_buffers") && j["fence_buffers"].is_array())
      c.fence_buffers = j["fence_buffers"].get<std::vector<std::string>>();
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("case: ") + e.what());
  }
  return c;
}

ChildRequest child_request_from_json(const json& j) {
  if (!j.is_object() || !j.contains("cases") || !j["cases"].is_array())
    throw std::runtime_error("request: expected an object with a 'cases' array");
  ChildRequest r;
  r.device_ordinal = j.value("device_ordinal", 0);
  size_t i = 0;
  for (const auto& cj : j["cases"]) {
    try {
      r.cases.push_back(case_spec_from_json(cj));
    } catch (const std::exception& e) {
      throw std::runtime_error("request.cases[" + std::to_string(i) + "]: " + e.what());
    }
    ++i;
  }
  return r;
}

}  // namespace cudadiag::cases
