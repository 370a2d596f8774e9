#include "coredump/render_site.h"

#include <fmt/format.h>

#include "util/text_layout.h"

namespace cudadiag::coredump {
namespace {

std::string who(const SiteThread& t) {
  return fmt::format("thread {} of block {} (SM {}, warp {}, lane {})", to_string(t.thread), to_string(t.block), t.sm,
                     t.warp, t.lane);
}

std::string pc_basis_words(PcBasis b) {
  switch (b) {
    case PcBasis::warp_error_pc: return "the warp's error PC";
    case PcBasis::sm_error_pc: return "the SM's error PC";
    case PcBasis::instruction_before_lane_pc: return "the call before the lane's PC: the assert";
    case PcBasis::lane_pc: return "the lane's PC";
  }
  return "";
}

struct Row {
  std::string key, value;
  bool code = false;  // Markdown shows the value as code (the instruction)
};

std::vector<Row> rows_of(const FaultSite& s) {
  std::vector<Row> rows;
  if (s.has_exception) {
    std::string e = fmt::format("{} (code {})", s.exception, s.exception_code);
    if (s.reported_by == ReportedBy::lanes)
      e += fmt::format(": {} lane{} in {} warp{}, {} block{}", s.faulting_lanes, s.faulting_lanes == 1 ? "" : "s",
                       s.faulting_warps, s.faulting_warps == 1 ? "" : "s", s.faulting_blocks,
                       s.faulting_blocks == 1 ? "" : "s");
    else
      e += ", reported by the SM only";
    rows.push_back({"exception", e});
  } else {
    rows.push_back({"exception", "none recorded"});
  }
  if (s.faulting_blocks > 1) {
    std::string list;
    for (const auto& b : s.blocks) {
      if (!list.empty()) list += ' ';
      list += to_string(b);
    }
    if (s.faulting_blocks > s.blocks.size()) list += fmt::format(" ... ({} in all)", s.faulting_blocks);
    rows.push_back({"blocks", list});
  }
  if (!s.kernel.empty()) {
    std::string k = s.kernel;
    if (s.grid_dim && s.block_dim) k += fmt::format(" <<<{}, {}>>>", to_string(*s.grid_dim), to_string(*s.block_dim));
    rows.push_back({"kernel", k});
  }
  if (s.pc)
    rows.push_back({"pc", (s.function.empty() ? std::string() : fmt::format("{}+{} ", s.function, s.function_offset)) +
                              fmt::format("(0x{:x}, {})", *s.pc, pc_basis_words(s.pc_basis))});
  // Never an empty "line:": where the reader left no note (no PC, a site read back from an
  // older report), the text still says there is no line and, as far as known, why.
  std::string line = s.line ? fmt::format("{}:{}", s.line->file, s.line->line) : s.line_note;
  if (line.empty()) line = s.pc ? "no line information" : "no line information: the dump gives no PC to look up";
  rows.push_back({"line", line});
  if (s.first) rows.push_back({s.reported_by == ReportedBy::lanes ? "first" : "thread", who(*s.first)});
  else if (!s.thread_note.empty()) rows.push_back({"thread", s.thread_note});
  if (!s.instruction.empty()) rows.push_back({"instruction", s.instruction, true});
  rows.push_back({"address", describe_access(s)});
  for (const auto& n : s.notes) rows.push_back({"note", n});
  return rows;
}

}  // namespace

std::string describe_access(const FaultSite& s) {
  using report::AccessKind;
  using report::AddressStatus;
  using report::MemorySpace;
  if (s.address_status == AddressStatus::proven && s.address) {
    std::string d = fmt::format("{} {} {} byte{} at 0x{:x}", s.first ? "the thread" : "the access",
                                report::access_verb(s.access), s.access_bytes, s.access_bytes == 1 ? "" : "s", *s.address);
    if (s.space != MemorySpace::none && s.space != MemorySpace::global)
      d += fmt::format(" ({})", choice_name(report::kMemorySpaces, s.space));
    if (s.alignment < s.access_bytes)
      d += fmt::format(": a {}-byte {} at an address aligned to {} byte{}", s.access_bytes,
                       s.access == AccessKind::write ? "store" : s.access == AccessKind::read ? "load" : "access",
                       s.alignment, s.alignment == 1 ? "" : "s");
    return d;
  }
  if (!s.address_status) return "not attempted";
  // No thread is left to prove an address: the instruction still says what it did.
  const std::string access =
      !s.first && s.access_bytes > 0 ? report::access_phrase(s.access, s.access_bytes) + ", address " : std::string();
  if (!access.empty() && *s.address_status == AddressStatus::not_attempted)
    return access + "not given" + (s.address_note.empty() ? "" : ": " + s.address_note);
  if (*s.address_status == AddressStatus::not_recoverable) return "not recoverable: " + s.address_note;
  return (*s.address_status == AddressStatus::not_attempted ? std::string("not given")
                                                             : std::string(choice_name(report::kAddressStatuses, *s.address_status))) +
         (s.address_note.empty() ? "" : ": " + s.address_note);
}

std::string render_site_text(const FaultSite& s) {
  if (!s.unreadable.empty()) return fmt::format("{}: {}\n", s.file, s.unreadable);
  std::string out = text::hanging(
      "", "  ", fmt::format("GPU core dump {} ({}{}{})", s.file, s.device, s.sm_type.empty() ? "" : ", ", s.sm_type));
  for (const auto& r : rows_of(s)) out += text::labelled("  ", r.key + ":", 12, r.value);
  return out;
}

std::string render_site_markdown(const FaultSite& s) {
  if (!s.unreadable.empty()) return fmt::format("**`{}`**: {}\n\n", s.file, s.unreadable);
  std::string out = fmt::format("### GPU core dump `{}`\n\n{} {}\n\n| | |\n|---|---|\n", s.file, s.device, s.sm_type);
  for (const auto& r : rows_of(s)) {
    std::string v = r.value;
    std::string escaped;
    for (const char c : v) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
    out += fmt::format("| {} | {} |\n", r.key, r.code ? "`" + escaped + "`" : escaped);
  }
  return out + "\n";
}

}  // namespace cudadiag::coredump
