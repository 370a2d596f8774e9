#include "suite/post_steps.h"

#include <map>

#include "evidence/cuda_start.h"
#include "evidence/memcheck_file.h"
#include "sanitizer/memcheck.h"
#include "suite/xid_attach.h"

namespace cudadiag::suite {
namespace {

using report::Outcome;

std::vector<sanitizer::BufferRange> buffer_ranges(const std::vector<report::BufferRecord>& buffers) {
  std::vector<sanitizer::BufferRange> out;
  for (const auto& b : buffers) {
    if (!b.range) continue;
    sanitizer::BufferRange r;
    r.name = b.name;
    r.address = b.range->begin;
    r.bytes = b.bytes != 0 ? b.bytes : (b.range->end > b.range->begin ? b.range->end - b.range->begin : 0);
    if (r.address != 0 && r.bytes != 0) out.push_back(r);
  }
  return out;
}

}  // namespace

void attach_sanitizer(report::Result& r, const std::string& xml_path) {
  auto file = evidence::read_memcheck_file(xml_path);
  if (!file.report) {
    r.sanitizer = report::SanitizerFindings{"memcheck", std::nullopt, evidence::problem_text(file, xml_path)};
    return;
  }
  auto& parsed = *file.report;
  if (r.child) sanitizer::attach_text_allocations(parsed, r.child->stdout_excerpt.text + r.child->stderr_excerpt.text);
  sanitizer::attach_nearest_buffers(parsed, buffer_ranges(r.buffers));
  r.sanitizer = report::SanitizerFindings{"memcheck", std::move(parsed), ""};
}

bool sanitizer_found_access_error(const report::Result& r) {
  if (!r.sanitizer || !r.sanitizer->memcheck) return false;
  for (const auto& f : r.sanitizer->memcheck->findings)
    if (!f.api) return true;  // a memory access, not an API record
  return false;
}

std::string skip_if_cuda_unusable(report::Result& r) {
  if (!evidence::cuda_could_not_start(r)) return "";
  const std::string why =
      "CUDA unusable: " + r.error->name + (r.error->message.empty() ? "" : " (" + r.error->message + ")");
  r.outcome = Outcome::skipped;
  r.reason = why;
  r.expectation_met.reset();
  return why;
}

void judge_result(report::Result& r, const cases::Expectation& e, const profiles::Profile& p) {
  cases::judge(r, e);
  // Under memcheck the tool stops the faulting kernel and the program's next call
  // returns 719; should the program see nothing, the findings alone still mean the
  // access was caught: judge it as the launch failure memcheck turns it into.
  if (r.expectation_met && !*r.expectation_met && (r.outcome == Outcome::ok || r.outcome == Outcome::mismatch) &&
      p.sanitizer && sanitizer_found_access_error(r)) {
    report::Result caught = r;
    caught.outcome = Outcome::cuda_error;
    report::ErrorInfo err;
    err.code = 719;
    err.name = "cudaErrorLaunchFailure";
    err.source = taxonomy::ErrorSource::runtime;
    err.error_class = taxonomy::ErrorClass::launch_failure;
    err.sticky = true;
    caught.error = err;
    r.expectation_met = e.matches(caught);
  }
}

void attach_kernel_log(std::vector<ExecutedCase>& cases, const std::vector<ChildRecord>& children,
                       const std::vector<host::XidEvent>& events) {
  if (events.empty()) return;
  std::vector<ChildWindow> windows;
  for (const auto& c : children)
    if (c.pid > 0) windows.push_back(ChildWindow{c.pid, c.start_us, c.end_us});
  std::map<size_t, std::vector<size_t>> of_child;
  for (size_t i = 0; i < cases.size(); ++i)
    if (cases[i].child) of_child[*cases[i].child].push_back(i);
  for (const auto& [child, positions] : of_child) {
    const ChildRecord& rec = children[child];
    if (rec.pid <= 0) continue;
    std::vector<report::Result> results;
    for (size_t p : positions) results.push_back(cases[p].result);
    std::vector<ChildWindow> others;
    for (const auto& w : windows)
      if (!(w.pid == rec.pid && w.start_us == rec.start_us)) others.push_back(w);
    if (attach_xid(results, events, ChildWindow{rec.pid, rec.start_us, rec.end_us}, others) == 0) continue;
    for (size_t k = 0; k < positions.size(); ++k) cases[positions[k]].result.xid = results[k].xid;
  }
}

}  // namespace cudadiag::suite
