#include "run/fence_findings.h"

#include <algorithm>

#include <fmt/format.h>

namespace cudadiag::run {
namespace {

bool passed(const LaunchRecord& l, const SlackWriteRecord& w) {
  return std::any_of(l.pointer_args.begin(), l.pointer_args.end(),
                     [&](std::uint64_t p) { return p >= w.address && p < w.address + std::max<std::uint64_t>(w.bytes, 1); });
}

std::string where_text(const SlackWriteRecord& w) {
  if (w.first_offset == w.last_offset) return fmt::format("a write {} bytes past the end", w.first_offset);
  return fmt::format("a write {} to {} bytes past the end", w.first_offset, w.last_offset);
}

}  // namespace

std::vector<SlackFinding> slack_findings(const InterposerLog& log, Symbolizer* symbols) {
  std::vector<SlackFinding> out;
  for (const auto& w : log.slack_writes) {
    SlackFinding f;
    f.write = w;
    for (const auto& l : log.launches)
      if (passed(l, w) && std::find(f.kernels.begin(), f.kernels.end(), l.kernel) == f.kernels.end())
        f.kernels.push_back(l.kernel);
    std::string api;
    for (const auto& a : log.allocations)
      if (a.seq == w.allocation_seq && a.address == w.address) {
        api = a.api;
        if (symbols) f.allocated_at = allocation_origin(log, a, *symbols);
      }
    std::string kernels;
    for (const auto& k : f.kernels) kernels += (kernels.empty() ? "" : ", ") + k;
    f.line = fmt::format("{} of allocation #{} ({} bytes at {:#x}{}), inside the alignment slack ({} bytes before "
                         "the guard), {}; {}",
                         where_text(w), w.allocation_seq, w.bytes, w.address, api.empty() ? "" : " from " + api,
                         w.slack_bytes, w.seen_at,
                         kernels.empty() ? std::string("no recorded launch was passed it")
                                         : fmt::format("kernels passed #{}: {}", w.allocation_seq, kernels));
    if (!f.allocated_at.empty()) f.line += fmt::format("; #{} was allocated at {}", w.allocation_seq, report::origin_text(f.allocated_at));
    out.push_back(std::move(f));
  }
  return out;
}

std::optional<HangFinding> hang_finding(const InterposerLog& log) {
  if (log.launches.empty() || log.launches.back().returned) return std::nullopt;
  const LaunchRecord& l = log.launches.back();
  HangFinding h;
  h.kernel = l.kernel;
  h.launch_seq = l.seq;
  h.line = fmt::format("GPU hang: kernel {} (launch #{}, grid ({},{},{}) block ({},{},{})) never finished: its launch "
                       "had not returned when the run reached its deadline",
                       l.kernel.empty() ? "?" : l.kernel, l.seq, l.grid[0], l.grid[1], l.grid[2], l.block[0],
                       l.block[1], l.block[2]);
  return h;
}

}  // namespace cudadiag::run
