#include "report/fault_site.h"

#include <fmt/format.h>

#include "report/json_reader.h"

namespace cudadiag::report {

std::string hex(std::uint64_t v) { return fmt::format("0x{:x}", v); }

std::uint64_t read_hex(const JsonReader& rd, const json& v, const std::string& p) {
  const std::string s = rd.string(v, p);
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || s[1] != 'x' ||
      s.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string::npos)
    rd.fail(p, "expected a hex address \"0x...\", got \"" + s + "\"");
  return std::stoull(s.substr(2), nullptr, 16);
}

namespace {

json triple_json(const Triple& t) { return json::array({t[0], t[1], t[2]}); }

std::string where(const std::string& file, const std::optional<std::uint32_t>& line) {
  return line && !file.empty() ? fmt::format(" at {}:{}", file, *line) : std::string();
}

Triple read_triple(const JsonReader& rd, const json& v, const std::string& p) {
  rd.array(v, p);
  if (v.size() != 3) rd.fail(p, "expected [x, y, z]");
  Triple t{};
  for (std::size_t i = 0; i < 3; ++i)
    t[i] = static_cast<std::uint32_t>(rd.integer(v[i], JsonReader::element_pointer(p, i), 0, 0xffffffffll));
  return t;
}

std::optional<std::uint32_t> read_line(const JsonReader& rd, const json& j, const std::string& p) {
  const json* v = rd.find(j, "line", p);
  if (!v || v->is_null()) return std::nullopt;
  return static_cast<std::uint32_t>(rd.integer(*v, JsonReader::member_pointer(p, "line"), 0, 0xffffffffll));
}

}  // namespace

std::string access_verb(AccessKind access) {
  switch (access) {
    case AccessKind::read: return "read";
    case AccessKind::write: return "wrote";
    case AccessKind::atomic: return "accessed atomically";
    case AccessKind::none: break;
  }
  return "accessed";
}

std::string access_phrase(AccessKind access, unsigned bytes) {
  const char* noun = access == AccessKind::read    ? "load"
                     : access == AccessKind::write  ? "store"
                     : access == AccessKind::atomic ? "atomic"
                                                    : "access";
  return fmt::format("a {}-byte {}", bytes, noun);
}

std::string waiting_line(const FaultSite& s) {
  if (s.waiting.empty()) return "";
  std::uint32_t warps = 0;
  for (const auto& w : s.waiting) warps += w.warps;
  const auto& w = s.waiting.front();
  return fmt::format("{}{} ({} of {} warp{} there)", w.function.empty() ? w.kernel : w.function, where(w.file, w.line),
                     w.warps, warps, warps == 1 ? "" : "s");
}

std::string triple_text(const Triple& t) { return fmt::format("({},{},{})", t[0], t[1], t[2]); }

std::string site_line(const FaultSite& s) {
  if (!s.unreadable.empty()) return "unreadable dump: " + s.unreadable;
  if (s.exception.empty()) {
    std::string h = "no exception recorded (a dump taken on request, or at a trap)";
    if (!s.waiting.empty()) h += ": warps wait in " + waiting_line(s);
    else if (!s.kernel.empty()) h += ": " + s.kernel + where(s.file, s.line);
    return h;
  }
  std::string h = s.exception;
  if (!s.kernel.empty()) h += " in " + s.kernel;
  else if (!s.function.empty()) h += " in the device function " + s.function;  // no kernel entry holds the PC
  h += where(s.file, s.line);
  if (!s.line && !s.line_note.empty()) h += " (" + s.line_note + ")";
  if (s.thread && s.block) h += ", thread " + triple_text(*s.thread) + " of block " + triple_text(*s.block);
  if (!s.thread && !s.thread_note.empty()) {
    // The SM's report of a warp that had exited: the instruction's access, no thread.
    if (s.access_bytes > 0) h += ": " + access_phrase(s.access, s.access_bytes);
    h += ", thread " + s.thread_note;
  }
  if (s.faulting_warps > 1 || s.faulting_blocks > 1)
    h += fmt::format(" ({} lanes in {} warps, {} blocks)", s.faulting_lanes, s.faulting_warps, s.faulting_blocks);
  if (s.address_status == AddressStatus::proven && s.address) {
    h += fmt::format(": {} {} byte{} at {}", access_verb(s.access), s.access_bytes, s.access_bytes == 1 ? "" : "s",
                     hex(*s.address));
    if (s.alignment && s.alignment < s.access_bytes)
      h += fmt::format(" (a {}-byte access at an address aligned to {} byte{})", s.access_bytes, s.alignment,
                       s.alignment == 1 ? "" : "s");
    if (!s.placement.empty()) h += ": " + s.placement;
    if (!s.allocated_at.empty()) h += ", allocated at " + origin_text(s.allocated_at);
  } else if (s.address_status == AddressStatus::not_recoverable) {
    h += ": the address is not recoverable from the dump";
  }
  return h;
}

json to_json(const FaultSite& s) {
  json j{{"dump", s.dump}, {"dump_bytes", s.dump_bytes}, {"read_ms", s.read_ms}, {"kept", s.kept}};
  if (!s.unreadable.empty()) {
    j["unreadable"] = s.unreadable;
    return j;
  }
  if (!s.device.empty()) j["device"] = s.device;
  j["exception"] = s.exception.empty() ? json(nullptr) : json{{"id", std::string(choice_name(kExceptionKinds, s.exception_id))}, {"name", s.exception}};
  if (!s.kernel.empty()) j["kernel"] = s.kernel;
  if (s.grid) j["grid"] = triple_json(*s.grid);
  if (s.block_dim) j["block_dim"] = triple_json(*s.block_dim);
  if (!s.function.empty()) {
    j["function"] = s.function;
    j["function_offset"] = s.function_offset;
  }
  if (s.pc) j["pc"] = hex(*s.pc);
  if (!s.file.empty()) j["file"] = s.file;
  j["line"] = s.line ? json(*s.line) : json(nullptr);
  if (!s.line_note.empty()) j["line_note"] = s.line_note;
  j["faulting"] = json{{"warps", s.faulting_warps}, {"lanes", s.faulting_lanes}, {"blocks", s.faulting_blocks}};
  if (s.block) j["block"] = triple_json(*s.block);
  if (s.thread) j["thread"] = triple_json(*s.thread);
  if (!s.thread_note.empty()) j["thread_note"] = s.thread_note;
  json a{{"status", std::string(choice_name(kAddressStatuses, s.address_status))}};
  if (!s.instruction.empty()) a["instruction"] = s.instruction;
  if (s.access != AccessKind::none) a["kind"] = std::string(choice_name(kAccessKinds, s.access));
  if (s.access_bytes) a["bytes"] = s.access_bytes;
  if (s.address) a["address"] = hex(*s.address);
  if (s.alignment) a["alignment"] = s.alignment;
  if (!s.address_note.empty()) a["note"] = s.address_note;
  if (!s.placement.empty()) a["placement"] = s.placement;
  if (!s.allocated_at.empty()) a["allocated_at"] = to_json(s.allocated_at);
  j["access"] = a;
  if (!s.waiting.empty()) {
    json w = json::array();
    for (const auto& x : s.waiting) {
      json e{{"kernel", x.kernel}, {"function", x.function}, {"offset", x.offset}, {"warps", x.warps}, {"lanes", x.lanes}};
      if (!x.file.empty()) e["file"] = x.file;
      e["line"] = x.line ? json(*x.line) : json(nullptr);
      w.push_back(std::move(e));
    }
    j["waiting"] = w;
  }
  if (!s.notes.empty()) j["notes"] = s.notes;
  return j;
}

FaultSite read_fault_site(const JsonReader& rd, const json& j, const std::string& p) {
  rd.object(j, p);
  const auto mp = [&p](std::string_view k) { return JsonReader::member_pointer(p, k); };
  FaultSite s;
  s.dump = rd.string(rd.required(j, "dump", p), mp("dump"));
  s.dump_bytes = rd.unsigned_or(j, "dump_bytes", p, 0);
  s.read_ms = rd.number_or(j, "read_ms", p, 0.0);
  s.kept = rd.boolean_or(j, "kept", p, false);
  s.unreadable = rd.string_or(j, "unreadable", p);
  if (!s.unreadable.empty()) return s;
  s.device = rd.string_or(j, "device", p);
  if (const json* e = rd.find(j, "exception", p); e && !e->is_null()) {
    rd.object(*e, mp("exception"));
    {
      const std::string text = rd.string_or(*e, "id", mp("exception"), "unknown");
      const auto kind = parse_choice(kExceptionKinds, text);
      if (!kind) rd.fail(JsonReader::member_pointer(mp("exception"), "id"), "unknown exception '" + text + "'");
      s.exception_id = *kind;
    }
    s.exception = rd.string(rd.required(*e, "name", mp("exception")), JsonReader::member_pointer(mp("exception"), "name"));
  }
  s.kernel = rd.string_or(j, "kernel", p);
  if (const json* v = rd.find(j, "grid", p)) s.grid = read_triple(rd, *v, mp("grid"));
  if (const json* v = rd.find(j, "block_dim", p)) s.block_dim = read_triple(rd, *v, mp("block_dim"));
  s.function = rd.string_or(j, "function", p);
  s.function_offset = rd.unsigned_or(j, "function_offset", p, 0);
  if (const json* v = rd.find(j, "pc", p)) s.pc = read_hex(rd, *v, mp("pc"));
  s.file = rd.string_or(j, "file", p);
  s.line = read_line(rd, j, p);
  s.line_note = rd.string_or(j, "line_note", p);
  if (const json* f = rd.find(j, "faulting", p)) {
    rd.object(*f, mp("faulting"));
    s.faulting_warps = static_cast<std::uint32_t>(rd.unsigned_or(*f, "warps", mp("faulting"), 0));
    s.faulting_lanes = static_cast<std::uint32_t>(rd.unsigned_or(*f, "lanes", mp("faulting"), 0));
    s.faulting_blocks = static_cast<std::uint32_t>(rd.unsigned_or(*f, "blocks", mp("faulting"), 0));
  }
  if (const json* v = rd.find(j, "block", p)) s.block = read_triple(rd, *v, mp("block"));
  if (const json* v = rd.find(j, "thread", p)) s.thread = read_triple(rd, *v, mp("thread"));
  s.thread_note = rd.string_or(j, "thread_note", p);
  if (const json* a = rd.find(j, "access", p)) {
    const std::string ap = mp("access");
    rd.object(*a, ap);
    if (const json* v = rd.find(*a, "status", ap))
      s.address_status = rd.choice(*v, JsonReader::member_pointer(ap, "status"), kAddressStatuses, "address status");
    s.instruction = rd.string_or(*a, "instruction", ap);
    if (const json* k = rd.find(*a, "kind", ap))
      s.access = rd.choice(*k, JsonReader::member_pointer(ap, "kind"), kAccessKinds, "access kind");
    s.access_bytes = static_cast<unsigned>(rd.unsigned_or(*a, "bytes", ap, 0));
    if (const json* v = rd.find(*a, "address", ap)) s.address = read_hex(rd, *v, JsonReader::member_pointer(ap, "address"));
    s.alignment = static_cast<unsigned>(rd.unsigned_or(*a, "alignment", ap, 0));
    s.address_note = rd.string_or(*a, "note", ap);
    s.placement = rd.string_or(*a, "placement", ap);
    if (const json* o = rd.find(*a, "allocated_at", ap))
      s.allocated_at = read_allocation_origin(rd, *o, JsonReader::member_pointer(ap, "allocated_at"));
  }
  const json waiting = rd.array_or_empty(j, "waiting", p);
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    const std::string wp = JsonReader::element_pointer(mp("waiting"), i);
    rd.object(waiting[i], wp);
    WaitingPc w;
    w.kernel = rd.string_or(waiting[i], "kernel", wp);
    w.function = rd.string_or(waiting[i], "function", wp);
    w.offset = rd.unsigned_or(waiting[i], "offset", wp, 0);
    w.file = rd.string_or(waiting[i], "file", wp);
    w.line = read_line(rd, waiting[i], wp);
    w.warps = static_cast<std::uint32_t>(rd.unsigned_or(waiting[i], "warps", wp, 0));
    w.lanes = static_cast<std::uint32_t>(rd.unsigned_or(waiting[i], "lanes", wp, 0));
    s.waiting.push_back(std::move(w));
  }
  if (const json* v = rd.find(j, "notes", p)) s.notes = rd.strings(*v, mp("notes"));
  return s;
}

}  // namespace cudadiag::report
