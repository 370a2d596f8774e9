// The `tma` command's logic: which descriptors, their host verdicts, the verdict.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "tma/tma_check.h"
#include "util/errors.h"

using namespace cudadiag;
using report::Outcome;
using report::VerdictStatus;

namespace {

std::string data(const std::string& name) {
  std::ifstream in(std::string(CUDADIAG_TEST_DATA) + "/tma/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

tma::CheckRequest from_log(const std::string& name) {
  tma::CheckRequest req;
  req.log_name = name;
  req.log_text = data(name);
  return req;
}

}  // namespace

TEST_CASE("tma check: the seed printout gives one item per block, each judged on the host", "[tma][check]") {
  auto items = tma::collect_items(from_log("flashinfer_seqlen1.log"));
  REQUIRE(items.size() == 3);
  CHECK(items[0].id == "tma.log.block1");
  CHECK(items[0].printed_result == 1);
  tma::validate_items(items, 90);
  const auto out = tma::judge_items(items, false, false, false);
  CHECK(out.verdict.status == VerdictStatus::findings);
  CHECK(out.verdict.reasons.front() == "3 of 3 descriptor(s) break cuTensorMapEncodeTiled's rules");
  REQUIRE(out.results.size() == 3);  // host results only: no device part
  CHECK(out.results[0].outcome == Outcome::host_invalid);
  CHECK_THAT(out.results[0].reason, Catch::Contains("global_stride"));
  const std::string text = tma::render_items(items, false, "GPU part: not run", false);
  // Rows by case id, the details of each block under its id and source.
  CHECK_THAT(text, Catch::Contains("tma.log.block1 ") && Catch::Contains("INVALID:") &&
                       Catch::Contains("tma.log.block3 ("));
}

TEST_CASE("tma check: a valid descriptor is ok without the GPU part, no_gpu when it was wanted", "[tma][check]") {
  auto items = tma::collect_items(from_log("seqlen2_ok.log"));
  tma::validate_items(items, 90);
  CHECK(tma::judge_items(items, false, false, false).verdict.status == VerdictStatus::ok);
  CHECK(tma::judge_items(items, false, true, false).verdict.status == VerdictStatus::no_gpu);

  // A device result that disagrees is a finding.
  report::Result device;
  device.outcome = Outcome::driver_disagrees;
  device.reason = "the driver rejected it";
  items[0].device = device;
  const auto out = tma::judge_items(items, false, true, true);
  CHECK(out.verdict.status == VerdictStatus::findings);
  CHECK(out.results.size() == 2);
  CHECK_THAT(out.verdict.reasons.back(), Catch::Contains("driver_disagrees"));
}

TEST_CASE("tma check: the explicit form and its mistakes", "[tma][check]") {
  tma::CheckRequest req;
  req.explicit_form.dtype = "bf16";
  req.explicit_form.dims = {128, 2, 32};
  req.explicit_form.strides = {8192, 256};
  req.explicit_form.box = {64, 128, 1};
  const auto items = tma::collect_items(req);
  REQUIRE(items.size() == 1);
  CHECK(items[0].d.rank == 3);

  auto bad = req;
  bad.explicit_form.strides = {2, 8192, 256};  // the printout's form, with the element stride
  CHECK_THROWS_WITH(tma::collect_items(bad), Catch::Contains("drop the first value"));
  bad = req;
  bad.explicit_form.swizzle = "64K";
  CHECK_THROWS_WITH(tma::collect_items(bad), Catch::Contains("--swizzle '64K'"));
  bad = req;
  bad.log_name = "x.log";
  CHECK_THROWS_AS(tma::collect_items(bad), UsageError);  // both forms

  auto sweep = req;
  sweep.sweeps = {"seq-len=0..3"};
  const auto points = tma::collect_items(sweep);
  CHECK(points.size() == 4);
  CHECK(points[1].id == "tma.sweep.seq-len-1");
}

TEST_CASE("tma check: the rule table compares the validator with each row's expectation", "[tma][check]") {
  tma::CheckRequest req;
  req.table = true;
  auto items = tma::collect_items(req);
  REQUIRE(items.size() > 10);
  tma::validate_items(items, 90);
  const auto out = tma::judge_items(items, true, false, false);
  // The table is written for the validator: no row differs.
  CHECK(out.verdict.status == VerdictStatus::ok);
  const auto section = tma::tma_section(items, true, "as-is", "table");
  CHECK(section["rows"].size() == items.size());
  CHECK(section["rows"][0].contains("expected_errors"));
}
