#pragma once
// The fault site a GPU core dump proves: the exception, the kernel and its launch shape,
// the faulting warps and lanes, the PC as kernel symbol + offset, the source line, the
// faulting instruction and, only when provable, the address it accessed. One typed value
// per dump, with its own JSON form (fault_site_json.h), so that it can travel as one more
// kind of evidence in a report.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coredump/core_dump.h"
#include "coredump/disassembler.h"
#include "coredump/dwarf_line.h"
#include "report/fault_site.h"
#include "util/choices.h"

namespace cudadiag::coredump {

// A thread of the site: where it ran and, when proven, the address it accessed.
struct SiteThread {
  Dim3 block, thread;
  std::uint32_t sm = 0, warp = 0, lane = 0;
  std::uint64_t pc = 0;                  // the lane's PC in the dump
  std::optional<std::uint64_t> address;  // proven only
};

// Where the site's PC came from, most direct first.
enum class PcBasis {
  warp_error_pc,               // the warp's errorPC (errorPCValid)
  sm_error_pc,                 // the SM's errorPC, when the warp has none
  instruction_before_lane_pc,  // an assert: the lane stopped after the call that trapped
  lane_pc,                     // only the lane's PC is known
};
const char* to_string(PcBasis b);

// A dump without an exception (taken on request: a hang): one PC where warps wait, with
// its function and line, and how many warps and lanes sit there.
struct WaitingPc {
  std::uint64_t pc = 0;
  std::string kernel;    // the grid's kernel (demangled)
  std::string function;  // the function holding pc (demangled)
  std::uint64_t function_offset = 0;
  std::optional<SourceLine> line;
  std::uint32_t warps = 0;
  std::uint32_t lanes = 0;
};

// Who carries the exception code: the faulting lanes, or only the SM (the faulting warp
// may have left); none: no exception recorded.
enum class ReportedBy : std::uint8_t { none, lanes, sm };
inline constexpr ChoiceTable<ReportedBy, 2> kReportedBy{{{ReportedBy::lanes, "lanes"}, {ReportedBy::sm, "sm"}}};

struct FaultSite {
  std::string file;              // the dump, as named on the command line
  std::uint64_t file_bytes = 0;
  std::string unreadable;        // set: the dump could not be read (why); nothing else is set

  std::string device;            // "NVIDIA H100 80GB HBM3"
  std::string sm_type;           // "sm_90"

  bool has_exception = false;    // false: the dump records no exception (taken on request)
  std::uint32_t exception_code = 0;
  report::ExceptionKind exception_id = report::ExceptionKind::none;
  std::string exception;         // "Warp Illegal Address"
  ReportedBy reported_by = ReportedBy::none;

  std::string kernel;            // demangled
  std::string kernel_mangled;
  std::optional<Dim3> grid_dim, block_dim;

  std::optional<std::uint64_t> pc;  // the site's PC (virtual address)
  PcBasis pc_basis = PcBasis::lane_pc;
  std::string function;          // the function holding pc (demangled); a device function may differ from the kernel
  std::uint64_t function_offset = 0;
  std::optional<SourceLine> line;
  std::string line_note;         // why there is no line ("no line information: build with -lineinfo")

  std::uint32_t faulting_warps = 0;
  std::uint32_t faulting_lanes = 0;
  std::uint32_t faulting_blocks = 0;
  std::vector<Dim3> blocks;      // the first kMaxBlocks faulting blocks, sorted
  std::optional<SiteThread> first;  // the first faulting thread (for an SM report, the first thread of the SM)
  std::string thread_note;       // why no thread is given (the SM reports the exception and its warp had exited)

  std::string instruction;       // at pc, from nvdisasm
  // nullopt: the address was never looked at (no warp of the site is left in the dump).
  std::optional<report::AddressStatus> address_status;
  report::AccessKind access = report::AccessKind::none;
  report::MemorySpace space = report::MemorySpace::none;
  unsigned access_bytes = 0;
  std::optional<std::uint64_t> address;  // first's address, proven only
  unsigned alignment = 0;        // of the address (power of two, at most 4096)
  std::string address_note;      // why not proven / what is intact / why not attempted
  std::vector<SiteThread> threads;  // the threads of first's warp that the site covers, addresses where proven

  // No exception recorded: every distinct PC the warps sit at (a warp counts at its
  // lanes' most common PC), most warps first, at most kMaxWaiting.
  std::vector<WaitingPc> waiting;
  static constexpr std::size_t kMaxWaiting = 8;

  std::string disassembler;      // the nvdisasm used; empty when none
  std::vector<std::string> notes;

  static constexpr std::size_t kMaxBlocks = 16;
};

// The site of one dump. `disassemble` may be empty (no disassembler): the site then says
// how to get one. Never throws for what the dump holds: CoreDump is already checked.
FaultSite analyze_dump(const CoreDump& dump, const DisassembleFn& disassemble, const std::string& no_disassembler_reason);

// Reads the file (bounded, regular files only) and analyzes it; an unreadable dump gives
// a site with `unreadable` set.
FaultSite read_fault_site(const std::string& path, const DisassembleFn& disassemble,
                          const std::string& no_disassembler_reason);

// The site's one-line summary: "Warp Illegal Address in touch(float*, int) at use_after_free.cu:5".
std::string headline(const FaultSite& s);

}  // namespace cudadiag::coredump
