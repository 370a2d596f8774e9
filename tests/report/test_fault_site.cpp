// The typed fault site of a result (report/fault_site.h): JSON both ways, the schema,
// the one-line summary and both text renderings.
#include <catch2/catch.hpp>

#include "report/json_reader.h"
#include "report/render.h"
#include "report/schema.h"
#include "sample_report.h"
#include "tests/support/unwrap.h"
#include "util/errors.h"

using namespace cudadiag;
using report::json;

namespace {

report::FaultSite uaf_site() {
  report::FaultSite s;
  s.dump = "core-fence-0_4242.nvcudmp";
  s.dump_bytes = 280565;
  s.read_ms = 12.4;
  s.device = "NVIDIA H100 80GB HBM3";
  s.exception = "Warp Illegal Address";
  s.exception_id = report::ExceptionKind::warp_illegal_address;
  s.kernel = "touch(float*, int)";
  s.grid = report::Triple{64, 1, 1};
  s.block_dim = report::Triple{256, 1, 1};
  s.function = "touch(float*, int)";
  s.function_offset = 0x90;
  s.pc = 0x7f0012340090ull;
  s.file = "uaf.cu";
  s.line = 4;
  s.faulting_warps = 1;
  s.faulting_lanes = 32;
  s.faulting_blocks = 1;
  s.block = report::Triple{8, 0, 0};
  s.thread = report::Triple{128, 0, 0};
  s.instruction = "LDG.E R0, desc[UR4][R2.64]";
  s.address_status = report::AddressStatus::proven;
  s.access = report::AccessKind::read;
  s.access_bytes = 4;
  s.address = 0x7faa1be02200ull;
  s.alignment = 512;
  s.placement = "8704 bytes into allocation #0 (8388608 bytes), freed before the launch";
  return s;
}

}  // namespace

TEST_CASE("fault site: one line names kernel, line, thread, the byte and where it lies", "[fault_site]") {
  CHECK(report::site_line(uaf_site()) ==
        "Warp Illegal Address in touch(float*, int) at uaf.cu:4, thread (128,0,0) of block (8,0,0): read 4 bytes at "
        "0x7faa1be02200: 8704 bytes into allocation #0 (8388608 bytes), freed before the launch");
  auto mis = uaf_site();
  mis.exception = "Warp Misaligned Address";
  mis.access_bytes = 16;
  mis.alignment = 4;
  mis.placement.clear();
  CHECK_THAT(report::site_line(mis), Catch::Contains("read 16 bytes at 0x7faa1be02200 (a 16-byte access at an address "
                                                      "aligned to 4 bytes)"));
  auto lost = uaf_site();
  lost.address_status = report::AddressStatus::not_recoverable;
  lost.address.reset();
  CHECK_THAT(report::site_line(lost), Catch::EndsWith("the address is not recoverable from the dump") &&
                                          !Catch::Contains("0x7faa"));
  report::FaultSite hang;
  hang.dump = "h.nvcudmp";
  hang.waiting.push_back({"wait_flag(int volatile*)", "wait_flag(int volatile*)", 0x70, "hang.cu", 4, 3, 96});
  hang.waiting.push_back({"wait_flag(int volatile*)", "wait_flag(int volatile*)", 0x80, "hang.cu", 5, 1, 32});
  CHECK(report::site_line(hang) ==
        "no exception recorded (a dump taken on request, or at a trap): warps wait in wait_flag(int volatile*) at hang.cu:4 (3 of 4 "
        "warps there)");
}

TEST_CASE("fault site: JSON round trip and the schema accept it; bad members are named", "[fault_site]") {
  auto rep = test::sample_report();
  auto& r = rep.results.front();
  r.fault_sites.push_back(uaf_site());
  report::FaultSite bad;
  bad.dump = "x.nvcudmp";
  bad.unreadable = "unreadable dump: truncated";
  r.fault_sites.push_back(bad);
  const json j = report::to_json(rep);
  CHECK(report::validate_report(j).empty());
  const auto back = report::report_from_json(j, "r.json");
  REQUIRE(back.results.front().fault_sites.size() == 2);
  const auto& s = back.results.front().fault_sites[0];
  CHECK(report::to_json(s) == report::to_json(uaf_site()));
  CHECK(back.results.front().fault_sites[1].unreadable == "unreadable dump: truncated");

  json broken = j;
  broken["results"][0]["fault_sites"][0]["access"]["address"] = "7faa";
  CHECK_FALSE(report::validate_report(broken).empty());
  CHECK_THROWS_WITH(report::report_from_json(broken, "r.json"),
                    Catch::Contains("/results/0/fault_sites/0/access/address"));
}

TEST_CASE("fault site: text and Markdown show the site first, with the dump's size and read time", "[fault_site]") {
  auto rep = test::sample_report();
  report::Result r = test::sample_result("cuda_error");
  r.expectation_met = false;
  r.reason = "the GPU core dump";
  r.fault_sites.push_back(uaf_site());
  rep.results = {r};
  for (const auto f : {report::Format::text, report::Format::md}) {
    const std::string out = test::unwrapped(report::render(rep, f));
    CHECK_THAT(out, Catch::Contains("Warp Illegal Address in touch(float*, int) at uaf.cu:4"));
    CHECK_THAT(out, Catch::Contains("core-fence-0_4242.nvcudmp (280565 bytes, read in 12 ms, removed after reading)"));
    // The site comes first among the facts, right after the reason.
    const auto site_at = out.find("Warp Illegal Address in touch");
    CHECK(site_at > out.find("the GPU core dump"));
    CHECK(site_at < out.find("core-fence-0_4242"));
  }
}
