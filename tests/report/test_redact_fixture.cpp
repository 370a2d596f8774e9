// --redact on the report model: the redacted JSON of fixed inputs (a hostname in argv,
// output, Xid lines, paths, object keys; UUIDs and PCI ids in every form; --env values;
// hostnames that are words of the report) is compared byte for byte with what the
// redaction that walked the JSON form wrote for them (tests/report/data/redact/; under
// keyed tokens, regenerate with CUDADIAG_UPDATE_GOLDEN=1: only the tokens may change).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "redaction_keys.h"
#include "report/redact.h"
#include "report/report.h"

using namespace cudadiag;
using report::json;

namespace {

const std::string kDir = std::string(CUDADIAG_SOURCE_DIR) + "/tests/report/data/redact/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One fixed key: the expected files hold its tokens.
report::RedactionInputs inputs_of(const std::string& name) {
  report::RedactionInputs in = test::keyed();
  if (name == "run") in.env = {{"HF_TOKEN", "hf_abc123"}, {"CUDA_MODULE_LOADING", "ab1"}};
  return in;
}

const std::vector<std::string> kCases = {"run", "vm", "gpu", "ok"};

}  // namespace

TEST_CASE("redacting the report gives the same bytes as the JSON-walking redaction did", "[redact]") {
  for (const auto& name : kCases) {
    INFO(name);
    const json input = json::parse(slurp(kDir + name + ".input.json"));
    auto r = report::report_from_json(input, name);
    report::redact(r, inputs_of(name));
    const std::string got = report::dump_json(report::to_json(r), 2) + "\n";
    if (std::getenv("CUDADIAG_UPDATE_GOLDEN")) {
      std::ofstream(kDir + name + ".expected.json", std::ios::binary) << got;
      continue;
    }
    CHECK(got == slurp(kDir + name + ".expected.json"));
  }
}

TEST_CASE("an --env value that spells a field name leaves the report's own fields alone", "[redact]") {
  // The value matches anywhere (4 characters or more), object keys included: on the
  // report's members the field names are not text, so the repeat statistics stay whole.
  const json input = json::parse(slurp(kDir + "run.input.json"));
  auto r = report::report_from_json(input, "run");
  REQUIRE(r.results[2].repeats);
  report::RedactionInputs in;
  in.env = {{"MODE", "failures"}};
  report::redact(r, in);
  REQUIRE(r.results[2].repeats);
  CHECK(r.results[2].repeats->runs == 10);
  CHECK(r.results[2].repeats->failures == 4);
}
