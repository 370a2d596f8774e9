#pragma once
// One field list per report struct: each member's key, when it is written and how its
// value is spelled. to_json (report_write.cpp) and the readers (report_read.cpp) are made
// from these lists, and tests/report checks each list against its object in
// report.schema.json, so a member is named here and in the schema only.
//
// A list is list(io, s): io.schema(pointer) names S's object in the schema (a JSON
// pointer), then one call per member, in the order the JSON has them. What each kind of
// field means to the writer, and to the reader:
//   field(key, m)                  always written; read when present
//   defaulted(key, m, absent)      always written; an absent member reads as the JSON `absent`
//   required(key, m)               always written; an absent member is an error
//   nonempty(key, m)               written when not empty; read when present
//   when(written, key, m)          written when `written`; read when present
//   optional(key, opt)             written when set; read when present (null is an error)
//   optional_or_null(key, opt)     written when set; null reads as unset
//   nullable(key, opt)             null when unset; null reads as unset
// Each takes a codec last, how the value is spelled: Plain (the default: by the member's
// type: numbers, strings, lists, nested listed structs, the sections with readers of
// their own), a Word of an enum, or one of the codecs below.
#include <array>
#include <concepts>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "report/report.h"

namespace cudadiag::report::fields {

// The member's type says how it is spelled.
struct Plain {};

// An enum spelled as a word. A word it does not know fails "unknown <what> '<word>'",
// followed by the words when `words` names them.
template <typename E>
struct Word {
  std::string_view (*name)(E);
  std::optional<E> (*parse)(std::string_view);
  const char* what;
  std::string (*words)() = nullptr;
};

// The word of a choice table, naming the table's words ("a|b|c") when it refuses one.
template <const auto& Table>
constexpr auto listed_word(const char* what) {
  using E = decltype(Table[0].value);
  return Word<E>{[](E e) { return choice_name(Table, e); }, [](std::string_view t) { return parse_choice(Table, t); },
                 what, [] { return choice_list(Table); }};
}

// A list whose elements are spelled by `element`.
template <typename C>
struct Each {
  C element;
};

// An optional word where "" reads as unset (ErrorInfo.source).
template <typename C>
struct UnsetWhenEmpty {
  C word;
};

// An int within [lo, hi].
struct Bounded {
  long long lo;
  long long hi;
};

// An optional struct written as {} when unset; {} reads as unset (Report.summary).
struct EmptyWhenUnset {};

// Tool.architectures: an array of names; reports of older builds wrote one string
// ("80;90"), kept whole; anything else reads as none.
struct Architectures {};

inline constexpr Word<taxonomy::ErrorClass> kErrorClassWords{taxonomy::to_string, taxonomy::parse_error_class,
                                                             "error class"};
inline constexpr UnsetWhenEmpty<Word<taxonomy::ErrorSource>> kErrorSourceWords{
    {taxonomy::to_string, taxonomy::parse_error_source, "source",
     [] { return choice_list(taxonomy::kErrorSources, " or "); }}};
inline constexpr Word<ChildEnding> kChildEndingWords{runner::to_string, runner::parse_ending, "ending"};
inline constexpr Word<cases::Family> kKernelWords{cases::to_string, cases::parse_kernel, "kernel"};
inline constexpr Word<profiles::Allocator> kAllocatorWords{profiles::to_string, profiles::parse_allocator,
                                                           "allocator"};
inline constexpr Word<Outcome> kOutcomeWords{to_string, parse_outcome, "outcome"};
inline constexpr Word<VerdictStatus> kVerdictStatusWords{to_string, parse_verdict_status, "status"};
inline constexpr auto kBufferDirectionWords = listed_word<kBufferDirections>("direction");
inline constexpr auto kXidPointsToWords = listed_word<kXidPointsTo>("word");
inline constexpr Each<Word<GuardedEnd>> kGuardedEndWords{listed_word<kGuardedEnds>("direction")};
inline constexpr auto kRedactionModeWords = listed_word<kRedactionModes>("redaction mode");

// A list takes its struct, const (the writer) or not (the reader).
template <typename T, typename S>
concept Is = std::same_as<std::remove_const_t<T>, S>;

void list(auto& io, Is<ErrorInfo> auto& e) {
  io.schema("/$defs/error");
  io.field("code", e.code);
  io.field("name", e.name);
  io.field("class", e.error_class, kErrorClassWords);
  io.field("sticky", e.sticky);
  io.field("surfaced_at", e.surfaced_at);
  io.when(e.source.has_value(), "source", e.source, kErrorSourceWords);
  io.nonempty("api_call", e.api_call);
  io.nonempty("meaning", e.meaning);
  io.nonempty("next_step", e.next_step);
  io.nonempty("message", e.message);
  io.nonempty("location", e.location);
  io.nonempty("last_kernel", e.last_kernel);
}

void list(auto& io, Is<StreamExcerpt> auto& s) {
  io.schema("/$defs/stream_excerpt");
  io.field("text", s.text);
  io.field("total_bytes", s.total_bytes);
  io.field("dropped_bytes", s.dropped_bytes);
}

void list(auto& io, Is<ChildInfo::Stray> auto& s) {
  io.schema("/$defs/child/properties/strays/items");
  io.field("pid", s.pid);
  io.field("command", s.command);
  io.field("note", s.note);
}

void list(auto& io, Is<ChildInfo> auto& c) {
  io.schema("/$defs/child");
  io.field("pid", c.pid);
  io.field("ending", c.ending, kChildEndingWords);
  io.optional("exit_code", c.exit_code);
  io.optional("signal", c.signal);
  io.nonempty("signal_name", c.signal_name);
  io.when(c.killed_after_grace, "killed_after_grace", c.killed_after_grace);
  io.field("stdout", c.stdout_excerpt);
  io.field("stderr", c.stderr_excerpt);
  io.when(!c.strays.empty() || c.strays_unnamed != 0, "strays", c.strays);
  io.when(c.strays_unnamed != 0, "strays_unnamed", c.strays_unnamed);
}

void list(auto& io, Is<FaultingBuffer> auto& f) {
  io.schema("/$defs/faulting_buffer");
  io.required("name", f.name);
  io.optional("bytes", f.bytes);
  io.required("direction", f.direction, kBufferDirectionWords);
  io.optional("extra_runs", f.extra_runs, Bounded{0, 1 << 30});
}

void list(auto& io, Is<RepeatStats> auto& r) {
  io.schema("/$defs/repeats");
  io.field("runs", r.runs);
  io.field("failures", r.failures);
  io.field("failure_rate", r.failure_rate);
  io.field("ci95_low", r.ci_low);
  io.field("ci95_high", r.ci_high);
  io.field("histogram", r.histogram);
  io.optional("seconds", r.seconds);
  io.optional("runs_per_second", r.runs_per_second);
}

void list(auto& io, Is<LaunchRecord> auto& l) {
  io.schema("/$defs/launch");
  io.field("seq", l.seq);
  io.field("kernel", l.kernel);
  io.field("grid", l.grid);
  io.field("block", l.block);
  io.field("dynamic_smem", l.dynamic_smem);
  io.optional("buffers", l.buffers);
  io.optional("api", l.api);
}

void list(auto& io, Is<BufferRecord> auto& b) {
  io.schema("/$defs/buffer");
  io.field("name", b.name);
  io.field("bytes", b.bytes);
  io.optional("range", b.range);
  io.optional("allocator", b.allocator, kAllocatorWords);
  io.optional("freed", b.freed);
}

void list(auto& io, Is<XidLine> auto& x) {
  io.schema("/$defs/xid_event");
  io.nullable("timestamp_us", x.timestamp_us);
  io.field("pci", x.pci);
  io.field("xid", x.xid);
  io.nullable("pid", x.pid);
  io.nullable("process", x.process);
  io.field("message", x.message);
  io.field("meaning", x.meaning);
  io.field("points_to", x.points_to, kXidPointsToWords);
}

void list(auto& io, Is<Result> auto& r) {
  io.schema("/$defs/result");
  io.required("case_id", r.case_id);
  io.required("kernel", r.kernel, kKernelWords);
  io.field("params", r.params);
  io.field("profile", r.profile);
  io.optional("allocator", r.allocator, kAllocatorWords);
  io.field("device", r.device);
  io.when(r.device_index >= 0, "device_index", r.device_index);
  io.required("outcome", r.outcome, kOutcomeWords);
  io.field("expected", r.expected);
  io.nullable("expectation_met", r.expectation_met);
  io.nonempty("reason", r.reason);
  io.nullable("error", r.error);
  io.field("duration_ms", r.duration_ms);
  io.optional_or_null("repeats", r.repeats);
  io.optional_or_null("child", r.child);
  io.nonempty("launch_log", r.launch_log);
  io.nonempty("buffers", r.buffers);
  io.optional_or_null("faulting_buffer", r.faulting_buffer);
  io.nonempty("fault_sites", r.fault_sites);
  io.nonempty("xid", r.xid);
  io.optional_or_null("sanitizer", r.sanitizer);
  io.nonempty("details", r.details);
}

void list(auto& io, Is<Summary> auto& s) {
  io.schema("/properties/summary");
  io.field("total", s.total);
  io.field("by_outcome", s.by_outcome);
  io.field("expectations_met", s.expectations_met);
  io.field("expectations_unmet", s.expectations_unmet);
  io.field("not_judged", s.not_judged);
}

void list(auto& io, Is<VerdictCoverage> auto& c) {
  io.schema("/properties/verdict/properties/coverage");
  io.field("directions", c.directions, kGuardedEndWords);
  io.field("seen", c.seen);
  io.field("unseen", c.unseen);
  io.optional("allocations", c.allocations);
  io.optional("fenced", c.fenced);
  io.optional("guard", c.guard);
  io.optional("guard_reach_bytes", c.guard_reach_bytes);
  io.optional("guards_cut", c.guards_cut);
}

void list(auto& io, Is<Verdict> auto& v) {
  io.schema("/properties/verdict");
  io.defaulted("status", v.status, "", kVerdictStatusWords);  // absent: refused as the word ""
  io.field("reasons", v.reasons);
  io.optional("coverage", v.coverage);
}

void list(auto& io, Is<Redaction> auto& r) {
  io.schema("/properties/redaction");
  io.field("applied", r.applied);
  io.field("covers", r.covers);
  io.when(r.mode != RedactionMode::unkeyed, "mode", r.mode, kRedactionModeWords);
  io.nonempty("key_id", r.key_id);
}

void list(auto& io, Is<Tool> auto& t) {
  io.schema("/properties/tool");
  io.defaulted("name", t.name, "");  // absent: no name, not cudadiag's
  io.field("version", t.version);
  io.field("git_revision", t.git_revision);
  io.field("cuda_toolkit", t.cuda_toolkit);
  io.field("architectures", t.architectures, Architectures{});
}

void list(auto& io, Is<Invocation> auto& i) {
  io.schema("/properties/invocation");
  io.nonempty("command", i.command);
  io.field("argv", i.argv);
  io.nonempty("started_at", i.started_at);
  io.optional("finished_at", i.finished_at);
  io.optional("duration_ms", i.duration_ms);
  io.optional("interrupted", i.interrupted);
}

void list(auto& io, Is<GpuStatus> auto& g) {
  io.schema("/properties/gpu");
  io.field("ran", g.ran);
  io.optional("reason", g.reason);
}

// Command-specific sections (Report::extra) the schema describes beside the fields.
inline constexpr std::array<const char*, 5> kCommandSections{"suite", "run", "comparison", "tma", "sweep"};

void list(auto& io, Is<Report> auto& r) {
  io.schema("");
  io.required("schema_version", r.schema_version);
  io.defaulted("tool", r.tool, json::object());
  io.defaulted("invocation", r.invocation, json::object());
  io.defaulted("host", r.host, json::object());
  io.defaulted("driver", r.driver, json::object());
  io.defaulted("devices", r.devices, json::array());
  io.defaulted("environment", r.environment, json::object());
  io.defaulted("gpu", r.gpu, json::object());
  io.required("results", r.results);
  io.field("summary", r.summary, EmptyWhenUnset{});
  io.field("verdict", r.verdict);
  io.optional("redaction", r.redaction);
}

// Every struct with a field list (the schema test runs for each).
using ListedStructs = std::tuple<ErrorInfo, StreamExcerpt, ChildInfo::Stray, ChildInfo, FaultingBuffer, RepeatStats,
                                 LaunchRecord, BufferRecord, XidLine, Result, Summary, VerdictCoverage, Verdict,
                                 Redaction, Tool, Invocation, GpuStatus, Report>;

// The keys of a list, and whether each is always written.
struct Key {
  std::string name;
  bool always;
};

class KeyList {
 public:
  std::string schema_pointer;
  std::vector<Key> keys;

  void schema(const char* pointer) { schema_pointer = pointer; }

  template <typename T, typename C = Plain>
  void field(const char* key, T&, const C& = {}) { add(key, true); }
  template <typename T, typename C = Plain>
  void defaulted(const char* key, T&, const json&, const C& = {}) { add(key, true); }
  template <typename T, typename C = Plain>
  void required(const char* key, T&, const C& = {}) { add(key, true); }
  template <typename T, typename C = Plain>
  void nonempty(const char* key, T&, const C& = {}) { add(key, false); }
  template <typename T, typename C = Plain>
  void when(bool, const char* key, T&, const C& = {}) { add(key, false); }
  template <typename T, typename C = Plain>
  void optional(const char* key, T&, const C& = {}) { add(key, false); }
  template <typename T, typename C = Plain>
  void optional_or_null(const char* key, T&, const C& = {}) { add(key, false); }
  template <typename T, typename C = Plain>
  void nullable(const char* key, T&, const C& = {}) { add(key, true); }

 private:
  void add(const char* key, bool always) { keys.push_back({key, always}); }
};

template <typename S>
concept Listed = requires(KeyList& keys, S& s) { list(keys, s); };

// S's schema object and keys.
template <Listed S>
KeyList describe() {
  KeyList keys;
  S s{};
  list(keys, s);
  return keys;
}

}  // namespace cudadiag::report::fields
