// cuTensorMapEncodeTiled through the driver entry point, and the TMA box-load kernel.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/runtime/driver_api.h"
#include "kernels/tma/tma_device.h"

namespace cudadiag::gpu::tma {
namespace {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

constexpr unsigned kThreads = 128;
constexpr unsigned kSmemAlign = 1024;  // the 128B swizzle pattern repeats every 1024 bytes

struct BoxGrid {
  unsigned counts[5];  // boxes along each dimension
  unsigned box[5];     // coordinate step between boxes (boxDim)
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
#endif

template <int RANK>
__device__ __forceinline__ void load_box(const CUtensorMap* map, unsigned dst, unsigned bar, const int* c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
  if constexpr (RANK == 1) {
    asm volatile(
        "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];" ::"r"(dst),
        "l"(m), "r"(bar), "r"(c[0])
        : "memory");
  } else if constexpr (RANK == 2) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
            dst),
        "l"(m), "r"(bar), "r"(c[0]), "r"(c[1])
        : "memory");
  } else if constexpr (RANK == 3) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(
            dst),
        "l"(m), "r"(bar), "r"(c[0]), "r"(c[1]), "r"(c[2])
        : "memory");
  } else if constexpr (RANK == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
        "[%2];" ::"r"(dst),
        "l"(m), "r"(bar), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], "
        "[%2];" ::"r"(dst),
        "l"(m), "r"(bar), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
        : "memory");
  }
#endif
}

// One block per box (grid-stride over boxes). Thread 0 arms the mbarrier with the box's
// byte count and issues the TMA load; every thread waits on the barrier's phase, then
// the block copies the shared-memory bytes out unchanged (swizzle included).
template <int RANK>
__global__ void __launch_bounds__(kThreads)
    tma_load_boxes(const __grid_constant__ CUtensorMap map, BoxGrid grid, unsigned box_bytes, unsigned char* out,
                   unsigned long long boxes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long barrier;
  const unsigned raw = shared_address(smem_raw);
  const unsigned pad = (kSmemAlign - raw % kSmemAlign) % kSmemAlign;
  unsigned char* smem = smem_raw + pad;
  const unsigned bar = shared_address(&barrier);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
    // Make the initialised barrier visible to the async proxy (the TMA unit).
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  unsigned phase = 0;
  for (unsigned long long b = blockIdx.x; b < boxes; b += gridDim.x) {
    int c[5] = {0, 0, 0, 0, 0};
    unsigned long long rest = b;
    for (int i = 0; i < RANK; ++i) {
      c[i] = static_cast<int>((rest % grid.counts[i]) * grid.box[i]);
      rest /= grid.counts[i];
    }
    if (threadIdx.x == 0) {
      unsigned long long state = 0;
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
                   : "=l"(state)
                   : "r"(bar), "r"(box_bytes)
                   : "memory");
      (void)state;
      load_box<RANK>(&map, shared_address(smem), bar, c);
    }
    unsigned done = 0;
    while (!done) {
      asm volatile(
          "{\n\t.reg .pred p;\n\t"
          "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
          "selp.u32 %0, 1, 0, p;\n\t}"
          : "=r"(done)
          : "r"(bar), "r"(phase)
          : "memory");
    }
    phase ^= 1u;
    unsigned char* dst = out + b * box_bytes;
    if (box_bytes % 16 == 0) {
      const uint4* s = reinterpret_cast<const uint4*>(smem);
      uint4* d = reinterpret_cast<uint4*>(dst);
      for (unsigned i = threadIdx.x; i < box_bytes / 16; i += blockDim.x) d[i] = s[i];
    } else {
      for (unsigned i = threadIdx.x; i < box_bytes; i += blockDim.x) dst[i] = smem[i];
    }
    __syncthreads();  // every thread is done reading before the next box overwrites smem
    if (threadIdx.x == 0) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
#endif
}

template <int RANK>
void launch_rank(Session& s, const CUtensorMap& map, const BoxGrid& g, unsigned box_bytes, unsigned char* out,
                 unsigned long long boxes, unsigned grid, size_t smem) {
  auto kernel = tma_load_boxes<RANK>;
  CD_CHECK(s, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
           "attribute");
  s.record_launch("tma_load_boxes", dim3(grid), dim3(kThreads), smem, {out});
  kernel<<<grid, kThreads, smem>>>(map, g, box_bytes, out, boxes);
  CD_CHECK_LAUNCH(s);
}

}  // namespace

DeviceInfo probe_device(int ordinal) {
  DeviceInfo info;
  cudaError_t rc = cudaGetDeviceCount(&info.count);
  if (rc != cudaSuccess) {
    info.error = std::string(cudaGetErrorName(rc)) + ": " + cudaGetErrorString(rc);
    (void)cudaGetLastError();
    return info;
  }
  if (ordinal >= info.count) {
    info.error = "device " + std::to_string(ordinal) + " not present (" + std::to_string(info.count) + " visible)";
    return info;
  }
  cudaDeviceProp prop{};
  rc = cudaGetDeviceProperties(&prop, ordinal);
  if (rc != cudaSuccess) {
    info.error = std::string(cudaGetErrorName(rc)) + ": " + cudaGetErrorString(rc);
    (void)cudaGetLastError();
    return info;
  }
  info.usable = true;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.name = prop.name;
  return info;
}

int encode_tiled(const TiledSpec& s, void* global_address, void* map128) {
  static EncodeTiledFn encode = nullptr;
  if (encode == nullptr) {
    encode = reinterpret_cast<EncodeTiledFn>(driver_function("cuTensorMapEncodeTiled"));
    if (encode == nullptr) {
      CudaFailure f;
      f.code = static_cast<int>(cudaErrorSymbolNotFound);
      f.name = "cudaErrorSymbolNotFound";
      f.message = "the driver does not provide cuTensorMapEncodeTiled (driver older than CUDA 12.0?)";
      f.surfaced_at = "driver_entry_point";
      f.api_call = "cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)";
      f.location = CUDADIAG_HERE;
      throw CudaError(std::move(f));
    }
  }
  const CUresult rc = encode(static_cast<CUtensorMap*>(map128), static_cast<CUtensorMapDataType>(s.data_type),
                             s.rank, global_address, s.dims, s.strides, s.box, s.element_strides,
                             static_cast<CUtensorMapInterleave>(s.interleave),
                             static_cast<CUtensorMapSwizzle>(s.swizzle),
                             static_cast<CUtensorMapL2promotion>(s.l2_promotion),
                             static_cast<CUtensorMapFloatOOBfill>(s.oob_fill));
  return static_cast<int>(rc);
}

void* offset_buffer(Session& s, const std::string& name, std::uint64_t bytes, std::uint64_t address_offset) {
  auto* base = static_cast<unsigned char*>(s.alloc(name, bytes + 512));
  const auto addr = reinterpret_cast<std::uintptr_t>(base);
  const std::uintptr_t aligned = (addr + 255) / 256 * 256;
  return base + (aligned - addr) + address_offset % 256;
}

LoadRun run_tiled_load(Session& s, const LoadRequest& req) {
  LoadRun run;
  const unsigned rank = req.spec.rank;
  if (rank < 1 || rank > 5 || req.box_counts.size() != rank || req.boxes == 0 || req.box_bytes == 0)
    throw std::invalid_argument("run_tiled_load: bad request (rank " + std::to_string(rank) + ")");

  auto* src = static_cast<unsigned char*>(offset_buffer(s, "tma_source", req.source.size(), req.address_offset));
  s.copy_to_device(src, req.source.data(), req.source.size());
  const std::uint64_t out_bytes = req.boxes * req.box_bytes;
  auto* out = static_cast<unsigned char*>(s.alloc("tma_boxes", out_bytes));
  s.memset(out, 0xA5, out_bytes);  // poison: a box the kernel never wrote cannot pass

  alignas(128) CUtensorMap map;
  std::memset(&map, 0, sizeof map);
  run.encode_result = encode_tiled(req.spec, src, &map);
  if (run.encode_result != 0) return run;

  BoxGrid g{};
  for (unsigned i = 0; i < 5; ++i) {
    g.counts[i] = i < rank ? req.box_counts[i] : 1;
    g.box[i] = i < rank ? req.spec.box[i] : 1;
  }
  run.grid = static_cast<unsigned>(std::min<std::uint64_t>(req.boxes, 4096));
  run.block = kThreads;
  run.dynamic_smem = req.box_bytes + kSmemAlign;
  const auto bytes = static_cast<unsigned>(req.box_bytes);
  const size_t smem = static_cast<size_t>(run.dynamic_smem);
  switch (rank) {
    case 1: launch_rank<1>(s, map, g, bytes, out, req.boxes, run.grid, smem); break;
    case 2: launch_rank<2>(s, map, g, bytes, out, req.boxes, run.grid, smem); break;
    case 3: launch_rank<3>(s, map, g, bytes, out, req.boxes, run.grid, smem); break;
    case 4: launch_rank<4>(s, map, g, bytes, out, req.boxes, run.grid, smem); break;
    default: launch_rank<5>(s, map, g, bytes, out, req.boxes, run.grid, smem); break;
  }
  run.launched = true;
  s.synchronize();
  run.boxes.resize(out_bytes);
  s.copy_to_host(run.boxes.data(), out, out_bytes);
  return run;
}

}  // namespace cudadiag::gpu::tma
