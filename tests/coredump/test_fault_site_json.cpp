// The site's JSON form: versioned, addresses as hex strings, and read back to the same
// values (it is to become a report section).
#include <catch2/catch.hpp>

#include "coredump/fault_site.h"
#include "coredump/fault_site_json.h"
#include "fixtures.h"
#include "util/errors.h"

using namespace cudadiag;
using namespace cudadiag::coredump;
using cudadiag::test::coredump_data;
using cudadiag::test::stored_listing;

TEST_CASE("a site survives to_json / fault_site_from_json") {
  for (const char* name : {"use_after_free", "far_write", "gather_bad_index", "misaligned16", "device_assert"}) {
    INFO(name);
    const auto s = read_fault_site(coredump_data(std::string(name) + ".nvcudmp"), stored_listing(name), "none");
    const auto j = to_json(s);
    const auto back = fault_site_from_json(j, "test");
    CHECK(to_json(back) == j);
    CHECK(back.kernel == s.kernel);
    CHECK(back.pc == s.pc);
    CHECK(back.address == s.address);
    CHECK(back.threads.size() == s.threads.size());
  }
}

TEST_CASE("the JSON names the access with hex addresses and the document carries its version") {
  const auto s = read_fault_site(coredump_data("misaligned16.nvcudmp"), stored_listing("misaligned16"), "none");
  const auto doc = sites_document({s});
  CHECK(doc["fault_site_version"] == kFaultSiteVersion);
  const auto& j = doc["sites"][0];
  CHECK(j["exception"]["id"] == "warp_misaligned_address");
  CHECK(j["pc"]["basis"] == "warp_error_pc");
  CHECK(j["pc"]["address"] == "0x7f45837ac270");
  CHECK(j["access"]["status"] == "proven");
  CHECK(j["access"]["bytes"] == 16);
  CHECK(j["access"]["alignment"] == 4);
  CHECK(j["access"]["address"] == "0x7f457be00004");
  CHECK(j["line"]["line"] == 4);
}

TEST_CASE("an unreadable dump is a site with only file and unreadable") {
  const auto s = read_fault_site(coredump_data("far_write.cu"), {}, "none");
  REQUIRE_FALSE(s.unreadable.empty());
  const auto j = to_json(s);
  CHECK(j.size() == 2);
  CHECK(fault_site_from_json(j, "t").unreadable == s.unreadable);
}

TEST_CASE("malformed site JSON is an input error naming the member") {
  auto j = to_json(read_fault_site(coredump_data("use_after_free.nvcudmp"), {}, "none"));
  j["pc"]["address"] = "7f00";
  CHECK_THROWS_WITH(fault_site_from_json(j, "site.json"), Catch::Contains("/pc/address"));
  j = to_json(read_fault_site(coredump_data("use_after_free.nvcudmp"), {}, "none"));
  j["kernel"]["grid"] = report::json::array({1, 2});
  CHECK_THROWS_AS(fault_site_from_json(j, "site.json"), InputError);
}

TEST_CASE("a site whose address was never looked at writes an empty status and reads it back as such") {
  // guard_store: the SM's exception and no warp left, so no address was looked at.
  const auto s = read_fault_site(coredump_data("slim/guard_store.nvcudmp"), DisassembleFn{}, "none");
  REQUIRE(s.unreadable.empty());
  CHECK_FALSE(s.address_status);
  const auto j = to_json(s);
  CHECK(j["access"]["status"] == "");
  CHECK(j["exception"]["reported_by"] == "sm");
  CHECK_FALSE(j["access"].contains("kind"));
  const auto back = fault_site_from_json(j, "t");
  CHECK_FALSE(back.address_status);
  CHECK(back.reported_by == ReportedBy::sm);
  CHECK(to_json(back) == j);
}

TEST_CASE("the site's words are read as words: an unknown one is an input error naming the member and the words") {
  const auto good = to_json(read_fault_site(coredump_data("misaligned16.nvcudmp"), stored_listing("misaligned16"), "none"));
  const auto back = fault_site_from_json(good, "t");
  CHECK(back.address_status == report::AddressStatus::proven);
  CHECK(back.access == report::AccessKind::read);
  CHECK(back.space == report::MemorySpace::global);
  CHECK(back.reported_by == ReportedBy::lanes);
  CHECK(back.exception_id == report::ExceptionKind::warp_misaligned_address);
  struct Bad {
    const char* pointer;
    const char* words;
  };
  for (const Bad& b : {Bad{"/access/status", "proven|not_recoverable"}, Bad{"/access/kind", "read|write|atomic"},
                       Bad{"/access/space", "global|shared|local|generic"}, Bad{"/exception/reported_by", "lanes|sm"},
                       Bad{"/exception/id", "warp_illegal_address"}}) {
    INFO(b.pointer);
    auto j = good;
    j[report::json::json_pointer(b.pointer)] = "sideways";
    CHECK_THROWS_WITH(fault_site_from_json(j, "site.json"),
                      Catch::Contains(b.pointer) && Catch::Contains("'sideways'") && Catch::Contains(b.words));
  }
}
