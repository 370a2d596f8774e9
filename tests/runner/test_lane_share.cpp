// Children bound to GPUs (lanes): each lane's share of the jobs, its own queue order, the
// free slots lent in the tail; and the pool keeping to it with real children.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

#include "runner/lane_share.h"
#include "runner/runner.h"

using namespace cudadiag::runner;
using namespace std::chrono_literals;

TEST_CASE("lanes: each GPU's share of the jobs is the jobs spread over the GPUs", "[lanes]") {
  CHECK(lane_share(16, 2) == 8);
  CHECK(lane_share(64, 8) == 8);
  CHECK(lane_share(10, 4) == 3);
  CHECK(lane_share(4, 8) == 1);  // fewer jobs than GPUs: one each, the total caps
  CHECK(lane_share(0, 0) == 1);
}

TEST_CASE("lanes: a GPU with a long queue leaves the other GPUs their share", "[lanes]") {
  // Jobs 4 over 2 GPUs: GPU 0 holds its 2, so GPU 1's first child starts next though
  // GPU 0's children come first in the queue.
  const std::vector<int> queued{0, 0, 0, 1, 1};
  CHECK(next_to_start(queued, {{0, 2}}, 2, 4, 2) == 3u);
  // Below its share, a GPU's children start in its own queue order (longest first).
  CHECK(next_to_start(queued, {{0, 1}, {1, 1}}, 2, 4, 2) == 0u);
  // The total is the user's cap.
  CHECK(!next_to_start(queued, {{0, 2}, {1, 2}}, 4, 4, 2));
  // One GPU: a plain queue.
  CHECK(next_to_start({0, 0}, {{0, 7}}, 7, 8, 1) == 0u);
  CHECK(!next_to_start({}, {}, 0, 8, 2));
}

TEST_CASE("lanes: a slot left free by a GPU without work is lent, up to twice the share", "[lanes]") {
  // GPU 1 has nothing queued and runs 1 of its 2: GPU 0 may borrow the free slot.
  CHECK(next_to_start({0, 0}, {{0, 2}, {1, 1}}, 3, 4, 2) == 0u);
  // Not beyond twice its share: one GPU's contexts would all start at once.
  CHECK(next_to_start({0}, {{0, 15}}, 15, 32, 4) == 0u);
  CHECK(!next_to_start({0}, {{0, 16}}, 16, 32, 4));
  // A child with no GPU (a host-only case) is held back by the total only.
  CHECK(next_to_start({0, -1}, {{0, 4}}, 4, 6, 2) == 1u);
  CHECK(next_to_start({0, -1}, {{0, 16}}, 16, 32, 4) == 1u);
}

namespace {
ChildSpec sleeper(int lane) {
  ChildSpec s;
  s.argv = {FAKE_CHILD, "sleep", "0.4"};
  s.lane = lane;
  return s;
}
}  // namespace

TEST_CASE("pool: a GPU queued last starts with the first wave, as its share allows", "[pool][lanes]") {
  // Six children for GPU 0 queued before two for GPU 1, four jobs over two GPUs: GPU 1's
  // children start in the first wave (a plain queue would start four of GPU 0's first).
  Pool pool(PoolOptions{4, nullptr, 3000ms, 2});
  for (int i = 0; i < 6; ++i) pool.submit(sleeper(0));
  for (int i = 0; i < 2; ++i) pool.submit(sleeper(1));
  std::vector<ChildOutcome> outcomes(8);
  pool.run([&](size_t id, const ChildOutcome& o) { outcomes[id] = o; });
  auto first_end = outcomes[0].finished;
  for (const auto& o : outcomes) first_end = std::min(first_end, o.finished);
  CHECK(outcomes[6].started < first_end);
  CHECK(outcomes[7].started < first_end);
  int first_wave_gpu0 = 0;
  for (int i = 0; i < 6; ++i) first_wave_gpu0 += outcomes[static_cast<size_t>(i)].started < first_end ? 1 : 0;
  CHECK(first_wave_gpu0 == 2);
}
