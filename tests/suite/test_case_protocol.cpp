// The parent -> child request: a CaseSpec survives the trip, seeds and their kind included.
#include <catch2/catch.hpp>

#include "suite/case_protocol.h"

using namespace cudadiag;
using suite::CaseSpec;

namespace {

CaseSpec round_trip(const CaseSpec& c) { return suite::case_spec_from_json(suite::to_json(c)); }

}  // namespace

TEST_CASE("a case spec round-trips, with a series seed, a replayed one, or none", "[protocol]") {
  CaseSpec c;
  c.index = 3;
  c.case_id = "fault.oob-write";
  c.family = cases::Family::fault;
  c.params = report::json{{"reproducer", "oob-write"}};
  c.allocator = profiles::Allocator::fence_back;
  c.repeat = 500;
  c.fence_buffers = std::vector<std::string>{"out"};

  CHECK_FALSE(round_trip(c).seed);
  c.seed = repeat::SeedRequest{repeat::SeedRequest::Kind::series, 0xfedcba9876543210ull};
  auto back = round_trip(c);
  CHECK(back.seed == c.seed);
  CHECK(back.repeat == 500);
  CHECK(back.allocator == profiles::Allocator::fence_back);
  CHECK(back.fence_buffers == c.fence_buffers);
  c.seed = repeat::SeedRequest{repeat::SeedRequest::Kind::replay, 42};
  back = round_trip(c);
  REQUIRE(back.seed);
  CHECK(back.seed->kind == repeat::SeedRequest::Kind::replay);
  CHECK(back.seed->value == 42);
}

TEST_CASE("a malformed request names where it is wrong", "[protocol]") {
  CHECK_THROWS_WITH(suite::child_request_from_json(report::json{{"cases", {{{"case_id", "x"}, {"kernel", "warp"}}}}}),
                    Catch::Contains("request.cases[0]") && Catch::Contains("unknown family 'warp'"));
  CHECK_THROWS_WITH(suite::child_request_from_json(
                        report::json{{"cases", {{{"case_id", "x"}, {"kernel", "fault"}, {"seed", "soon"}}}}}),
                    Catch::Contains("request.cases[0]"));
}
