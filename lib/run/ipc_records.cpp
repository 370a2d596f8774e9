#include "run/ipc_records.h"

#include <fmt/format.h>

namespace cudadiag::run {
namespace {

std::string exporter_text(const AllocationRecord& a) {
  std::string s = fmt::format("process {}'s allocation #{}", a.origin_pid, a.origin_seq);
  if (!a.import || !a.import->exporter_found) return s + " (not in that process's records)";
  const IpcImport& i = *a.import;
  return s + fmt::format(" ({} bytes from {}{})", i.bytes, i.api.empty() ? "an unknown call" : i.api,
                         i.freed ? ", freed by then" : "");
}

bool importing_step(const std::string& what) {
  return what != ring::ipc_step_text(ring::IpcStep::server) && what != ring::ipc_step_text(ring::IpcStep::export_fd);
}

}  // namespace

std::string size_text(std::uint64_t bytes) {
  constexpr std::uint64_t kMiB = 1u << 20, kGiB = 1u << 30, kTiB = 1ull << 40;
  if (bytes >= kTiB && bytes % (kTiB / 2) == 0) return fmt::format("{:g} TiB", static_cast<double>(bytes) / kTiB);
  if (bytes >= kGiB && bytes % (kGiB / 2) == 0) return fmt::format("{:g} GiB", static_cast<double>(bytes) / kGiB);
  if (bytes >= kMiB && bytes % (kMiB / 2) == 0) return fmt::format("{:g} MiB", static_cast<double>(bytes) / kMiB);
  return fmt::format("{} bytes", bytes);
}

std::string mapping_origin_text(const AllocationRecord& a) {
  if (a.origin_pid != 0) {
    const std::string by = a.import && a.import->importer_pid ? fmt::format(" by process {}", a.import->importer_pid)
                                                                : std::string();
    return "imported over CUDA IPC" + by + " from " + exporter_text(a);
  }
  if (a.unfenced_reason == ring::unfenced_text(ring::Unfenced::program_mapped))
    return "memory the program mapped itself with " + a.api + ", " + size_text(a.bytes);
  if (a.unfenced_reason == ring::unfenced_text(ring::Unfenced::ipc_imported))
    return "imported over CUDA IPC with the driver's own handle (its exporter had not fenced it)" +
           (a.bytes ? ", " + size_text(a.bytes) : std::string());
  return "";
}

std::string ipc_failure_text(const IpcFailureRecord& f) {
  const std::string buffer = fmt::format("allocation #{}", f.allocation_seq);
  if (importing_step(f.what)) {
    const std::string whose = f.peer_pid ? fmt::format("process {}'s {}", f.peer_pid, buffer) : buffer;
    return fmt::format("CUDA IPC: process {} could not map {}: {} (result {}); the program got an error", f.pid, whose,
                       f.what, f.result);
  }
  return fmt::format("CUDA IPC: process {} could not hand out its fenced {}: {} (result {}); the program got the "
                     "driver's answer for VMM memory",
                     f.pid, buffer, f.what, f.result);
}

}  // namespace cudadiag::run
