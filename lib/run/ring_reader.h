#pragma once
// Reads back what the interposer recorded in a program (lib/fence/ring_format.h), after
// the program ended however it ended. Never throws on bad input: a missing file (the
// interposer never loaded), an empty or foreign file, a file cut short, and records
// being written when the process died each give a clear status and whatever could be read.
// The work is bounded by the bytes present and by the layout the header declares (record
// counts no larger than the interposer writes): a file is read through a window of 1 MiB,
// only the record slots present in it are visited, and each kernel name is demangled once
// (64 KiB at most a name, 16 MiB of names in all). A link, a FIFO or a device is not read.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "run/allocation.h"

namespace cudadiag::run {

enum class RingStatus : std::uint8_t {
  ok,
  missing,      // no file: the interposer never loaded (or CUDADIAG_RING never reached it)
  empty,        // a file of zero bytes: created, never written by an interposer
  incomplete,   // the header was being laid out when the process died
  truncated,    // the header is intact, records past the end of the file are lost
  no_room,      // the header only: no room for the records (the counters and events are there)
  bad_magic,    // not a ring file
  bad_version,  // a ring file of another format version or layout
  unreadable,   // the file exists but cannot be read
};

const char* ring_status_name(RingStatus s);

// One kind of driver call the interposer made on its own behalf, and the time it took.
struct DriverCallCost {
  std::string name;  // "cuMemCreate", ..., "kernel_lookup"
  std::uint64_t calls = 0;
  std::uint64_t nanoseconds = 0;
};

struct RingRead {
  RingStatus status = RingStatus::missing;
  std::string message;              // one line naming the file and what is wrong; empty when ok
  InterposerLog log;                // what could be read (summary.loaded = false when nothing)
  std::int32_t owner_pid = 0;       // the process that recorded here
  std::uint32_t processes_loaded = 0;
  std::uint32_t other_cuda_processes = 0;  // they recorded into "<file>.<pid>" (process_ring_files)
  std::uint64_t torn_records = 0;   // records being written when the process died (counted as dropped)
  // What the fence cost: its own driver calls, and how often freed buffers' memory and
  // address ranges served new ones.
  std::vector<DriverCallCost> driver_calls;
  std::uint64_t handles_reused = 0;
  std::uint64_t reservations_reused = 0;

  // The log can be used: ok, truncated with its header intact, or a header without room
  // for records (its counters and process events).
  bool readable() const {
    return status == RingStatus::ok || status == RingStatus::truncated || status == RingStatus::no_room;
  }
};

RingRead read_ring(const std::filesystem::path& file);
// The same from bytes already read; `origin` names them in messages.
RingRead parse_ring(std::string_view bytes, const std::string& origin);

// The per-process files "<file>.<pid>" next to `file`, by pid.
std::vector<std::filesystem::path> process_ring_files(const std::filesystem::path& file);

}  // namespace cudadiag::run
