#include "apps/interposer/launch_recorder.h"

#include <cstring>

#include "apps/interposer/device_record.h"
#include "apps/interposer/driver_calls.h"
#include "apps/interposer/kernel_info.h"
#include "apps/interposer/process.h"
#include "apps/interposer/tracked_ranges.h"

namespace cudadiag::interposer {
namespace {

// The packed argument buffer of a launch that passes its arguments through `extra`.
const unsigned char* packed_arguments(void** extra, size_t& size) {
  size = 0;
  const unsigned char* buffer = nullptr;
  for (int i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END && i < 16; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = static_cast<const unsigned char*>(extra[i + 1]);
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1]) size = *static_cast<const size_t*>(extra[i + 1]);
  }
  return buffer;
}

// Arguments of pointer size whose value lies inside a known allocation: the candidates
// are read first, then looked up together under one lock.
void find_pointer_args(const LaunchArgs& a, const KernelInfo& k, LaunchEvent& e) {
  size_t packed_size = 0;
  const unsigned char* packed = a.params ? nullptr : packed_arguments(a.extra, packed_size);
  if (!a.params && !packed) return;
  std::uint64_t candidates[KernelInfo::kMaxParams];
  std::size_t n = 0;
  for (int i = 0; i < k.param_count; ++i) {
    if (k.param_size[i] != sizeof(std::uint64_t)) continue;
    const void* where = nullptr;
    if (a.params) {
      where = a.params[i];
    } else if (k.param_offset[i] + sizeof(std::uint64_t) <= packed_size) {
      where = packed + k.param_offset[i];
    }
    if (!where) continue;
    std::uint64_t value = 0;
    std::memcpy(&value, where, sizeof value);
    if (value != 0) candidates[n++] = value;
  }
  if (n == 0) return;
  n = tracked_ranges().keep_known(candidates, n);
  for (std::size_t i = 0; i < n && e.pointer_count < ring::kMaxPointerArgs; ++i)
    e.pointer_args[e.pointer_count++] = candidates[i];
}

}  // namespace

void launch_finished(std::uint64_t seq) noexcept {
  if (seq == kNoLaunch) return;
  if (RingWriter* ring = recorder()) ring->launch_returned(seq);
}

std::uint64_t record_launch(const LaunchArgs& a) noexcept {
  RingWriter* ring = recorder();
  if (!ring) return kNoLaunch;
  const KernelInfo* k = kernel_info(a.function, *ring);
  LaunchEvent e;
  e.function = reinterpret_cast<std::uint64_t>(a.function);
  e.stream = reinterpret_cast<std::uint64_t>(a.stream);
  for (int i = 0; i < 3; ++i) {
    e.grid[i] = a.grid[i];
    e.block[i] = a.block[i];
  }
  e.dynamic_smem = a.dynamic_smem;
  e.api = a.api;
  const CallPlace where = current_place();
  e.context = where.context;
  e.device = where.device;
  note_device(*ring, where.device);
  if (k) {
    e.name = k->name;
    e.name_text = k->name_prefix;
    find_pointer_args(a, *k, e);
  }
  return ring->add_launch(e);
}

}  // namespace cudadiag::interposer
