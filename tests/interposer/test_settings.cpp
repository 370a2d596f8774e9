#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "apps/interposer/settings.h"

using namespace cudadiag::interposer;
namespace ring = cudadiag::ring;

namespace {

std::map<std::string, std::string> g_env;

const char* lookup(const char* name) {
  const auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

Settings with(std::map<std::string, std::string> env) {
  g_env = std::move(env);
  return read_settings(&lookup);
}

}  // namespace

TEST_CASE("interposer settings: defaults without any variable", "[settings]") {
  const Settings s = with({});
  CHECK(s.ring_path == nullptr);
  CHECK(s.align == 16);
  CHECK(s.side == ring::Side::back);
  CHECK(s.guard == cudadiag::fence::GuardMode::scaled);
  CHECK(s.quarantine_bytes == 1024ull << 20);
  CHECK(s.reuse_bytes == 256ull << 20);
  CHECK(s.limits.allocations == ring::kDefaultAllocationSlots);
  CHECK(s.limits.launches == ring::kDefaultLaunchSlots);
  CHECK(s.limits.tma_maps == ring::kDefaultTmaSlots);
  CHECK(s.limits.name_bytes == ring::kDefaultNameBytes);
  CHECK_FALSE(s.debug);
  CHECK(s.rejected == 0);
}

TEST_CASE("interposer settings: every variable read", "[settings]") {
  const Settings s = with({{"CUDADIAG_RING", "/tmp/ring"},
                           {"CUDADIAG_FENCE_ALIGN", "256"},
                           {"CUDADIAG_FENCE_SIDE", "front"},
                           {"CUDADIAG_FENCE_QUARANTINE_MB", "0"},
                           {"CUDADIAG_FENCE_REUSE_MB", "0"},
                           {"CUDADIAG_RING_ALLOCATIONS", "100"},
                           {"CUDADIAG_RING_LAUNCHES", "50"},
                           {"CUDADIAG_RING_TMA_MAPS", "7"},
                           {"CUDADIAG_RING_NAMES_KB", "64"},
                           {"CUDADIAG_FENCE_DEBUG", "1"}});
  CHECK(std::string(s.ring_path) == "/tmp/ring");
  CHECK(s.align == 256);
  CHECK(s.side == ring::Side::front);
  CHECK(s.quarantine_bytes == 0);
  CHECK(s.reuse_bytes == 0);
  CHECK(s.limits.allocations == 100);
  CHECK(s.limits.launches == 50);
  CHECK(s.limits.tma_maps == 7);
  CHECK(s.limits.name_bytes == 64 * 1024);
  CHECK(s.debug);
  CHECK(s.rejected == 0);
  CHECK(with({{"CUDADIAG_FENCE_SIDE", "none"}}).side == ring::Side::none);
  CHECK(with({{"CUDADIAG_FENCE_ALIGN", "1"}}).align == 1);
  CHECK(with({{"CUDADIAG_GUARD", "granule"}}).guard == cudadiag::fence::GuardMode::granule);
  CHECK(with({{"CUDADIAG_GUARD", "scaled"}}).guard == cudadiag::fence::GuardMode::scaled);
}

TEST_CASE("interposer settings: bad values keep the default and are named", "[settings]") {
  const Settings s = with({{"CUDADIAG_FENCE_ALIGN", "24"},
                           {"CUDADIAG_FENCE_SIDE", "sideways"},
                           {"CUDADIAG_FENCE_QUARANTINE_MB", "-1"},
                           {"CUDADIAG_FENCE_REUSE_MB", "lots"},
                           {"CUDADIAG_RING_LAUNCHES", "0"},
                           {"CUDADIAG_RING", ""},
                           {"CUDADIAG_FENCE_DEBUG", "yes"}});
  CHECK(s.align == 16);
  CHECK(s.side == ring::Side::back);
  CHECK(s.quarantine_bytes == 1024ull << 20);
  CHECK(s.reuse_bytes == 256ull << 20);
  CHECK(s.limits.launches == ring::kDefaultLaunchSlots);
  CHECK(s.ring_path == nullptr);
  CHECK_FALSE(s.debug);
  REQUIRE(s.rejected == 5);
  CHECK(std::string(s.rejected_name[0]) == "CUDADIAG_FENCE_ALIGN");
  CHECK(std::string(s.rejected_value[0]) == "24");
  CHECK(std::string(s.rejected_name[1]) == "CUDADIAG_FENCE_SIDE");
  CHECK(with({{"CUDADIAG_FENCE_ALIGN", "131072"}}).align == 16);  // above 64 KiB
  CHECK(with({{"CUDADIAG_FENCE_ALIGN", "16x"}}).rejected == 1);
  const Settings guard = with({{"CUDADIAG_GUARD", "page"}});
  CHECK(guard.guard == cudadiag::fence::GuardMode::scaled);
  REQUIRE(guard.rejected == 1);
  CHECK(std::string(guard.rejected_name[0]) == "CUDADIAG_GUARD");
}

TEST_CASE("interposer settings: strict unsigned parse", "[settings]") {
  std::uint64_t v = 0;
  CHECK(parse_unsigned("0", 0, 10, v));
  CHECK(v == 0);
  CHECK(parse_unsigned("18446744073709551615", 0, ~0ull, v));
  CHECK(v == ~0ull);
  CHECK_FALSE(parse_unsigned("18446744073709551616", 0, ~0ull, v));
  CHECK_FALSE(parse_unsigned("", 0, 10, v));
  CHECK_FALSE(parse_unsigned(" 1", 0, 10, v));
  CHECK_FALSE(parse_unsigned("+1", 0, 10, v));
  CHECK_FALSE(parse_unsigned("11", 0, 10, v));
  CHECK_FALSE(parse_unsigned("4", 5, 10, v));
  CHECK_FALSE(parse_unsigned(nullptr, 0, 10, v));
}
