// Each report struct's field list (report/report_fields.h) against its object in the
// report's JSON Schema: the keys the writer may emit are the schema's properties, and the
// properties the schema requires are the keys always written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "report/report_fields.h"
#include "report/schema.h"

using namespace cudadiag;
using report::json;

namespace {

template <typename S>
bool is_command_section(const std::string& property) {
  if constexpr (std::is_same_v<S, report::Report>) {
    const auto& sections = report::fields::kCommandSections;
    return std::any_of(sections.begin(), sections.end(), [&](const char* s) { return property == s; });
  } else {
    return false;
  }
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("a report struct's field list is its object in the schema", "[report_fields]",
                        report::fields::ListedStructs) {
  const auto described = report::fields::describe<TestType>();
  const std::string& pointer = described.schema_pointer;
  INFO("schema object " << (pointer.empty() ? "/" : pointer));
  const json& object = report::report_schema().at(json::json_pointer(pointer));
  REQUIRE(object.contains("properties"));
  const auto& keys = described.keys;
  REQUIRE_FALSE(keys.empty());

  std::set<std::string> properties;
  for (const auto& [name, _] : object.at("properties").items()) properties.insert(name);
  std::set<std::string> listed;
  for (const auto& k : keys) {
    INFO("field " << k.name);
    CHECK(listed.insert(k.name).second);  // each key once
    CHECK(properties.count(k.name) == 1);
  }
  for (const auto& p : properties) {
    INFO("schema property " << p);
    CHECK((listed.count(p) == 1 || is_command_section<TestType>(p)));
  }
  for (const auto& r : object.value("required", json::array())) {
    const auto name = r.get<std::string>();
    INFO("required property " << name);
    const auto it = std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return k.name == name; });
    REQUIRE(it != keys.end());
    CHECK(it->always);
  }
}

TEST_CASE("the report's command sections are not fields", "[report_fields]") {
  const auto keys = report::fields::describe<report::Report>().keys;
  for (const char* s : report::fields::kCommandSections) {
    INFO(s);
    CHECK(std::none_of(keys.begin(), keys.end(), [&](const auto& k) { return k.name == s; }));
  }
}

TEST_CASE("a command section of a report read back stays a section, after the fields", "[report_fields]") {
  auto r = report::new_report({"cudadiag", "compare"}, "compare");
  r.extra.set("comparison", report::Fields{{"hosts", 2}});
  const json doc = report::to_json(r);
  const auto back = report::report_from_json(doc);
  REQUIRE(back.extra.find("comparison"));
  CHECK_FALSE(back.extra.find("verdict"));
  CHECK(report::dump_json(report::to_json(back)) == report::dump_json(doc));
  CHECK(doc.items().begin().key() == "schema_version");
}
