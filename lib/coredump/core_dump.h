#pragma once
// The tables of a GPU core dump, read from an ELF core whose `.cudbg.*` sections the
// driver writes (layout: NVIDIA's cudacoredump.h). Rows are read field by field at their
// offsets within the section's declared entry size (sh_entsize): entries grow across
// drivers, and a field beyond a row's size is unknown (nullopt), never read from the next
// row. Tables point at their parent with sh_link (the parent table's section) and sh_info
// (the parent's row); a pointer that leads nowhere makes the dump unreadable.
//
// The model is flat: each level is a vector, a child names its parent by index. Register
// files are views into the dump's bytes (the dump must outlive the CoreDump).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coredump/bytes.h"

namespace cudadiag::coredump {

struct Dim3 {
  std::uint32_t x = 0, y = 0, z = 0;
  bool operator==(const Dim3& o) const { return x == o.x && y == o.y && z == o.z; }
  bool operator<(const Dim3& o) const {
    return z != o.z ? z < o.z : y != o.y ? y < o.y : x < o.x;
  }
};
std::string to_string(const Dim3& d);  // "(x,y,z)"

struct Device {
  std::string name;      // "NVIDIA H100 80GB HBM3"
  std::string sm_type;   // "sm_90"
  std::optional<std::uint32_t> num_sms, lanes_per_warp, regs_per_lane;
  std::uint32_t instruction_size = 16;  // bytes; 16 when the field is absent or 0
};

struct Sm {
  std::size_t device = 0;
  std::uint32_t sm_id = 0;
  std::optional<std::uint32_t> exception;  // the SM's own exception report, when the entry has it
  std::optional<std::uint64_t> error_pc;   // only when the entry says it is valid
};

struct Cta {
  std::size_t sm = 0;
  std::uint64_t grid_id = 0;
  Dim3 block;
};

struct Warp {
  std::size_t cta = 0;
  std::uint32_t warp_id = 0;
  std::uint32_t valid_lanes = 0;
  std::uint32_t active_lanes = 0;
  std::optional<std::uint64_t> error_pc;  // only when errorPCValid
  Bytes uniform_registers;                // 4 bytes each
};

struct Lane {
  std::size_t warp = 0;
  std::uint32_t lane = 0;
  std::uint64_t pc = 0;  // virtual PC
  Dim3 thread;
  std::optional<std::uint32_t> exception;  // 0 = none
  Bytes registers;                         // R0.., 4 bytes each; empty when the dump has none
  std::optional<std::uint32_t> reg(std::uint32_t n) const { return registers.u32(std::uint64_t{n} * 4); }
};

struct Grid {
  std::size_t device = 0;
  std::uint64_t grid_id = 0;
  std::optional<std::uint64_t> function_entry;  // the kernel's first instruction (virtual address)
  std::optional<std::uint64_t> module_handle;
  Dim3 grid_dim, block_dim;
};

struct RelocatedImage {
  std::size_t device = 0;
  std::uint32_t module_row = 0;
  std::optional<std::uint64_t> module_handle;
  Bytes bytes;  // a cubin (ELF) whose symbols and line table carry the kernel's virtual addresses
};

struct CoreDump {
  std::vector<Device> devices;
  std::vector<Sm> sms;
  std::vector<Cta> ctas;
  std::vector<Warp> warps;
  std::vector<Lane> lanes;
  std::vector<Grid> grids;
  std::vector<RelocatedImage> images;
  std::optional<std::uint32_t> driver_major, driver_minor;  // from .cudbg.meta, when present
};

// Reads the tables; throws UnreadableDump naming what does not fit (a foreign ELF file,
// a truncated one, a table whose rows or parents are wrong).
CoreDump read_core_dump(Bytes file);

}  // namespace cudadiag::coredump
