// A report's lifecycle: made with the build and the invocation (new_report), stamped
// and counted at the end (finish_report).
#include "report/report.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "util/build_info.h"

namespace cudadiag::report {
std::string now_iso8601() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  const std::time_t t = system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[80];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

Report new_report(const std::vector<std::string>& argv, const std::string& command) {
  Report r;
  const auto& b = build_info();
  r.tool = Tool{"cudadiag", b.version, b.git_revision, b.cuda_toolkit, b.architectures};
  r.invocation = Invocation{command, argv, now_iso8601(), std::nullopt, std::nullopt, std::nullopt};
  return r;
}

void finish_report(Report& r) {
  r.invocation.finished_at = now_iso8601();
  Summary s;
  s.total = r.results.size();
  for (const auto& res : r.results) {
    auto it = std::find_if(s.by_outcome.begin(), s.by_outcome.end(), [&](const auto& e) { return e.first == res.outcome; });
    if (it == s.by_outcome.end()) s.by_outcome.emplace_back(res.outcome, 1);
    else ++it->second;
    if (!res.expectation_met) {
      ++s.not_judged;
    } else if (*res.expectation_met) {
      ++s.expectations_met;
    } else {
      ++s.expectations_unmet;
    }
  }
  r.summary = std::move(s);
}

}  // namespace cudadiag::report
