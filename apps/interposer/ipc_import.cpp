#include "apps/interposer/ipc_import.h"

#include <unistd.h>

#include <cstdint>

#include "apps/interposer/alloc_site.h"
#include "apps/interposer/debug_log.h"
#include "apps/interposer/driver_calls.h"
#include "apps/interposer/ipc_export.h"
#include "apps/interposer/ipc_server.h"
#include "apps/interposer/process.h"
#include "apps/interposer/small_table.h"
#include "apps/interposer/timed_call.h"
#include "apps/interposer/tracked_ranges.h"

namespace cudadiag::interposer {
namespace {

struct Import {
  std::int32_t pid = 0;  // the handle's
  std::uint64_t nonce = 0;
  std::uint64_t exporter_address = 0;
  std::uint64_t seq = 0;
  std::uint64_t address = 0;  // here
  std::uint64_t reserved_begin = 0;
  std::uint64_t reserved_size = 0;
  std::uint64_t mapped_begin = 0;
  std::uint64_t mapped_size = 0;
  RecordRef record;
  int references = 0;
};

constinit SmallTable<Import> g_imports;
SmallTable<Import>& imports() { return held_across_fork<&g_imports>(); }

bool same_buffer(const Import& i, const FencedIpcHandle& h) {
  return i.pid == h.pid && i.nonce == h.nonce && i.exporter_address == h.address && i.seq == h.seq;
}

// A failed step: recorded, and the error the program gets.
CUresult failed(ring::IpcStep step, std::int32_t result, CUresult answer, const FencedIpcHandle& h) {
  record_ipc_failure(step, result, h.seq, h.pid);
  return answer;
}

bool reply_is_sane(const IpcReply& r) {
  return r.mapped_size > 0 && r.offset <= r.mapped_size && r.bytes <= r.mapped_size - r.offset &&
         (r.side == static_cast<std::int32_t>(ring::Side::back) || r.side == static_cast<std::int32_t>(ring::Side::front));
}

std::uint64_t granularity_of(const DriverCalls& d, int device) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  size_t g = 0;
  return d.mem_get_allocation_granularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS ? g : 0;
}

void record_import(const FencedIpcHandle& h, const IpcReply& reply, ring::Api api, const CallPlace& where, Import& i,
                   std::uint64_t guard_begin, std::uint64_t guard_end) {
  RingWriter* ring = recorder();
  if (!ring) return;
  ring->add(&ring::Header::ipc_imports, 1);
  AllocationEvent e;
  e.address = i.address;
  e.bytes = reply.bytes;
  e.mapped_begin = i.mapped_begin;
  e.mapped_end = i.mapped_begin + i.mapped_size;
  e.guard_begin = guard_begin;
  e.guard_end = guard_end;
  e.guard_wanted = guard_end - guard_begin;
  e.api = api;
  e.side = static_cast<ring::Side>(reply.side);
  e.context = where.context;
  e.device = where.device;
  e.origin_pid = h.pid;
  e.origin_seq = h.seq;
  e.site = capture_allocation_site(*ring);
  i.record = ring->add_allocation(e);
}

}  // namespace

CUresult open_fenced_import(const FencedIpcHandle& h, ring::Api api, CUdeviceptr* out) noexcept {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (imports().change([&](const Import& i) { return same_buffer(i, h); },
                       [&](Import& i) {
                         ++i.references;
                         *out = i.address;
                       }))
    return CUDA_SUCCESS;
  const DriverCalls* d = driver_calls();
  if (!d || !d->can_fence() || !d->mem_import_from_shareable_handle)
    return failed(ring::IpcStep::import_fd, CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED, h);
  const CallPlace where = current_place();
  if (where.device < 0)
    return failed(ring::IpcStep::no_context, CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_CONTEXT, h);

  IpcReply reply;
  int error = 0;
  const int fd = request_ipc_memory(h, reply, error);
  if (fd < 0) {
    if (error != 0) return failed(ring::IpcStep::connect, error, CUDA_ERROR_INVALID_VALUE, h);
    return failed(reply.status == kIpcUnknownBuffer ? ring::IpcStep::refused : ring::IpcStep::export_fd, reply.status,
                  CUDA_ERROR_INVALID_VALUE, h);
  }
  if (!reply_is_sane(reply)) {
    close(fd);
    return failed(ring::IpcStep::refused, kIpcUnknownBuffer, CUDA_ERROR_INVALID_VALUE, h);
  }
  CUmemGenericAllocationHandle memory = 0;
  CUresult rc = d->mem_import_from_shareable_handle(&memory, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                                                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  close(fd);
  if (rc != CUDA_SUCCESS) return failed(ring::IpcStep::import_fd, rc, rc, h);

  // A guard as the exporter's buffer would get here (CUDADIAG_GUARD, within the bound on
  // one buffer's guard), on the side the exporter's guard sits. Imports are few: the bound
  // on all guards is left to the process's own buffers.
  const std::uint64_t gran = granularity_of(*d, where.device);
  const std::uint64_t guard =
      gran == 0 ? 0 : fence::guard_size(fence::wanted_guard(reply.mapped_size, gran, settings().guard), gran, 0);
  const bool front = reply.side == static_cast<std::int32_t>(ring::Side::front);
  Import i;
  i.pid = h.pid;
  i.nonce = h.nonce;
  i.exporter_address = h.address;
  i.seq = h.seq;
  i.mapped_size = reply.mapped_size;
  i.reserved_size = fence::reserved_size(reply.mapped_size, guard);
  i.references = 1;
  CUdeviceptr base = 0;
  rc = gran == 0 ? CUDA_ERROR_NOT_SUPPORTED
                 : timed(ring::DriverCall::address_reserve,
                         [&] { return d->mem_address_reserve(&base, i.reserved_size, 0, 0, 0); });
  if (rc != CUDA_SUCCESS) {
    timed(ring::DriverCall::release, [&] { return d->mem_release(memory); });
    return failed(ring::IpcStep::reserve, rc, rc, h);
  }
  i.reserved_begin = base;
  i.mapped_begin = front ? base + guard : base;
  rc = timed(ring::DriverCall::map, [&] { return d->mem_map(i.mapped_begin, i.mapped_size, 0, memory, 0); });
  // Mapped, the memory stays until it is unmapped: the handle is not needed any more.
  timed(ring::DriverCall::release, [&] { return d->mem_release(memory); });
  if (rc == CUDA_SUCCESS) {
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = where.device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    rc = timed(ring::DriverCall::set_access, [&] { return d->mem_set_access(i.mapped_begin, i.mapped_size, &access, 1); });
    if (rc != CUDA_SUCCESS) {
      timed(ring::DriverCall::unmap, [&] { return d->mem_unmap(i.mapped_begin, i.mapped_size); });
      timed(ring::DriverCall::address_free, [&] { return d->mem_address_free(base, i.reserved_size); });
      return failed(ring::IpcStep::set_access, rc, rc, h);
    }
  } else {
    timed(ring::DriverCall::address_free, [&] { return d->mem_address_free(base, i.reserved_size); });
    return failed(ring::IpcStep::map, rc, rc, h);
  }
  i.address = i.mapped_begin + reply.offset;
  const std::uint64_t guard_begin = front ? base : i.mapped_begin + i.mapped_size;
  record_import(h, reply, api, where, i, guard_begin, guard_begin + guard);
  Tracked t;
  t.address = i.address;
  t.bytes = reply.bytes;
  t.reserved_begin = i.reserved_begin;
  t.reserved_size = i.reserved_size;
  t.mapped_begin = i.mapped_begin;
  t.mapped_size = i.mapped_size;
  t.device = where.device;
  t.record = i.record;
  t.api = api;
  t.kind = Tracked::Kind::imported;
  tracked_ranges().insert(t);
  imports().add(i);
  debug_log("%s: process %d's fenced allocation #%llu (%llu bytes) mapped at %#llx", ring::api_name(api),
            static_cast<int>(h.pid), static_cast<unsigned long long>(h.seq),
            static_cast<unsigned long long>(reply.bytes), static_cast<unsigned long long>(i.address));
  *out = i.address;
  return CUDA_SUCCESS;
}

bool close_fenced_import(CUdeviceptr address, CUresult& rc) noexcept {
  Import i;
  if (!imports().change([&](const Import& x) { return x.address == address; },
                        [&](Import& x) {
                          --x.references;
                          i = x;
                        }))
    return false;
  rc = CUDA_SUCCESS;
  if (i.references > 0) return true;
  imports().remove([&](const Import& x) { return x.address == address && x.references <= 0; },
                   [](const Import&) {});
  tracked_ranges().remove(address);
  const DriverCalls& d = *driver_calls();
  // Work queued before the close may still use the memory: waited for, as a free does.
  rc = timed(ring::DriverCall::ctx_synchronize, [&] { return d.ctx_synchronize(); });
  if (rc == CUDA_ERROR_INVALID_CONTEXT) rc = CUDA_SUCCESS;
  const CUresult unmapped = timed(ring::DriverCall::unmap, [&] { return d.mem_unmap(i.mapped_begin, i.mapped_size); });
  if (unmapped == CUDA_SUCCESS)
    timed(ring::DriverCall::address_free, [&] { return d.mem_address_free(i.reserved_begin, i.reserved_size); });
  if (rc == CUDA_SUCCESS) rc = unmapped;
  if (RingWriter* ring = recorder())
    ring->set_state(i.record, unmapped == CUDA_SUCCESS ? ring::State::released : ring::State::freed_unguarded,
                    ring::Api::cuIpcCloseMemHandle);
  return true;
}

}  // namespace cudadiag::interposer
