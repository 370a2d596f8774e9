// Fenced memory is made exportable as a POSIX file descriptor where the device supports
// it (exportable_memory.h), so that CUDA IPC of a fenced buffer works; on the in-memory
// driver of fake_vmm.h (devices 0 and 1 support such handles, 2 does not).
#include <catch2/catch.hpp>

#include "apps/interposer/exportable_memory.h"
#include "apps/interposer/fence_memory.h"
#include "apps/interposer/reuse_cache.h"
#include "fake_vmm.h"

using namespace cudadiag::interposer;
using cudadiag::test::fake_driver_calls;
using cudadiag::test::fake_vmm;

namespace {

// The handle types each of `device`'s buffers was created with (fresh memory each time).
std::uint64_t created_with(int device) {
  release_kept_memory(fake_driver_calls());
  kept_ranges().drain(fake_driver_calls());
  fake_vmm().reset();
  FencedMemory m;
  FenceFailure why;
  REQUIRE(map_fenced(fake_driver_calls(), device, 4000, 16, cudadiag::fence::Side::back, cudadiag::fence::GuardMode::scaled, m, why));
  const auto creates = fake_vmm().of("create");
  REQUIRE(creates.size() == 1);
  unmap_fenced(fake_driver_calls(), device, m.layout.mapped_begin, m.layout.mapped_size, m.handle, 0);
  give_back_range(fake_driver_calls(), m.layout.reserved_begin, m.layout.reserved_size, m.layout.guard_size());
  return creates[0].handle_types;
}

}  // namespace

TEST_CASE("exportable memory: a POSIX file descriptor where the device supports one", "[exportable_memory]") {
  CHECK(exportable_handle_type(fake_driver_calls(), 0) == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CHECK(exportable_handle_type(fake_driver_calls(), 2) == CU_MEM_HANDLE_TYPE_NONE);
  CHECK(exportable_handle_type(fake_driver_calls(), -1) == CU_MEM_HANDLE_TYPE_NONE);
  CHECK(exportable_handle_type(fake_driver_calls(), 1 << 20) == CU_MEM_HANDLE_TYPE_NONE);

  // Fenced memory is created so, GPUDirect RDMA or not.
  CHECK(created_with(0) == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CHECK(created_with(1) == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CHECK(created_with(2) == CU_MEM_HANDLE_TYPE_NONE);
  // An RDMA creation the driver refuses is retried without RDMA, still exportable.
  release_kept_memory(fake_driver_calls());
  fake_vmm().reset();
  fake_vmm().failures.push_back({"create", CUDA_ERROR_NOT_SUPPORTED});
  FencedMemory m;
  FenceFailure why;
  REQUIRE(map_fenced(fake_driver_calls(), 1, 4000, 16, cudadiag::fence::Side::back, cudadiag::fence::GuardMode::scaled, m, why));
  const auto creates = fake_vmm().of("create");
  REQUIRE(creates.size() == 2);
  CHECK(creates[0].rdma);
  CHECK_FALSE(creates[1].rdma);
  CHECK(creates[1].handle_types == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  unmap_fenced(fake_driver_calls(), 1, m.layout.mapped_begin, m.layout.mapped_size, m.handle, 0);
  give_back_range(fake_driver_calls(), m.layout.reserved_begin, m.layout.reserved_size, m.layout.guard_size());
  fake_vmm().reset();
}
