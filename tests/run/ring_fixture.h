#pragma once
// Ring files for the reader's tests, written by the interposer's own writer
// (apps/interposer/ring_writer.cpp is compiled into the test).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "apps/interposer/ring_writer.h"
#include "tests/support/temp_dir.h"

namespace cudadiag::test {

// A writer attached to `file` for the scope of a test (the interposer's writers live as
// long as the process and have no destructor).
class ScopedWriter {
 public:
  ScopedWriter(const std::filesystem::path& file, const ring::Capacities& limits,
               const interposer::RingSettings& settings = {}) {
    const char* why = "";
    attached_ = w_.attach(file.c_str(), limits, settings, interposer::RingOpen::shared, &why);
    why_ = why;
  }
  ~ScopedWriter() { w_.detach(); }
  ScopedWriter(const ScopedWriter&) = delete;
  ScopedWriter& operator=(const ScopedWriter&) = delete;
  bool attached() const { return attached_; }
  const std::string& why() const { return why_; }
  interposer::RingWriter& operator*() { return w_; }
  interposer::RingWriter* operator->() { return &w_; }

 private:
  interposer::RingWriter w_;
  bool attached_ = false;
  std::string why_;
};

inline ring::Capacities small_limits(std::uint32_t allocations, std::uint32_t launches,
                                           std::uint32_t names = 4096, std::uint32_t tma_maps = 4) {
  ring::Capacities l = ring::kDefaultCapacities;
  l.allocations = allocations;
  l.launches = launches;
  l.tma_maps = tma_maps;
  l.name_bytes = names;
  l.sites = 8;
  l.modules = 8;
  return l;
}

inline interposer::AllocationEvent fenced_event(std::uint64_t address, std::uint64_t bytes) {
  interposer::AllocationEvent e;
  e.address = address;
  e.bytes = bytes;
  e.mapped_begin = address & ~0x1fffffull;
  e.mapped_end = e.mapped_begin + 0x200000;
  e.guard_begin = e.mapped_end;
  e.guard_end = e.mapped_end + 0x200000;
  e.guard_wanted = 0x200000;  // a one-granule mapping asks for one granule of guard
  e.api = ring::Api::cuMemAlloc_v2;
  e.side = ring::Side::back;
  e.device = 0;
  return e;
}

// A 2-D float tensor of 1000 elements a row, encoded at `address` inside the buffer of
// fenced_event(0x7f32309ff060, 4000); `near_guard` says what the interposer found.
inline interposer::TmaEvent tma_event(std::uint64_t address, bool near_guard) {
  interposer::TmaEvent e;
  e.api = ring::Api::cuTensorMapEncodeTiled;
  e.address = address;
  e.span_bytes = 4000;
  e.allocation_address = 0x7f32309ff060;
  e.allocation_bytes = 4000;
  e.mapped_after = 0x7f3230a00000 - address;
  e.data_type = 7;  // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
  e.rank = 2;
  e.flags = ring::kTmaInFenced;
  if (near_guard) e.flags |= ring::kTmaNearGuard | ring::kTmaPastBuffer;
  return e;
}

inline interposer::LaunchEvent launch_event(interposer::RingWriter& w, const std::string& name, std::uint64_t arg) {
  interposer::LaunchEvent e;
  e.function = 0xf00d;
  e.stream = 0x5;
  e.grid[0] = 8;
  e.block[0] = 128;
  e.dynamic_smem = 1024;
  e.api = ring::Api::cuLaunchKernel_ptsz;
  e.name = w.add_name(name.c_str(), static_cast<std::uint32_t>(name.size()));
  e.name_text = name.c_str();
  e.pointer_count = 1;
  e.pointer_args[0] = arg;
  return e;
}

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace cudadiag::test
