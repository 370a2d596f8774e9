#include "compare/gpu_standouts.h"

#include <charconv>
#include <string_view>

#include "report/standout.h"

namespace cudadiag::compare {
namespace {

// "gpu<N>": the N-th of the GPUs the report's results ran on; its ordinal, -1 when unknown.
int ordinal_of(std::string_view device, const std::vector<std::size_t>& devices_used) {
  constexpr std::string_view kPrefix = "gpu";
  if (!device.starts_with(kPrefix)) return -1;
  std::size_t n = 0;
  const auto digits = device.substr(kPrefix.size());
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size() || n >= devices_used.size()) return -1;
  return static_cast<int>(devices_used[n]);
}

}  // namespace

std::vector<std::string> standout_reasons(const std::vector<ReportDigest>& reports) {
  static const std::string none;
  std::vector<std::string> out;
  for (const auto& rep : reports) {
    std::vector<report::GpuRun> runs;
    for (const auto& r : rep.results) {
      if (r.host_only || !r.device || !r.expectation_met.has_value()) continue;
      const std::string params = text_or(r.params, none);
      std::string run = text_or(r.case_id, none);
      if (!params.empty()) run += " " + params;
      run += " under " + text_or(r.profile, none);
      runs.push_back(report::GpuRun{std::move(run), *r.device, ordinal_of(*r.device, rep.devices_used),
                                    *r.expectation_met});
    }
    for (auto& g : report::find_standouts(runs)) {
      g.uuid.clear();  // the report's device position, not an identity
      out.push_back(rep.label + ": " + report::standout_line(g));
    }
  }
  return out;
}

}  // namespace cudadiag::compare
