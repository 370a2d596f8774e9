#pragma once
// The fault site a GPU core dump proves, as the report carries it (Result::fault_sites):
// the exception, the kernel and its launch shape, the source line, the first faulting
// block and thread, the faulting instruction and, only when provable, the address it
// accessed with where that address lies among the program's allocations. A dump taken on
// request (a hang) records no exception: it names the PCs where the warps wait instead.
// Each dump's size and read time travel with its site. lib/coredump fills it
// (coredump/report_site.h); lib/report only carries, writes, reads and renders it.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/access_words.h"
#include "report/allocation_origin.h"
#include "util/choices.h"

namespace cudadiag::report {

// The exception a GPU core dump records (CUDBGException_t, codes 0..22 in this order;
// unknown: a code outside the table). The words are the report's exception.id;
// coredump/exception_kind.cpp maps codes to these kinds with the names cuda-gdb prints.
enum class ExceptionKind : std::uint8_t {
  none,
  lane_illegal_address,
  lane_user_stack_overflow,
  device_hardware_stack_overflow,
  warp_illegal_instruction,
  warp_out_of_range_address,
  warp_misaligned_address,
  warp_invalid_address_space,
  warp_invalid_pc,
  warp_hardware_stack_overflow,
  device_illegal_address,
  lane_misaligned_address,
  warp_assert,
  lane_syscall_error,
  warp_illegal_address,
  lane_nonmigratable_atomsys,
  lane_invalid_atomsys,
  cluster_out_of_range_address,
  cluster_block_not_present,
  warp_stack_canary,
  warp_tmem_access_check,
  warp_tmem_leak,
  warp_call_requires_newer_driver,
  unknown,
};
inline constexpr ChoiceTable<ExceptionKind, 24> kExceptionKinds{{
    {ExceptionKind::none, "none"},
    {ExceptionKind::lane_illegal_address, "lane_illegal_address"},
    {ExceptionKind::lane_user_stack_overflow, "lane_user_stack_overflow"},
    {ExceptionKind::device_hardware_stack_overflow, "device_hardware_stack_overflow"},
    {ExceptionKind::warp_illegal_instruction, "warp_illegal_instruction"},
    {ExceptionKind::warp_out_of_range_address, "warp_out_of_range_address"},
    {ExceptionKind::warp_misaligned_address, "warp_misaligned_address"},
    {ExceptionKind::warp_invalid_address_space, "warp_invalid_address_space"},
    {ExceptionKind::warp_invalid_pc, "warp_invalid_pc"},
    {ExceptionKind::warp_hardware_stack_overflow, "warp_hardware_stack_overflow"},
    {ExceptionKind::device_illegal_address, "device_illegal_address"},
    {ExceptionKind::lane_misaligned_address, "lane_misaligned_address"},
    {ExceptionKind::warp_assert, "warp_assert"},
    {ExceptionKind::lane_syscall_error, "lane_syscall_error"},
    {ExceptionKind::warp_illegal_address, "warp_illegal_address"},
    {ExceptionKind::lane_nonmigratable_atomsys, "lane_nonmigratable_atomsys"},
    {ExceptionKind::lane_invalid_atomsys, "lane_invalid_atomsys"},
    {ExceptionKind::cluster_out_of_range_address, "cluster_out_of_range_address"},
    {ExceptionKind::cluster_block_not_present, "cluster_block_not_present"},
    {ExceptionKind::warp_stack_canary, "warp_stack_canary"},
    {ExceptionKind::warp_tmem_access_check, "warp_tmem_access_check"},
    {ExceptionKind::warp_tmem_leak, "warp_tmem_leak"},
    {ExceptionKind::warp_call_requires_newer_driver, "warp_call_requires_newer_driver"},
    {ExceptionKind::unknown, "unknown"},
}};

using Triple = std::array<std::uint32_t, 3>;

// Where warps of a dump taken on request wait: one PC, with how many warps and lanes sit there.
struct WaitingPc {
  std::string kernel;
  std::string function;           // the function holding pc (a device function may differ from the kernel)
  std::uint64_t offset = 0;       // pc - the function's first instruction
  std::string file;
  std::optional<std::uint32_t> line;
  std::uint32_t warps = 0;
  std::uint32_t lanes = 0;
};

struct FaultSite {
  std::string dump;               // the dump file: its kept path, or its name in the run's scratch folder
  std::uint64_t dump_bytes = 0;
  double read_ms = 0.0;           // reading and analysing it
  bool kept = false;              // --keep-dumps: the file was kept at `dump`
  std::string unreadable;         // set: the dump could not be read (why); only dump* and read_ms besides

  std::string device;             // "NVIDIA H100 80GB HBM3"
  std::string exception;          // "Warp Illegal Address"; empty when the dump records none (taken on request)
  ExceptionKind exception_id = ExceptionKind::none;  // none when the dump records no exception
  std::string kernel;             // demangled
  std::optional<Triple> grid, block_dim;
  std::string function;           // the function holding the PC
  std::uint64_t function_offset = 0;
  std::optional<std::uint64_t> pc;
  std::string file;               // source file of the PC; empty without line information
  std::optional<std::uint32_t> line;
  std::string line_note;          // why there is no line ("no line information: build with -lineinfo")
  std::uint32_t faulting_warps = 0, faulting_lanes = 0, faulting_blocks = 0;
  std::optional<Triple> block, thread;  // the first faulting thread
  std::string thread_note;        // why there is none (the SM reports the exception, its warp had exited)

  std::string instruction;        // the faulting instruction (nvdisasm), when decoded
  AddressStatus address_status = AddressStatus::not_attempted;
  AccessKind access = AccessKind::none;
  unsigned access_bytes = 0;
  std::optional<std::uint64_t> address;  // proven only
  unsigned alignment = 0;         // of the proven address
  std::string address_note;       // why not proven, what is intact
  std::string placement;          // the proven address among the program's allocations ("4 bytes past the end of #3 (4096 bytes)")
  AllocationOrigin allocated_at;  // where that allocation was made (empty: not known)
  // Not written: the proven address of each lane of the first thread's warp (a warp-level
  // exception does not say which lane faulted; placing them among the allocations does).
  struct LaneAddress {
    Triple block, thread;
    std::uint64_t address = 0;
  };
  std::vector<LaneAddress> lane_addresses;

  std::vector<WaitingPc> waiting; // a dump without exception: where the warps wait, most warps first
  std::vector<std::string> notes;
};

// The one-line summary: "Warp Illegal Address in touch(float*, int) at uaf.cu:4, thread
// (128,0,0) of block (8,0,0): read 4 bytes at 0x7f..: 8704 bytes into allocation #0 ...".
std::string site_line(const FaultSite& s);
// "(128,0,0)".
std::string triple_text(const Triple& t);
// "0x1f00", and back (a JsonReader failure naming `p` unless it is one).
std::string hex(std::uint64_t v);
class JsonReader;
std::uint64_t read_hex(const JsonReader& rd, const nlohmann::ordered_json& v, const std::string& p);
// The first waiting PC of a hang: "wait_flag(int volatile*) at hang.cu:4 (1 of 1 warps)".
std::string waiting_line(const FaultSite& s);

nlohmann::ordered_json to_json(const FaultSite& s);
FaultSite read_fault_site(const JsonReader& rd, const nlohmann::ordered_json& j, const std::string& pointer);

}  // namespace cudadiag::report
