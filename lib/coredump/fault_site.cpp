#include "coredump/fault_site.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "coredump/cubin.h"
#include "coredump/dump_file.h"
#include "coredump/exception_kind.h"
#include "coredump/fault_address.h"
#include "coredump/sass.h"
#include "util/demangle.h"

namespace cudadiag::coredump {
namespace {

bool is_fault(const std::optional<std::uint32_t>& e) { return e && *e != kExceptionNone && *e != kExceptionUnknown; }

const Cta& cta_of(const CoreDump& d, const Warp& w) { return d.ctas.at(w.cta); }
const Sm& sm_of(const CoreDump& d, const Warp& w) { return d.sms.at(cta_of(d, w).sm); }

SiteThread thread_of(const CoreDump& d, const Lane& l) {
  const Warp& w = d.warps.at(l.warp);
  return SiteThread{cta_of(d, w).block, l.thread, sm_of(d, w).sm_id, w.warp_id, l.lane, l.pc, std::nullopt};
}

// The image holding pc, preferring the grid's own module; with its lookup.
struct Found {
  const RelocatedImage* image = nullptr;
  CubinLookup lookup;
};

Found find_image(const CoreDump& d, std::uint64_t pc, const Grid* grid) {
  Found best;
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& img : d.images) {
      const bool own = grid != nullptr && grid->module_handle && img.module_handle == grid->module_handle;
      if ((pass == 0) != own) continue;
      auto lookup = look_up_pc(img.bytes, pc);
      if (lookup.function) return Found{&img, std::move(lookup)};
    }
  return best;
}

// The disassembly of found's function, and the instruction at s.pc in it (s.instruction
// set). nullopt when there is none: s.address_status is then not_attempted and
// s.address_note says why.
struct Decoded {
  std::vector<SassInstruction> insns;
  std::size_t at = 0;  // index in insns
};

std::optional<Decoded> decode_at_pc(FaultSite& s, const Found& found, const DisassembleFn& disassemble,
                                    const std::string& no_disassembler_reason) {
  s.address_status = AddressStatus::not_attempted;
  if (!found.image || !found.lookup.function || !s.pc) {
    s.address_note = "the PC is in no function of the dump's relocated images";
    return std::nullopt;
  }
  if (!disassemble) {
    s.address_note = "no disassembler: " + no_disassembler_reason;
    return std::nullopt;
  }
  const Listing listing = disassemble(found.image->bytes, *found.lookup.function);
  if (!listing.error.empty()) {
    s.address_note = "the faulting instruction was not decoded: " + listing.error;
    return std::nullopt;
  }
  Decoded out;
  out.insns = parse_disassembly(listing.text);
  const auto at =
      std::find_if(out.insns.begin(), out.insns.end(), [&](const SassInstruction& i) { return i.address == *s.pc; });
  if (at == out.insns.end()) {
    s.address_note = fmt::format("the disassembly has no instruction at 0x{:x}", *s.pc);
    return std::nullopt;
  }
  out.at = static_cast<std::size_t>(at - out.insns.begin());
  s.instruction = at->text();
  return out;
}

void fill_address(FaultSite& s, const CoreDump& d, const Found& found, const std::vector<const Lane*>& lanes,
                  const DisassembleFn& disassemble, const std::string& no_disassembler_reason) {
  const auto decoded = decode_at_pc(s, found, disassemble, no_disassembler_reason);
  if (!decoded) return;
  const auto& insns = decoded->insns;
  const ExceptionInfo info = exception_info(s.exception_code);
  if (!info.memory_access) {
    s.address_status = AddressStatus::not_attempted;
    // A dump taken on request (a hang) records no exception: there is no faulting access.
    s.address_note = !s.has_exception ? std::string("no exception was recorded, so no access faulted")
                                         : s.exception + " is not a memory access";
    return;
  }
  // No lane carries the exception: the lanes are those still on the SM, not the faulting
  // ones, and their registers give their own addresses, not the one that faulted.
  const bool other_lanes = s.reported_by == ReportedBy::sm;
  bool first = true;
  for (const Lane* l : lanes) {
    const auto proof = prove_address_in_listing(insns, *s.pc, l->pc, [l](unsigned r) { return l->reg(r); });
    if (!proof) continue;
    SiteThread t = thread_of(d, *l);
    if (proof->status == AddressStatus::proven && !other_lanes) t.address = proof->address;
    if (first && other_lanes) {
      first = false;
      s.address_status = AddressStatus::not_recoverable;
      if (proof->operand) {
        s.access = proof->operand->kind;
        s.space = proof->operand->space;
        s.access_bytes = proof->operand->width_bytes;
      }
      s.address_note = "no lane carries the exception: the lanes left on the SM are not the ones that faulted, so "
                       "their registers do not give the faulting address";
    } else if (first) {
      first = false;
      s.address_status = proof->status;
      if (proof->operand) {
        s.access = proof->operand->kind;
        s.space = proof->operand->space;
        s.access_bytes = proof->operand->width_bytes;
      }
      s.address = proof->address;
      s.alignment = proof->alignment;
      s.address_note = proof->reason;
      if (!proof->intact.empty()) s.address_note += (s.address_note.empty() ? "" : "; ") + std::string("intact: ") + proof->intact;
    }
    s.threads.push_back(t);
  }
}

// The function holding s.pc (found), its offset and the PC's source line, or why not.
void name_pc_function(FaultSite& s, const CoreDump& d, const Found& found) {
  if (!found.lookup.function) {
    s.line_note = "the PC is in no function of the dump's relocated images";
    if (d.images.empty()) s.notes.push_back("the dump carries no relocated images: the kernel cannot be named");
    return;
  }
  s.function = demangle(found.lookup.function->name);
  s.function_offset = *s.pc - found.lookup.function->value;
  s.kernel_mangled = found.lookup.function->name;
  s.line = found.lookup.line;
  if (!found.lookup.has_line_table) s.line_note = "no line information: build with -lineinfo";
  else if (!s.line) s.line_note = "the line table has no row for this PC";
  if (!found.lookup.problem.empty()) s.notes.push_back(found.lookup.problem);
}

// The SM reports the exception with its error PC and no warp is left on it: a store
// faults after its warp issued it, and here the warp (and often its grid) had finished
// before the dump. The error PC is the faulting instruction's (cuda-gdb's $errorpc): the
// function holding it, the kernel when that function is an entry, the line, the
// instruction with its access kind and width. With no grid to prefer, every relocated
// image is searched (a virtual address lies in one image of the context). The thread and
// the address are gone with the warp's registers.
void fill_from_sm_error_pc(FaultSite& s, const CoreDump& d, const Sm& sm, const DisassembleFn& disassemble,
                           const std::string& no_disassembler_reason) {
  s.pc = *sm.error_pc;
  s.pc_basis = PcBasis::sm_error_pc;
  const char* no_grid = d.grids.empty() ? " and no grid is running" : "";
  const Found found = find_image(d, *s.pc, nullptr);
  name_pc_function(s, d, found);
  if (!found.lookup.function) {
    s.line_note = "the SM's error PC is in no function of the dump's relocated images";
    s.notes.insert(s.notes.begin(),
                   fmt::format("SM {} reports the exception at error PC 0x{:x}, but no warp is left on it{}: the "
                               "faulting warp had moved on (a store faults after its warp issues it), and the PC is "
                               "in no function of the dump's relocated images, so the dump cannot name the kernel, "
                               "line, thread or address",
                               sm.sm_id, *s.pc, no_grid));
    return;
  }
  if (found.lookup.function->entry) {
    s.kernel = demangle(s.kernel_mangled);
  } else {
    s.kernel_mangled.clear();
    s.notes.push_back(fmt::format("the SM's error PC is in {}, which is no kernel's entry: with no warp{} left, the "
                                  "kernel that called it is not known",
                                  s.function, d.grids.empty() ? " or grid" : ""));
  }
  s.thread_note = fmt::format("not known: the faulting warp had left SM {} before the dump, and the SM records no "
                              "thread",
                              sm.sm_id);
  s.notes.insert(s.notes.begin(),
                 fmt::format("SM {} reports the exception, but no warp is left on it{}: the faulting warp had moved "
                             "on (a store faults after its warp issues it); the function and line are the SM's error "
                             "PC's, the thread and the address are not known",
                             sm.sm_id, no_grid));
  const auto decoded = decode_at_pc(s, found, disassemble, no_disassembler_reason);
  if (!decoded) return;
  if (const auto op = memory_operand(decoded->insns[decoded->at])) {
    s.access = op->kind;
    s.space = op->space;
    s.access_bytes = op->width_bytes;
  }
  s.address_note = "the faulting warp had exited: the dump holds none of its registers, so the address is not known";
}

const Grid* grid_of(const CoreDump& d, const Cta& cta, std::size_t device) {
  for (const auto& g : d.grids)
    if (g.grid_id == cta.grid_id && g.device == device) return &g;
  return nullptr;
}

// Where the warps of a dump without exception sit: each warp at its lanes' most common
// PC, PCs grouped, most warps first.
std::vector<WaitingPc> waiting_pcs(const CoreDump& d) {
  std::map<std::size_t, std::map<std::uint64_t, std::uint32_t>> by_warp;  // warp -> pc -> lanes
  for (const auto& l : d.lanes) ++by_warp[l.warp][l.pc];
  struct Key {
    std::uint64_t pc;
    const Grid* grid;
    bool operator<(const Key& o) const { return pc != o.pc ? pc < o.pc : grid < o.grid; }
  };
  std::map<Key, std::pair<std::uint32_t, std::uint32_t>> count;  // warps, lanes
  for (const auto& [warp, pcs] : by_warp) {
    const auto top = std::max_element(pcs.begin(), pcs.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    const Cta& cta = cta_of(d, d.warps.at(warp));
    const Key k{top->first, grid_of(d, cta, d.sms.at(cta.sm).device)};
    auto& c = count[k];
    ++c.first;
    for (const auto& [pc, lanes] : pcs) c.second += lanes;
  }
  std::vector<WaitingPc> out;
  for (const auto& [k, c] : count) {
    WaitingPc w;
    w.pc = k.pc;
    w.warps = c.first;
    w.lanes = c.second;
    const Found found = find_image(d, k.pc, k.grid);
    if (found.lookup.function) {
      w.function = demangle(found.lookup.function->name);
      w.function_offset = k.pc - found.lookup.function->value;
      w.line = found.lookup.line;
      w.kernel = w.function;
      if (k.grid && k.grid->function_entry && *k.grid->function_entry != found.lookup.function->value) {
        const Found entry = find_image(d, *k.grid->function_entry, k.grid);
        if (entry.lookup.function) w.kernel = demangle(entry.lookup.function->name);
      }
    }
    out.push_back(std::move(w));
  }
  std::stable_sort(out.begin(), out.end(), [](const WaitingPc& a, const WaitingPc& b) { return a.warps > b.warps; });
  if (out.size() > FaultSite::kMaxWaiting) out.resize(FaultSite::kMaxWaiting);
  return out;
}

}  // namespace

const char* to_string(PcBasis b) {
  switch (b) {
    case PcBasis::warp_error_pc: return "warp_error_pc";
    case PcBasis::sm_error_pc: return "sm_error_pc";
    case PcBasis::instruction_before_lane_pc: return "instruction_before_lane_pc";
    case PcBasis::lane_pc: return "lane_pc";
  }
  return "lane_pc";
}

FaultSite analyze_dump(const CoreDump& d, const DisassembleFn& disassemble, const std::string& no_disassembler_reason) {
  FaultSite s;
  if (!d.devices.empty()) {
    s.device = d.devices.front().name;
    s.sm_type = d.devices.front().sm_type;
  }
  // Faulting lanes, grouped by warp in the dump's order.
  std::vector<const Lane*> faulting;
  for (const auto& l : d.lanes)
    if (is_fault(l.exception)) faulting.push_back(&l);
  const Warp* warp = nullptr;
  const Sm* sm_only = nullptr;          // the SM reports the exception with its error PC, and no warp is left on it
  std::vector<const Lane*> warp_lanes;  // the lanes of the first warp the site covers
  if (!faulting.empty()) {
    s.has_exception = true;
    s.reported_by = ReportedBy::lanes;
    s.exception_code = *faulting.front()->exception;
    warp = &d.warps.at(faulting.front()->warp);
    std::set<std::size_t> warps;
    std::set<Dim3> blocks;
    for (const Lane* l : faulting) {
      warps.insert(l->warp);
      blocks.insert(cta_of(d, d.warps.at(l->warp)).block);
      if (l->warp == faulting.front()->warp) warp_lanes.push_back(l);
      if (*l->exception != s.exception_code)
        s.notes.push_back(fmt::format("thread {} of block {} reports {} instead", to_string(l->thread),
                                      to_string(cta_of(d, d.warps.at(l->warp)).block), exception_name(*l->exception)));
    }
    if (s.notes.size() > 4) s.notes.resize(4);
    s.faulting_lanes = static_cast<std::uint32_t>(faulting.size());
    s.faulting_warps = static_cast<std::uint32_t>(warps.size());
    s.faulting_blocks = static_cast<std::uint32_t>(blocks.size());
    for (const auto& b : blocks) {
      if (s.blocks.size() >= FaultSite::kMaxBlocks) break;
      s.blocks.push_back(b);
    }
  } else {
    // No lane carries a code: the SM may still report one. Seen on an H100 (driver 580)
    // for a store far out of bounds: the faulting warp had left, its sibling remained one
    // instruction past the store; with skip_abort that program's cudaDeviceSynchronize even
    // returned cudaSuccess (tests/coredump/data/README.md, far_write).
    const auto sm = std::find_if(d.sms.begin(), d.sms.end(), [](const Sm& x) { return is_fault(x.exception); });
    for (const auto& w : d.warps)
      if (sm == d.sms.end() || &sm_of(d, w) == &*sm) {
        warp = &w;
        break;
      }
    if (sm != d.sms.end()) {
      s.has_exception = true;
      s.reported_by = ReportedBy::sm;
      s.exception_code = *sm->exception;
      if (warp != nullptr)
        s.notes.push_back(fmt::format("no lane carries the exception: SM {} reports it; the threads shown are the "
                                      "warps still on that SM, not necessarily the ones that faulted",
                                      sm->sm_id));
      else if (sm->error_pc)
        sm_only = &*sm;
      else
        s.notes.push_back(fmt::format(
            "SM {} reports the exception, but no warp is left on it{}: the faulting warp had moved on (a store faults "
            "after its warp issues it, here after the warp and its kernel had finished), so the dump cannot name the "
            "kernel, line, thread or address",
            sm->sm_id, d.grids.empty() ? " and no grid is running" : ""));
    } else {
      s.notes.push_back("the dump records no exception (a dump taken on request, or of a hang): the site is the "
                        "first warp's PC");
    }
    if (warp != nullptr)
      for (const auto& l : d.lanes)
        if (&d.warps.at(l.warp) == warp) warp_lanes.push_back(&l);
  }
  if (s.has_exception) {
    const ExceptionInfo info = exception_info(s.exception_code);
    s.exception_id = info.kind;
    s.exception = exception_name(s.exception_code);
  }
  if (!s.has_exception) s.waiting = waiting_pcs(d);
  if (sm_only != nullptr) {
    fill_from_sm_error_pc(s, d, *sm_only, disassemble, no_disassembler_reason);
    return s;
  }
  if (warp == nullptr || warp_lanes.empty()) {
    if (s.reported_by != ReportedBy::sm || warp != nullptr) s.notes.push_back("the dump holds no warp with lanes");
    return s;
  }
  const Lane& lane = *warp_lanes.front();
  s.first = thread_of(d, lane);
  const Cta& cta = cta_of(d, *warp);
  const Sm& sm = sm_of(d, *warp);
  const Device& dev = d.devices.at(sm.device);

  // The PC: the warp's error PC, else the SM's, else (an assert) the instruction before
  // the lane's PC: the lane returns from the trapping call to the next instruction, whose
  // line is the one after the assert.
  if (warp->error_pc) {
    s.pc = warp->error_pc;
    s.pc_basis = PcBasis::warp_error_pc;
  } else if (sm.error_pc) {
    s.pc = sm.error_pc;
    s.pc_basis = PcBasis::sm_error_pc;
  } else if (s.has_exception && s.exception_code == kExceptionWarpAssert && lane.pc >= dev.instruction_size) {
    s.pc = lane.pc - dev.instruction_size;
    s.pc_basis = PcBasis::instruction_before_lane_pc;
  } else {
    s.pc = lane.pc;
    s.pc_basis = PcBasis::lane_pc;
  }

  const Grid* grid = nullptr;
  for (const auto& g : d.grids)
    if (g.grid_id == cta.grid_id && g.device == sm.device) grid = &g;
  if (grid != nullptr) {
    s.grid_dim = grid->grid_dim;
    s.block_dim = grid->block_dim;
  } else {
    s.notes.push_back(fmt::format("no grid {} in the grid table: launch shape unknown", cta.grid_id));
  }

  const Found found = find_image(d, *s.pc, grid);
  name_pc_function(s, d, found);
  if (found.lookup.function) {
    if (grid != nullptr && grid->function_entry && *grid->function_entry != found.lookup.function->value) {
      const Found entry = find_image(d, *grid->function_entry, grid);
      if (entry.lookup.function) s.kernel_mangled = entry.lookup.function->name;
    }
    s.kernel = demangle(s.kernel_mangled);
  }
  fill_address(s, d, found, warp_lanes, disassemble, no_disassembler_reason);
  if (s.threads.empty())
    for (const Lane* l : warp_lanes) s.threads.push_back(thread_of(d, *l));
  if (s.threads.size() > 32) s.threads.resize(32);
  return s;
}

FaultSite read_fault_site(const std::string& path, const DisassembleFn& disassemble,
                          const std::string& no_disassembler_reason) {
  FaultSite s;
  try {
    const DumpFile file(path);
    const CoreDump dump = read_core_dump(file.bytes());
    s = analyze_dump(dump, disassemble, no_disassembler_reason);
    s.file_bytes = file.bytes().size();
  } catch (const UnreadableDump& e) {
    s = FaultSite{};
    s.unreadable = e.what();
  }
  s.file = path;
  return s;
}

std::string headline(const FaultSite& s) {
  if (!s.unreadable.empty()) return s.unreadable;
  std::string h = s.has_exception ? s.exception : std::string("no exception");
  if (!s.kernel.empty()) h += " in " + s.kernel;
  else if (!s.function.empty()) h += " in the device function " + s.function;
  if (s.line) h += fmt::format(" at {}:{}", s.line->file, s.line->line);
  return h;
}

}  // namespace cudadiag::coredump
