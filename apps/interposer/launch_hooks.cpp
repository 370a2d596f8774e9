// The exported launch and TMA-descriptor entry points: a launch is recorded before it
// reaches the driver (a launch that kills the process is still in the ring), an encode
// after the driver answered it (with its result).
#include <cudaTypedefs.h>

#include "apps/interposer/entry_points.h"
#include "apps/interposer/exported_hooks.h"
#include "apps/interposer/launch_recorder.h"
#include "apps/interposer/process.h"
#include "apps/interposer/tma_recorder.h"

using namespace cudadiag::interposer;
namespace ring = cudadiag::ring;

namespace {

LaunchArgs launch_args(ring::Api api, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned smem, CUstream stream, void** params, void** extra) {
  LaunchArgs a;
  a.api = api;
  a.function = f;
  a.grid[0] = gx;
  a.grid[1] = gy;
  a.grid[2] = gz;
  a.block[0] = bx;
  a.block[1] = by;
  a.block[2] = bz;
  a.dynamic_smem = smem;
  a.stream = stream;
  a.params = params;
  a.extra = extra;
  return a;
}

CUresult launch(ring::Api api, Entry e, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                unsigned bz, unsigned smem, CUstream stream, void** params, void** extra) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuLaunchKernel_v4000>(e);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const std::uint64_t seq = record_launch(launch_args(api, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra));
  const CUresult rc = real(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra);
  launch_finished(seq);
  return rc;
}

CUresult launch_ex(ring::Api api, Entry e, const CUlaunchConfig* c, CUfunction f, void** params, void** extra) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuLaunchKernelEx_v11060>(e);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  std::uint64_t seq = kNoLaunch;
  if (c)
    seq = record_launch(launch_args(api, f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                                    c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra));
  const CUresult rc = real(c, f, params, extra);
  launch_finished(seq);
  return rc;
}

CUresult launch_cooperative(ring::Api api, Entry e, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned smem, CUstream stream, void** params) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuLaunchCooperativeKernel_v9000>(e);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const std::uint64_t seq = record_launch(launch_args(api, f, gx, gy, gz, bx, by, bz, smem, stream, params, nullptr));
  const CUresult rc = real(f, gx, gy, gz, bx, by, bz, smem, stream, params);
  launch_finished(seq);
  return rc;
}

TmaEncode tma_encode(ring::Api api, const void* address, cuuint32_t rank, CUtensorMapDataType type,
                     const cuuint64_t* dims, const cuuint64_t* strides, CUtensorMapInterleave interleave,
                     CUtensorMapSwizzle swizzle, CUtensorMapFloatOOBfill oob_fill) {
  TmaEncode e;
  e.api = api;
  e.address = reinterpret_cast<std::uint64_t>(address);
  e.rank = rank;
  e.data_type = static_cast<std::uint32_t>(type);
  e.dims = dims;
  e.strides = strides;
  e.interleave = static_cast<std::uint32_t>(interleave);
  e.swizzle = static_cast<std::uint32_t>(swizzle);
  e.oob_fill = static_cast<std::uint32_t>(oob_fill);
  return e;
}

}  // namespace

CUresult hook_cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                             unsigned int by, unsigned int bz, unsigned int smem, CUstream s, void** params,
                             void** extra) {
  return launch(ring::Api::cuLaunchKernel, Entry::launch_kernel, f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
}

CUresult hook_cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                  unsigned int by, unsigned int bz, unsigned int smem, CUstream s, void** params,
                                  void** extra) {
  return launch(ring::Api::cuLaunchKernel_ptsz, Entry::launch_kernel_ptsz, f, gx, gy, gz, bx, by, bz, smem, s, params,
                extra);
}

CUresult hook_cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  return launch_ex(ring::Api::cuLaunchKernelEx, Entry::launch_kernel_ex, config, f, params, extra);
}

CUresult hook_cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  return launch_ex(ring::Api::cuLaunchKernelEx_ptsz, Entry::launch_kernel_ex_ptsz, config, f, params, extra);
}

CUresult hook_cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
                                        CUstream s, void** params) {
  return launch_cooperative(ring::Api::cuLaunchCooperativeKernel, Entry::launch_cooperative_kernel, f, gx, gy, gz, bx,
                            by, bz, smem, s, params);
}

CUresult hook_cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                             unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
                                             CUstream s, void** params) {
  return launch_cooperative(ring::Api::cuLaunchCooperativeKernel_ptsz, Entry::launch_cooperative_kernel_ptsz, f, gx,
                            gy, gz, bx, by, bz, smem, s, params);
}

CUresult hook_cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType type, cuuint32_t rank, void* address,
                                     const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                     const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                                     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                     CUtensorMapFloatOOBfill oobFill) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuTensorMapEncodeTiled_v12000>(Entry::tensor_map_encode_tiled);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc =
      real(tensorMap, type, rank, address, dims, strides, box, elementStrides, interleave, swizzle, l2, oobFill);
  record_tma_encode(tma_encode(ring::Api::cuTensorMapEncodeTiled, address, rank, type, dims, strides, interleave,
                               swizzle, oobFill),
                    rc);
  return rc;
}

CUresult hook_cuTensorMapEncodeIm2col(CUtensorMap* tensorMap, CUtensorMapDataType type, cuuint32_t rank,
                                      void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                                      const int* lower, const int* upper, cuuint32_t channels, cuuint32_t pixels,
                                      const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                                      CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                      CUtensorMapFloatOOBfill oobFill) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuTensorMapEncodeIm2col_v12000>(Entry::tensor_map_encode_im2col);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real(tensorMap, type, rank, address, dims, strides, lower, upper, channels, pixels,
                          elementStrides, interleave, swizzle, l2, oobFill);
  record_tma_encode(tma_encode(ring::Api::cuTensorMapEncodeIm2col, address, rank, type, dims, strides, interleave,
                               swizzle, oobFill),
                    rc);
  return rc;
}

CUresult hook_cuTensorMapEncodeIm2colWide(CUtensorMap* tensorMap, CUtensorMapDataType type, cuuint32_t rank,
                                          void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                                          int lower, int upper, cuuint32_t channels, cuuint32_t pixels,
                                          const cuuint32_t* elementStrides, CUtensorMapInterleave interleave,
                                          CUtensorMapIm2ColWideMode mode, CUtensorMapSwizzle swizzle,
                                          CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oobFill) {
  note_cuda_seen();
  auto real = real_fn<PFN_cuTensorMapEncodeIm2colWide_v12080>(Entry::tensor_map_encode_im2col_wide);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult rc = real(tensorMap, type, rank, address, dims, strides, lower, upper, channels, pixels,
                          elementStrides, interleave, mode, swizzle, l2, oobFill);
  record_tma_encode(tma_encode(ring::Api::cuTensorMapEncodeIm2colWide, address, rank, type, dims, strides,
                               interleave, swizzle, oobFill),
                    rc);
  return rc;
}
