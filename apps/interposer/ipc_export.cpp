#include "apps/interposer/ipc_export.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "apps/interposer/debug_log.h"
#include "apps/interposer/ipc_server.h"
#include "apps/interposer/process.h"
#include "apps/interposer/small_table.h"

namespace cudadiag::interposer {
namespace {

// A fenced buffer handed out, as another process needs it.
struct ExportedBuffer {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::uint64_t mapped_begin = 0;
  std::uint64_t mapped_size = 0;
  std::uint64_t handle = 0;  // CUmemGenericAllocationHandle
  std::uint64_t seq = 0;     // its allocation record
  std::int32_t device = -1;
  ring::Side side = ring::Side::back;
  // Its memory as a file descriptor, exported by the program's thread when the handle was
  // made (the hand-over socket's thread makes no driver call): duplicated for each
  // importer, closed when the buffer is freed. -1: not exported as one (retained only).
  int fd = -1;
};

constinit SmallTable<ExportedBuffer> g_exported;
SmallTable<ExportedBuffer>& exported() { return held_across_fork<&g_exported>(); }

ExportedBuffer exported_of(const Tracked& t) {
  ExportedBuffer b;
  b.address = t.address;
  b.bytes = t.bytes;
  b.mapped_begin = t.mapped_begin;
  b.mapped_size = t.mapped_size;
  b.handle = t.handle;
  b.seq = t.record.seq;
  b.device = t.device;
  b.side = settings().side;
  return b;
}

bool same_buffer(const ExportedBuffer& b, const Tracked& t) { return b.address == t.address; }

// Its memory as a file descriptor that no exec'd program inherits.
CUresult export_fd(const DriverCalls& d, std::uint64_t handle, int& fd) {
  if (!d.mem_export_to_shareable_handle) return CUDA_ERROR_NOT_SUPPORTED;
  const CUresult rc = d.mem_export_to_shareable_handle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (rc == CUDA_SUCCESS) fcntl(fd, F_SETFD, FD_CLOEXEC);
  return rc;
}

// Kept in the table (added, or its file descriptor set); false when the table cannot grow.
bool keep(const Tracked& t, int& fd) {
  if (exported().change([&](const ExportedBuffer& b) { return same_buffer(b, t); },
                        [&](ExportedBuffer& b) {
                          if (b.fd >= 0 || fd < 0) return;
                          b.fd = fd;
                          fd = -1;
                        }))
    return true;
  ExportedBuffer b = exported_of(t);
  b.fd = fd;
  if (!exported().add(b)) return false;
  fd = -1;
  if (RingWriter* ring = recorder()) ring->add(&ring::Header::ipc_exports, 1);
  return true;
}

}  // namespace

bool mark_exported(const Tracked& t) noexcept {
  int none = -1;
  return keep(t, none);
}

bool make_ipc_handle(const Tracked& t, CUipcMemHandle& out) noexcept {
  // Its memory must export: done here, on the program's thread, so that a buffer that
  // cannot be handed over fails at the exporter's call, as the driver's own would.
  ExportedBuffer known;
  const bool has_fd = exported().find([&](const ExportedBuffer& b) { return same_buffer(b, t) && b.fd >= 0; }, known);
  int fd = -1;
  if (!has_fd) {
    const DriverCalls* d = driver_calls();
    const CUresult rc = d ? export_fd(*d, t.handle, fd) : CUDA_ERROR_NOT_INITIALIZED;
    if (rc != CUDA_SUCCESS) {
      record_ipc_failure(ring::IpcStep::export_fd, static_cast<std::int32_t>(rc), t.record.seq, 0);
      return false;
    }
  }
  std::uint64_t nonce = 0;
  int error = 0;
  if (!ensure_ipc_server(nonce, error) || !keep(t, fd)) {
    record_ipc_failure(ring::IpcStep::server, error ? error : ENOMEM, t.record.seq, 0);
    if (fd >= 0) close(fd);
    return false;
  }
  if (fd >= 0) close(fd);  // another thread kept one first
  FencedIpcHandle h{};
  h.magic = kIpcMagic;
  h.pid = static_cast<std::int32_t>(getpid());
  h.device = t.device;
  h.nonce = nonce;
  h.seq = t.record.seq;
  h.address = t.address;
  h.bytes = t.bytes;
  h.offset = t.address - t.mapped_begin;
  h.mapped_size = t.mapped_size;
  out = as_driver_handle(h);
  debug_log("cuIpcGetMemHandle: fenced allocation #%llu (%llu bytes at %#llx) handed out",
            static_cast<unsigned long long>(h.seq), static_cast<unsigned long long>(h.bytes),
            static_cast<unsigned long long>(h.address));
  return true;
}

bool forget_export(std::uint64_t address) noexcept {
  int fds[8];
  std::size_t n = 0;
  const std::size_t removed = exported().remove([&](const ExportedBuffer& b) { return b.address == address; },
                                                [&](const ExportedBuffer& b) {
                                                  if (b.fd >= 0 && n < 8) fds[n++] = b.fd;
                                                });
  for (std::size_t i = 0; i < n; ++i) close(fds[i]);
  return removed > 0;
}

bool exported_memory(std::uint64_t handle, std::uint64_t& seq) noexcept {
  ExportedBuffer b;
  if (!exported().find([&](const ExportedBuffer& e) { return e.handle == handle; }, b)) return false;
  seq = b.seq;
  return true;
}

int answer_ipc_request(const IpcRequest& request, IpcReply& reply, std::int32_t peer_pid) noexcept {
  reply = IpcReply{};
  reply.status = kIpcUnknownBuffer;
  int fd = -1;
  // Under the table's lock: a free of the buffer waits until its descriptor was duplicated.
  exported().change(
      [&](const ExportedBuffer& b) { return b.address == request.address && b.seq == request.seq && b.fd >= 0; },
      [&](ExportedBuffer& b) {
        reply.side = static_cast<std::int32_t>(b.side);
        reply.bytes = b.bytes;
        reply.offset = b.address - b.mapped_begin;
        reply.mapped_size = b.mapped_size;
        reply.device = b.device;
        fd = fcntl(b.fd, F_DUPFD_CLOEXEC, 0);
        reply.status = fd >= 0 ? 0 : kIpcUnknownBuffer;
      });
  if (reply.status != 0) record_ipc_failure(ring::IpcStep::refused, reply.status, request.seq, peer_pid);
  return fd;
}

void record_ipc_failure(ring::IpcStep step, std::int32_t result, std::uint64_t allocation_seq,
                        std::int32_t peer_pid) noexcept {
  debug_log("CUDA IPC of fenced allocation #%llu (process %d): %s (%d)",
            static_cast<unsigned long long>(allocation_seq), static_cast<int>(peer_pid), ring::ipc_step_text(step),
            static_cast<int>(result));
  RingWriter* ring = recorder();
  if (!ring) return;
  IpcFailureEvent e;
  e.allocation_seq = allocation_seq;
  e.pid = static_cast<std::int32_t>(getpid());
  e.peer_pid = peer_pid;
  e.result = result;
  e.step = step;
  ring->add_ipc_failure(e);
}

}  // namespace cudadiag::interposer
