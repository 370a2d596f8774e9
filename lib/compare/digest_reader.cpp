#include "compare/digest_reader.h"

#include "report/json_document.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "compare/head_types.h"
#include "compare/load.h"
#include "compare/pairing.h"
#include "compare/skim_read.h"
#include "util/atomic_file.h"

namespace cudadiag::compare {
namespace {

using namespace std::string_view_literals;

// The top-level sections a comparison reads; the rest (summary, comparison, ...) is skipped.
const std::set<std::string, std::less<>>& head_sections() {
  static const std::set<std::string, std::less<>> keys = {
      "schema_version", "tool", "invocation", "host", "driver", "devices", "environment", "gpu", "suite", "verdict",
      "redaction"};
  return keys;
}

// Sections of which a comparison reads a member or two: the rest is stepped over.
const std::map<std::string, std::vector<std::string_view>, std::less<>>& kept_members() {
  static const std::map<std::string, std::vector<std::string_view>, std::less<>> keep = {
      {"suite", {"name"}}, {"invocation", {"command"}}, {"verdict", {"status"}}};
  return keep;
}

// How the report's identifying values were redacted, as ReportDigest::redaction says.
std::optional<TokenScheme> redaction_scheme(const report::json& head) {
  if (!head.contains("redaction") || !head["redaction"].is_object()) return std::nullopt;
  const auto& r = head["redaction"];
  const std::string mode = r.contains("mode") && r["mode"].is_string() ? r["mode"].get<std::string>() : "";
  // No mode (or one this cudadiag does not know): hashes from before tokens were keyed.
  TokenScheme s{parse_choice(report::kRedactionModes, mode).value_or(report::RedactionMode::unkeyed), ""};
  if (s.mode == report::RedactionMode::keyed)
    s.key_id = r.contains("key_id") && r["key_id"].is_string() ? r["key_id"].get<std::string>() : "?";
  return s;
}

// The one place compare reads an outcome string: what the outcome means for a
// comparison. An outcome outside the report vocabulary is refused.
OutcomeClass read_outcome(const std::string& text, SkimReader& in, const JsonPath& at) {
  using report::Outcome;
  const auto o = report::parse_outcome(text);
  if (!o) {
    std::string known;
    for (auto k : report::all_outcomes()) known += (known.empty() ? "" : ", ") + std::string(report::to_string(k));
    in.fail(at, "unknown outcome '" + text + "' (known: " + known + ")");
  }
  if (*o == Outcome::ok) return OutcomeClass::ok;
  if (*o == Outcome::skipped) return OutcomeClass::skipped;
  if (report::is_failure(*o) || *o == Outcome::driver_disagrees) return OutcomeClass::failure;
  return OutcomeClass::decided_on_host;  // invalid_config, host_valid, host_invalid
}

// A result's repeat statistics as read; checked against its outcome afterwards.
struct Repeats {
  bool present = false;
  int runs = 0;
  int failures = 0;
  bool has_histogram = false;
  long long histogram_runs = 0;      // sum of the histogram
  long long histogram_not_ok = 0;    // sum of every outcome but ok
  std::optional<double> seconds;     // in-child wall time of the runs (schema 1.1)
};

// A result as read, before its device position is known (devices[] may come later).
struct RawResult {
  ResultDigest digest;
  Text device = nullptr;
  int device_index = -1;
  Repeats repeats;
};

class DigestReader {
 public:
  DigestReader(std::string_view text, const std::string& file, DigestTables& tables)
      : text_(text), skim_(text), in_(skim_, text, file), tables_(tables) {}

  ReportDigest read() {
    try {
      read_document();
    } catch (const JsonSyntaxError& e) {
      in_.syntax_error(e.offset(), e.what());
    }
    return finish();
  }

 private:
  void read_document() {
    const JsonPath root;
    if (skim_.peek() != JsonKind::object) {
      head_ = in_.value();  // not an object: check_report_head names what it is
      return;
    }
    skim_.enter_object();
    std::string key;
    while (skim_.next_member(key)) {
      if (key == "results"sv && skim_.peek() == JsonKind::array) {
        const JsonPath at = root.member("results");
        read_results(at);
        head_["results"] = report::json::array();
      } else if (const auto keep = kept_members().find(key); keep != kept_members().end()) {
        head_[key] = some_members(keep->second);
      } else if (key == "results"sv || head_sections().count(key)) {
        head_[key] = in_.value();
        // Another major version is refused before its results are read as this one's.
        if (key == "schema_version"sv) {
          check_schema_version(head_, in_.file(), notes_);
          version_checked_ = true;
        }
      } else {
        skim_.skip();
      }
    }
    skim_.finish();
  }

  // An object with only the listed members (any other value whole, for the checks to name).
  report::json some_members(const std::vector<std::string_view>& keep) {
    if (skim_.peek() != JsonKind::object) return in_.value();
    report::json out = report::json::object();
    skim_.enter_object();
    std::string key;
    while (skim_.next_member(key)) {
      if (std::find(keep.begin(), keep.end(), key) != keep.end()) {
        out[key] = in_.value();
      } else {
        skim_.skip();
      }
    }
    return out;
  }

  void read_results(const JsonPath& at) {
    skim_.enter_array();
    std::size_t i = 0;
    while (skim_.next_element()) {
      const JsonPath here = at.element(i);
      results_.push_back(read_result(here, i));
      ++i;
    }
  }

  RawResult read_result(const JsonPath& at, std::size_t index) {
    in_.expect(JsonKind::object, at);
    RawResult raw;
    auto& d = raw.digest;
    d.index = index;
    auto& strings = tables_.strings;
    std::optional<std::string> outcome;
    bool has_kernel = false;
    skim_.enter_object();
    std::string key;
    while (skim_.next_member(key)) {
      const JsonPath here = at.member(key);
      if (key == "case_id"sv) {
        const auto id = in_.string(here);
        if (id.empty()) in_.fail(here, "must not be empty");
        d.case_id = strings.intern(id);
      } else if (key == "kernel"sv) {
        in_.string(here);
        has_kernel = true;
      } else if (key == "params"sv) {
        d.params = canonical_params_of(here);
      } else if (key == "profile"sv) {
        d.profile = strings.intern(in_.string(here));
      } else if (key == "device"sv) {
        raw.device = strings.intern(in_.string(here));
      } else if (key == "device_index"sv) {
        raw.device_index = static_cast<int>(in_.integer(here, -1, INT_MAX));
      } else if (key == "outcome"sv) {
        outcome = in_.string(here);
      } else if (key == "expectation_met"sv) {
        d.expectation_met = in_.boolean_or_null(here);
      } else if (key == "expected"sv) {
        d.expected = strings.intern(in_.string(here));
      } else if (key == "error"sv) {
        read_error(here, d);
      } else if (key == "repeats"sv) {
        raw.repeats = read_repeats(here);
      } else if (key == "fault_sites"sv) {
        d.site = site_of(here);
      } else if (key == "duration_ms"sv) {
        d.duration_ms = in_.number(here, 0.0);
      } else {
        skim_.skip();
      }
    }
    if (!d.case_id) in_.fail(at, "missing case_id");
    if (!has_kernel) in_.fail(at, "missing kernel");
    if (!outcome) in_.fail(at, "missing outcome");
    const JsonPath outcome_at = at.member("outcome");
    d.outcome = strings.intern(*outcome);
    d.outcome_class = read_outcome(*outcome, in_, outcome_at);
    if (!d.params) d.params = strings.intern("{}");
    if (!d.profile) d.profile = strings.intern("default");
    check_repeats(raw, at);
    return raw;
  }

  Text canonical_params_of(const JsonPath& at) {
    in_.expect(JsonKind::object, at);
    const std::string_view raw = skim_.slice();
    {
      std::lock_guard<std::mutex> lock(tables_.params_mu);
      const auto it = tables_.params_canonical.find(raw);
      if (it != tables_.params_canonical.end()) return it->second;
    }
    std::string canonical;
    try {
      canonical = canonical_params_text(raw);
    } catch (const report::json::exception& e) {
      in_.slice_error(raw, e);
    }
    const Text t = tables_.strings.intern(canonical);
    std::lock_guard<std::mutex> lock(tables_.params_mu);
    tables_.params_canonical.emplace(std::string(raw), t);
    return t;
  }

  // What compare pairs of a result's core-dump sites: the first readable one's
  // exception, kernel and line (a hang's: where its warps wait).
  Text site_of(const JsonPath& at) {
    in_.expect(JsonKind::array, at);
    const report::json sites = in_.value();
    for (const auto& s : sites) {
      if (!s.is_object() || s.contains("unreadable")) continue;
      const auto text = [](const report::json& j, const char* k) {
        const auto it = j.find(k);
        return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
      };
      const auto line_of = [&](const report::json& j) {
        const auto it = j.find("line");
        const std::string file = text(j, "file");
        return it != j.end() && it->is_number_unsigned() && !file.empty()
                   ? " at " + file + ":" + std::to_string(it->get<std::uint64_t>())
                   : std::string();
      };
      std::string key;
      const auto e = s.find("exception");
      if (e != s.end() && e->is_object()) {
        key = text(*e, "name") + " in " + text(s, "kernel") + line_of(s);
      } else {
        const auto w = s.find("waiting");
        if (w == s.end() || !w->is_array() || w->empty() || !w->front().is_object()) continue;
        const auto& first = w->front();
        key = "waiting in " + text(first, "function") + line_of(first);
      }
      return tables_.strings.intern(key);
    }
    return nullptr;
  }

  void read_error(const JsonPath& at, ResultDigest& d) {
    if (in_.null()) return;
    in_.expect(JsonKind::object, at);
    skim_.enter_object();
    std::string key;
    while (skim_.next_member(key)) {
      const JsonPath here = at.member(key);
      if (key == "code"sv) {
        d.error_code = static_cast<int>(in_.integer(here, INT_MIN, INT_MAX));
      } else if (key == "name"sv) {
        d.error_name = tables_.strings.intern(in_.string(here));
      } else {
        skim_.skip();
      }
    }
  }

  Repeats read_repeats(const JsonPath& at) {
    Repeats r;
    if (in_.null()) return r;
    in_.expect(JsonKind::object, at);
    r.present = true;
    skim_.enter_object();
    std::string key;
    while (skim_.next_member(key)) {
      const JsonPath here = at.member(key);
      if (key == "runs"sv) {
        r.runs = static_cast<int>(in_.integer(here, 0, INT_MAX));
      } else if (key == "failures"sv) {
        r.failures = static_cast<int>(in_.integer(here, 0, INT_MAX));
      } else if (key == "histogram"sv) {
        read_histogram(here, r);
      } else if (key == "seconds"sv) {
        r.seconds = in_.number(here, 0.0);

      } else {
        skim_.skip();
      }
    }
    return r;
  }

  void read_histogram(const JsonPath& at, Repeats& r) {
    in_.expect(JsonKind::object, at);
    r.has_histogram = true;
    skim_.enter_object();
    std::string key;
    while (skim_.next_member(key)) {
      const JsonPath here = at.member(key);
      const long long n = in_.integer(here, 0, INT_MAX);
      r.histogram_runs += n;
      if (report::parse_outcome(key) != report::Outcome::ok) r.histogram_not_ok += n;
    }
  }

  // A result must not contradict itself: its repeat statistics and its outcome tell
  // the same story. (Producers count every run that is not ok as a failure, and report
  // a failing run's outcome whenever one run failed.)
  void check_repeats(RawResult& raw, const JsonPath& at) {
    const Repeats& r = raw.repeats;
    auto& d = raw.digest;
    if (!r.present) return;
    const JsonPath rep = at.member("repeats");
    const JsonPath failures_at = rep.member("failures");
    if (r.failures > r.runs) in_.fail(failures_at, fmt::format("{} failures of {} runs", r.failures, r.runs));
    if (r.has_histogram && r.histogram_runs > 0) {
      const JsonPath hist = rep.member("histogram");
      if (r.histogram_runs != r.runs)
        in_.fail(hist, fmt::format("counts add up to {}, but repeats.runs is {}", r.histogram_runs, r.runs));
      if (r.histogram_not_ok != r.failures)
        in_.fail(hist, fmt::format("{} run(s) are not ok, but repeats.failures is {}", r.histogram_not_ok,
                                   r.failures));
    }
    if (r.runs == 0) return;  // no statistics: the outcome alone counts
    if (d.outcome_class == OutcomeClass::failure && r.failures == 0)
      in_.fail(failures_at, fmt::format("0 of {} runs failed, but the outcome is {}: the result contradicts itself",
                                        r.runs, *d.outcome));
    if (d.outcome_class == OutcomeClass::ok && r.failures > 0)
      in_.fail(failures_at, fmt::format("{} of {} runs failed, but the outcome is ok: the result contradicts itself",
                                        r.failures, r.runs));
    d.repeat_runs = r.runs;
    d.repeat_failures = r.failures;
    d.repeat_seconds = r.seconds;
  }

  ReportDigest finish() {
    ReportDigest out;
    out.file = in_.file();
    if (!head_.is_object() || !version_checked_) {
      check_report_head(head_, out.file, out.notes);
    } else {
      check_required_sections(head_, out.file);
      out.notes = std::move(notes_);
    }
    check_head_types(head_, out.file);
    auto& strings = tables_.strings;
    const auto& devices = head_["devices"];

    // Device positions count the GPUs the results ran on (a run with --devices 3 has
    // one: gpu0), so one-GPU-per-report runs of several GPUs pair with each other.
    std::vector<std::optional<std::size_t>> where(results_.size());
    std::set<std::size_t> used;
    for (std::size_t i = 0; i < results_.size(); ++i) {
      const Text dev = results_[i].device;
      where[i] = device_index_of(dev ? std::string_view(*dev) : std::string_view(), results_[i].device_index, devices);
      if (where[i]) used.insert(*where[i]);
    }
    if (used.empty())
      for (std::size_t d = 0; d < devices.size(); ++d) used.insert(d);
    out.devices_used.assign(used.begin(), used.end());
    for (std::size_t i = 0; i < results_.size(); ++i) {
      auto& d = results_[i].digest;
      if (where[i]) {
        const auto rank = std::lower_bound(out.devices_used.begin(), out.devices_used.end(), *where[i]) -
                          out.devices_used.begin();
        d.device = strings.intern("gpu" + std::to_string(rank));
      } else {
        const Text dev = results_[i].device;
        const bool gpu = dev && report::parse_device(std::string(*dev)).is_gpu();
        d.device = strings.intern(gpu ? "gpu?" : "host");
        d.host_only = !gpu;
      }
      out.results.push_back(d);
    }

    out.environment = environment_facts(head_, out.devices_used, tables_.env_rows, strings);
    auto text_at = [&](const report::json& section, const char* key) -> Text {
      return section.is_object() && section.contains(key) && section[key].is_string()
                 ? strings.intern(section[key].get<std::string>())
                 : nullptr;
    };
    out.hostname = text_at(head_["host"], "hostname");
    out.redaction = redaction_scheme(head_);
    out.schema_version = text_at(head_, "schema_version");
    out.command = head_.contains("invocation") ? text_at(head_["invocation"], "command") : nullptr;
    if (out.command) out.command_kind = report::parse_command(*out.command);
    out.verdict = head_.contains("verdict") ? text_at(head_["verdict"], "status") : nullptr;
    if (head_.contains("gpu") && head_["gpu"].is_object()) {
      const auto& gpu = head_["gpu"];
      out.gpu_ran = !gpu.contains("ran") || gpu["ran"].get<bool>();  // a boolean: check_head_types
      out.gpu_reason = text_at(gpu, "reason");
    }
    for (const auto& f : env_fields()) {
      if (f.role == FieldRole::driver_version)
        if (const auto v = lookup_text(head_, f.pointers)) out.driver = strings.intern(*v);
      if (f.role == FieldRole::gpu_model && !out.devices_used.empty() && out.devices_used[0] < devices.size())
        if (const auto v = lookup_text(devices[out.devices_used[0]], f.pointers)) out.gpu_model = strings.intern(*v);
    }
    return out;
  }

  std::string_view text_;
  JsonSkim skim_;
  SkimReader in_;
  DigestTables& tables_;
  report::json head_ = report::json::object();
  std::vector<RawResult> results_;
  std::vector<std::string> notes_;
  bool version_checked_ = false;
};

}  // namespace

ReportDigest read_digest(std::string_view text, const std::string& file, DigestTables& tables) {
  return DigestReader(text, file, tables).read();
}

ReportDigest read_digest_file(const std::string& path, DigestTables& tables) {
  return read_digest(read_file_or_stdin(path), report::source_name(path), tables);
}

ReportDigest read_digest_file(const std::string& path, DigestTables& tables, std::string& buffer) {
  read_file_or_stdin(path, buffer);
  return read_digest(buffer, report::source_name(path), tables);
}

}  // namespace cudadiag::compare
