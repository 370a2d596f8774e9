#include "run/ring_text.h"

#include <cinttypes>
#include <cstdio>
#include <type_traits>

#include "util/printable.h"
#include "util/hex.h"

namespace cudadiag::run {
namespace {

using util::hex;

const char* true_false(bool b) { return b ? "true" : "false"; }

const char* side_word(FenceSide s) {
  switch (s) {
    case FenceSide::back: return "back";
    case FenceSide::front: return "front";
    case FenceSide::none: break;
  }
  return "none";
}

void put_field(std::string& out, const char* name, const std::string& text) {
  out += ' ';
  out += name;
  out += '=';
  out += text;
}

template <class T>
void put_list_field(std::string& out, const char* name, const T& v, [[maybe_unused]] ring::Shown shown) {
  if constexpr (std::is_same_v<T, ring::Dim3>) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "(%u,%u,%u)", v[0], v[1], v[2]);
    put_field(out, name, buf);
  } else {
    put_field(out, name, shown == ring::Shown::hex ? hex(static_cast<std::uint64_t>(v)) : std::to_string(v));
  }
}

}  // namespace

// `out` and `r` name the line and the record in each expansion.
#define CUDADIAG_RING_PUT(type, name, initial, shown) put_list_field(out, #name, r.name, ring::Shown::shown);

std::string allocation_line(const AllocationRecord& r) {
  std::string out = "allocation seq=" + std::to_string(r.seq);
  CUDADIAG_RING_ALLOCATION_FIELDS(CUDADIAG_RING_PUT, CUDADIAG_RING_SKIP)
  put_field(out, "side", side_word(r.side));
  put_field(out, "freed", true_false(r.freed));
  put_field(out, "released", true_false(r.quarantine_released));
  put_field(out, "api", r.api);
  put_field(out, "reason", r.unfenced_reason);
  return out;
}

std::string launch_line(const LaunchRecord& r) {
  std::string out = "launch seq=" + std::to_string(r.seq);
  put_field(out, "kernel", printable(r.kernel));
  CUDADIAG_RING_LAUNCH_FIELDS(CUDADIAG_RING_PUT, CUDADIAG_RING_SKIP)
  put_field(out, "api", r.api);
  put_field(out, "returned", true_false(r.returned));
  std::string args;
  for (const auto p : r.pointer_args) {
    if (!args.empty()) args += ',';
    args += hex(p);
  }
  put_field(out, "pointer_args", args);
  return out;
}

std::string tma_map_line(const TmaMapRecord& r) {
  std::string out = "tma_map seq=" + std::to_string(r.seq);
  put_field(out, "api", r.api);
  CUDADIAG_RING_TMA_FIELDS(CUDADIAG_RING_PUT, CUDADIAG_RING_SKIP)
  put_field(out, "fenced", true_false(r.in_fenced));
  put_field(out, "near_guard", true_false(r.near_guard));
  put_field(out, "past_buffer", true_false(r.past_buffer));
  return out;
}

std::string slack_write_line(const SlackWriteRecord& r) {
  std::string out = "slack_write";
  CUDADIAG_RING_SLACK_WRITE_FIELDS(CUDADIAG_RING_PUT, CUDADIAG_RING_SKIP)
  return out + " " + r.seen_at;
}

std::string ipc_failure_line(const IpcFailureRecord& r) {
  std::string out = "ipc_failure";
  CUDADIAG_RING_IPC_FAILURE_FIELDS(CUDADIAG_RING_PUT, CUDADIAG_RING_SKIP)
  return out + " " + r.what;
}

std::string process_line(const ProcessIdentity& r) {
  std::string out = "process";
  CUDADIAG_RING_IDENTITY_FIELDS(CUDADIAG_RING_PUT, CUDADIAG_RING_SKIP)
  put_field(out, "rank_from", r.rank_from);
  put_field(out, "local_rank_from", r.local_rank_from);
  put_field(out, "world_size_from", r.world_size_from);
  put_field(out, "exe", printable(r.exe));
  return out;
}

std::string device_line(const DeviceIdentity& r) {
  std::string out = "device";
  CUDADIAG_RING_DEVICE_FIELDS(CUDADIAG_RING_PUT, CUDADIAG_RING_SKIP)
  put_field(out, "uuid", r.uuid);
  put_field(out, "pci_bus_id", printable(r.pci_bus_id));
  return out;
}

#undef CUDADIAG_RING_PUT

}  // namespace cudadiag::run
