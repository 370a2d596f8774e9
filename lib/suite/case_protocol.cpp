#include "suite/case_protocol.h"

#include <stdexcept>

namespace cudadiag::suite {

json to_json(const CaseSpec& c) {
  json j{{"index", c.index},
         {"case_id", c.case_id},
         {"kernel", cases::to_string(c.family)},
         {"params", c.params},
         {"allocator", profiles::to_string(c.allocator)},
         {"repeat", c.repeat}};
  if (c.seed) {
    j["seed"] = c.seed->value;
    if (c.seed->kind == repeat::SeedRequest::Kind::replay) j["replay"] = true;
  }
  if (c.fence_buffers) j["fence_buffers"] = *c.fence_buffers;
  return j;
}

json to_json(const ChildRequest& r) {
  json cases = json::array();
  for (const auto& c : r.cases) cases.push_back(to_json(c));
  return json{{"cases", cases}};
}

CaseSpec case_spec_from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error("case: not an object");
  CaseSpec c;
  try {
    c.index = j.value("index", 0);
    c.case_id = j.at("case_id").get<std::string>();
    const std::string kernel = j.at("kernel").get<std::string>();
    const auto family = cases::parse_family(kernel);
    if (!family) throw std::runtime_error("kernel: unknown family '" + kernel + "'");
    c.family = *family;
    c.params = j.value("params", json::object());
    const std::string allocator = j.value("allocator", "pool");
    const auto a = profiles::parse_allocator(allocator);
    if (!a) throw std::runtime_error("allocator: unknown '" + allocator + "'");
    c.allocator = *a;
    c.repeat = j.value("repeat", 1);
    if (j.contains("seed"))
      c.seed = repeat::SeedRequest{j.value("replay", false) ? repeat::SeedRequest::Kind::replay
                                                            : repeat::SeedRequest::Kind::series,
                                   j.at("seed").get<std::uint64_t>()};
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

std::string result_line(int index, const report::Result& r) {
  json j{{"index", index}};
  const json result = report::to_json(r);
  for (const auto& [k, v] : result.items()) j[k] = v;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string done_line(bool finished, const std::string& reason) {
  json j{{"done", finished}};
  if (!reason.empty()) j["reason"] = reason;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace cudadiag::suite
