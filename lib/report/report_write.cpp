// The report written as JSON (report::to_json).
#include "report/report.h"

namespace cudadiag::report {
namespace {

void put_if(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

json excerpt_json(const StreamExcerpt& s) {
  return json{{"text", s.text}, {"total_bytes", s.total_bytes}, {"dropped_bytes", s.dropped_bytes}};
}

}  // namespace

json to_json(const ErrorInfo& e) {
  json j{{"code", e.code}, {"name", e.name}, {"class", taxonomy::to_string(e.error_class)}, {"sticky", e.sticky},
         {"surfaced_at", e.surfaced_at}};
  if (e.source) j["source"] = taxonomy::to_string(*e.source);
  put_if(j, "api_call", e.api_call);
  put_if(j, "meaning", e.meaning);
  put_if(j, "next_step", e.next_step);
  put_if(j, "message", e.message);
  put_if(j, "location", e.location);
  put_if(j, "last_kernel", e.last_kernel);
  return j;
}

json to_json(const ChildInfo& c) {
  json j{{"pid", c.pid}, {"ending", to_string(c.ending)}};
  if (c.exit_code) j["exit_code"] = *c.exit_code;
  if (c.signal) j["signal"] = *c.signal;
  put_if(j, "signal_name", c.signal_name);
  if (c.killed_after_grace) j["killed_after_grace"] = true;
  j["stdout"] = excerpt_json(c.stdout_excerpt);
  j["stderr"] = excerpt_json(c.stderr_excerpt);
  if (!c.strays.empty() || c.strays_unnamed) {
    json strays = json::array();
    for (const auto& s : c.strays) strays.push_back(json{{"pid", s.pid}, {"command", s.command}, {"note", s.note}});
    j["strays"] = std::move(strays);
    if (c.strays_unnamed) j["strays_unnamed"] = c.strays_unnamed;
  }
  return j;
}

json to_json(const FaultingBuffer& f) {
  json j{{"name", f.name}};
  if (f.bytes) j["bytes"] = *f.bytes;
  j["direction"] = std::string(choice_name(kBufferDirections, f.direction));
  if (f.extra_runs) j["extra_runs"] = *f.extra_runs;
  return j;
}

json to_json(const RepeatStats& r) {
  json hist = json::object();
  for (const auto& [k, v] : r.histogram) hist[k] = v;
  json j{{"runs", r.runs},        {"failures", r.failures}, {"failure_rate", r.failure_rate},
         {"ci95_low", r.ci_low},  {"ci95_high", r.ci_high}, {"histogram", hist}};
  if (r.seconds) j["seconds"] = *r.seconds;
  if (r.runs_per_second) j["runs_per_second"] = *r.runs_per_second;
  return j;
}

json to_json(const Tool& t) {
  return json{{"name", t.name},
              {"version", t.version},
              {"git_revision", t.git_revision},
              {"cuda_toolkit", t.cuda_toolkit},
              {"architectures", t.architectures}};
}

json to_json(const Invocation& i) {
  json j = json::object();
  if (!i.command.empty()) j["command"] = i.command;
  j["argv"] = i.argv;
  if (!i.started_at.empty()) j["started_at"] = i.started_at;
  if (i.finished_at) j["finished_at"] = *i.finished_at;
  if (i.duration_ms) j["duration_ms"] = *i.duration_ms;
  if (i.interrupted) j["interrupted"] = *i.interrupted;
  return j;
}

json to_json(const GpuStatus& g) {
  json j{{"ran", g.ran}};
  if (g.reason) j["reason"] = *g.reason;
  return j;
}

json to_json(const LaunchRecord& l) {
  json j{{"seq", l.seq},
         {"kernel", l.kernel},
         {"grid", {l.grid[0], l.grid[1], l.grid[2]}},
         {"block", {l.block[0], l.block[1], l.block[2]}},
         {"dynamic_smem", l.dynamic_smem}};
  if (l.buffers) j["buffers"] = *l.buffers;
  if (l.api) j["api"] = *l.api;
  return j;
}

json to_json(const BufferRecord& b) {
  json j{{"name", b.name}, {"bytes", b.bytes}};
  if (b.range) j["range"] = to_string(*b.range);
  if (b.allocator) j["allocator"] = profiles::to_string(*b.allocator);
  if (b.freed) j["freed"] = *b.freed;
  return j;
}

json to_json(const XidLine& x) {
  json j;
  j["timestamp_us"] = x.timestamp_us ? json(*x.timestamp_us) : json(nullptr);
  j["pci"] = x.pci;
  j["xid"] = x.xid;
  j["pid"] = x.pid ? json(*x.pid) : json(nullptr);
  j["process"] = x.process ? json(*x.process) : json(nullptr);
  j["message"] = x.message;
  j["meaning"] = x.meaning;
  j["points_to"] = std::string(choice_name(kXidPointsTo, x.points_to));
  return j;
}

json to_json(const SanitizerFindings& s) {
  if (s.memcheck) return sanitizer::to_json(*s.memcheck);
  return json{{"tool", s.tool}, {"error", s.error}};
}

json to_json(const Result& r) {
  json j;
  j["case_id"] = r.case_id;
  j["kernel"] = cases::to_string(r.kernel);
  j["params"] = to_json(r.params);
  j["profile"] = r.profile;
  if (r.allocator) j["allocator"] = profiles::to_string(*r.allocator);
  j["device"] = to_string(r.device);
  if (r.device_index >= 0) j["device_index"] = r.device_index;
  j["outcome"] = to_string(r.outcome);
  j["expected"] = r.expected;
  j["expectation_met"] = r.expectation_met ? json(*r.expectation_met) : json(nullptr);
  if (!r.reason.empty()) j["reason"] = r.reason;
  j["error"] = r.error ? to_json(*r.error) : json(nullptr);
  j["duration_ms"] = r.duration_ms;
  if (r.repeats) j["repeats"] = to_json(*r.repeats);
  if (r.child) j["child"] = to_json(*r.child);
  if (!r.launch_log.empty()) {
    json a = json::array();
    for (const auto& l : r.launch_log) a.push_back(to_json(l));
    j["launch_log"] = std::move(a);
  }
  if (!r.buffers.empty()) {
    json a = json::array();
    for (const auto& b : r.buffers) a.push_back(to_json(b));
    j["buffers"] = std::move(a);
  }
  if (r.faulting_buffer) j["faulting_buffer"] = to_json(*r.faulting_buffer);
  if (!r.fault_sites.empty()) {
    json sites = json::array();
    for (const auto& s : r.fault_sites) sites.push_back(to_json(s));
    j["fault_sites"] = sites;
  }
  if (!r.xid.empty()) {
    json a = json::array();
    for (const auto& x : r.xid) a.push_back(to_json(x));
    j["xid"] = std::move(a);
  }
  if (r.sanitizer) j["sanitizer"] = to_json(*r.sanitizer);
  if (!r.details.empty()) j["details"] = to_json(r.details);
  return j;
}

json to_json(const Summary& s) {
  json by_outcome = json::object();
  for (const auto& [outcome, n] : s.by_outcome) by_outcome[std::string(to_string(outcome))] = n;
  return json{{"total", s.total},
              {"by_outcome", by_outcome},
              {"expectations_met", s.expectations_met},
              {"expectations_unmet", s.expectations_unmet},
              {"not_judged", s.not_judged}};
}

json to_json(const Report& r) {
  json j;
  j["schema_version"] = r.schema_version;
  j["tool"] = to_json(r.tool);
  j["invocation"] = to_json(r.invocation);
  j["host"] = to_json(r.host);
  j["driver"] = to_json(r.driver);
  j["devices"] = to_json(r.devices);
  j["environment"] = to_json(r.environment);
  j["gpu"] = to_json(r.gpu);
  json results = json::array();
  for (const auto& res : r.results) results.push_back(to_json(res));
  j["results"] = std::move(results);
  j["summary"] = r.summary ? to_json(*r.summary) : json::object();
  j["verdict"] = json{{"status", to_string(r.verdict.status)}, {"reasons", r.verdict.reasons}};
  if (const auto& c = r.verdict.coverage) {
    json directions = json::array();
    for (const auto d : c->directions) directions.push_back(std::string(choice_name(kGuardedEnds, d)));
    json cov{{"directions", std::move(directions)}, {"seen", c->seen}, {"unseen", c->unseen}};
    if (c->allocations) cov["allocations"] = *c->allocations;
    if (c->fenced) cov["fenced"] = *c->fenced;
    j["verdict"]["coverage"] = std::move(cov);
  }
  if (r.redaction) {
    j["redaction"] = json{{"applied", r.redaction->applied}, {"covers", r.redaction->covers}};
    if (r.redaction->mode != RedactionMode::unkeyed)
      j["redaction"]["mode"] = std::string(choice_name(kRedactionModes, r.redaction->mode));
    if (!r.redaction->key_id.empty()) j["redaction"]["key_id"] = r.redaction->key_id;
  }
  for (const auto& m : r.extra.items()) j[m.name] = to_json(m.value);
  return j;
}

}  // namespace cudadiag::report
