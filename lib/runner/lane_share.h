#pragma once
// Children bound to lanes (a lane is one GPU): which queued child the pool starts next.
// Each lane has its own share of the job slots, ceil(jobs / lanes), so that one GPU's
// queue cannot fill every slot while another GPU waits with work of its own, and each
// lane's children start in its own queue order (the planner's longest first). A slot
// that no lane under its share can use (its queue ran dry) is lent to the first queued
// child whose lane is below twice its share: the tail of a run uses the free slots
// without piling every child on one GPU, whose context creation contends. Children of no
// lane (-1: no GPU) count against the job total only.
#include <cstddef>
#include <map>
#include <optional>
#include <vector>

namespace cudadiag::runner {

// Slots a lane may hold when every lane has work: ceil(jobs / lanes), at least 1.
int lane_share(int jobs, size_t lanes);

// Position in `queued` (the lanes of the queued children, in queue order) of the child
// to start now, given the running children per lane and in all; none when nothing may
// start. lanes <= 1: the queue's front, as a plain FIFO.
std::optional<size_t> next_to_start(const std::vector<int>& queued, const std::map<int, int>& running_per_lane,
                                    int running, int jobs, size_t lanes);

}  // namespace cudadiag::runner
