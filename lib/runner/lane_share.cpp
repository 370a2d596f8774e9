#include "runner/lane_share.h"

#include <algorithm>

namespace cudadiag::runner {

int lane_share(int jobs, size_t lanes) {
  const int n = static_cast<int>(std::max<size_t>(1, lanes));
  return std::max(1, (std::max(1, jobs) + n - 1) / n);
}

std::optional<size_t> next_to_start(const std::vector<int>& queued, const std::map<int, int>& running_per_lane,
                                    int running, int jobs, size_t lanes) {
  if (queued.empty() || running >= std::max(1, jobs)) return std::nullopt;
  if (lanes <= 1) return 0;
  const int share = lane_share(jobs, lanes);
  auto held = [&](int lane) {
    const auto it = running_per_lane.find(lane);
    return it == running_per_lane.end() ? 0 : it->second;
  };
  // First, a child whose lane is below its share (or of no lane).
  for (size_t i = 0; i < queued.size(); ++i)
    if (queued[i] < 0 || held(queued[i]) < share) return i;
  // Every lane with work holds its share: a free slot is one a lane without work left.
  for (size_t i = 0; i < queued.size(); ++i)
    if (held(queued[i]) < 2 * share) return i;
  return std::nullopt;
}

}  // namespace cudadiag::runner
