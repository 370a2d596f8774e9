#include <catch2/catch.hpp>

#include <set>

#include "attention/attention_config.h"
#include "cases/catalog.h"
#include "cases/expectation.h"

using namespace cudadiag;
using namespace cudadiag::cases;
using namespace cudadiag::attention;

TEST_CASE("attention catalog covers every seed tile at S=64 and S=512", "[attention]") {
  const auto fam = attention_family();
  const auto cases = fam.cases();
  std::set<std::string> ids;
  for (const auto& c : cases) ids.insert(c.id);
  for (const char* t : {"bm64-bn64-w4", "bm128-bn32-w8", "bm80-bn64-w8", "bm80-bn64-w4", "bm64-bn64-w8"})
    for (const char* s : {".s64", ".s512"}) CHECK(ids.count(std::string("fa.seed.") + t + s) == 1);
  for (const char* id : {"fa.misaligned", "fa.no-tail-mask", "fa.drop-barrier", "fa.smem-overflow", "fa.invalid-config"})
    CHECK(ids.count(id) == 1);
}

TEST_CASE("attention catalog cases are normalised, valid where expected ok, and parse", "[attention]") {
  const auto fam = attention_family();
  for (const auto& c : fam.cases()) {
    INFO(c.id);
    CHECK(c.family == Family::attention);
    CHECK(fam.normalize_params(c.params) == c.params);
    for (const auto& [profile, expr] : c.expected.by_profile) CHECK_NOTHROW(Expectation::parse(expr));
    CHECK_NOTHROW(Expectation::parse(c.expected.otherwise));
    const auto why = validate_attention(attention_config_from_json(c.params), kSmemOptinA100);
    if (c.id == "fa.invalid-config") {
      CHECK_FALSE(why.empty());
    } else {
      CHECK(why.empty());
    }
  }
}

TEST_CASE("no-tail-mask expects a fault only when fenced", "[attention]") {
  const auto fam = attention_family();
  for (const auto& c : fam.cases()) {
    if (c.id != "fa.no-tail-mask") continue;
    CHECK(expectation_text(c, "default") == "silent");
    CHECK(expectation_text(c, "fence") == "error:memory_fault");
    const auto cfg = attention_config_from_json(c.params);
    CHECK(cfg.seq_len % cfg.block_n != 0);  // the tail exists
  }
}

TEST_CASE("the invalid-config case is decided on the host", "[attention]") {
  const auto fam = attention_family();
  REQUIRE(fam.host_eval);
  for (const auto& c : fam.cases()) {
    if (!c.host_only) continue;
    const auto r = fam.host_eval(c);
    CHECK(r.outcome == report::Outcome::invalid_config);
    CHECK(r.reason.find("head_dim 96") != std::string::npos);
    cudadiag::report::Result judged = r;
    judge(judged, Expectation::parse(expectation_text(c, "default")));
    CHECK(judged.expectation_met == true);
  }
}

TEST_CASE("the drop-barrier case runs the seed tile with 4 warps at the seed's S=512, repeated, expecting ok or mismatch",
          "[attention]") {
  const auto fam = attention_family();
  int found = 0;
  for (const auto& c : fam.cases()) {
    if (c.id != "fa.drop-barrier") continue;
    ++found;
    const auto cfg = attention_config_from_json(c.params);
    CHECK(cfg.drop_barrier);
    CHECK(cfg.block_m == 64);
    CHECK(cfg.block_n == 64);
    CHECK(cfg.warps == 4);  // the race needs warps reading rows other warps copied
    CHECK(cfg.seq_len == 512);  // the seed's own size: the seeded race rate makes it intermittent here
    CHECK(cfg.race_rate > 0.0);
    CHECK(cfg.race_rate < 1.0);
    CHECK(c.params.value("repeat", 1) >= 200);
    CHECK(expectation_text(c, "default") == "ok|mismatch");
  }
  CHECK(found == 1);
}
