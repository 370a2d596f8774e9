#pragma once
// TMA on the device: the real cuTensorMapEncodeTiled (through the driver entry point,
// no libcuda link) and a kernel that loads every box of a tensor with
// cp.async.bulk.tensor into shared memory (mbarrier completion) and copies each box's
// shared-memory bytes unchanged to global memory for the host to check
// (lib/tma/load_reference.h says what they must hold).
//
// Plain C++ header: no CUDA headers beyond the runtime's, no fmt/json.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/runtime/gpu_runtime.h"

namespace cudadiag::gpu::tma {

// Up to 8 dimensions so that a rank the driver must reject (6) can still be passed.
inline constexpr unsigned kSpecMaxRank = 8;

// A tiled descriptor in the driver's terms (enum fields as their CUDA numbers).
struct TiledSpec {
  int data_type = 0;
  unsigned rank = 0;
  std::uint64_t dims[kSpecMaxRank] = {};
  std::uint64_t strides[kSpecMaxRank] = {};  // rank-1 entries used
  std::uint32_t box[kSpecMaxRank] = {};
  std::uint32_t element_strides[kSpecMaxRank] = {};
  int interleave = 0;
  int swizzle = 0;
  int l2_promotion = 0;
  int oob_fill = 0;
};

struct DeviceInfo {
  bool usable = false;
  int count = 0;
  int cc_major = 0;
  int cc_minor = 0;
  std::string name;
  std::string error;  // why not usable: "cudaErrorNoDevice: no CUDA-capable device is detected"
};
// cudaGetDeviceCount + properties of `ordinal`; never throws.
DeviceInfo probe_device(int ordinal);

// cuTensorMapEncodeTiled on `global_address`; returns the CUresult (0 = success) and
// writes the 128-byte CUtensorMap to map128 (64-byte aligned storage). Throws CudaError
// when the driver does not provide the function.
int encode_tiled(const TiledSpec& s, void* global_address, void* map128);

// Allocates `bytes` (+ 256) in the session as buffer `name` and returns a pointer
// `address_offset % 256` bytes past a 256-byte aligned address: keeps the alignment a
// printout's gmem_address had.
void* offset_buffer(Session& s, const std::string& name, std::uint64_t bytes, std::uint64_t address_offset);

struct LoadRequest {
  TiledSpec spec;
  std::uint64_t address_offset = 0;       // alignment of globalAddress (mod 256)
  std::vector<std::uint8_t> source;       // source_bytes of random data
  std::uint64_t boxes = 0;
  std::uint64_t box_bytes = 0;
  std::vector<std::uint32_t> box_counts;  // boxes along each dimension (rank entries)
};

struct LoadRun {
  int encode_result = 0;           // CUresult of the encode; the kernel ran only when 0
  bool launched = false;
  std::vector<std::uint8_t> boxes;  // boxes * box_bytes bytes, box after box
  unsigned grid = 0;
  unsigned block = 0;
  std::uint64_t dynamic_smem = 0;
};

// Encodes, poisons the output, launches the load kernel for the rank (1..5), copies the
// boxes back. Requires compute capability 9.0+ (the caller checks). Throws CudaError on
// any CUDA failure other than the encode's.
LoadRun run_tiled_load(Session& s, const LoadRequest& req);

}  // namespace cudadiag::gpu::tma
