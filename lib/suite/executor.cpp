#include "suite/executor.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <utility>

#include "report/annotate.h"

namespace cudadiag::suite {

using report::json;

namespace {

// What the child wrote on its result fd, split into per-case lines and the end marker.
struct ChildLines {
  std::vector<json> cases;     // objects with "index"
  std::optional<bool> done;    // {"done": true|false}
  int malformed = 0;           // complete lines that were not JSON objects
};

ChildLines parse_lines(const std::string& text) {
  ChildLines out;
  std::istringstream in(text);
  std::string line;
  const bool ends_with_newline = !text.empty() && text.back() == '\n';
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const bool last_unterminated = in.eof() && !ends_with_newline;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      // A cut-off last line is expected when a child dies mid-write.
      if (!last_unterminated) ++out.malformed;
      continue;
    }
    if (j.contains("done") && j["done"].is_boolean()) {
      out.done = j["done"].get<bool>();
    } else if (j.contains("index") && j["index"].is_number_integer()) {
      out.cases.push_back(std::move(j));
    } else {
      ++out.malformed;
    }
  }
  return out;
}

report::StreamExcerpt excerpt_of(const runner::Capture& c) {
  return report::StreamExcerpt{c.text(), c.total_bytes, c.dropped_bytes};
}

report::ChildInfo child_info_of(const runner::ChildOutcome& o) {
  report::ChildInfo c;
  c.pid = static_cast<int>(o.pid);
  c.ending = runner::to_string(o.ending);
  c.exit_code = o.exit_code;
  c.signal = o.signal;
  c.signal_name = o.signal_name;
  c.killed_after_grace = o.killed_after_grace;
  c.stdout_excerpt = excerpt_of(o.out);
  c.stderr_excerpt = excerpt_of(o.err);
  return c;
}

report::Result base_result(const cases::CaseSpec& spec, const ExecOptions& opts) {
  report::Result r;
  r.case_id = spec.case_id;
  r.kernel = spec.kernel;
  r.params = spec.params;
  r.profile = opts.profile;
  r.allocator = spec.allocator;
  r.device = opts.device;
  r.device_index = opts.device_index;
  return r;
}

report::RepeatStats repeats_from_line(const json& j) {
  report::RepeatStats s;
  s.runs = j.value("runs", 0);
  s.failures = j.value("failures", 0);
  s.failure_rate = j.value("failure_rate", 0.0);
  s.ci_low = j.contains("ci95_low") ? j.value("ci95_low", 0.0) : j.value("ci_low", 0.0);
  s.ci_high = j.contains("ci95_high") ? j.value("ci95_high", 0.0) : j.value("ci_high", 0.0);
  if (j.contains("histogram") && j["histogram"].is_object())
    for (const auto& [k, v] : j["histogram"].items())
      if (v.is_number_integer()) s.histogram[k] = v.get<int>();
  return s;
}

// Copies a result line's fields onto r; a field of the wrong type makes the case
// no_result with the reason, rather than failing the whole batch.
void fill_from_line(report::Result& r, const json& line) {
  try {
    r.outcome = line.value("outcome", "");
    r.reason = line.value("reason", "");
    if (r.outcome.empty()) {
      r.outcome = "no_result";
      r.reason = "the child's result line has no outcome";
    }
    if (line.contains("error") && line["error"].is_object()) {
      report::ErrorInfo e = report::error_from_json(line["error"]);
      report::annotate_error(e);
      r.error = e;
    }
    r.duration_ms = line.value("duration_ms", 0.0);
    if (line.contains("repeats") && line["repeats"].is_object())
      r.repeats = repeats_from_line(line["repeats"]);
    if (line.contains("launch_log") && line["launch_log"].is_array()) r.launch_log = line["launch_log"];
    if (line.contains("buffers") && line["buffers"].is_array()) r.buffers = line["buffers"];
    if (line.contains("faulting_buffer")) r.faulting_buffer = line["faulting_buffer"];
    if (line.contains("sanitizer")) r.sanitizer = line["sanitizer"];
    if (line.contains("details") && line["details"].is_object()) r.details = line["details"];
  } catch (const json::exception& e) {
    r.outcome = "no_result";
    r.reason = std::string("malformed result line from the child: ") + e.what();
  }
}

// The outcome of the case that was running when the child ended without finishing.
void fill_cut_off(report::Result& r, const runner::ChildOutcome& o) {
  using runner::Ending;
  switch (o.ending) {
    case Ending::timeout:
      r.outcome = "timeout";
      r.reason = "the child passed its deadline during this case and was terminated" +
                 std::string(o.unkillable ? " (it survived SIGKILL: stuck in the kernel driver?"
                                            " check dmesg for Xid and nvidia-smi)"
                             : o.killed_after_grace ? " (SIGTERM ignored; SIGKILL needed)"
                                                    : "");
      break;
    case Ending::signal:
      r.outcome = "crashed";
      r.reason = "the child was killed by " + o.signal_name + " during this case";
      break;
    case Ending::exit_code:
      r.outcome = "crashed";
      r.reason = "the child exited with code " + std::to_string(o.exit_code.value_or(-1)) +
                 " during this case";
      break;
    case Ending::result:
    case Ending::no_result:
      r.outcome = "no_result";
      r.reason = "the child exited 0 without a result line for this case";
      break;
    case Ending::spawn_failed:
      r.outcome = "skipped";
      r.reason = "the child could not be started: " + o.spawn_error;
      break;
  }
}

// Position in batch of each line, matched by CaseSpec.index (first unmatched position
// with that index, so a repeated index still maps one line to one case).
std::vector<const json*> match_lines(const std::vector<cases::CaseSpec>& batch,
                                     const ChildLines& lines) {
  std::vector<const json*> by_pos(batch.size(), nullptr);
  for (const auto& line : lines.cases) {
    const int index = line["index"].get<int>();
    for (size_t p = 0; p < batch.size(); ++p) {
      if (batch[p].index == index && !by_pos[p]) {
        by_pos[p] = &line;
        break;
      }
    }
  }
  return by_pos;
}

}  // namespace

runner::ChildSpec child_spec_for(const std::vector<cases::CaseSpec>& batch,
                                 const ExecOptions& opts) {
  cases::ChildRequest request;
  request.device_ordinal = opts.device_ordinal;
  request.cases = batch;
  runner::ChildSpec spec;
  spec.argv = opts.wrapper;
  spec.argv.insert(spec.argv.end(),
                   {opts.self_exe, cases::kRunCaseCommand, "--spec", cases::to_json(request).dump()});
  spec.env_set = opts.env_set;
  spec.env_unset = opts.env_unset;
  // Every case runs on one stream, so one hardware work queue is enough; the default of
  // 8 makes context creation far dearer when children start together (the default suite
  // on an H200, driver 580.159.04: 5.5 s with the default, 2.9 s with 1). A value the
  // user set, in the environment or the profile, is kept.
  if (!spec.env_set.count(kMaxConnectionsEnv) && std::getenv(kMaxConnectionsEnv) == nullptr)
    spec.env_set[kMaxConnectionsEnv] = "1";
  spec.deadline = opts.deadline * static_cast<long>(std::max<size_t>(1, batch.size()));
  spec.grace = opts.grace;
  spec.capture_limit = opts.capture_limit;
  spec.result_fd = cases::kResultFd;
  spec.result_fd_env = cases::kResultFdEnv;
  spec.label = batch.empty() ? "empty batch"
                             : batch.front().case_id + (batch.size() > 1
                                   ? " (+" + std::to_string(batch.size() - 1) + " more)"
                                   : "");
  return spec;
}

std::vector<report::Result> results_from_child(const std::vector<cases::CaseSpec>& batch,
                                               const runner::ChildOutcome& outcome,
                                               const ExecOptions& opts,
                                               std::vector<size_t>* not_run) {
  const ChildLines lines = parse_lines(outcome.result);
  if (lines.malformed > 0)
    spdlog::warn("child {}: {} malformed result line(s) ignored", outcome.pid, lines.malformed);
  const auto by_pos = match_lines(batch, lines);
  const report::ChildInfo info = child_info_of(outcome);

  std::vector<report::Result> results;
  std::vector<size_t> rest;
  bool cut_off_assigned = false;
  for (size_t p = 0; p < batch.size(); ++p) {
    report::Result r = base_result(batch[p], opts);
    r.child = info;
    if (outcome.ending == runner::Ending::spawn_failed) {
      fill_cut_off(r, outcome);  // nothing ran; a retry would fail the same way
    } else if (by_pos[p]) {
      fill_from_line(r, *by_pos[p]);
    } else if (lines.done == true) {
      // The child said it finished, yet this case has no line: do not loop on it.
      r.outcome = "no_result";
      r.reason = "the child finished the batch without a result line for this case";
    } else if (lines.done == false || cut_off_assigned) {
      rest.push_back(p);  // after a sticky error, or after the case the child died in
      continue;
    } else {
      fill_cut_off(r, outcome);
      cut_off_assigned = true;
    }
    results.push_back(std::move(r));
  }
  // A child that stopped ({"done":false}) without any line would be re-run forever.
  if (results.empty() && !rest.empty()) {
    report::Result r = base_result(batch[rest.front()], opts);
    r.child = info;
    r.outcome = "no_result";
    r.reason = "the child stopped before writing a result line for this case";
    results.push_back(std::move(r));
    rest.erase(rest.begin());
  }
  if (not_run) *not_run = std::move(rest);
  return results;
}

std::vector<report::Result> execute(const std::vector<cases::CaseSpec>& batch,
                                    const ExecOptions& opts) {
  return execute_batches({batch}, opts, 1, nullptr, {});
}

namespace {

// Where each case of a submitted child lives: (batch number, position in that batch).
using Slot = std::pair<size_t, size_t>;

struct BatchRun {
  const std::vector<std::vector<cases::CaseSpec>>& batches;
  const ExecOptions& opts;
  const std::atomic<bool>* stop;
  const std::function<void(const report::Result&)>& on_result;
  runner::Pool pool;
  std::vector<std::vector<std::optional<report::Result>>> results;
  std::map<size_t, std::vector<Slot>> slots_of_child;  // pool id -> slots

  void submit(std::vector<Slot> slots) {
    std::vector<cases::CaseSpec> specs;
    for (const auto& [b, p] : slots) specs.push_back(batches[b][p]);
    const size_t id = pool.submit(child_spec_for(specs, opts));
    spdlog::debug("child #{}: {} case(s) from batch {}", id, specs.size(), slots.front().first);
    slots_of_child[id] = std::move(slots);
  }

  void deliver(const Slot& slot, report::Result r) {
    if (on_result) on_result(r);
    results[slot.first][slot.second] = std::move(r);
  }

  void on_done(size_t id, const runner::ChildOutcome& outcome) {
    const std::vector<Slot> slots = std::move(slots_of_child.at(id));
    slots_of_child.erase(id);
    // A request too long for one argv string: run the batch in two halves.
    if (outcome.ending == runner::Ending::spawn_failed && outcome.spawn_errno == E2BIG &&
        slots.size() > 1 && !(stop && stop->load())) {
      const auto mid = slots.begin() + static_cast<long>(slots.size() / 2);
      submit(std::vector<Slot>(slots.begin(), mid));
      submit(std::vector<Slot>(mid, slots.end()));
      return;
    }
    std::vector<cases::CaseSpec> specs;
    for (const auto& [b, p] : slots) specs.push_back(batches[b][p]);
    std::vector<size_t> rest;
    auto got = results_from_child(specs, outcome, opts, &rest);
    const bool interrupted = stop && stop->load();
    size_t next = 0;
    for (size_t p = 0; p < specs.size(); ++p) {
      if (next < rest.size() && rest[next] == p) {
        ++next;
        continue;
      }
      report::Result r = std::move(got.front());
      got.erase(got.begin());
      // A case cut off by the stop request did not time out on its own.
      if (interrupted && outcome.ending == runner::Ending::timeout && r.outcome == "timeout") {
        r.outcome = "skipped";
        r.reason = "interrupted";
      }
      deliver(slots[p], std::move(r));
    }
    if (rest.empty()) return;
    std::vector<Slot> again;
    for (size_t p : rest) again.push_back(slots[p]);
    submit(std::move(again));
  }
};

}  // namespace

std::vector<report::Result> execute_batches(
    const std::vector<std::vector<cases::CaseSpec>>& batches, const ExecOptions& opts, int jobs,
    const std::atomic<bool>* stop, const std::function<void(const report::Result&)>& on_result) {
  runner::PoolOptions pool_opts;
  pool_opts.jobs = jobs;
  pool_opts.stop = stop;
  pool_opts.stop_grace = opts.grace;
  BatchRun run{batches, opts, stop, on_result, runner::Pool(pool_opts), {}, {}};
  for (size_t b = 0; b < batches.size(); ++b) {
    run.results.emplace_back(batches[b].size());
    std::vector<Slot> slots;
    for (size_t p = 0; p < batches[b].size(); ++p) slots.emplace_back(b, p);
    if (!slots.empty()) run.submit(std::move(slots));
  }
  run.pool.run([&](size_t id, const runner::ChildOutcome& o) { run.on_done(id, o); });

  // Whatever has no result now was never started (stop requested).
  std::vector<report::Result> out;
  for (size_t b = 0; b < batches.size(); ++b) {
    for (size_t p = 0; p < batches[b].size(); ++p) {
      if (!run.results[b][p]) {
        report::Result r = base_result(batches[b][p], opts);
        r.outcome = "skipped";
        r.reason = "interrupted";
        run.deliver({b, p}, std::move(r));
      }
      out.push_back(std::move(*run.results[b][p]));
    }
  }
  return out;
}

}  // namespace cudadiag::suite
