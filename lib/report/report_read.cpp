// The report read back from JSON: every wrong type, missing member or unknown word fails
// naming the source and the JSON pointer (report::report_from_json).
#include "report/report.h"

#include <limits>

#include "report/json_reader.h"

namespace cudadiag::report {
namespace {

ErrorInfo read_error(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  ErrorInfo e;
  e.code = rd.int_or(j, "code", p, 0);
  e.name = rd.string_or(j, "name", p);
  if (const json* v = rd.find(j, "source", p)) {
    const std::string sp = JsonReader::member_pointer(p, "source");
    const std::string text = rd.string(*v, sp);
    if (!text.empty()) {
      const auto source = taxonomy::parse_error_source(text);
      if (!source) rd.fail(sp, "unknown source '" + text + "' (runtime or driver)");
      e.source = *source;
    }
  }
  {
    const std::string text = rd.string_or(j, "class", p, "unknown");
    const auto cls = taxonomy::parse_error_class(text);
    if (!cls) rd.fail(JsonReader::member_pointer(p, "class"), "unknown error class '" + text + "'");
    e.error_class = *cls;
  }
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
  {
    const std::string dp = JsonReader::member_pointer(p, "direction");
    const std::string text = rd.string(rd.required(j, "direction", p), dp);
    const auto direction = parse_choice(kBufferDirections, text);
    if (!direction) rd.fail(dp, "unknown direction '" + text + "' (" + choice_list(kBufferDirections) + ")");
    f.direction = *direction;
  }
  if (const json* v = rd.find(j, "bytes", p)) f.bytes = rd.unsigned_integer(*v, JsonReader::member_pointer(p, "bytes"));
  if (const json* v = rd.find(j, "extra_runs", p))
    f.extra_runs = static_cast<int>(rd.integer(*v, JsonReader::member_pointer(p, "extra_runs"), 0, 1 << 30));
  return f;
}

ChildInfo read_child(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  ChildInfo c;
  c.pid = rd.int_or(j, "pid", p, 0);
  {
    const std::string text = rd.string_or(j, "ending", p, "spawn_failed");
    const auto ending = parse_child_ending(text);
    if (!ending) rd.fail(JsonReader::member_pointer(p, "ending"), "unknown ending '" + text + "'");
    c.ending = *ending;
  }
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

std::array<std::uint64_t, 3> read_dim3(const JsonReader& rd, const json& j, const std::string& p) {
  rd.array(j, p);
  if (j.size() != 3) rd.fail(p, "expected 3 numbers, got " + std::to_string(j.size()));
  std::array<std::uint64_t, 3> out{};
  for (std::size_t i = 0; i < 3; ++i) out[i] = rd.unsigned_integer(j[i], JsonReader::element_pointer(p, i));
  return out;
}

LaunchRecord read_launch(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  LaunchRecord l;
  l.seq = rd.unsigned_or(j, "seq", p, 0);
  l.kernel = rd.string_or(j, "kernel", p);
  if (const json* v = rd.find(j, "grid", p)) l.grid = read_dim3(rd, *v, JsonReader::member_pointer(p, "grid"));
  if (const json* v = rd.find(j, "block", p)) l.block = read_dim3(rd, *v, JsonReader::member_pointer(p, "block"));
  l.dynamic_smem = rd.unsigned_or(j, "dynamic_smem", p, 0);
  if (const json* v = rd.find(j, "buffers", p)) l.buffers = rd.strings(*v, JsonReader::member_pointer(p, "buffers"));
  if (const json* v = rd.find(j, "api", p)) l.api = rd.string(*v, JsonReader::member_pointer(p, "api"));
  return l;
}

BufferRecord read_buffer(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  BufferRecord b;
  b.name = rd.string_or(j, "name", p);
  b.bytes = rd.unsigned_or(j, "bytes", p, 0);
  if (const json* v = rd.find(j, "range", p)) {
    const std::string rp = JsonReader::member_pointer(p, "range");
    const std::string text = rd.string(*v, rp);
    b.range = parse_address_range(text);
    if (!b.range) rd.fail(rp, "expected \"0x<start>-0x<end>\", got \"" + text + "\"");
  }
  if (const json* v = rd.find(j, "allocator", p)) {
    const std::string ap = JsonReader::member_pointer(p, "allocator");
    const std::string text = rd.string(*v, ap);
    b.allocator = profiles::parse_allocator(text);
    if (!b.allocator) rd.fail(ap, "unknown allocator '" + text + "'");
  }
  if (const json* v = rd.find(j, "freed", p)) b.freed = rd.boolean(*v, JsonReader::member_pointer(p, "freed"));
  return b;
}

XidLine read_xid(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  XidLine x;
  if (const json* v = rd.find(j, "timestamp_us", p); v && !v->is_null())
    x.timestamp_us = rd.unsigned_integer(*v, JsonReader::member_pointer(p, "timestamp_us"));
  x.pci = rd.string_or(j, "pci", p);
  x.xid = rd.int_or(j, "xid", p, 0);
  if (const json* v = rd.find(j, "pid", p); v && !v->is_null()) x.pid = rd.int_or(j, "pid", p, 0);
  if (const json* v = rd.find(j, "process", p); v && !v->is_null())
    x.process = rd.string(*v, JsonReader::member_pointer(p, "process"));
  x.message = rd.string_or(j, "message", p);
  x.meaning = rd.string_or(j, "meaning", p);
  if (const json* v = rd.find(j, "points_to", p)) {
    const std::string pp = JsonReader::member_pointer(p, "points_to");
    const std::string text = rd.string(*v, pp);
    const auto to = parse_choice(kXidPointsTo, text);
    if (!to) rd.fail(pp, "unknown word '" + text + "' (" + choice_list(kXidPointsTo) + ")");
    x.points_to = *to;
  }
  return x;
}

std::optional<std::array<long long, 3>> read_xyz(const JsonReader& rd, const json& j, const char* key,
                                                 const std::string& p) {
  const json* v = rd.find(j, key, p);
  if (!v) return std::nullopt;
  const std::string xp = JsonReader::member_pointer(p, key);
  rd.array(*v, xp);
  if (v->size() != 3) rd.fail(xp, "expected 3 numbers, got " + std::to_string(v->size()));
  std::array<long long, 3> out{};
  for (std::size_t i = 0; i < 3; ++i)
    out[i] = rd.integer((*v)[i], JsonReader::element_pointer(xp, i), std::numeric_limits<long long>::min(),
                        std::numeric_limits<long long>::max());
  return out;
}

std::optional<long long> read_long(const JsonReader& rd, const json& j, const char* key, const std::string& p) {
  const json* v = rd.find(j, key, p);
  if (!v || v->is_null()) return std::nullopt;
  return rd.integer(*v, JsonReader::member_pointer(p, key), std::numeric_limits<long long>::min(),
                    std::numeric_limits<long long>::max());
}

sanitizer::Frame read_frame(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  sanitizer::Frame f;
  f.function = rd.string_or(j, "function", p);
  f.file = rd.string_or(j, "file", p);
  f.line = read_long(rd, j, "line", p);
  f.module = rd.string_or(j, "module", p);
  f.pc = rd.string_or(j, "pc", p);
  return f;
}

sanitizer::Finding read_finding(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  sanitizer::Finding f;
  f.message = rd.string_or(j, "kind", p);
  f.record_kind = rd.string_or(j, "record", p);
  f.level = rd.string_or(j, "level", p);
  f.kernel = rd.string_or(j, "kernel", p);
  f.device_function = rd.string_or(j, "device_function", p);
  f.error = rd.string_or(j, "error", p);
  f.pc = rd.string_or(j, "pc", p);
  f.file = rd.string_or(j, "file", p);
  f.line = read_long(rd, j, "line", p);
  f.thread = read_xyz(rd, j, "thread", p);
  f.block = read_xyz(rd, j, "block", p);
  f.address = rd.string_or(j, "address", p);
  if (const json* a = rd.find(j, "access", p)) {
    const std::string ap = JsonReader::member_pointer(p, "access");
    rd.object(*a, ap);
    f.space = rd.string_or(*a, "space", ap);
    f.direction = rd.string_or(*a, "direction", ap);
    f.access_size = read_long(rd, *a, "size", ap);
  }
  if (const json* n = rd.find(j, "nearest_allocation", p)) {
    const std::string np = JsonReader::member_pointer(p, "nearest_allocation");
    rd.object(*n, np);
    sanitizer::NearestAllocation near;
    near.distance_bytes = read_long(rd, *n, "distance_bytes", np).value_or(0);
    near.relation = rd.string_or(*n, "relation", np);
    near.address = rd.string_or(*n, "address", np);
    near.buffer = rd.string_or(*n, "buffer", np);
    near.size = read_long(rd, *n, "size", np);
    f.nearest = near;
  }
  if (const json* a = rd.find(j, "api", p)) {
    const std::string ap = JsonReader::member_pointer(p, "api");
    rd.object(*a, ap);
    sanitizer::ApiError api;
    api.call = rd.string_or(*a, "call", ap);
    api.error_name = rd.string_or(*a, "error_name", ap);
    if (const auto code = read_long(rd, *a, "code", ap)) api.code = static_cast<int>(*code);
    api.description = rd.string_or(*a, "description", ap);
    f.api = api;
  }
  for (const auto& [key, out] : {std::pair{"host_frames", &f.host_frames}, std::pair{"device_frames", &f.device_frames}}) {
    const json frames = rd.array_or_empty(j, key, p);
    const std::string fp = JsonReader::member_pointer(p, key);
    for (std::size_t i = 0; i < frames.size(); ++i) out->push_back(read_frame(rd, frames[i], JsonReader::element_pointer(fp, i)));
  }
  return f;
}

SanitizerFindings read_sanitizer(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  SanitizerFindings s;
  s.tool = rd.string_or(j, "tool", p, "memcheck");
  if (const json* e = rd.find(j, "error", p); e && !rd.find(j, "findings", p)) {
    s.error = rd.string(*e, JsonReader::member_pointer(p, "error"));
    return s;
  }
  sanitizer::MemcheckReport m;
  const json findings = rd.array_or_empty(j, "findings", p);
  const std::string fp = JsonReader::member_pointer(p, "findings");
  for (std::size_t i = 0; i < findings.size(); ++i)
    m.findings.push_back(read_finding(rd, findings[i], JsonReader::element_pointer(fp, i)));
  m.error_count = read_long(rd, j, "errors", p);
  s.memcheck = std::move(m);
  return s;
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
  {
    const std::string kp = JsonReader::member_pointer(p, "kernel");
    const std::string text = rd.string(rd.required(j, "kernel", p), kp);
    const auto kernel = cases::parse_kernel(text);
    if (!kernel) rd.fail(kp, "unknown kernel '" + text + "'");
    r.kernel = *kernel;
  }
  r.params = fields_from_json(rd.object_or_empty(j, "params", p));
  r.profile = rd.string_or(j, "profile", p, "default");
  if (const json* v = rd.find(j, "allocator", p)) {
    const std::string ap = JsonReader::member_pointer(p, "allocator");
    const std::string text = rd.string(*v, ap);
    const auto a = profiles::parse_allocator(text);
    if (!a) rd.fail(ap, "unknown allocator '" + text + "'");
    r.allocator = *a;
  }
  r.device = parse_device(rd.string_or(j, "device", p));
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
  {
    const json launches = rd.array_or_empty(j, "launch_log", p);
    const std::string lp = JsonReader::member_pointer(p, "launch_log");
    for (std::size_t i = 0; i < launches.size(); ++i)
      r.launch_log.push_back(read_launch(rd, launches[i], JsonReader::element_pointer(lp, i)));
  }
  {
    const json buffers = rd.array_or_empty(j, "buffers", p);
    const std::string bp = JsonReader::member_pointer(p, "buffers");
    for (std::size_t i = 0; i < buffers.size(); ++i)
      r.buffers.push_back(read_buffer(rd, buffers[i], JsonReader::element_pointer(bp, i)));
  }
  if (const json* v = object_or_null(rd, j, "faulting_buffer", p))
    r.faulting_buffer = read_faulting_buffer(rd, *v, JsonReader::member_pointer(p, "faulting_buffer"));
  const json sites = rd.array_or_empty(j, "fault_sites", p);
  for (std::size_t i = 0; i < sites.size(); ++i)
    r.fault_sites.push_back(
        read_fault_site(rd, sites[i], JsonReader::element_pointer(JsonReader::member_pointer(p, "fault_sites"), i)));
  {
    const json xid = rd.array_or_empty(j, "xid", p);
    const std::string xp = JsonReader::member_pointer(p, "xid");
    for (std::size_t i = 0; i < xid.size(); ++i) r.xid.push_back(read_xid(rd, xid[i], JsonReader::element_pointer(xp, i)));
  }
  if (const json* v = object_or_null(rd, j, "sanitizer", p))
    r.sanitizer = read_sanitizer(rd, *v, JsonReader::member_pointer(p, "sanitizer"));
  r.details = fields_from_json(rd.object_or_empty(j, "details", p));
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
  {
    const json tool = read_section(rd, j, "tool", true,
                                   {{"name", T::string}, {"version", T::string}, {"git_revision", T::string},
                                    {"cuda_toolkit", T::string}});
    auto& t = r.tool;
    t.name = tool.value("name", std::string());
    t.version = tool.value("version", std::string());
    t.git_revision = tool.value("git_revision", std::string());
    t.cuda_toolkit = tool.value("cuda_toolkit", std::string());
    // An array of names; reports of older builds wrote one string ("80;90"), kept whole.
    if (const auto it = tool.find("architectures"); it != tool.end()) {
      if (it->is_string()) t.architectures = {it->get<std::string>()};
      for (const auto& a : *it)
        if (it->is_array() && a.is_string()) t.architectures.push_back(a.get<std::string>());
    }
  }
  {
    const json inv = read_section(rd, j, "invocation", true,
                                  {{"command", T::string}, {"argv", T::strings}, {"started_at", T::string},
                                   {"finished_at", T::string}, {"duration_ms", T::number},
                                   {"interrupted", T::boolean}});
    auto& i = r.invocation;
    i.command = inv.value("command", std::string());
    if (inv.contains("argv")) i.argv = inv["argv"].get<std::vector<std::string>>();
    i.started_at = inv.value("started_at", std::string());
    if (inv.contains("finished_at")) i.finished_at = inv["finished_at"].get<std::string>();
    if (inv.contains("duration_ms")) i.duration_ms = inv["duration_ms"].get<double>();
    if (inv.contains("interrupted")) i.interrupted = inv["interrupted"].get<bool>();
  }
  r.host = read_host(rd, rd.object_or_empty(j, "host", ""), "/host");
  r.driver = read_driver(rd, rd.object_or_empty(j, "driver", ""), "/driver");
  r.devices = read_devices(rd, rd.array_or_empty(j, "devices", ""), "/devices");
  r.environment = read_environment(rd, rd.object_or_empty(j, "environment", ""), "/environment");
  {
    const json gpu = read_section(rd, j, "gpu", true, {{"ran", T::boolean}, {"reason", T::string}});
    r.gpu.ran = gpu.value("ran", false);
    r.gpu.reason = gpu.contains("reason") ? std::optional<std::string>(gpu["reason"].get<std::string>()) : std::nullopt;
  }
  const json& results = rd.array(rd.required(j, "results", ""), "/results");
  for (std::size_t i = 0; i < results.size(); ++i)
    r.results.push_back(read_result(rd, results[i], JsonReader::element_pointer("/results", i)));
  if (const json* v = rd.find(j, "summary", ""); v && !rd.object(*v, "/summary").empty()) {
    Summary s;
    s.total = rd.unsigned_or(*v, "total", "/summary", 0);
    const json by = rd.object_or_empty(*v, "by_outcome", "/summary");
    for (const auto& [name, n] : by.items()) {
      const std::string op = JsonReader::member_pointer("/summary/by_outcome", name);
      const auto outcome = parse_outcome(name);
      if (!outcome) rd.fail(op, "unknown outcome '" + name + "'");
      s.by_outcome.emplace_back(*outcome, rd.int_or(by, name, "/summary/by_outcome", 0));
    }
    s.expectations_met = rd.int_or(*v, "expectations_met", "/summary", 0);
    s.expectations_unmet = rd.int_or(*v, "expectations_unmet", "/summary", 0);
    s.not_judged = rd.int_or(*v, "not_judged", "/summary", 0);
    r.summary = std::move(s);
  }
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
      if (const json* x = rd.find(*c, "directions", at)) {
        const auto words = rd.strings(*x, at + "/directions");
        for (std::size_t i = 0; i < words.size(); ++i) {
          const auto end = parse_choice(kGuardedEnds, words[i]);
          if (!end)
            rd.fail(JsonReader::element_pointer(at + "/directions", i),
                    "unknown direction '" + words[i] + "' (" + choice_list(kGuardedEnds) + ")");
          cov.directions.push_back(*end);
        }
      }
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
    if (const json* mode = rd.find(*v, "mode", "/redaction"))
      red.mode = rd.choice(*mode, "/redaction/mode", kRedactionModes, "redaction mode");
    if (const json* id = rd.find(*v, "key_id", "/redaction")) red.key_id = rd.string(*id, "/redaction/key_id");
    r.redaction = std::move(red);
  }
  static const char* known[] = {"schema_version", "tool",    "invocation", "host",
                                "driver",         "devices", "environment", "gpu",
                                "results",        "summary", "verdict",     "redaction"};
  for (const auto& [k, v] : j.items()) {
    bool is_known = false;
    for (const char* kk : known) is_known = is_known || k == kk;
    if (!is_known) r.extra.set(k, value_from_json(v));
  }
  return r;
}

}  // namespace cudadiag::report
