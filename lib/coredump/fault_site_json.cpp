#include "coredump/fault_site_json.h"

#include <fmt/format.h>

#include "report/fault_site.h"
#include "report/json_reader.h"

namespace cudadiag::coredump {
namespace {

using report::json;
using report::JsonReader;

// The JSON word of an enum; "" for a value the table leaves out (none).
template <typename E, std::size_t N>
std::string word(const ChoiceTable<E, N>& table, E value) {
  for (const auto& c : table)
    if (c.value == value) return std::string(c.name);
  return "";
}

using report::hex;
using report::read_hex;

json dim(const Dim3& d) { return json::array({d.x, d.y, d.z}); }

json thread_json(const SiteThread& t) {
  json j{{"block", dim(t.block)}, {"thread", dim(t.thread)}, {"sm", t.sm},     {"warp", t.warp},
         {"lane", t.lane},        {"pc", hex(t.pc)}};
  if (t.address) j["address"] = hex(*t.address);
  return j;
}


Dim3 read_dim(const JsonReader& rd, const json& v, const std::string& p) {
  const json& a = rd.array(v, p);
  if (a.size() != 3) rd.fail(p, "expected [x, y, z]");
  auto at = [&](std::size_t i) {
    return static_cast<std::uint32_t>(rd.integer(a[i], JsonReader::element_pointer(p, i), 0, 0xffffffffLL));
  };
  return Dim3{at(0), at(1), at(2)};
}

std::uint32_t read_u32(const JsonReader& rd, const json& o, const char* key, const std::string& p) {
  const json& v = rd.required(o, key, p);
  return static_cast<std::uint32_t>(rd.integer(v, JsonReader::member_pointer(p, key), 0, 0xffffffffLL));
}

SiteThread read_thread(const JsonReader& rd, const json& v, const std::string& p) {
  rd.object(v, p);
  SiteThread t;
  t.block = read_dim(rd, rd.required(v, "block", p), JsonReader::member_pointer(p, "block"));
  t.thread = read_dim(rd, rd.required(v, "thread", p), JsonReader::member_pointer(p, "thread"));
  t.sm = read_u32(rd, v, "sm", p);
  t.warp = read_u32(rd, v, "warp", p);
  t.lane = read_u32(rd, v, "lane", p);
  t.pc = read_hex(rd, rd.required(v, "pc", p), JsonReader::member_pointer(p, "pc"));
  if (const json* a = rd.find(v, "address", p)) t.address = read_hex(rd, *a, JsonReader::member_pointer(p, "address"));
  return t;
}

PcBasis read_basis(const JsonReader& rd, const json& v, const std::string& p) {
  const std::string s = rd.string(v, p);
  for (PcBasis b : {PcBasis::warp_error_pc, PcBasis::sm_error_pc, PcBasis::instruction_before_lane_pc, PcBasis::lane_pc})
    if (s == to_string(b)) return b;
  rd.fail(p, "unknown PC basis \"" + s + "\"");
}

}  // namespace

json to_json(const FaultSite& s) {
  json j{{"file", s.file}};
  if (!s.unreadable.empty()) {
    j["unreadable"] = s.unreadable;
    return j;
  }
  j["file_bytes"] = s.file_bytes;
  j["device"] = s.device;
  j["sm_type"] = s.sm_type;
  j["exception"] = s.has_exception ? json{{"code", s.exception_code},
                                          {"id", word(report::kExceptionKinds, s.exception_id)},
                                          {"name", s.exception},
                                          {"reported_by", word(kReportedBy, s.reported_by)}}
                                   : json(nullptr);
  json kernel{{"name", s.kernel}, {"mangled", s.kernel_mangled}};
  if (s.grid_dim) kernel["grid"] = dim(*s.grid_dim);
  if (s.block_dim) kernel["block"] = dim(*s.block_dim);
  j["kernel"] = kernel;
  if (s.pc)
    j["pc"] = json{{"address", hex(*s.pc)}, {"basis", to_string(s.pc_basis)}, {"function", s.function},
                   {"offset", s.function_offset}};
  j["line"] = s.line ? json{{"file", s.line->file}, {"line", s.line->line}} : json(nullptr);
  if (!s.line_note.empty()) j["line_note"] = s.line_note;
  json blocks = json::array();
  for (const auto& b : s.blocks) blocks.push_back(dim(b));
  j["faulting"] = json{{"warps", s.faulting_warps}, {"lanes", s.faulting_lanes}, {"blocks", s.faulting_blocks},
                       {"block_list", blocks}};
  if (s.first) j["first"] = thread_json(*s.first);
  if (!s.thread_note.empty()) j["thread_note"] = s.thread_note;
  json access{{"instruction", s.instruction},
              {"status", s.address_status ? word(report::kAddressStatuses, *s.address_status) : std::string()}};
  if (s.access != report::AccessKind::none) access["kind"] = word(report::kAccessKinds, s.access);
  if (s.space != report::MemorySpace::none) access["space"] = word(report::kMemorySpaces, s.space);
  if (s.access_bytes > 0) access["bytes"] = s.access_bytes;
  if (s.address) {
    access["address"] = hex(*s.address);
    access["alignment"] = s.alignment;
  }
  if (!s.address_note.empty()) access["note"] = s.address_note;
  j["access"] = access;
  json threads = json::array();
  for (const auto& t : s.threads) threads.push_back(thread_json(t));
  j["threads"] = threads;
  j["disassembler"] = s.disassembler;
  j["notes"] = s.notes;
  return j;
}

FaultSite fault_site_from_json(const json& j, const std::string& source) {
  const JsonReader rd(source);
  const std::string root = "";
  rd.object(j, "/");
  FaultSite s;
  s.file = rd.string(rd.required(j, "file", root), "/file");
  if (const json* u = rd.find(j, "unreadable", root)) {
    s.unreadable = rd.string(*u, "/unreadable");
    return s;
  }
  s.file_bytes = rd.unsigned_or(j, "file_bytes", root, 0);
  s.device = rd.string_or(j, "device", root);
  s.sm_type = rd.string_or(j, "sm_type", root);
  if (const json* e = rd.find(j, "exception", root); e != nullptr && !e->is_null()) {
    rd.object(*e, "/exception");
    s.has_exception = true;
    s.exception_code = read_u32(rd, *e, "code", "/exception");
    if (const json* id = rd.find(*e, "id", "/exception"))
      s.exception_id = rd.choice(*id, "/exception/id", report::kExceptionKinds, "exception id");
    s.exception = rd.string_or(*e, "name", "/exception");
    if (const json* by = rd.find(*e, "reported_by", "/exception"))
      s.reported_by = rd.choice(*by, "/exception/reported_by", kReportedBy, "reporter");
  }
  if (const json* k = rd.find(j, "kernel", root)) {
    rd.object(*k, "/kernel");
    s.kernel = rd.string_or(*k, "name", "/kernel");
    s.kernel_mangled = rd.string_or(*k, "mangled", "/kernel");
    if (const json* g = rd.find(*k, "grid", "/kernel")) s.grid_dim = read_dim(rd, *g, "/kernel/grid");
    if (const json* b = rd.find(*k, "block", "/kernel")) s.block_dim = read_dim(rd, *b, "/kernel/block");
  }
  if (const json* pc = rd.find(j, "pc", root)) {
    rd.object(*pc, "/pc");
    s.pc = read_hex(rd, rd.required(*pc, "address", "/pc"), "/pc/address");
    s.pc_basis = read_basis(rd, rd.required(*pc, "basis", "/pc"), "/pc/basis");
    s.function = rd.string_or(*pc, "function", "/pc");
    s.function_offset = rd.unsigned_or(*pc, "offset", "/pc", 0);
  }
  if (const json* l = rd.find(j, "line", root); l != nullptr && !l->is_null()) {
    rd.object(*l, "/line");
    s.line = SourceLine{rd.string(rd.required(*l, "file", "/line"), "/line/file"), read_u32(rd, *l, "line", "/line")};
  }
  s.line_note = rd.string_or(j, "line_note", root);
  if (const json* f = rd.find(j, "faulting", root)) {
    rd.object(*f, "/faulting");
    s.faulting_warps = read_u32(rd, *f, "warps", "/faulting");
    s.faulting_lanes = read_u32(rd, *f, "lanes", "/faulting");
    s.faulting_blocks = read_u32(rd, *f, "blocks", "/faulting");
    const json list = rd.array_or_empty(*f, "block_list", "/faulting");
    for (std::size_t i = 0; i < list.size() && i < FaultSite::kMaxBlocks; ++i)
      s.blocks.push_back(read_dim(rd, list[i], JsonReader::element_pointer("/faulting/block_list", i)));
  }
  if (const json* t = rd.find(j, "first", root)) s.first = read_thread(rd, *t, "/first");
  s.thread_note = rd.string_or(j, "thread_note", root);
  if (const json* a = rd.find(j, "access", root)) {
    rd.object(*a, "/access");
    s.instruction = rd.string_or(*a, "instruction", "/access");
    // "": the address was never looked at (what to_json writes for nullopt).
    if (const json* st = rd.find(*a, "status", "/access"); st && !(st->is_string() && st->get<std::string>().empty()))
      s.address_status = rd.choice(*st, "/access/status", report::kAddressStatuses, "address status");
    if (const json* k = rd.find(*a, "kind", "/access")) s.access = rd.choice(*k, "/access/kind", report::kAccessKinds, "access kind");
    if (const json* sp = rd.find(*a, "space", "/access"))
      s.space = rd.choice(*sp, "/access/space", report::kMemorySpaces, "memory space");
    s.access_bytes = static_cast<unsigned>(rd.int_or(*a, "bytes", "/access", 0));
    if (const json* ad = rd.find(*a, "address", "/access")) s.address = read_hex(rd, *ad, "/access/address");
    s.alignment = static_cast<unsigned>(rd.int_or(*a, "alignment", "/access", 0));
    s.address_note = rd.string_or(*a, "note", "/access");
  }
  const json threads = rd.array_or_empty(j, "threads", root);
  for (std::size_t i = 0; i < threads.size(); ++i)
    s.threads.push_back(read_thread(rd, threads[i], JsonReader::element_pointer("/threads", i)));
  s.disassembler = rd.string_or(j, "disassembler", root);
  if (const json* n = rd.find(j, "notes", root)) s.notes = rd.strings(*n, "/notes");
  return s;
}

json sites_document(const std::vector<FaultSite>& sites) {
  json arr = json::array();
  for (const auto& s : sites) arr.push_back(to_json(s));
  return json{{"fault_site_version", kFaultSiteVersion}, {"sites", arr}};
}

}  // namespace cudadiag::coredump
