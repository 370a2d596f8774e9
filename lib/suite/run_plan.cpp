#include "suite/run_plan.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cases/expectation.h"
#include "host/xid.h"
#include "profiles/profile.h"
#include "profiles/sanitizer_tool.h"
#include "sanitizer/memcheck.h"
#include "sanitizer/xml.h"
#include "suite/executor.h"
#include "suite/xid_attach.h"
#include "util/log.h"

namespace cudadiag::suite {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Direct children of this process (their pid is their process group: the runner spawns
// each in its own group). Used only to terminate our own children after an interrupt.
std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    const pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == self) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

void terminate_children(int sig) {
  for (pid_t pid : own_children()) {
    if (::getpgid(pid) == pid) ::kill(-pid, sig);
    else ::kill(pid, sig);
  }
}

report::Result skipped_result(const SuiteCase& sc, const std::string& profile, const std::string& device,
                              int device_index, const std::string& reason) {
  report::Result r;
  r.case_id = sc.def.id;
  r.kernel = sc.def.kernel;
  r.params = sc.def.params;
  r.profile = profile;
  r.device = device;
  r.device_index = device_index;
  r.outcome = "skipped";
  r.reason = reason;
  judge_result(r, sc);
  return r;
}

std::string read_whole(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = in.good();
  if (!ok) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<sanitizer::BufferRange> buffer_ranges(const report::json& buffers) {
  std::vector<sanitizer::BufferRange> out;
  if (!buffers.is_array()) return out;
  for (const auto& b : buffers) {
    if (!b.is_object()) continue;
    sanitizer::BufferRange r;
    r.name = b.value("name", "");
    auto num = [](const report::json& v) -> unsigned long long {
      if (v.is_number_unsigned() || v.is_number_integer()) return v.get<unsigned long long>();
      if (v.is_string()) return std::strtoull(v.get<std::string>().c_str(), nullptr, 0);
      return 0;
    };
    if (b.contains("address")) r.address = num(b["address"]);
    if (b.contains("bytes")) r.bytes = num(b["bytes"]);
    // "range": [start, end) as numbers or hex strings
    if (r.address == 0 && b.contains("range") && b["range"].is_array() && b["range"].size() == 2) {
      r.address = num(b["range"][0]);
      if (r.bytes == 0) r.bytes = num(b["range"][1]) - r.address;
    }
    if (r.address != 0 && r.bytes != 0) out.push_back(r);
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> batch_env(const Batch& b, const std::vector<DeviceTarget>& devices) {
  std::map<std::string, std::string> env = profiles::parse_profile(b.profile).env_set;
  if (b.device_slot >= 0 && static_cast<size_t>(b.device_slot) < devices.size()) {
    const auto& d = devices[static_cast<size_t>(b.device_slot)];
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    env["CUDA_VISIBLE_DEVICES"] = d.uuid.empty() ? std::to_string(d.index) : d.uuid;
  }
  return env;
}

bool sanitizer_found_access_error(const report::Result& r) {
  if (!r.sanitizer.is_object() || !r.sanitizer.contains("findings") || !r.sanitizer["findings"].is_array())
    return false;
  for (const auto& f : r.sanitizer["findings"])
    if (f.is_object() && !f.contains("api")) return true;  // a memory access, not an API record
  return false;
}

void judge_result(report::Result& r, const SuiteCase& sc) {
  const std::string expected = cases::expectation_for(sc.def, r.profile);
  cases::judge(r, expected);
  // Under memcheck the tool stops the faulting kernel and the program's next call
  // returns 719; should the program see nothing, the findings alone still mean the
  // access was caught: judge it as the launch failure memcheck turns it into.
  if (r.expectation_met && !*r.expectation_met && (r.outcome == "ok" || r.outcome == "mismatch") &&
      profiles::parse_profile(r.profile).sanitizer && sanitizer_found_access_error(r)) {
    report::Result caught = r;
    caught.outcome = "cuda_error";
    report::ErrorInfo e;
    e.code = 719;
    e.name = "cudaErrorLaunchFailure";
    e.source = "runtime";
    e.error_class = "launch_failure";
    e.sticky = true;
    caught.error = e;
    cases::judge(caught, expected);
    r.expectation_met = caught.expectation_met;
  }
  // Skipped runs say nothing about the host: recorded, not judged.
  if (r.outcome == "skipped") r.expectation_met.reset();
}

void attach_sanitizer(report::Result& r, const std::string& xml_path) {
  bool ok = false;
  const std::string xml = read_whole(xml_path, ok);
  if (!ok) {
    r.sanitizer = report::json{{"tool", "memcheck"}, {"error", "no XML written (" + xml_path + ")"}};
    return;
  }
  try {
    auto parsed = sanitizer::parse_memcheck_xml(xml);
    if (r.child) sanitizer::attach_text_allocations(parsed, r.child->stdout_excerpt.text + r.child->stderr_excerpt.text);
    sanitizer::attach_nearest_buffers(parsed, buffer_ranges(r.buffers));
    r.sanitizer = sanitizer::to_json(parsed);
  } catch (const sanitizer::XmlError& e) {
    r.sanitizer = report::json{{"tool", "memcheck"}, {"error", std::string("unreadable XML: ") + e.what()}};
  }
}

RunOutcome run_plan(const Suite& s, const Plan& plan, const RunOptions& opts) {
  const auto t0 = Clock::now();
  RunOutcome out;
  std::mutex mu;
  auto stopped = [&] { return opts.stop && opts.stop->load(); };
  auto deliver = [&](report::Result r, std::vector<report::Result>& into) {
    if (opts.on_result) opts.on_result(r);
    into.push_back(std::move(r));
  };

  std::vector<report::Result> host_results;
  for (const auto& h : plan.host_runs) {
    const SuiteCase& sc = s.cases[h.suite_case];
    report::Result r;
    const auto* fam = cases::find_family(sc.def.kernel);
    const auto h0 = Clock::now();
    try {
      r = fam->host_eval(sc.def);
    } catch (const std::exception& e) {
      r.outcome = "crashed";
      r.reason = std::string("host evaluation failed: ") + e.what();
    }
    r.case_id = sc.def.id;
    r.kernel = sc.def.kernel;
    r.params = sc.def.params;
    r.profile = h.profile;
    r.device = "host";
    if (r.duration_ms == 0.0) r.duration_ms = ms_since(h0);
    judge_result(r, sc);
    std::lock_guard<std::mutex> lock(mu);
    deliver(std::move(r), host_results);
  }
  std::vector<report::Result> skipped;
  for (const auto& sk : plan.skipped) {
    std::lock_guard<std::mutex> lock(mu);
    deliver(skipped_result(s.cases[sk.suite_case], sk.profile, "", -1, sk.reason), skipped);
  }

  // Kernel log: a cursor before the first child, read again after a failed one.
  host::KernelLogCursor cursor;
  if (opts.read_kernel_log) cursor = host::kernel_log_cursor();

  out.host_ms = ms_since(t0);
  const std::uint64_t t0_us = host::monotonic_now_us() - static_cast<std::uint64_t>(out.host_ms * 1000.0);
  // Every child's run, for attributing pid-less kernel-log lines.
  std::vector<ChildWindow> windows;
  std::vector<std::vector<report::Result>> per_batch(plan.batches.size());
  std::vector<bool> started(plan.batches.size(), false);
  size_t next = 0;
  int running = 0;
  std::condition_variable cv;

  auto run_batch = [&](size_t bi) {
    const Batch& b = plan.batches[bi];
    ExecOptions eo;
    eo.self_exe = opts.self_exe;
    eo.env_set = batch_env(b, opts.devices);
    eo.deadline = b.deadline_ms > 0 ? std::chrono::milliseconds(b.deadline_ms) : opts.default_deadline;
    eo.grace = b.grace_ms > 0 ? std::chrono::milliseconds(b.grace_ms) : opts.grace;
    eo.profile = b.profile;
    if (b.device_slot >= 0) {
      const auto& d = opts.devices[static_cast<size_t>(b.device_slot)];
      eo.device = d.uuid;
      eo.device_index = d.index;
    } else {
      eo.device = "host";
    }
    std::string xml;
    if (b.sanitizer) {
      xml = opts.scratch_dir + "/sanitizer-" + std::to_string(bi) + ".xml";
      eo.wrapper = profiles::sanitizer_argv(opts.sanitizer_path, xml);
    }
    const auto start_us = host::monotonic_now_us();
    size_t window_slot;
    {
      std::lock_guard<std::mutex> lock(mu);
      window_slot = windows.size();
      windows.push_back(ChildWindow{0, start_us, 0});
    }
    std::vector<report::Result> results;
    try {
      results = execute(b.specs, eo);
    } catch (const std::exception& e) {
      for (const auto& spec : b.specs) {
        report::Result r;
        r.case_id = spec.case_id;
        r.kernel = spec.kernel;
        r.params = spec.params;
        r.profile = b.profile;
        r.allocator = spec.allocator;
        r.device = eo.device;
        r.device_index = eo.device_index;
        r.outcome = "crashed";
        r.reason = std::string("could not run the child: ") + e.what();
        results.push_back(std::move(r));
      }
    }
    const auto end_us = host::monotonic_now_us();
    std::vector<ChildWindow> others;
    {
      std::lock_guard<std::mutex> lock(mu);
      windows[window_slot].end_us = end_us;
      others = windows;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(window_slot));
    }
    const bool cut = stopped();
    bool any_failed = false;
    for (size_t i = 0; i < results.size() && i < b.case_of_spec.size(); ++i) {
      auto& r = results[i];
      if (cut && (r.outcome == "timeout" || r.outcome == "crashed" || r.outcome == "no_result")) {
        r.outcome = "skipped";
        r.reason = "interrupted";
        r.error.reset();
      }
      if (b.sanitizer && !xml.empty()) attach_sanitizer(r, xml);
      judge_result(r, s.cases[b.case_of_spec[i]]);
      any_failed = any_failed || is_failed_outcome(r);
    }
    if (any_failed && opts.read_kernel_log && cursor.readable) {
      attach_xid(results, host::new_xid_lines_since(cursor), ChildWindow{0, start_us, end_us}, others);
    }
    if (!xml.empty()) ::unlink(xml.c_str());
    std::lock_guard<std::mutex> lock(mu);
    for (auto& r : results) {
      if (opts.on_result) opts.on_result(r);
    }
    per_batch[bi] = std::move(results);
    out.timings.push_back(BatchTiming{bi, (start_us - t0_us) / 1000.0, (end_us - start_us) / 1000.0});
  };

  const int jobs = std::max(1, opts.jobs);
  std::vector<std::thread> workers;
  for (int w = 0; w < jobs; ++w) {
    workers.emplace_back([&] {
      for (;;) {
        size_t bi;
        {
          std::lock_guard<std::mutex> lock(mu);
          if (next >= plan.batches.size() || stopped()) break;
          bi = next++;
          started[bi] = true;
          ++running;
          ++out.children;
        }
        run_batch(bi);
        {
          std::lock_guard<std::mutex> lock(mu);
          --running;
        }
        cv.notify_all();
      }
    });
  }

  // Watch for an interrupt: after stop_grace, terminate what still runs (repeatedly, so
  // a re-run the executor starts after a kill is stopped too).
  {
    std::unique_lock<std::mutex> lock(mu);
    std::optional<Clock::time_point> stop_at;
    while (!(next >= plan.batches.size() && running == 0) && !(stopped() && running == 0)) {
      cv.wait_for(lock, std::chrono::milliseconds(100));
      if (stopped() && !stop_at) stop_at = Clock::now();
      if (stop_at && Clock::now() - *stop_at > opts.stop_grace) {
        lock.unlock();
        terminate_children(SIGTERM);
        if (Clock::now() - *stop_at > opts.stop_grace + opts.grace) terminate_children(SIGKILL);
        lock.lock();
      }
    }
  }
  for (auto& w : workers) w.join();
  out.interrupted = stopped();

  out.results = std::move(host_results);
  for (auto& r : skipped) out.results.push_back(std::move(r));
  for (size_t bi = 0; bi < plan.batches.size(); ++bi) {
    if (!started[bi]) {
      const Batch& b = plan.batches[bi];
      for (size_t i = 0; i < b.specs.size(); ++i) {
        const auto& d = b.device_slot >= 0 ? opts.devices[static_cast<size_t>(b.device_slot)] : DeviceTarget{};
        auto r = skipped_result(s.cases[b.case_of_spec[i]], b.profile, b.device_slot >= 0 ? d.uuid : "host",
                                b.device_slot >= 0 ? d.index : -1, "interrupted");
        r.allocator = b.specs[i].allocator;
        out.results.push_back(std::move(r));
      }
      continue;
    }
    for (auto& r : per_batch[bi]) out.results.push_back(std::move(r));
  }
  out.wall_ms = ms_since(t0);
  return out;
}

}  // namespace cudadiag::suite
