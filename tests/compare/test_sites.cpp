// compare pairs the fault sites of the GPU core dumps (Result::fault_sites): a case whose
// dumps name another exception, kernel or line on two hosts is shown, though its outcome
// and error code agree. Copies of the real H100/H200 reports, a site added to one case.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "compare/render_compare.h"
#include "compare/digest_reader.h"
#include "fixtures.h"
#include "util/atomic_file.h"

using namespace cudadiag;
using namespace cudadiag::compare;
using report::json;

namespace {

json sites_doc_of(const std::string& name) { return json::parse(read_file_or_stdin(compare_test::fixture(name))); }

json site(const std::string& kernel, int line) {
  return json{{"dump", "d.nvcudmp"},
              {"dump_bytes", 1000},
              {"read_ms", 1.0},
              {"kept", false},
              {"exception", {{"id", "warp_illegal_address"}, {"name", "Warp Illegal Address"}}},
              {"kernel", kernel},
              {"file", "fault.cu"},
              {"line", line},
              {"access", {{"status", "not_attempted"}}}};
}

json& result(json& doc, const std::string& case_id, const std::string& profile) {
  return compare_test::result_of(doc, case_id, profile);
}

Comparison compare_docs(const json& a, const json& b) {
  ReportSet set;
  set.reports.push_back(read_digest(a.dump(), "a.json", *set.tables));
  set.reports.push_back(read_digest(b.dump(), "b.json", *set.tables));
  return compare_digests(std::move(set), {});
}

const CaseAnalysis* find(const Comparison& c, const std::string& case_id, const std::string& profile) {
  for (const auto& cs : c.outcomes.cases)
    if (cs.key.case_id == case_id && cs.key.profile == profile) return &cs;
  return nullptr;
}

}  // namespace

TEST_CASE("compare: a case whose fault site differs between hosts is shown", "[compare][sites]") {
  json a = sites_doc_of("device_h100_s11.json");
  json b = sites_doc_of("device_h200_s11.json");
  result(a, "fault.oob-write", "fence")["fault_sites"] = json::array({site("oob_write(float*, int)", 12)});
  result(b, "fault.oob-write", "fence")["fault_sites"] = json::array({site("oob_write(float*, int)", 12)});
  auto same = compare_docs(a, b);
  const auto* cs = find(same, "fault.oob-write", "fence");
  REQUIRE(cs);
  CHECK_FALSE(cs->site_differs);

  result(b, "fault.oob-write", "fence")["fault_sites"] = json::array({site("oob_write(float*, int)", 14)});
  auto other = compare_docs(a, b);
  cs = find(other, "fault.oob-write", "fence");
  REQUIRE(cs);
  CHECK(cs->site_differs);
  CHECK_THAT(cs->explanation, Catch::Contains("the fault site differs") &&
                                  Catch::Contains("Warp Illegal Address in oob_write(float*, int) at fault.cu:12") &&
                                  Catch::Contains("at fault.cu:14"));
  const json cmp = comparison_json(other, {});
  bool listed = false;
  for (const auto& row : cmp["outcome_diff"])
    if (row["case_id"] == "fault.oob-write" && row["profile"] == "fence") {
      listed = true;
      CHECK(row["site_differs"] == true);
    }
  CHECK(listed);

  // A host without dumps (not armed) says nothing about the site.
  result(b, "fault.oob-write", "fence").erase("fault_sites");
  cs = find(compare_docs(a, b), "fault.oob-write", "fence");
  REQUIRE(cs);
  CHECK_FALSE(cs->site_differs);
}
