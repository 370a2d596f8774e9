#include "report/report.h"

#include <chrono>
#include <ctime>
#include <stdexcept>

#include "util/build_info.h"

namespace cudadiag::report {
namespace {

void put_if(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

json excerpt_json(const StreamExcerpt& s) {
  return json{{"text", s.text}, {"total_bytes", s.total_bytes}, {"dropped_bytes", s.dropped_bytes}};
}

StreamExcerpt excerpt_from(const json& j) {
  StreamExcerpt s;
  if (!j.is_object()) return s;
  s.text = j.value("text", "");
  s.total_bytes = j.value("total_bytes", 0ULL);
  s.dropped_bytes = j.value("dropped_bytes", 0ULL);
  return s;
}

template <typename T>
T get_required(const json& j, const char* key, const std::string& path) {
  if (!j.contains(key)) throw std::runtime_error(path + "." + key + ": missing");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::runtime_error(path + "." + key + ": wrong type (" + j.at(key).type_name() + ")");
  }
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
  return j;
}

json to_json(const RepeatStats& r) {
  json hist = json::object();
  for (const auto& [k, v] : r.histogram) hist[k] = v;
  return json{{"runs", r.runs},        {"failures", r.failures}, {"failure_rate", r.failure_rate},
              {"ci95_low", r.ci_low},  {"ci95_high", r.ci_high}, {"histogram", hist}};
}

json to_json(const Result& r) {
  json j;
  j["case_id"] = r.case_id;
  j["kernel"] = r.kernel;
  j["params"] = r.params;
  j["profile"] = r.profile;
  if (!r.allocator.empty()) j["allocator"] = r.allocator;
  j["device"] = r.device;
  if (r.device_index >= 0) j["device_index"] = r.device_index;
  j["outcome"] = r.outcome;
  j["expected"] = r.expected;
  j["expectation_met"] = r.expectation_met ? json(*r.expectation_met) : json(nullptr);
  if (!r.reason.empty()) j["reason"] = r.reason;
  j["error"] = r.error ? to_json(*r.error) : json(nullptr);
  j["duration_ms"] = r.duration_ms;
  if (r.repeats) j["repeats"] = to_json(*r.repeats);
  if (r.child) j["child"] = to_json(*r.child);
  if (!r.launch_log.empty()) j["launch_log"] = r.launch_log;
  if (!r.buffers.empty()) j["buffers"] = r.buffers;
  if (!r.faulting_buffer.is_null()) j["faulting_buffer"] = r.faulting_buffer;
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
  j["verdict"] = json{{"status", r.verdict.status}, {"reasons", r.verdict.reasons}};
  for (const auto& [k, v] : r.extra.items()) j[k] = v;
  return j;
}

ErrorInfo error_from_json(const json& j) {
  ErrorInfo e;
  e.code = j.value("code", 0);
  e.name = j.value("name", "");
  e.source = j.value("source", "");
  e.error_class = j.value("class", "");
  e.sticky = j.value("sticky", false);
  e.surfaced_at = j.value("surfaced_at", "");
  e.api_call = j.value("api_call", "");
  e.meaning = j.value("meaning", "");
  e.next_step = j.value("next_step", "");
  e.message = j.value("message", "");
  e.location = j.value("location", "");
  e.last_kernel = j.value("last_kernel", "");
  return e;
}

Result result_from_json(const json& j) {
  const std::string path = "result";
  if (!j.is_object()) throw std::runtime_error(path + ": not an object");
  Result r;
  r.case_id = get_required<std::string>(j, "case_id", path);
  r.kernel = get_required<std::string>(j, "kernel", path);
  r.params = j.value("params", json::object());
  r.profile = j.value("profile", "default");
  r.allocator = j.value("allocator", "");
  r.device = j.value("device", "");
  r.device_index = j.value("device_index", -1);
  r.outcome = get_required<std::string>(j, "outcome", path);
  r.expected = j.value("expected", "");
  if (j.contains("expectation_met") && j["expectation_met"].is_boolean())
    r.expectation_met = j["expectation_met"].get<bool>();
  r.reason = j.value("reason", "");
  if (j.contains("error") && j["error"].is_object()) r.error = error_from_json(j["error"]);
  r.duration_ms = j.value("duration_ms", 0.0);
  if (j.contains("repeats") && j["repeats"].is_object()) {
    const auto& rj = j["repeats"];
    RepeatStats s;
    s.runs = rj.value("runs", 0);
    s.failures = rj.value("failures", 0);
    s.failure_rate = rj.value("failure_rate", 0.0);
    s.ci_low = rj.value("ci95_low", 0.0);
    s.ci_high = rj.value("ci95_high", 0.0);
    if (rj.contains("histogram") && rj["histogram"].is_object())
      for (const auto& [k, v] : rj["histogram"].items()) s.histogram[k] = v.get<int>();
    r.repeats = s;
  }
  if (j.contains("child") && j["child"].is_object()) {
    const auto& cj = j["child"];
    ChildInfo c;
    c.pid = cj.value("pid", 0);
    c.ending = cj.value("ending", "");
    if (cj.contains("exit_code")) c.exit_code = cj["exit_code"].get<int>();
    if (cj.contains("signal")) c.signal = cj["signal"].get<int>();
    c.signal_name = cj.value("signal_name", "");
    c.killed_after_grace = cj.value("killed_after_grace", false);
    if (cj.contains("stdout")) c.stdout_excerpt = excerpt_from(cj["stdout"]);
    if (cj.contains("stderr")) c.stderr_excerpt = excerpt_from(cj["stderr"]);
    r.child = c;
  }
  r.launch_log = j.value("launch_log", json::array());
  r.buffers = j.value("buffers", json::array());
  r.faulting_buffer = j.value("faulting_buffer", json(nullptr));
  r.xid = j.value("xid", json::array());
  r.sanitizer = j.value("sanitizer", json(nullptr));
  r.details = j.value("details", json::object());
  return r;
}

Report report_from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error("report: not a JSON object");
  Report r;
  r.schema_version = get_required<std::string>(j, "schema_version", "report");
  r.tool = j.value("tool", json::object());
  r.invocation = j.value("invocation", json::object());
  r.host = j.value("host", json::object());
  r.driver = j.value("driver", json::object());
  r.devices = j.value("devices", json::array());
  r.environment = j.value("environment", json::object());
  r.gpu = j.value("gpu", json::object());
  if (!j.contains("results") || !j["results"].is_array())
    throw std::runtime_error("report.results: missing or not an array");
  size_t i = 0;
  for (const auto& rj : j["results"]) {
    try {
      r.results.push_back(result_from_json(rj));
    } catch (const std::exception& e) {
      throw std::runtime_error("report.results[" + std::to_string(i) + "]: " + e.what());
    }
    ++i;
  }
  r.summary = j.value("summary", json::object());
  if (j.contains("verdict") && j["verdict"].is_object()) {
    r.verdict.status = j["verdict"].value("status", "");
    r.verdict.reasons = j["verdict"].value("reasons", std::vector<std::string>{});
  }
  static const char* known[] = {"schema_version", "tool",    "invocation", "host",
                                "driver",         "devices", "environment", "gpu",
                                "results",        "summary", "verdict"};
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
    by_outcome[res.outcome] = by_outcome.value(res.outcome, 0) + 1;
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
