#include "suite/executor.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "coredump/arming.h"
#include "coredump/disassembler.h"
#include "evidence/child_info.h"
#include "host/xid.h"
#include "report/annotate.h"
#include "util/scratch_dir.h"

namespace cudadiag::suite {

using report::json;
using report::Outcome;

namespace {

// What a command says of its dumps once, however many executors (a case, its bisection)
// it runs.
std::atomic<bool> user_dump_settings_said{false};
std::atomic<bool> no_disassembler_said{false};

void say_once(std::atomic<bool>& said, const std::string& line) {
  if (!said.exchange(true)) spdlog::warn("{}", line);
}

// What the child wrote on its result fd, split into per-case lines and the end marker.
struct ChildLines {
  std::vector<json> cases;   // objects with "index"
  std::optional<bool> done;  // {"done": true|false}
  int malformed = 0;         // complete lines that were not JSON objects
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

// What the child said about a case, over the parent's own fields (case, profile,
// device); a line that is not a result makes the case no_result with the reason.
void fill_from_line(report::Result& r, const json& line) {
  try {
    json full = line;
    full.erase("index");
    if (!full.contains("case_id")) full["case_id"] = r.case_id;
    if (!full.contains("kernel")) full["kernel"] = cases::to_string(r.kernel);
    report::Result got = report::result_from_json(full);
    r.outcome = got.outcome;
    r.reason = std::move(got.reason);
    r.error = std::move(got.error);
    if (r.error) report::annotate_error(*r.error);
    r.duration_ms = got.duration_ms;
    r.repeats = std::move(got.repeats);
    r.launch_log = std::move(got.launch_log);
    r.buffers = std::move(got.buffers);
    r.faulting_buffer = std::move(got.faulting_buffer);
    r.sanitizer = std::move(got.sanitizer);
    r.details = std::move(got.details);
  } catch (const std::exception& e) {
    r.outcome = Outcome::no_result;
    r.reason = std::string("malformed result line from the child: ") + e.what();
  }
}

// The outcome of the case that was running when the child ended without finishing.
void fill_cut_off(report::Result& r, const runner::ChildOutcome& o) {
  using runner::Ending;
  switch (o.ending) {
    case Ending::timeout:
      r.outcome = Outcome::timeout;
      r.reason = "the child passed its deadline during this case and was terminated" +
                 std::string(o.unkillable ? " (it survived SIGKILL: stuck in the kernel driver?"
                                            " check dmesg for Xid and nvidia-smi)"
                             : o.killed_after_grace ? " (SIGTERM ignored; SIGKILL needed)"
                                                    : "");
      break;
    case Ending::signal:
      r.outcome = Outcome::crashed;
      r.reason = "the child was killed by " + o.signal_name + " during this case";
      break;
    case Ending::exit_code:
      r.outcome = Outcome::crashed;
      r.reason = "the child exited with code " + std::to_string(o.exit_code.value_or(-1)) + " during this case";
      break;
    case Ending::result:
    case Ending::no_result:
      r.outcome = Outcome::no_result;
      r.reason = "the child exited 0 without a result line for this case";
      break;
    case Ending::spawn_failed:
      r.outcome = Outcome::skipped;
      r.reason = "the child could not be started: " + o.spawn_error;
      break;
  }
}

// Position of each line's case, matched by CaseSpec.index (first unmatched position
// with that index, so a repeated index still maps one line to one case).
std::vector<const json*> match_lines(const std::vector<CaseSpec>& cases, const ChildLines& lines) {
  std::vector<const json*> by_pos(cases.size(), nullptr);
  for (const auto& line : lines.cases) {
    const int index = line["index"].get<int>();
    for (size_t p = 0; p < cases.size(); ++p) {
      if (cases[p].index == index && !by_pos[p]) {
        by_pos[p] = &line;
        break;
      }
    }
  }
  return by_pos;
}

report::Result interrupted_result(report::Result r) {
  r.outcome = Outcome::skipped;
  r.reason = "interrupted";
  r.error.reset();
  return r;
}

}  // namespace

report::Result make_result(const CaseSpec& spec, const ChildSettings& settings) {
  report::Result r;
  r.case_id = spec.case_id;
  r.kernel = spec.family;
  r.params = report::fields_from_json(spec.params);
  r.profile = settings.profile;
  r.allocator = spec.allocator;
  r.device = settings.device;
  r.device_index = settings.device_index;
  r.outcome = Outcome::no_result;
  return r;
}

runner::ChildSpec child_spec_for(const std::vector<CaseSpec>& cases, const ChildSettings& settings,
                                 const std::string& self_exe, const Wrap& wrap) {
  ChildRequest request;
  request.cases = cases;
  runner::ChildSpec spec;
  spec.argv = wrap.argv;
  spec.argv.insert(spec.argv.end(), {self_exe, kRunCaseCommand, "--spec", to_json(request).dump()});
  spec.env_set = settings.env_set;
  spec.env_unset = settings.env_unset;
  // Every case runs on one stream, so one hardware work queue is enough; the default of
  // 8 makes context creation far dearer when children start together (the default suite
  // on an H200, driver 580.159.04: 5.5 s with the default, 2.9 s with 1). A value the
  // user set, in the environment or the profile, is kept.
  if (!spec.env_set.count(kMaxConnectionsEnv) && std::getenv(kMaxConnectionsEnv) == nullptr)
    spec.env_set[kMaxConnectionsEnv] = "1";
  spec.deadline = settings.deadline * static_cast<long>(std::max<size_t>(1, cases.size()));
  spec.grace = settings.grace;
  spec.capture_limit = settings.capture_limit;
  spec.lane = settings.lane;
  spec.result_fd = runner::kResultFd;
  spec.result_fd_env = runner::kResultFdEnv;
  spec.label = cases.empty() ? "empty batch"
                             : cases.front().case_id +
                                   (cases.size() > 1 ? " (+" + std::to_string(cases.size() - 1) + " more)" : "");
  return spec;
}

std::vector<report::Result> results_from_child(const std::vector<CaseSpec>& cases,
                                               const runner::ChildOutcome& outcome, const ChildSettings& settings,
                                               std::vector<size_t>* not_run) {
  const ChildLines lines = parse_lines(outcome.result);
  if (lines.malformed > 0)
    spdlog::warn("child {}: {} malformed result line(s) ignored", outcome.pid, lines.malformed);
  const auto by_pos = match_lines(cases, lines);
  const report::ChildInfo info = evidence::child_info(outcome);

  std::vector<report::Result> results;
  std::vector<size_t> rest;
  bool cut_off_assigned = false;
  for (size_t p = 0; p < cases.size(); ++p) {
    report::Result r = make_result(cases[p], settings);
    r.child = info;
    if (outcome.ending == runner::Ending::spawn_failed) {
      fill_cut_off(r, outcome);  // nothing ran; a retry would fail the same way
    } else if (by_pos[p]) {
      fill_from_line(r, *by_pos[p]);
    } else if (lines.done == true) {
      // The child said it finished, yet this case has no line: do not loop on it.
      r.outcome = Outcome::no_result;
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
    report::Result r = make_result(cases[rest.front()], settings);
    r.child = info;
    r.outcome = Outcome::no_result;
    r.reason = "the child stopped before writing a result line for this case";
    results.push_back(std::move(r));
    rest.erase(rest.begin());
  }
  if (not_run) *not_run = std::move(rest);
  return results;
}

struct Executor::Impl {
  ExecutorOptions opts;
  runner::Pool pool;
  std::vector<ExecutedCase> cases;
  std::vector<std::shared_ptr<const ChildSettings>> settings;  // by batch
  std::vector<ChildRecord> children;                          // by child id (= pool id)
  std::map<size_t, std::vector<size_t>> cases_of_child;       // child id -> positions in `cases`
  std::vector<bool> done;                                     // by case position
  bool stopped_early = false;
  const std::function<void(ExecutedCase&)>* on_result = nullptr;

  // Core dumps: the folder they go to (made at the first armed child), and the
  // disassembler, looked up at the first dump.
  std::optional<ScratchDir> dump_dir;
  bool dump_dir_failed = false;
  std::optional<coredump::Disassembler> disassembler;
  std::map<size_t, coredump::DumpNames> dumps_of_child;

  explicit Impl(ExecutorOptions o)
      : opts(std::move(o)), pool(runner::PoolOptions{opts.jobs, opts.stop, opts.stop_grace, opts.lanes}) {}

  // The user's own dump variables (inherited, or in the batch's environment): said once,
  // and then cudadiag arms nothing (ExecutorOptions::coredump).
  static bool user_dump_settings(const ChildSettings& s) {
    std::vector<std::string> names = coredump::inherited_coredump_variables();
    for (const auto& [name, value] : s.env_set) names.push_back(name);
    const auto user = coredump::user_coredump_variables(names);
    if (!user.empty()) say_once(user_dump_settings_said, coredump::user_settings_line(user));
    return !user.empty();
  }

  // Arms a site run's child: its dumps into the scratch folder, the wait after its case
  // for a store's dump, the dump through the driver's pipe at its deadline. False when
  // the folder cannot be made.
  bool arm_dumps(size_t id, runner::ChildSpec& spec) {
    if (dump_dir_failed) return false;
    if (!dump_dir) {
      try {
        dump_dir.emplace("dumps");
      } catch (const std::exception& e) {
        dump_dir_failed = true;
        spdlog::warn("GPU core dumps not armed, no site runs: {}", e.what());
        return false;
      }
    }
    const coredump::DumpNames names_of_child{dump_dir->path(), "case-" + std::to_string(id)};
    for (auto& [name, value] : coredump::arming_env(names_of_child, true)) spec.env_set[name] = value;
    if (opts.dump_linger.count() > 0) {
      spec.env_set[fence::kDumpLingerVar] = std::to_string(opts.dump_linger.count());
      spec.deadline += opts.dump_linger;  // the wait after the case is not the case's time
    }
    dumps_of_child[id] = names_of_child;
    if (opts.dump_wait.count() > 0) {
      auto watcher = std::make_shared<std::optional<coredump::DumpWatcher>>();
      spec.at_deadline = [names_of_child, watcher](pid_t) {
        const auto triggered = coredump::trigger_pipes(coredump::find_pipes(names_of_child));
        if (!triggered.empty()) watcher->emplace(names_of_child, triggered.size());
      };
      spec.deadline_wait = [watcher] { return watcher->has_value() && !(*watcher)->complete(); };
      spec.deadline_hook_budget = opts.dump_wait;
    }
    return true;
  }

  // The sites of the child's dumps (removed once read).
  std::vector<report::FaultSite> read_dumps(size_t id) {
    const auto it = dumps_of_child.find(id);
    if (it == dumps_of_child.end()) return {};
    const coredump::DumpNames names = it->second;
    dumps_of_child.erase(it);
    for (const auto& p : coredump::find_pipes(names)) ::unlink(p.c_str());
    if (coredump::find_dumps(names).empty()) return {};
    if (!disassembler) disassembler = coredump::find_nvdisasm();
    if (disassembler->path.empty()) say_once(no_disassembler_said, coredump::no_disassembler_note(disassembler->reason));
    coredump::CollectOptions c;
    c.disassemble = coredump::disassemble_with(*disassembler);
    c.no_disassembler_reason = disassembler->reason;
    auto got = coredump::collect_dumps(names, c);
    for (const auto& n : got.notes) spdlog::warn("child #{}: {}", id, n);
    return std::move(got.sites);
  }

  bool stop_requested() const { return opts.stop && opts.stop->load(); }

  void start_child(size_t batch, std::vector<size_t> positions) {
    const ChildSettings& s = *settings[batch];
    const size_t id = children.size();
    const Wrap wrap = s.wrap ? s.wrap(id) : Wrap{};
    std::vector<CaseSpec> specs;
    for (size_t p : positions) specs.push_back(cases[p].spec);
    ChildRecord rec;
    rec.id = id;
    rec.batch = batch;
    rec.artifact = wrap.artifact;
    children.push_back(rec);
    runner::ChildSpec spec = child_spec_for(specs, s, opts.self_exe, wrap);
    const size_t pool_id = pool.submit(std::move(spec));
    if (pool_id != id) throw std::logic_error("executor: child numbering out of step with the pool");
    spdlog::debug("child #{}: {} case(s) from batch {}", id, specs.size(), batch);
    cases_of_child[id] = std::move(positions);
  }

  void deliver(size_t position, report::Result r, std::optional<size_t> child) {
    ExecutedCase& c = cases[position];
    c.result = std::move(r);
    c.child = child;
    done[position] = true;
    if (on_result && *on_result) (*on_result)(c);
  }

  // A site run: the case alone, in a child of its batch's settings, armed. False when
  // dumps cannot be armed (no scratch folder).
  bool start_site_child(size_t position) {
    const ExecutedCase& c = cases[position];
    const size_t id = children.size();
    runner::ChildSpec spec = child_spec_for({c.spec}, *settings[c.batch], opts.self_exe, Wrap{});
    if (!arm_dumps(id, spec)) return false;
    spec.label = "site run of " + spec.label;
    ChildRecord rec;
    rec.id = id;
    rec.batch = c.batch;
    rec.site_for = position;
    children.push_back(rec);
    if (pool.submit(std::move(spec)) != id)
      throw std::logic_error("executor: child numbering out of step with the pool");
    spdlog::debug("child #{}: site run of {}", id, c.spec.case_id);
    return true;
  }

  // The site run's dump joins its case's result; the result's outcome stays its own.
  void on_site_done(size_t id, const runner::ChildOutcome& outcome) {
    const ChildRecord& rec = children[id];
    ExecutedCase& c = cases[*rec.site_for];
    std::vector<size_t> rest;
    auto got = results_from_child({c.spec}, outcome, *settings[c.batch], &rest);
    auto sites = read_dumps(id);  // read (and removed) however the run ended
    if (rec.cut_by_stop || got.empty()) {
      spdlog::debug("site run of {}: cut by the stop, nothing added", c.spec.case_id);
      return;
    }
    got.front().fault_sites = std::move(sites);
    if (!merge_site_run(c.result, got.front()))
      spdlog::debug("site run of {}: ended {}, no GPU core dump came (no site)", c.spec.case_id,
                    report::to_string(got.front().outcome));
  }

  void on_done(size_t id, const runner::ChildOutcome& outcome) {
    ChildRecord& rec = children[id];
    rec.pid = static_cast<int>(outcome.pid);
    rec.start_us = host::to_monotonic_us(outcome.started);
    rec.end_us = host::to_monotonic_us(outcome.finished);
    rec.cut_by_stop = stop_requested();
    if (rec.site_for) return on_site_done(id, outcome);
    const std::vector<size_t> positions = std::move(cases_of_child.at(id));
    cases_of_child.erase(id);
    const size_t batch = rec.batch;
    const ChildSettings& s = *settings[batch];

    // A request too long for one argv string: run the batch in two halves.
    if (outcome.ending == runner::Ending::spawn_failed && outcome.spawn_errno == E2BIG && positions.size() > 1 &&
        !stop_requested()) {
      const auto mid = positions.begin() + static_cast<long>(positions.size() / 2);
      start_child(batch, std::vector<size_t>(positions.begin(), mid));
      start_child(batch, std::vector<size_t>(mid, positions.end()));
      return;
    }
    std::vector<CaseSpec> specs;
    for (size_t p : positions) specs.push_back(cases[p].spec);
    std::vector<size_t> rest;
    auto got = results_from_child(specs, outcome, s, &rest);
    size_t next_rest = 0, next_got = 0;
    for (size_t k = 0; k < positions.size(); ++k) {
      if (next_rest < rest.size() && rest[next_rest] == k) {
        ++next_rest;
        continue;
      }
      report::Result r = std::move(got[next_got++]);
      // A case cut off by the stop request did not time out or crash on its own.
      if (rec.cut_by_stop && (r.outcome == Outcome::timeout || r.outcome == Outcome::crashed ||
                              r.outcome == Outcome::no_result))
        r = interrupted_result(std::move(r));
      deliver(positions[k], std::move(r), id);
    }
    if (rest.empty()) return;
    std::vector<size_t> again;
    for (size_t k : rest) again.push_back(positions[k]);
    start_child(batch, std::move(again));
  }
};

Executor::Executor(ExecutorOptions opts) : impl_(std::make_unique<Impl>(std::move(opts))) {}
Executor::~Executor() = default;

size_t Executor::submit(std::vector<CaseSpec> cases, std::shared_ptr<const ChildSettings> settings) {
  Impl& im = *impl_;
  const size_t batch = im.settings.size();
  im.settings.push_back(std::move(settings));
  std::vector<size_t> positions;
  for (auto& spec : cases) {
    ExecutedCase c;
    c.result = make_result(spec, *im.settings.back());
    c.spec = std::move(spec);
    c.batch = batch;
    positions.push_back(im.cases.size());
    im.cases.push_back(std::move(c));
    im.done.push_back(false);
  }
  if (!positions.empty()) im.start_child(batch, std::move(positions));
  return batch;
}

void Executor::run(const std::function<void(ExecutedCase&)>& on_result) {
  Impl& im = *impl_;
  im.on_result = &on_result;
  im.pool.run([&](size_t id, const runner::ChildOutcome& o) { im.on_done(id, o); });
  // Whatever has no result now was never started: the stop came first.
  for (size_t p = 0; p < im.cases.size(); ++p) {
    if (im.done[p]) continue;
    im.stopped_early = true;
    im.deliver(p, interrupted_result(make_result(im.cases[p].spec, *im.settings[im.cases[p].batch])), std::nullopt);
  }
  im.on_result = nullptr;
}

size_t Executor::run_site_runs(const std::function<bool(const ExecutedCase&)>& wants) {
  Impl& im = *impl_;
  if (!im.opts.coredump || im.stopped_early || im.stop_requested()) return 0;
  size_t started = 0;
  std::string first;
  for (size_t p = 0; p < im.cases.size(); ++p) {
    const ExecutedCase& c = im.cases[p];
    if (!c.child || im.children[*c.child].site_for || !wants(c)) continue;
    const ChildSettings& s = *im.settings[c.batch];
    if (s.wrap || Impl::user_dump_settings(s)) continue;
    if (!im.start_site_child(p)) break;
    if (started++ == 0) first = c.spec.case_id;
  }
  if (started == 0) return 0;
  spdlog::info("{} run{} once more with GPU core dumps armed, to name the fault site",
               started == 1 ? first : std::to_string(started) + " failed cases", started == 1 ? "s" : "");
  im.pool.run([&](size_t id, const runner::ChildOutcome& o) { im.on_done(id, o); });
  return started;
}

const std::vector<ExecutedCase>& Executor::cases() const { return impl_->cases; }
const std::vector<ChildRecord>& Executor::children() const { return impl_->children; }
bool Executor::interrupted() const { return impl_->stopped_early || impl_->stop_requested(); }

std::vector<report::Result> execute(const std::vector<CaseSpec>& cases, const ChildSettings& settings,
                                    const std::string& self_exe, const std::atomic<bool>* stop, SitePolicy policy) {
  ExecutorOptions o{self_exe, 1, stop, kStopGrace};
  o.coredump = policy != SitePolicy::none;
  Executor ex(std::move(o));
  ex.submit(cases, std::make_shared<const ChildSettings>(settings));
  ex.run();
  ex.run_site_runs([policy](const ExecutedCase& c) { return wants_site_run(c.result, policy); });
  std::vector<report::Result> out;
  for (const auto& c : ex.cases()) out.push_back(c.result);
  return out;
}

}  // namespace cudadiag::suite
