#pragma once
// The driver entry points the interposer exports under the driver's own names, for
// programs linked against libcuda and as the answers of its dlsym and cuGetProcAddress.
// Assembler labels keep the C++ names apart from cuda.h's declarations of the same
// symbols (cuda.h maps cuMemAlloc to cuMemAlloc_v2 and so on). Everything else in the
// library is hidden (exports.map).
#include <cuda.h>

#define CUDADIAG_EXPORT extern "C" __attribute__((visibility("default")))

// Proc-address lookups (proc_address.cpp).
CUDADIAG_EXPORT CUresult hook_cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags)
    __asm__("cuGetProcAddress");
CUDADIAG_EXPORT CUresult hook_cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                                  CUdriverProcAddressQueryResult* symbolStatus)
    __asm__("cuGetProcAddress_v2");

// Allocations and frees (memory_hooks.cpp).
CUDADIAG_EXPORT CUresult hook_cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) __asm__("cuMemAlloc_v2");
CUDADIAG_EXPORT CUresult hook_cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes,
                                                 size_t Height, unsigned int ElementSizeBytes)
    __asm__("cuMemAllocPitch_v2");
CUDADIAG_EXPORT CUresult hook_cuMemFree_v2(CUdeviceptr dptr) __asm__("cuMemFree_v2");
CUDADIAG_EXPORT CUresult hook_cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream)
    __asm__("cuMemAllocAsync");
CUDADIAG_EXPORT CUresult hook_cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream hStream)
    __asm__("cuMemAllocAsync_ptsz");
CUDADIAG_EXPORT CUresult hook_cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                      CUstream hStream) __asm__("cuMemAllocFromPoolAsync");
CUDADIAG_EXPORT CUresult hook_cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                                           CUstream hStream) __asm__("cuMemAllocFromPoolAsync_ptsz");
CUDADIAG_EXPORT CUresult hook_cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) __asm__("cuMemFreeAsync");
CUDADIAG_EXPORT CUresult hook_cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) __asm__("cuMemFreeAsync_ptsz");
CUDADIAG_EXPORT CUresult hook_cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags)
    __asm__("cuMemAllocManaged");
CUDADIAG_EXPORT CUresult hook_cuMemAllocHost_v2(void** pp, size_t bytesize) __asm__("cuMemAllocHost_v2");
CUDADIAG_EXPORT CUresult hook_cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) __asm__("cuMemHostAlloc");
CUDADIAG_EXPORT CUresult hook_cuMemFreeHost(void* p) __asm__("cuMemFreeHost");

// Launches and TMA descriptors (launch_hooks.cpp).
CUDADIAG_EXPORT CUresult hook_cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                             unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                             unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                             void** kernelParams, void** extra) __asm__("cuLaunchKernel");
CUDADIAG_EXPORT CUresult hook_cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                  unsigned int gridDimZ, unsigned int blockDimX,
                                                  unsigned int blockDimY, unsigned int blockDimZ,
                                                  unsigned int sharedMemBytes, CUstream hStream, void** kernelParams,
                                                  void** extra) __asm__("cuLaunchKernel_ptsz");
CUDADIAG_EXPORT CUresult hook_cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                               void** extra) __asm__("cuLaunchKernelEx");
CUDADIAG_EXPORT CUresult hook_cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                                    void** extra) __asm__("cuLaunchKernelEx_ptsz");
CUDADIAG_EXPORT CUresult hook_cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                        unsigned int gridDimZ, unsigned int blockDimX,
                                                        unsigned int blockDimY, unsigned int blockDimZ,
                                                        unsigned int sharedMemBytes, CUstream hStream,
                                                        void** kernelParams) __asm__("cuLaunchCooperativeKernel");
CUDADIAG_EXPORT CUresult hook_cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                                             unsigned int gridDimY, unsigned int gridDimZ,
                                                             unsigned int blockDimX, unsigned int blockDimY,
                                                             unsigned int blockDimZ, unsigned int sharedMemBytes,
                                                             CUstream hStream, void** kernelParams)
    __asm__("cuLaunchCooperativeKernel_ptsz");
CUDADIAG_EXPORT CUresult hook_cuTensorMapEncodeTiled(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank, void* globalAddress,
    const cuuint64_t* globalDim, const cuuint64_t* globalStrides, const cuuint32_t* boxDim,
    const cuuint32_t* elementStrides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) __asm__("cuTensorMapEncodeTiled");
CUDADIAG_EXPORT CUresult hook_cuTensorMapEncodeIm2col(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank, void* globalAddress,
    const cuuint64_t* globalDim, const cuuint64_t* globalStrides, const int* pixelBoxLowerCorner,
    const int* pixelBoxUpperCorner, cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
    const cuuint32_t* elementStrides, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) __asm__("cuTensorMapEncodeIm2col");
CUDADIAG_EXPORT CUresult hook_cuTensorMapEncodeIm2colWide(
    CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank, void* globalAddress,
    const cuuint64_t* globalDim, const cuuint64_t* globalStrides, int pixelBoxLowerCornerWidth,
    int pixelBoxUpperCornerWidth, cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
    const cuuint32_t* elementStrides, CUtensorMapInterleave interleave, CUtensorMapIm2ColWideMode mode,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill)
    __asm__("cuTensorMapEncodeIm2colWide");

// CUDA IPC and the mappings the program makes itself (ipc_hooks.cpp).
CUDADIAG_EXPORT CUresult hook_cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) __asm__("cuIpcGetMemHandle");
CUDADIAG_EXPORT CUresult hook_cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags)
    __asm__("cuIpcOpenMemHandle");
CUDADIAG_EXPORT CUresult hook_cuIpcOpenMemHandle_v2(CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags)
    __asm__("cuIpcOpenMemHandle_v2");
CUDADIAG_EXPORT CUresult hook_cuIpcCloseMemHandle(CUdeviceptr dptr) __asm__("cuIpcCloseMemHandle");
CUDADIAG_EXPORT CUresult hook_cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr)
    __asm__("cuMemRetainAllocationHandle");
CUDADIAG_EXPORT CUresult hook_cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                                           CUmemAllocationHandleType handleType,
                                                           unsigned long long flags)
    __asm__("cuMemExportToShareableHandle");
CUDADIAG_EXPORT CUresult hook_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                       unsigned long long flags) __asm__("cuMemMap");
CUDADIAG_EXPORT CUresult hook_cuMemUnmap(CUdeviceptr ptr, size_t size) __asm__("cuMemUnmap");

// Peer access, which fenced buffers follow (peer_hooks.cpp).
CUDADIAG_EXPORT CUresult hook_cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
    __asm__("cuCtxEnablePeerAccess");
CUDADIAG_EXPORT CUresult hook_cuCtxDisablePeerAccess(CUcontext peerContext) __asm__("cuCtxDisablePeerAccess");
