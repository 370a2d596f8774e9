#include <catch2/catch.hpp>

#include "cases/catalog.h"
#include "cases/expectation.h"
#include "tma/tma_json.h"
#include "tma/validator.h"

using namespace cudadiag;

TEST_CASE("tma catalog: host-only seed cases decided by the validator", "[tma][catalog]") {
  const auto* fam = cases::find_family("tma");
  REQUIRE(fam != nullptr);
  REQUIRE(fam->host_eval);
  const auto* seq1 = cases::find_case("tma.seed-seq1.host");
  const auto* seq2 = cases::find_case("tma.seed-seq2.host");
  REQUIRE(seq1 != nullptr);
  REQUIRE(seq2 != nullptr);
  CHECK(seq1->host_only);
  auto r1 = fam->host_eval(*seq1);
  CHECK(r1.outcome == report::Outcome::host_invalid);
  CHECK_THAT(r1.reason, Catch::Contains("tma.global_stride.multiple_of_16"));
  cases::judge(r1, cases::Expectation::parse(cases::expectation_text(*seq1, "default")));
  CHECK(r1.expectation_met == true);
  auto r2 = fam->host_eval(*seq2);
  CHECK(r2.outcome == report::Outcome::host_valid);
  cases::judge(r2, cases::Expectation::parse(cases::expectation_text(*seq2, "default")));
  CHECK(r2.expectation_met == true);
}

TEST_CASE("tma catalog: GPU cases are well-formed and their descriptors fit the expectation", "[tma][catalog]") {
  int gpu_cases = 0;
  for (const auto& c : cases::all_cases()) {
    if (c.family != cases::Family::tma) continue;
    INFO(c.id);
    CHECK(cases::normalize_params(cases::Family::tma, c.params) == c.params);  // already normalised
    const auto v = tma::validate(tma::descriptor_from_json(c.params.at("descriptor")));
    const auto expected = cases::expectation_text(c, "default");
    CHECK_NOTHROW(cases::Expectation::parse(expected));
    if (c.host_only) continue;
    ++gpu_cases;
    // A case expected to load must be valid; the encode-failure case must be invalid.
    if (expected == "ok") CHECK(v.valid());
    if (expected.find("error") != std::string::npos) CHECK_FALSE(v.valid());
  }
  CHECK(gpu_cases >= 4);
}

TEST_CASE("tma params: normaliser fills defaults and names bad input", "[tma][catalog]") {
  const auto out = cases::normalize_params(
      cases::Family::tma, cases::json{{"descriptor", {{"dtype", "fp16"}, {"dims", {64}}, {"strides", cases::json::array()}, {"box", {64}}}}});
  CHECK(out["load"] == true);
  CHECK(out["descriptor"]["element_strides"] == cases::json::array({1}));
  CHECK_THROWS_WITH(cases::normalize_params(cases::Family::tma, cases::json::object()), Catch::Contains("descriptor: missing"));
  CHECK_THROWS_WITH(cases::normalize_params(cases::Family::tma, cases::json{{"descriptor", {{"dims", {1}}}}}),
                    Catch::Contains("descriptor.strides"));
}
