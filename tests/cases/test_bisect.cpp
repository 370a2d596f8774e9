#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cases/bisect.h"

using cudadiag::cases::bisect;
using cudadiag::cases::Bisection;

namespace {

// A case whose kernel overruns `culprit` at the ends in `sides` ("fence-back" for the end,
// "fence-front" for the start). Records every probe.
struct FakeCase {
  std::string culprit;
  std::set<std::string> sides;
  std::vector<std::pair<std::vector<std::string>, std::string>> probes;

  bool operator()(const std::vector<std::string>& fenced, cudadiag::profiles::Allocator a) {
    const std::string allocator(cudadiag::profiles::to_string(a));
    probes.emplace_back(fenced, allocator);
    const bool fenced_culprit = std::find(fenced.begin(), fenced.end(), culprit) != fenced.end();
    return fenced_culprit && sides.count(allocator) > 0;
  }
};

const std::vector<std::string> kBuffers = {"q", "k", "v", "idx", "out", "lse", "scratch"};

}  // namespace

TEST_CASE("bisection finds every buffer of a list and the end it overruns") {
  for (const auto& culprit : kBuffers) {
    FakeCase fake{culprit, {"fence-back"}, {}};
    const Bisection f = bisect(kBuffers, cudadiag::profiles::Allocator::fence_back, std::ref(fake));
    INFO("culprit " << culprit);
    REQUIRE(f.found);
    CHECK(f.name == culprit);
    CHECK(f.direction == cudadiag::report::BufferDirection::end_overrun);
    CHECK(f.extra_runs == static_cast<int>(fake.probes.size()));
    // control + at most 2 probes per halving of 7 buffers (3 levels) + the other side
    CHECK(f.extra_runs <= 1 + 2 * 3 + 1);
    // The first probe is the control with nothing fenced.
    CHECK(fake.probes.front().first.empty());
    // The last probe is the found buffer alone under the other fence side.
    CHECK(fake.probes.back().first == std::vector<std::string>{culprit});
    CHECK(fake.probes.back().second == "fence-front");
  }
}

TEST_CASE("bisection reports an underrun found under fence-front") {
  FakeCase fake{"idx", {"fence-front"}, {}};
  const auto f = bisect(kBuffers, cudadiag::profiles::Allocator::fence_front, std::ref(fake));
  REQUIRE(f.found);
  CHECK(f.name == "idx");
  CHECK(f.direction == cudadiag::report::BufferDirection::start_underrun);
}

TEST_CASE("a buffer faulting on both sides has direction unknown with the reason") {
  FakeCase fake{"scratch", {"fence-back", "fence-front"}, {}};
  const auto f = bisect(kBuffers, std::ref(fake));
  REQUIRE(f.found);
  CHECK(f.name == "scratch");
  CHECK(f.direction == cudadiag::report::BufferDirection::unknown);
  CHECK(f.note.find("use after free") != std::string::npos);
}

TEST_CASE("a single buffer is confirmed alone before it is named") {
  FakeCase fake{"out", {"fence-back"}, {}};
  const auto f = bisect({"out"}, std::ref(fake));
  REQUIRE(f.found);
  CHECK(f.name == "out");
  // control, confirmation, other side
  CHECK(f.extra_runs == 3);
}

TEST_CASE("a fault that does not depend on the fence is not attributed to a buffer") {
  int calls = 0;
  const auto f = bisect(kBuffers, [&](const std::vector<std::string>&, cudadiag::profiles::Allocator) {
    ++calls;
    return true;  // a wild pointer: faults whatever is fenced
  });
  CHECK_FALSE(f.found);
  CHECK(f.extra_runs == 1);
  CHECK(calls == 1);
  CHECK(f.note.find("no buffer fenced") != std::string::npos);
  CHECK_FALSE(cudadiag::cases::reported_buffer(f));
  CHECK(cudadiag::cases::bisection_fields(f).bool_or("found", true) == false);
}

TEST_CASE("a fault that needs two fenced buffers is reported as not found") {
  // Faults only when both "k" and "out" are fenced: no half holds both.
  const auto f = bisect({"k", "out"}, [](const std::vector<std::string>& fenced, cudadiag::profiles::Allocator) {
    return std::find(fenced.begin(), fenced.end(), "k") != fenced.end() &&
           std::find(fenced.begin(), fenced.end(), "out") != fenced.end();
  });
  CHECK_FALSE(f.found);
  CHECK(f.note.find("neither half") != std::string::npos);
}

TEST_CASE("an intermittent fault that vanishes when the buffer is fenced alone is not attributed") {
  const auto f = bisect({"only"}, [](const std::vector<std::string>& fenced, cudadiag::profiles::Allocator) {
    (void)fenced;
    return false;
  });
  CHECK_FALSE(f.found);
  CHECK(f.note.find("intermittent") != std::string::npos);
}

TEST_CASE("an empty buffer list needs no probe") {
  int calls = 0;
  const auto f = bisect({}, [&](const std::vector<std::string>&, cudadiag::profiles::Allocator) { return ++calls > 0; });
  CHECK_FALSE(f.found);
  CHECK(calls == 0);
}

TEST_CASE("bisection rejects a non-fence allocator") {
  CHECK_THROWS_AS(bisect({"a"}, cudadiag::profiles::Allocator::pool, [](const std::vector<std::string>&, cudadiag::profiles::Allocator) { return true; }),
                  std::invalid_argument);
}

TEST_CASE("the reported faulting buffer carries name, bytes, direction and extra runs") {
  Bisection f;
  f.found = true;
  f.name = "out";
  f.bytes = 16384;
  f.direction = cudadiag::report::BufferDirection::end_overrun;
  f.extra_runs = 5;
  const auto reported = cudadiag::cases::reported_buffer(f);
  REQUIRE(reported);
  CHECK_FALSE(cudadiag::cases::reported_buffer(Bisection{}));
  const auto j = cudadiag::report::to_json(*reported);
  CHECK(j["name"] == "out");
  CHECK(j["bytes"] == 16384);
  CHECK(j["direction"] == "end_overrun");
  CHECK(j["extra_runs"] == 5);
}
