#include "report/report.h"

#include <chrono>
#include <ctime>
#include <stdexcept>

#include "report/json_reader.h"
#include "util/build_info.h"

namespace cudadiag::report {
namespace {

void put_if(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

json excerpt_json(const StreamExcerpt& s) {
  return json{{"text", s.text}, {"total_bytes", s.total_bytes}, {"dropped_bytes", s.dropped_bytes}};
}

bool parse_number(const std::string& s, size_t& pos, int& out) {
  const size_t start = pos;
  long long v = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && pos - start < 9) v = v * 10 + (s[pos++] - '0');
  if (pos == start || (s[start] == '0' && pos - start > 1)) return false;
  out = static_cast<int>(v);
  return true;
}

}  // namespace

std::optional<SemVer> parse_semver(const std::string& text) {
  SemVer v;
  size_t pos = 0;
  if (!parse_number(text, pos, v.major) || pos >= text.size() || text[pos++] != '.') return std::nullopt;
  if (!parse_number(text, pos, v.minor) || pos >= text.size() || text[pos++] != '.') return std::nullopt;
  if (!parse_number(text, pos, v.patch)) return std::nullopt;
  if (pos < text.size() && text[pos] != '-' && text[pos] != '+') return std::nullopt;
  return v;
}

std::string dump_json(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

json to_json(const ErrorInfo& e) {
  json j{{"code", e.code}, {"name", e.name}, {"class", e.error_class}, {"sticky", e.sticky},
         {"surfaced_at", e.surfaced_at}};
  put_if(j, "source", e.source);
  put_if(j, "api_call", e.api_call);
  put_if(j, "meaning", e.meaning);
  put_if(j, "next_step", e.next_step);
  put_if(j, "message", e.message);
  put_if(j, "location", e.location);
  put_if(j, "last_kernel", e.last_kernel);
  return j;
}

json to_json(const ChildInfo& c) {
  json j{{"pid", c.pid}, {"ending", c.ending}};
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
  j["direction"] = f.direction;
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

json to_json(const Result& r) {
  json j;
  j["case_id"] = r.case_id;
  j["kernel"] = r.kernel;
  j["params"] = r.params;
  j["profile"] = r.profile;
  if (r.allocator) j["allocator"] = profiles::to_string(*r.allocator);
  j["device"] = r.device;
  if (r.device_index >= 0) j["device_index"] = r.device_index;
  j["outcome"] = to_string(r.outcome);
  j["expected"] = r.expected;
  j["expectation_met"] = r.expectation_met ? json(*r.expectation_met) : json(nullptr);
  if (!r.reason.empty()) j["reason"] = r.reason;
  j["error"] = r.error ? to_json(*r.error) : json(nullptr);
  j["duration_ms"] = r.duration_ms;
  if (r.repeats) j["repeats"] = to_json(*r.repeats);
  if (r.child) j["child"] = to_json(*r.child);
  if (!r.launch_log.empty()) j["launch_log"] = r.launch_log;
  if (!r.buffers.empty()) j["buffers"] = r.buffers;
  if (r.faulting_buffer) j["faulting_buffer"] = to_json(*r.faulting_buffer);
  if (!r.fault_sites.empty()) {
    json sites = json::array();
    for (const auto& s : r.fault_sites) sites.push_back(to_json(s));
    j["fault_sites"] = sites;
  }
  if (!r.xid.empty()) j["xid"] = r.xid;
  if (!r.sanitizer.is_null()) j["sanitizer"] = r.sanitizer;
  if (!r.details.empty()) j["details"] = r.details;
  return j;
}

json to_json(const Report& r) {
  json j;
  j["schema_version"] = r.schema_version;
  j["tool"] = r.tool;
  j["invocation"] = r.invocation;
  j["host"] = r.host;
  j["driver"] = r.driver;
  j["devices"] = r.devices;
  j["environment"] = r.environment;
  j["gpu"] = r.gpu;
  json results = json::array();
  for (const auto& res : r.results) results.push_back(to_json(res));
  j["results"] = std::move(results);
  j["summary"] = r.summary;
  j["verdict"] = json{{"status", to_string(r.verdict.status)}, {"reasons", r.verdict.reasons}};
  if (const auto& c = r.verdict.coverage) {
    json cov{{"directions", c->directions}, {"seen", c->seen}, {"unseen", c->unseen}};
    if (c->allocations) cov["allocations"] = *c->allocations;
    if (c->fenced) cov["fenced"] = *c->fenced;
    j["verdict"]["coverage"] = std::move(cov);
  }
  if (r.redaction) j["redaction"] = json{{"applied", r.redaction->applied}, {"covers", r.redaction->covers}};
  for (const auto& [k, v] : r.extra.items()) j[k] = v;
  return j;
}

namespace {

ErrorInfo read_error(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  ErrorInfo e;
  e.code = rd.int_or(j, "code", p, 0);
  e.name = rd.string_or(j, "name", p);
  e.source = rd.string_or(j, "source", p);
  e.error_class = rd.string_or(j, "class", p);
  e.sticky = rd.boolean_or(j, "sticky", p, false);
  e.surfaced_at = rd.string_or(j, "surfaced_at", p);
  e.api_call = rd.string_or(j, "api_call", p);
  e.meaning = rd.string_or(j, "meaning", p);
  e.next_step = rd.string_or(j, "next_step", p);
  e.message = rd.string_or(j, "message", p);
  e.location = rd.string_or(j, "location", p);
  e.last_kernel = rd.string_or(j, "last_kernel", p);
  return e;
}

StreamExcerpt read_excerpt(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  StreamExcerpt s;
  s.text = rd.string_or(j, "text", p);
  s.total_bytes = rd.unsigned_or(j, "total_bytes", p, 0);
  s.dropped_bytes = rd.unsigned_or(j, "dropped_bytes", p, 0);
  return s;
}

RepeatStats read_repeats(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  RepeatStats s;
  s.runs = rd.int_or(j, "runs", p, 0);
  s.failures = rd.int_or(j, "failures", p, 0);
  s.failure_rate = rd.number_or(j, "failure_rate", p, 0.0);
  s.ci_low = rd.number_or(j, "ci95_low", p, 0.0);
  s.ci_high = rd.number_or(j, "ci95_high", p, 0.0);
  if (const json* v = rd.find(j, "seconds", p)) s.seconds = rd.number(*v, JsonReader::member_pointer(p, "seconds"));
  if (const json* v = rd.find(j, "runs_per_second", p))
    s.runs_per_second = rd.number(*v, JsonReader::member_pointer(p, "runs_per_second"));
  const json hist = rd.object_or_empty(j, "histogram", p);
  const std::string hp = JsonReader::member_pointer(p, "histogram");
  for (const auto& [k, v] : hist.items()) s.histogram[k] = rd.int_or(hist, k, hp, 0);
  return s;
}

FaultingBuffer read_faulting_buffer(const JsonReader& rd, const json& j, const std::string& p) {
  FaultingBuffer f;
  f.name = rd.string(rd.required(j, "name", p), JsonReader::member_pointer(p, "name"));
  f.direction = rd.string(rd.required(j, "direction", p), JsonReader::member_pointer(p, "direction"));
  if (const json* v = rd.find(j, "bytes", p)) f.bytes = rd.unsigned_integer(*v, JsonReader::member_pointer(p, "bytes"));
  if (const json* v = rd.find(j, "extra_runs", p))
    f.extra_runs = static_cast<int>(rd.integer(*v, JsonReader::member_pointer(p, "extra_runs"), 0, 1 << 30));
  return f;
}

ChildInfo read_child(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  ChildInfo c;
  c.pid = rd.int_or(j, "pid", p, 0);
  c.ending = rd.string_or(j, "ending", p);
  if (rd.find(j, "exit_code", p)) c.exit_code = rd.int_or(j, "exit_code", p, 0);
  if (rd.find(j, "signal", p)) c.signal = rd.int_or(j, "signal", p, 0);
  c.signal_name = rd.string_or(j, "signal_name", p);
  c.killed_after_grace = rd.boolean_or(j, "killed_after_grace", p, false);
  if (const json* v = rd.find(j, "stdout", p)) c.stdout_excerpt = read_excerpt(rd, *v, JsonReader::member_pointer(p, "stdout"));
  if (const json* v = rd.find(j, "stderr", p)) c.stderr_excerpt = read_excerpt(rd, *v, JsonReader::member_pointer(p, "stderr"));
  const json strays = rd.array_or_empty(j, "strays", p);
  for (std::size_t i = 0; i < strays.size(); ++i) {
    const std::string sp = JsonReader::member_pointer(JsonReader::member_pointer(p, "strays"), std::to_string(i));
    rd.object(strays[i], sp);
    c.strays.push_back({rd.int_or(strays[i], "pid", sp, 0), rd.string_or(strays[i], "command", sp),
                        rd.string_or(strays[i], "note", sp)});
  }
  c.strays_unnamed = rd.unsigned_or(j, "strays_unnamed", p, 0);
  return c;
}

// A member that holds an object or null (absent reads as null).
const json* object_or_null(const JsonReader& rd, const json& j, const char* key, const std::string& p) {
  const json* v = rd.find(j, key, p);
  if (!v || v->is_null()) return nullptr;
  return &rd.object(*v, JsonReader::member_pointer(p, key));
}

Result read_result(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  Result r;
  r.case_id = rd.string(rd.required(j, "case_id", p), JsonReader::member_pointer(p, "case_id"));
  r.kernel = rd.string(rd.required(j, "kernel", p), JsonReader::member_pointer(p, "kernel"));
  r.params = rd.object_or_empty(j, "params", p);
  r.profile = rd.string_or(j, "profile", p, "default");
  if (const json* v = rd.find(j, "allocator", p)) {
    const std::string ap = JsonReader::member_pointer(p, "allocator");
    const std::string text = rd.string(*v, ap);
    const auto a = profiles::parse_allocator(text);
    if (!a) rd.fail(ap, "unknown allocator '" + text + "'");
    r.allocator = *a;
  }
  r.device = rd.string_or(j, "device", p);
  r.device_index = rd.int_or(j, "device_index", p, -1);
  {
    const std::string op = JsonReader::member_pointer(p, "outcome");
    const std::string text = rd.string(rd.required(j, "outcome", p), op);
    const auto outcome = parse_outcome(text);
    if (!outcome) rd.fail(op, "unknown outcome '" + text + "'");
    r.outcome = *outcome;
  }
  r.expected = rd.string_or(j, "expected", p);
  if (const json* v = rd.find(j, "expectation_met", p); v && !v->is_null())
    r.expectation_met = rd.boolean(*v, JsonReader::member_pointer(p, "expectation_met"));
  r.reason = rd.string_or(j, "reason", p);
  if (const json* v = object_or_null(rd, j, "error", p)) r.error = read_error(rd, *v, JsonReader::member_pointer(p, "error"));
  r.duration_ms = rd.number_or(j, "duration_ms", p, 0.0);
  if (const json* v = object_or_null(rd, j, "repeats", p))
    r.repeats = read_repeats(rd, *v, JsonReader::member_pointer(p, "repeats"));
  if (const json* v = object_or_null(rd, j, "child", p)) r.child = read_child(rd, *v, JsonReader::member_pointer(p, "child"));
  r.launch_log = rd.array_or_empty(j, "launch_log", p);
  r.buffers = rd.array_or_empty(j, "buffers", p);
  if (const json* v = object_or_null(rd, j, "faulting_buffer", p))
    r.faulting_buffer = read_faulting_buffer(rd, *v, JsonReader::member_pointer(p, "faulting_buffer"));
  const json sites = rd.array_or_empty(j, "fault_sites", p);
  for (std::size_t i = 0; i < sites.size(); ++i)
    r.fault_sites.push_back(
        read_fault_site(rd, sites[i], JsonReader::element_pointer(JsonReader::member_pointer(p, "fault_sites"), i)));
  r.xid = rd.array_or_empty(j, "xid", p);
  if (const json* v = rd.find(j, "sanitizer", p)) r.sanitizer = *v;
  r.details = rd.object_or_empty(j, "details", p);
  return r;
}

// Sections kept as JSON: the shape, and the members other parts of cudadiag read.
json read_section(const JsonReader& rd, const json& j, const char* key, bool object,
                  std::initializer_list<JsonReader::Typed> members = {}) {
  json section = object ? rd.object_or_empty(j, key, "") : rd.array_or_empty(j, key, "");
  const std::string p = JsonReader::member_pointer("", key);
  if (object) {
    rd.check_members(section, p, members);
  } else {
    for (std::size_t i = 0; i < section.size(); ++i) {
      const std::string ep = JsonReader::element_pointer(p, i);
      rd.check_members(section[i], ep, members);
    }
  }
  return section;
}

}  // namespace

ErrorInfo error_from_json(const json& j, const std::string& source) {
  return read_error(JsonReader(source), j, "");
}

Result result_from_json(const json& j, const std::string& source) {
  return read_result(JsonReader(source), j, "");
}

Report report_from_json(const json& j, const std::string& source) {
  using T = JsonReader::Type;
  const JsonReader rd(source);
  rd.object(j, "");
  Report r;
  r.schema_version = rd.string(rd.required(j, "schema_version", ""), "/schema_version");
  r.tool = read_section(rd, j, "tool", true,
                        {{"name", T::string}, {"version", T::string}, {"git_revision", T::string},
                         {"cuda_toolkit", T::string}});
  r.invocation = read_section(rd, j, "invocation", true,
                              {{"command", T::string}, {"argv", T::strings}, {"started_at", T::string},
                               {"finished_at", T::string}, {"duration_ms", T::number}});
  r.host = read_section(rd, j, "host", true, {{"hostname", T::string}});
  r.driver = read_section(rd, j, "driver", true);
  r.devices = read_section(rd, j, "devices", false,
                           {{"index", T::integer}, {"uuid", T::string}, {"name", T::string}});
  r.environment = read_section(rd, j, "environment", true);
  r.gpu = read_section(rd, j, "gpu", true, {{"ran", T::boolean}, {"reason", T::string}});
  const json& results = rd.array(rd.required(j, "results", ""), "/results");
  for (std::size_t i = 0; i < results.size(); ++i)
    r.results.push_back(read_result(rd, results[i], JsonReader::element_pointer("/results", i)));
  r.summary = read_section(rd, j, "summary", true);
  if (const json* v = rd.find(j, "verdict", "")) {
    rd.object(*v, "/verdict");
    const std::string text = rd.string_or(*v, "status", "/verdict");
    const auto parsed = parse_verdict_status(text);
    if (!parsed) rd.fail("/verdict/status", "unknown status '" + text + "'");
    r.verdict.status = *parsed;
    if (const json* reasons = rd.find(*v, "reasons", "/verdict")) r.verdict.reasons = rd.strings(*reasons, "/verdict/reasons");
    if (const json* c = rd.find(*v, "coverage", "/verdict")) {
      rd.object(*c, "/verdict/coverage");
      VerdictCoverage cov;
      const std::string at = "/verdict/coverage";
      if (const json* x = rd.find(*c, "directions", at)) cov.directions = rd.strings(*x, at + "/directions");
      if (const json* x = rd.find(*c, "seen", at)) cov.seen = rd.strings(*x, at + "/seen");
      if (const json* x = rd.find(*c, "unseen", at)) cov.unseen = rd.strings(*x, at + "/unseen");
      if (const json* x = rd.find(*c, "allocations", at)) cov.allocations = rd.unsigned_integer(*x, at + "/allocations");
      if (const json* x = rd.find(*c, "fenced", at)) cov.fenced = rd.unsigned_integer(*x, at + "/fenced");
      r.verdict.coverage = std::move(cov);
    }
  }
  if (const json* v = rd.find(j, "redaction", "")) {
    rd.object(*v, "/redaction");
    Redaction red;
    if (const json* applied = rd.find(*v, "applied", "/redaction")) red.applied = rd.boolean(*applied, "/redaction/applied");
    if (const json* covers = rd.find(*v, "covers", "/redaction")) red.covers = rd.strings(*covers, "/redaction/covers");
    r.redaction = std::move(red);
  }
  static const char* known[] = {"schema_version", "tool",    "invocation", "host",
                                "driver",         "devices", "environment", "gpu",
                                "results",        "summary", "verdict",     "redaction"};
  for (const auto& [k, v] : j.items()) {
    bool is_known = false;
    for (const char* kk : known) is_known = is_known || k == kk;
    if (!is_known) r.extra[k] = v;
  }
  return r;
}

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
  r.tool = json{{"name", "cudadiag"},
                {"version", b.version},
                {"git_revision", b.git_revision},
                {"cuda_toolkit", b.cuda_toolkit},
                {"architectures", b.architectures}};
  r.invocation = json{{"command", command}, {"argv", argv}, {"started_at", now_iso8601()}};
  r.gpu = json{{"ran", false}, {"reason", "not attempted"}};
  return r;
}

void finish_report(Report& r) {
  r.invocation["finished_at"] = now_iso8601();
  json by_outcome = json::object();
  int met = 0, unmet = 0, unjudged = 0;
  for (const auto& res : r.results) {
    const std::string name(to_string(res.outcome));
    by_outcome[name] = by_outcome.value(name, 0) + 1;
    if (!res.expectation_met) {
      ++unjudged;
    } else if (*res.expectation_met) {
      ++met;
    } else {
      ++unmet;
    }
  }
  r.summary["total"] = r.results.size();
  r.summary["by_outcome"] = by_outcome;
  r.summary["expectations_met"] = met;
  r.summary["expectations_unmet"] = unmet;
  r.summary["not_judged"] = unjudged;
}

bool is_allowlisted_env(const std::string& name) {
  static const char* prefixes[] = {"CUDA_", "PYTORCH_", "TORCH_", "NCCL_", "CUDADIAG_"};
  for (const char* p : prefixes) {
    if (name.rfind(p, 0) == 0) return true;
  }
  static const char* names[] = {"NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
                                "AOTI_RUNTIME_CHECK_INPUTS", "TORCHINDUCTOR_NAN_ASSERTS"};
  for (const char* n : names) {
    if (name == n) return true;
  }
  return false;
}

json capture_environment(char** envp) {
  json env = json::object();
  if (!envp) return env;
  std::map<std::string, std::string> sorted;
  for (char** e = envp; *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string name = kv.substr(0, eq);
    if (is_allowlisted_env(name)) sorted[name] = kv.substr(eq + 1);
  }
  for (auto& [k, v] : sorted) env[k] = v;
  return env;
}

}  // namespace cudadiag::report
