// The repeat loop's bookkeeping, driven the way the child harness drives it, without a GPU.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "repeat/series.h"

using namespace cudadiag;
using repeat::Series;
using repeat::SeedRequest;
using report::Outcome;

namespace {

std::vector<size_t> batch_sizes(Series& s) {
  std::vector<size_t> sizes;
  for (auto seeds = s.next_batch(); !seeds.empty(); seeds = s.next_batch()) {
    sizes.push_back(seeds.size());
    for (size_t i = 0; i < seeds.size(); ++i) s.record(Outcome::ok);
  }
  return sizes;
}

}  // namespace

TEST_CASE("batches grow 1, 2, 4, ... up to the cap and end exactly at the series' length", "[repeat]") {
  Series s(200, std::nullopt, 1);
  CHECK(batch_sizes(s) == std::vector<size_t>{1, 2, 4, 8, 16, 32, 64, 64, 9});
  CHECK(s.recorded() == 200);
  CHECK(s.finished());
  CHECK(s.next_batch().empty());

  Series small(3, std::nullopt, 1, 8);
  CHECK(batch_sizes(small) == std::vector<size_t>{1, 2});
  Series capped(10, std::nullopt, 1, 2);
  CHECK(batch_sizes(capped) == std::vector<size_t>{1, 2, 2, 2, 2, 1});
}

TEST_CASE("run i's seed comes from the base and i, whatever batch it lands in", "[repeat]") {
  Series given(5, SeedRequest{SeedRequest::Kind::series, 77}, 1);
  Series fresh(5, std::nullopt, 77);  // a fresh base behaves as if it had been given
  std::vector<uint64_t> a, b;
  for (auto seeds = given.next_batch(); !seeds.empty(); seeds = given.next_batch())
    for (auto x : seeds) a.push_back(x), given.record(Outcome::ok);
  for (auto seeds = fresh.next_batch(); !seeds.empty(); seeds = fresh.next_batch())
    for (auto x : seeds) b.push_back(x), fresh.record(Outcome::ok);
  CHECK(a == b);
  for (int i = 0; i < 5; ++i) CHECK(a[static_cast<size_t>(i)] == repeat::series_seed(77, static_cast<uint64_t>(i)));
  CHECK(given.base() == 77);
  CHECK_FALSE(given.replay());
}

TEST_CASE("a replay is one run with exactly the replayed seed, whatever the length asked", "[repeat]") {
  Series s(1000, SeedRequest{SeedRequest::Kind::replay, 0xabc}, 1);
  CHECK(s.replay());
  CHECK(s.planned() == 1);
  const auto seeds = s.next_batch();
  REQUIRE(seeds.size() == 1);
  CHECK(seeds[0] == 0xabc);
  const auto run = s.record(Outcome::mismatch);
  CHECK(run.index == 0);
  CHECK(run.seed == 0xabc);
  CHECK(s.finished());
}

TEST_CASE("the histogram, the first failure, the rate with its Wilson interval, runs per second", "[repeat]") {
  Series s(10, SeedRequest{SeedRequest::Kind::series, 5}, 1);
  const std::vector<Outcome> outcomes = {Outcome::ok,       Outcome::ok, Outcome::mismatch, Outcome::ok, Outcome::ok,
                                         Outcome::mismatch, Outcome::ok, Outcome::ok,       Outcome::ok, Outcome::ok};
  for (Outcome o : outcomes) s.record(o);
  REQUIRE(s.first_failure());
  CHECK(s.first_failure()->index == 2);
  CHECK(s.first_failure()->seed == repeat::series_seed(5, 2));
  CHECK(s.last()->index == 9);
  const auto st = s.stats(0.5);
  CHECK(st.runs == 10);
  CHECK(st.failures == 2);
  CHECK(st.failure_rate == Approx(0.2));
  CHECK(st.ci_low == Approx(0.0567).margin(1e-3));  // Wilson 95% for 2/10
  CHECK(st.ci_high == Approx(0.5098).margin(1e-3));
  CHECK(st.histogram.at("ok") == 8);
  CHECK(st.histogram.at("mismatch") == 2);
  REQUIRE(st.seconds);
  CHECK(*st.seconds == 0.5);
  CHECK(*st.runs_per_second == Approx(20.0));
  CHECK_FALSE(s.stats(0.0).runs_per_second);  // untimed: no rate
}

TEST_CASE("an error in the middle of a batch: the runs before it count, the series resumes after it", "[repeat]") {
  Series s(8, std::nullopt, 3);
  CHECK(s.next_batch().size() == 1);
  s.record(Outcome::ok);
  const auto second = s.next_batch();  // runs 1 and 2
  REQUIRE(second.size() == 2);
  // run 1 came back, run 2 ended with a non-sticky CUDA error: the next batch starts at run 3
  s.record(Outcome::ok);
  const auto failed = s.record_error(false);
  CHECK_FALSE(s.finished());
  CHECK(failed.index == 2);
  CHECK(failed.seed == second[1]);
  CHECK(s.next_run() == 3);
  const auto third = s.next_batch();
  REQUIRE(third.size() == 4);
  CHECK(third[0] == repeat::series_seed(3, 3));
  CHECK(s.first_failure()->index == 2);
}

TEST_CASE("a sticky error stops the series where it happened", "[repeat]") {
  Series s(100, std::nullopt, 3);
  s.next_batch();
  s.record(Outcome::ok);
  s.next_batch();
  s.record_error(true);
  CHECK(s.finished());
  CHECK(s.stopped());
  CHECK(s.next_batch().empty());
  const auto st = s.stats(0.1);
  CHECK(st.runs == 2);
  CHECK(st.failures == 1);
  CHECK(st.histogram.at("cuda_error") == 1);
  CHECK_THROWS_AS(s.record(Outcome::ok), std::logic_error);
}

TEST_CASE("the reported run: the first CUDA error raised, else the first failure, else the latest", "[repeat]") {
  Series s(6, SeedRequest{SeedRequest::Kind::series, 9}, 1);
  CHECK_FALSE(s.reported());
  s.record(Outcome::ok);
  CHECK(s.reported()->index == 0);
  s.record(Outcome::ok);
  CHECK(s.reported()->index == 1);  // all ok so far: the latest run
  s.record(Outcome::mismatch);
  s.record(Outcome::ok);
  CHECK(s.reported()->index == 2);  // the first failure, not the latest
  s.record(Outcome::cuda_error);    // reported by the family (an encode result), not raised
  CHECK(s.reported()->index == 2);
  CHECK_FALSE(s.first_error());
  s.record_error(false);
  CHECK(s.first_error()->index == 5);
  CHECK(s.reported()->index == 5);
  CHECK(s.reported()->seed == repeat::series_seed(9, 5));
}

TEST_CASE("the statistics of a series come from one builder, whoever counted the runs", "[series]") {
  // A family's repeats in a child (Series) and a run rung's repeats (run_report) are
  // both repeat_stats of their histogram.
  repeat::Series s(3, std::nullopt, 1);
  s.record(report::Outcome::ok);
  s.record(report::Outcome::cuda_error);
  s.record(report::Outcome::ok);
  const auto from_series = s.stats(0.5);
  const auto direct = repeat::repeat_stats({{"ok", 2}, {"cuda_error", 1}}, 1, 0.5);
  CHECK(report::to_json(from_series) == report::to_json(direct));
  CHECK(direct.runs == 3);
  CHECK(direct.failures == 1);
  CHECK(direct.runs_per_second == Approx(6.0));
  CHECK(direct.ci_low > 0.0);
  CHECK(direct.ci_high < 1.0);
  const auto untimed = repeat::repeat_stats({{"crashed", 2}}, 2);
  CHECK_FALSE(untimed.seconds);
  CHECK(untimed.failure_rate == 1.0);
}
