#include "report/render_facts.h"

#include "stats/rate_text.h"
#include "util/text_layout.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace cudadiag::report::facts {
namespace {

std::string fixed(double v, int decimals);

// A number as a person reads it: whole numbers without a fraction, others with at most
// two decimals (17.736431 -> 17.74); a key ending in _ms or _s gets its unit.
std::string number_text(const json& v, const std::string& key) {
  const double d = v.get<double>();
  auto ends_with = [&](const char* suffix) {
    const std::string s = suffix;
    return key.size() > s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
  };
  if (ends_with("_ms")) return format_duration(d);
  std::string t = dump_json(v);
  if (v.is_number_float() && std::fabs(d) < 1e15) {
    t = fixed(d, 2);
    while (t.back() == '0') t.pop_back();
    if (t.back() == '.') t.pop_back();
  }
  return ends_with("_s") ? t + " s" : t;
}

std::string scalar_text(const json& v, const std::string& key = "") {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  if (v.is_number()) return number_text(v, key);
  return dump_json(v);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    out += (out.empty() ? "" : sep) + p;
  }
  return out;
}

// A fact as the header shows it: a string as it is, null as nothing, anything else as JSON.
std::string fact_text(const Fields& f, std::string_view key) {
  const Value* v = f.find(key);
  if (!v || v->is_null()) return "";
  if (const std::string* s = v->string()) return *s;
  return dump_json(to_json(*v));
}

std::string host_line(const HostInfo& host) {
  std::string line = host.hostname.value_or("");
  std::vector<std::string> extra{fact_text(host.facts, "os")};
  if (const Fields* kernel = host.facts.fields_of("kernel")) {
    const std::string rel = fact_text(*kernel, "release");
    if (!rel.empty()) extra.push_back("kernel " + rel);
  } else {
    const std::string k = fact_text(host.facts, "kernel");
    if (!k.empty()) extra.push_back("kernel " + k);
  }
  const std::string rest = join(extra, ", ");
  if (line.empty()) return rest;
  return rest.empty() ? line : line + " (" + rest + ")";
}

std::string device_line(const DeviceInfo& d) {
  std::string name = d.name.value_or("");
  if (name.empty()) name = "unnamed device";
  std::string cc = fact_text(d.facts, "compute_capability");
  if (cc.empty() && d.cuda && *d.cuda) cc = fact_text(**d.cuda, "compute_capability");
  const std::string index = d.index ? std::to_string(*d.index) : "";
  return (index.empty() ? "" : "[" + index + "] ") + name + (cc.empty() ? "" : " (sm " + cc + ")");
}

std::string driver_line(const DriverInfo& driver) {
  std::string line = driver.version.value_or("");
  for (const char* key : {"cuda_driver_version_string", "nvml_cuda_driver_version_string", "cuda_version",
                          "cuda_driver"}) {
    const std::string v = fact_text(driver.facts, key);
    if (!v.empty()) {
      line += (line.empty() ? "" : ", ") + std::string("CUDA ") + v;
      break;
    }
  }
  return line;
}

std::string dims(const std::array<std::uint64_t, 3>& d) {
  return "(" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + ")";
}

std::string last_launch(const Result& r) {
  if (r.launch_log.empty()) return "";
  const auto& l = r.launch_log.back();
  std::string s = l.kernel + " grid" + dims(l.grid) + " block" + dims(l.block);
  if (l.dynamic_smem != 0) s += " smem " + std::to_string(l.dynamic_smem);
  if (l.buffers && !l.buffers->empty()) s += " buffers " + join(*l.buffers, ", ");
  return s;
}

std::string child_line(const ChildInfo& c) {
  std::string s = "pid " + std::to_string(c.pid) + " ended: " + std::string(to_string(c.ending));
  if (c.signal) s += " " + (c.signal_name.empty() ? "signal" : c.signal_name) + " (" + std::to_string(*c.signal) + ")";
  if (c.exit_code) s += ", exit code " + std::to_string(*c.exit_code);
  if (c.killed_after_grace) s += ", killed after the grace period";
  for (const auto& stray : c.strays)
    s += "; pid " + std::to_string(stray.pid) + " (" + stray.command + ") " + stray.note;
  if (c.strays_unnamed) s += "; " + std::to_string(c.strays_unnamed) + " more left behind, killed at the end of the run";
  return s;
}

std::string sanitizer_line(const std::optional<SanitizerFindings>& s) {
  if (!s) return "";
  std::string line = s->tool;
  if (!s->memcheck) return line;
  const auto& m = *s->memcheck;
  const long long errors = m.error_count ? *m.error_count : static_cast<long long>(m.findings.size());
  line += (line.empty() ? "" : ": ") + std::to_string(errors) + " error(s)";
  if (!m.findings.empty() && !m.findings.front().message.empty()) line += "; first: " + m.findings.front().message;
  return line;
}

void flatten_into(const json& v, const std::string& prefix, int depth, std::vector<Fact>& out) {
  if (v.is_object() && depth < 3) {
    for (const auto& [k, sub] : v.items()) flatten_into(sub, prefix.empty() ? k : prefix + "." + k, depth + 1, out);
    if (v.empty()) out.push_back({prefix, "{}"});
    return;
  }
  if (v.is_array()) {
    bool scalars = true;
    for (const auto& e : v) scalars = scalars && !e.is_structured();
    if (scalars && v.size() <= 12) {
      std::vector<std::string> parts;
      for (const auto& e : v) parts.push_back(scalar_text(e));
      out.push_back({prefix, parts.empty() ? "none" : join(parts, ", ")});
    } else {
      // Rows of their own (rungs, sweep configurations): the text shows them elsewhere or
      // not at all; the JSON report holds each one.
      out.push_back({prefix, std::to_string(v.size()) + (v.size() == 1 ? " entry" : " entries") +
                                 " (in the JSON report)"});
    }
    return;
  }
  // A null or empty field says nothing: left out (the JSON keeps it).
  out.push_back({prefix, v.is_structured() ? dump_json(v) : scalar_text(v, prefix)});
}

}  // namespace

std::string format_duration(double ms) {
  if (ms >= 10000.0) return fixed(ms / 1000.0, 1) + " s";
  if (ms >= 100.0) return fixed(ms, 0) + " ms";
  return fixed(ms, 1) + " ms";
}

size_t display_width(const std::string& s) { return text::display_width(s); }

std::vector<Fact> header(const Report& r) {
  std::vector<Fact> out;
  // What was run: a saved report shown later says it too (the binary's own path left out).
  if (r.invocation.argv.size() > 1) {
    std::string line = "cudadiag";
    for (std::size_t i = 1; i < r.invocation.argv.size(); ++i) line += " " + r.invocation.argv[i];
    out.push_back({"command", line});
  }
  const std::string host = host_line(r.host);
  if (!host.empty()) out.push_back({"host", host});
  for (const auto& d : r.devices) out.push_back({"gpu", device_line(d)});
  const std::string driver = driver_line(r.driver);
  if (!driver.empty()) out.push_back({"driver", driver});
  // Without NVML the GPU part still runs, but nothing reads the devices' health.
  if (r.driver.nvml && !r.driver.nvml->available && r.driver.nvml->reason && !r.driver.nvml->reason->empty())
    out.push_back({"health", *r.driver.nvml->reason});
  if (!r.gpu.ran) {
    // Said once: where the verdict gives the reason, the header only says so.
    const std::string reason = r.gpu.reason.value_or("");
    const bool in_verdict = !reason.empty() && already_said(reason, r.verdict.reasons);
    out.push_back({"gpu part", "did not run" + (reason.empty() ? "" : in_verdict ? " (the verdict says why)" : ": " + reason)});
  }
  std::string tool = r.tool.name;
  if (tool.empty()) tool = "cudadiag";
  tool += " " + r.tool.version;
  const std::string rev = r.tool.git_revision;
  const std::string cuda = r.tool.cuda_toolkit;
  const std::string extra = join({rev.empty() ? "" : "rev " + rev, cuda.empty() ? "" : "CUDA " + cuda}, ", ");
  out.push_back({"tool", extra.empty() ? tool : tool + " (" + extra + ")"});
  const std::string started = r.invocation.started_at;
  if (!started.empty()) out.push_back({"started", started});
  if (r.redaction && r.redaction->applied) out.push_back({"redacted", join(r.redaction->covers, ", ")});
  return out;
}

namespace {

// A process that exited non-zero on its own was not killed: the report's outcome
// (crashed: "died, or exited non-zero without a result") is shown as what happened.
std::optional<int> plain_exit(const Result& r) {
  if (r.outcome != Outcome::crashed || !r.child || r.child->ending != ChildEnding::exit_code) return std::nullopt;
  if (r.child->signal || !r.child->exit_code || *r.child->exit_code == 0) return std::nullopt;
  return *r.child->exit_code;
}

}  // namespace

std::string outcome_text(const Result& r) {
  if (const auto code = plain_exit(r)) return "exited " + std::to_string(*code);
  return std::string(to_string(r.outcome));
}

Row row(const Result& r) {
  Row row;
  row.case_id = r.case_id;
  row.profile = r.profile;
  row.allocator = r.allocator ? std::string(profiles::to_string(*r.allocator)) : "";
  row.outcome = outcome_text(r);
  row.expected = r.expected;
  row.met = r.expectation_met;
  if (r.error) {
    row.error = r.error->name.empty() ? "error " + std::to_string(r.error->code) : r.error->name;
    row.error += " (" + std::string(taxonomy::to_string(r.error->error_class)) + ")";
  } else if (r.child && r.child->signal) {
    row.error = r.child->signal_name.empty() ? "signal " + std::to_string(*r.child->signal) : r.child->signal_name;
  }
  row.duration = format_duration(r.duration_ms);
  return row;
}

bool needs_details(const Result& r) {
  if (r.expectation_met) return !*r.expectation_met;
  return needs_explaining(r.outcome);
}

std::string detail_title(const Result& r) {
  const std::string where =
      join({r.profile, r.allocator ? std::string(profiles::to_string(*r.allocator)) : std::string()}, ", ");
  std::string t = r.case_id + (where.empty() ? "" : " [" + where + "]") + ": " + outcome_text(r);
  if (!r.expected.empty()) t += ", expected " + r.expected;
  return t;
}

std::vector<Fact> detail_facts(const Result& r) {
  std::vector<Fact> out;
  if (!r.reason.empty()) out.push_back({"reason", r.reason, Fact::Role::reason});
  // The GPU's own core dump is the first evidence: kernel, line, thread, address.
  for (const auto& s : r.fault_sites) {
    out.push_back({"fault site", site_line(s)});
    if (!s.instruction.empty()) out.push_back({"instruction", s.instruction});
    if (s.address_status != AddressStatus::proven && !s.address_note.empty() && s.unreadable.empty() && !s.exception.empty())
      out.push_back({"address", s.address_note});
    for (std::size_t i = 1; i < s.waiting.size() && i < 4; ++i) {
      const auto& w = s.waiting[i];
      out.push_back({"also waiting", (w.function.empty() ? w.kernel : w.function) +
                                         (w.line && !w.file.empty() ? " at " + w.file + ":" + std::to_string(*w.line) : "") +
                                         " (" + std::to_string(w.warps) + " warps)"});
    }
    out.push_back({"dump", s.dump + " (" + std::to_string(s.dump_bytes) + " bytes, read in " + fixed(s.read_ms, 0) +
                               " ms" + (s.kept ? ", kept" : ", removed after reading") + ")"});
    for (const auto& n : s.notes) out.push_back({"site note", n});
  }
  if (r.error) {
    const auto& e = *r.error;
    std::string err = std::to_string(e.code) + " " + e.name;
    const std::string cls = join({std::string(taxonomy::to_string(e.error_class)), e.sticky ? "sticky" : "not sticky",
                                  e.source ? std::string(taxonomy::to_string(*e.source)) : std::string()},
                                 ", ");
    err += " (" + cls + ")";
    if (!e.message.empty()) err += ": " + e.message;
    out.push_back({"error", err});
    std::string where = e.surfaced_at;
    if (!e.api_call.empty()) where += (where.empty() ? "" : " in ") + e.api_call;
    if (!e.location.empty()) where += " at " + e.location;
    if (!where.empty()) out.push_back({"surfaced", where});
    if (!e.meaning.empty()) out.push_back({"meaning", e.meaning});
    if (!e.next_step.empty()) out.push_back({"next step", e.next_step});
  }
  std::string kernel = last_launch(r);
  if (kernel.empty() && r.error) kernel = r.error->last_kernel;
  if (!kernel.empty()) out.push_back({"last kernel", kernel});
  if (r.faulting_buffer) {
    const auto& f = *r.faulting_buffer;
    std::string fb = f.name;
    if (f.bytes) fb += " (" + std::to_string(*f.bytes) + " bytes)";
    fb += ": " + std::string(choice_name(kBufferDirections, f.direction));
    if (f.extra_runs) fb += ", confirmed by " + std::to_string(*f.extra_runs) + " extra run(s)";
    out.push_back({"faulting buffer", fb});
  }
  if (r.repeats) {
    const auto& s = *r.repeats;
    std::string line = stats::rate_text(s.failures, s.runs, stats::Interval{s.ci_low, s.ci_high});
    if (s.seconds && s.runs_per_second)
      line += ", " + fixed(*s.runs_per_second, 0) + " runs/s in the child (" + fixed(*s.seconds, 3) + " s)";
    out.push_back({"repeats", line});
  }
  if (r.child) out.push_back({"child", child_line(*r.child)});
  const std::string san = sanitizer_line(r.sanitizer);
  if (!san.empty()) out.push_back({"sanitizer", san});
  if (!r.details.empty()) {
    for (auto& f : flatten_section(to_json(r.details), 8))
      out.push_back({"detail " + f.label, f.value, Fact::Role::internal});
  }
  return out;
}

std::vector<std::string> xid_lines(const Result& r) {
  std::vector<std::string> out;
  for (const auto& x : r.xid) {
    std::string line = "Xid " + std::to_string(x.xid);
    if (x.pid) line += " (pid " + std::to_string(*x.pid) + ")";
    if (!x.message.empty()) line += ": " + x.message;
    if (!x.meaning.empty()) line += " - " + x.meaning;
    line += " [points to " + std::string(choice_name(kXidPointsTo, x.points_to)) + "]";
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> first_lines(const std::string& text, size_t max_lines, size_t& omitted) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  omitted = 0;
  while (std::getline(ss, line)) {
    if (lines.size() < max_lines) {
      lines.push_back(line);
    } else {
      ++omitted;
    }
  }
  return lines;
}

std::vector<Fact> summary(const Report& r) {
  std::vector<Fact> out;
  std::vector<std::string> by_outcome;
  int met = 0, unmet = 0, unjudged = 0;
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& res : r.results) {
    bool found = false;
    const std::string outcome = plain_exit(res) ? std::string("exited non-zero") : std::string(to_string(res.outcome));
    for (auto& [name, n] : counts) {
      if (name == outcome) {
        ++n;
        found = true;
      }
    }
    if (!found) counts.emplace_back(outcome, 1);
    if (!res.expectation_met) {
      ++unjudged;
    } else if (*res.expectation_met) {
      ++met;
    } else {
      ++unmet;
    }
  }
  for (const auto& [name, n] : counts) by_outcome.push_back(name + " " + std::to_string(n));
  std::string results = std::to_string(r.results.size());
  if (!by_outcome.empty()) results += " (" + join(by_outcome, ", ") + ")";
  out.push_back({"results", results});
  if (met + unmet > 0)
    out.push_back({"expectations", std::to_string(met) + " met, " + std::to_string(unmet) + " unmet, " +
                                       std::to_string(unjudged) + " not judged"});
  if (r.invocation.duration_ms) out.push_back({"took", format_duration(*r.invocation.duration_ms)});
  return out;
}

std::vector<Fact> flatten_section(const json& section, size_t max_facts) {
  std::vector<Fact> all;
  flatten_into(section, "", 0, all);
  if (all.size() > max_facts) {
    const size_t more = all.size() - max_facts;
    all.resize(max_facts);
    all.push_back({"...", std::to_string(more) + " more"});
  }
  // Empty values are dropped here, so that every renderer leaves them out.
  std::vector<Fact> kept;
  for (auto& f : all) {
    if (f.value.empty()) continue;
    if (f.label.empty()) {
      f.label = "value";
      f.role = Fact::Role::lone_value;
    }
    kept.push_back(std::move(f));
  }
  return kept;
}

bool already_said(const std::string& line, const std::vector<std::string>& said) {
  if (line.empty()) return true;
  for (const auto& s : said)
    if (s.find(line) != std::string::npos) return true;
  return false;
}

std::vector<std::string> distinct_reasons(const std::vector<std::string>& reasons) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    std::vector<std::string> others;
    for (std::size_t j = 0; j < reasons.size(); ++j)
      if (j != i && (reasons[j] != reasons[i] || j < i)) others.push_back(reasons[j]);
    if (!already_said(reasons[i], others)) out.push_back(reasons[i]);
  }
  return out;
}

std::string section_title(const std::string& key) {
  std::string t = key;
  for (auto& c : t) {
    if (c == '_') c = ' ';
  }
  if (!t.empty() && t[0] >= 'a' && t[0] <= 'z') t[0] = static_cast<char>(t[0] - 'a' + 'A');
  return t;
}

}  // namespace cudadiag::report::facts
