#pragma once
// What the text and Markdown renderers show, decided once: header facts, table rows,
// which results get a detail block and what it says, summary and extra sections.
// The two renderers differ only in layout.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::report::facts {

struct Fact {
  std::string label;
  std::string value;
  // What renderers treat apart: a result's reason (said once for a run of equal ones),
  // the one value of a section without a label of its own, a key of the JSON's own
  // (a result's details: shown with -v only).
  enum class Role : std::uint8_t { other, reason, lone_value, internal };
  Role role = Role::other;
};

// command, host, gpu(s), driver, GPU part not run, tool, started.
std::vector<Fact> header(const Report& r);

// The outcome as a person reads it: "exited 1" for a process that exited non-zero on
// its own (the report's word is crashed), else the report's own word.
std::string outcome_text(const Result& r);

struct Row {
  std::string case_id, profile, allocator, outcome, expected;
  std::optional<bool> met;  // nullopt: not judged
  std::string error;        // "cudaErrorIllegalAddress (memory_fault)", a signal name, or ""
  std::string duration;     // "12.5 ms"
};
Row row(const Result& r);

// A detail block is shown for an unmet expectation, and for an unjudged result whose
// outcome is a failure (error, mismatch, crash, timeout, ...).
bool needs_details(const Result& r);
// "fault.overrun_read [fence, fence-back]: cuda_error, expected error:memory_fault"
std::string detail_title(const Result& r);
// error, surfaced, meaning, next step, last kernel, faulting buffer, reason, repeats,
// child, sanitizer, details.
std::vector<Fact> detail_facts(const Result& r);
// Kernel-log Xid lines attributed to the result's child, one line each.
std::vector<std::string> xid_lines(const Result& r);

// The first `max_lines` lines of a captured stream; `omitted` gets the number left out.
std::vector<std::string> first_lines(const std::string& text, size_t max_lines, size_t& omitted);

// results, expectations (when any result has one).
std::vector<Fact> summary(const Report& r);

// A command-specific top-level section flattened to key: value facts (nested keys
// joined with '.', arrays of scalars joined with ", ", arrays of objects counted).
std::vector<Fact> flatten_section(const json& section, size_t max_facts = 40);
// "comparison" -> "Comparison", "tma_descriptor" -> "Tma descriptor".
std::string section_title(const std::string& key);

// The verdict's reasons, each said once: a reason another one already holds is left out.
std::vector<std::string> distinct_reasons(const std::vector<std::string>& reasons);
// Whether `line` says nothing `said` does not: it is empty, or one of `said` holds it.
bool already_said(const std::string& line, const std::vector<std::string>& said);

std::string format_duration(double ms);
// Display width of UTF-8 text (util/text_layout.h: wide characters count two).
size_t display_width(const std::string& s);

}  // namespace cudadiag::report::facts
