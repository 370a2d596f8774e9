#pragma once
// A report as a `repro` run on a GPU host would write it: one result of every outcome,
// a fenced fault with launch log, buffers, faulting buffer, child excerpts and Xid lines.
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::test {

// The outcome vocabulary of report/vocabulary.h, in its order.
inline const std::vector<std::string>& all_outcomes() {
  static const std::vector<std::string> names = {
      "ok",        "mismatch", "cuda_error", "invalid_config", "timeout",         "crashed",
      "no_result", "skipped",  "host_valid", "host_invalid",   "driver_disagrees"};
  return names;
}

inline report::Result sample_result(const std::string& outcome) {
  report::Result r;
  r.case_id = "sample." + outcome;
  r.kernel = cases::Family::index_select;
  r.params = report::Fields{{"rows", 4096}, {"cols", 128}, {"contiguous", false}};
  r.profile = "default";
  r.allocator = profiles::Allocator::pool;
  r.device = report::Device::gpu("GPU-8d2c3b1a-55e6-4f70-9a1b-2c3d4e5f6a7b");
  r.device_index = 0;
  r.outcome = *report::parse_outcome(outcome);
  r.expected = "ok";
  r.expectation_met = outcome == "ok";
  r.duration_ms = 12.5;
  return r;
}

inline report::Report sample_report() {
  using report::json;
  auto rep = report::new_report({"cudadiag", "repro", "--format", "json"}, "repro");
  rep.host.hostname = "gpu-node-17.example.com";
  rep.host.facts = {{"os", "Ubuntu 24.04"}, {"kernel", "6.8.0"}};
  rep.driver.version = "580.65.06";
  rep.driver.facts = {{"cuda_driver", "13.0"}};
  report::DeviceInfo d;
  d.index = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-8d2c3b1a-55e6-4f70-9a1b-2c3d4e5f6a7b";
  d.pci_bus_id = "00000000:3B:00.0";
  d.serial = "1652123456789";
  d.facts = {{"compute_capability", "9.0"}};
  rep.devices = {d};
  rep.environment.vars = {{"CUDA_LAUNCH_BLOCKING", "1"}, {"PYTORCH_NO_CUDA_MEMORY_CACHING", "1"}};
  rep.gpu = {true, ""};
  for (const auto& outcome : all_outcomes()) rep.results.push_back(sample_result(outcome));

  // The interesting one: an overrun caught by the fence allocator.
  auto& fault = rep.results[2];
  fault.case_id = "fault.overrun_read";
  fault.kernel = cases::Family::fault;
  fault.profile = "fence";
  fault.allocator = profiles::Allocator::fence_back;
  fault.expected = "error:memory_fault";
  fault.expectation_met = false;
  report::ErrorInfo e;
  e.code = 700;
  e.name = "cudaErrorIllegalAddress";
  e.source = taxonomy::ErrorSource::runtime;
  e.error_class = taxonomy::ErrorClass::memory_fault;
  e.sticky = true;
  e.surfaced_at = "synchronize";
  e.api_call = "cudaDeviceSynchronize";
  e.meaning = "A kernel read or wrote an address outside any allocation.";
  e.next_step = "Re-run under the fence profile to find the buffer.";
  e.message = "an illegal memory access was encountered";
  e.location = "kernels/faults/overrun.cu:42";
  e.last_kernel = "overrun_read_kernel";
  fault.error = e;
  report::ChildInfo c;
  c.pid = 4242;
  c.ending = report::ChildEnding::result;
  c.exit_code = 0;
  c.stderr_excerpt.text = "line one of stderr\nline two\nline three\nline four\nline five\nline six\n";
  c.stderr_excerpt.total_bytes = 60;
  fault.child = c;
  fault.launch_log = {report::LaunchRecord{1, "overrun_read_kernel", {16, 1, 1}, {256, 1, 1}, 0,
                                           std::vector<std::string>{"src", "dst"}, std::nullopt}};
  fault.buffers = {report::BufferRecord{"src", 4096, report::AddressRange{0x7f0000000000, 0x7f0000001000},
                                        profiles::Allocator::fence_back, false}};
  fault.faulting_buffer = report::FaultingBuffer{"src", 4096, report::BufferDirection::end_overrun, 3};
  fault.xid = {report::XidLine{123456789, "0000:3b:00", 13, 4242, "cudadiag",
                                "Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address",
                                "Graphics engine exception: a kernel faulted", report::XidPointsTo::application}};
  report::RepeatStats rs;
  rs.runs = 10;
  rs.failures = 4;
  rs.failure_rate = 0.4;
  rs.ci_low = 0.17;
  rs.ci_high = 0.69;
  rs.histogram = {{"cuda_error", 4}, {"ok", 6}};
  rs.seconds = 0.25;
  rs.runs_per_second = 40.0;
  fault.repeats = rs;
  fault.details = report::Fields{{"first_bad_index", 4096}};

  // A device assert that crashed its child.
  auto& crashed = rep.results[5];
  report::ChildInfo cc;
  cc.pid = 4243;
  cc.ending = report::ChildEnding::signal;
  cc.signal = 6;
  cc.signal_name = "SIGABRT";
  cc.stderr_excerpt.text = "Assertion `idx < n` failed.\n";
  cc.stderr_excerpt.total_bytes = 28;
  crashed.child = cc;

  auto& skipped = rep.results[7];
  skipped.reason = "compute-sanitizer is not installed";
  skipped.expected = "";
  skipped.expectation_met.reset();
  skipped.allocator.reset();
  skipped.device = report::Device::host_only();
  skipped.device_index = -1;

  rep.verdict.status = report::VerdictStatus::suspect;
  rep.verdict.reasons = {"fault.overrun_read: expected error:memory_fault, got cuda_error"};
  report::finish_report(rep);
  return rep;
}

}  // namespace cudadiag::test
