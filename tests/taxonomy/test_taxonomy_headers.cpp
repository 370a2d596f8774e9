// The taxonomy's numbers must be the real CUDA enum values: the CUDA headers are
// included here (and only here) so that the compiler supplies them.
#include <catch2/catch.hpp>

#include <cuda.h>
#include <driver_types.h>

#include <map>
#include <string>

#include "taxonomy/taxonomy.h"

namespace {

#define R(x) {#x, static_cast<int>(x)}
#define D(x) {#x, static_cast<int>(x)}

const std::map<std::string, int>& runtime_enum() {
  static const std::map<std::string, int> m{
    R(cudaErrorIllegalAddress), R(cudaErrorMisalignedAddress),
    R(cudaErrorInvalidAddressSpace), R(cudaErrorAssert), R(cudaErrorIllegalInstruction),
    R(cudaErrorInvalidPc), R(cudaErrorHardwareStackError), R(cudaErrorLaunchFailure),
    R(cudaErrorLaunchTimeout), R(cudaErrorTensorMemoryLeak), R(cudaErrorContextIsDestroyed),
    R(cudaErrorContained), R(cudaErrorECCUncorrectable), R(cudaErrorNvlinkUncorrectable),
    R(cudaErrorExternalDevice), R(cudaErrorInvalidConfiguration),
    R(cudaErrorLaunchOutOfResources), R(cudaErrorCooperativeLaunchTooLarge),
    R(cudaErrorInvalidClusterSize), R(cudaErrorMissingConfiguration),
    R(cudaErrorLaunchMaxDepthExceeded), R(cudaErrorLaunchPendingCountExceeded),
    R(cudaErrorInvalidDeviceFunction), R(cudaErrorNoKernelImageForDevice),
    R(cudaErrorInvalidKernelImage), R(cudaErrorInvalidPtx),
    R(cudaErrorUnsupportedPtxVersion), R(cudaErrorJitCompilerNotFound),
    R(cudaErrorJitCompilationDisabled), R(cudaErrorInvalidSource),
    R(cudaErrorMemoryAllocation), R(cudaErrorMemoryValueTooLarge), R(cudaErrorInvalidValue),
    R(cudaErrorInvalidPitchValue), R(cudaErrorInvalidSymbol), R(cudaErrorInvalidHostPointer),
    R(cudaErrorInvalidDevicePointer), R(cudaErrorInvalidMemcpyDirection),
    R(cudaErrorInvalidResourceHandle), R(cudaErrorSymbolNotFound), R(cudaErrorIllegalState),
    R(cudaErrorNotReady), R(cudaErrorDeviceUninitialized), R(cudaErrorUnsupportedLimit),
    R(cudaErrorDeviceAlreadyInUse), R(cudaErrorPeerAccessUnsupported),
    R(cudaErrorSetOnActiveProcess), R(cudaErrorPriorLaunchFailure),
    R(cudaErrorStreamCaptureUnsupported), R(cudaErrorStreamCaptureInvalidated),
    R(cudaErrorTimeout), R(cudaErrorNoDevice), R(cudaErrorInvalidDevice),
    R(cudaErrorDevicesUnavailable), R(cudaErrorInsufficientDriver), R(cudaErrorStubLibrary),
    R(cudaErrorCallRequiresNewerDriver), R(cudaErrorSystemDriverMismatch),
    R(cudaErrorCompatNotSupportedOnDevice), R(cudaErrorIncompatibleDriverContext),
    R(cudaErrorInitializationError), R(cudaErrorCudartUnloading), R(cudaErrorStartupFailure),
    R(cudaErrorSystemNotReady), R(cudaErrorNotPermitted), R(cudaErrorNotSupported),
    R(cudaErrorOperatingSystem), R(cudaErrorMpsConnectionFailed),
    R(cudaErrorMpsClientTerminated), R(cudaErrorUnknown)};
  return m;
}

const std::map<std::string, int>& driver_enum() {
  static const std::map<std::string, int> m{
    D(CUDA_ERROR_ILLEGAL_ADDRESS), D(CUDA_ERROR_MISALIGNED_ADDRESS),
    D(CUDA_ERROR_INVALID_ADDRESS_SPACE), D(CUDA_ERROR_ASSERT),
    D(CUDA_ERROR_ILLEGAL_INSTRUCTION), D(CUDA_ERROR_INVALID_PC),
    D(CUDA_ERROR_HARDWARE_STACK_ERROR), D(CUDA_ERROR_LAUNCH_FAILED),
    D(CUDA_ERROR_LAUNCH_TIMEOUT), D(CUDA_ERROR_TENSOR_MEMORY_LEAK),
    D(CUDA_ERROR_CONTEXT_IS_DESTROYED), D(CUDA_ERROR_CONTAINED),
    D(CUDA_ERROR_ECC_UNCORRECTABLE), D(CUDA_ERROR_NVLINK_UNCORRECTABLE),
    D(CUDA_ERROR_EXTERNAL_DEVICE), D(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
    D(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE), D(CUDA_ERROR_INVALID_CLUSTER_SIZE),
    D(CUDA_ERROR_NO_BINARY_FOR_GPU), D(CUDA_ERROR_INVALID_IMAGE), D(CUDA_ERROR_INVALID_PTX),
    D(CUDA_ERROR_UNSUPPORTED_PTX_VERSION), D(CUDA_ERROR_JIT_COMPILER_NOT_FOUND),
    D(CUDA_ERROR_JIT_COMPILATION_DISABLED), D(CUDA_ERROR_INVALID_SOURCE),
    D(CUDA_ERROR_OUT_OF_MEMORY), D(CUDA_ERROR_INVALID_VALUE), D(CUDA_ERROR_INVALID_HANDLE),
    D(CUDA_ERROR_NOT_FOUND), D(CUDA_ERROR_ILLEGAL_STATE), D(CUDA_ERROR_NOT_READY),
    D(CUDA_ERROR_INVALID_CONTEXT), D(CUDA_ERROR_UNSUPPORTED_LIMIT),
    D(CUDA_ERROR_CONTEXT_ALREADY_IN_USE), D(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED),
    D(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE), D(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
    D(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED), D(CUDA_ERROR_TIMEOUT), D(CUDA_ERROR_NO_DEVICE),
    D(CUDA_ERROR_INVALID_DEVICE), D(CUDA_ERROR_DEVICE_UNAVAILABLE),
    D(CUDA_ERROR_STUB_LIBRARY), D(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER),
    D(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH), D(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE),
    D(CUDA_ERROR_NOT_INITIALIZED), D(CUDA_ERROR_DEINITIALIZED),
    D(CUDA_ERROR_SYSTEM_NOT_READY), D(CUDA_ERROR_NOT_PERMITTED), D(CUDA_ERROR_NOT_SUPPORTED),
    D(CUDA_ERROR_OPERATING_SYSTEM), D(CUDA_ERROR_MPS_CONNECTION_FAILED),
    D(CUDA_ERROR_MPS_CLIENT_TERMINATED), D(CUDA_ERROR_UNKNOWN)};
  return m;
}

#undef R
#undef D

}  // namespace

TEST_CASE("every runtime name and code matches cudaError_t in driver_types.h") {
  for (const auto& e : cudadiag::taxonomy::all()) {
    INFO(e.name);
    const auto it = runtime_enum().find(std::string(e.name));
    REQUIRE(it != runtime_enum().end());  // a new entry needs a line in runtime_enum()
    CHECK(it->second == e.code);
  }
}

TEST_CASE("every driver name and code matches CUresult in cuda.h") {
  for (const auto& e : cudadiag::taxonomy::all()) {
    INFO(e.name << " / " << e.driver_name);
    if (e.driver_name.empty()) {
      CHECK(e.driver_code == -1);
      continue;
    }
    const auto it = driver_enum().find(std::string(e.driver_name));
    REQUIRE(it != driver_enum().end());
    CHECK(it->second == e.driver_code);
  }
}

TEST_CASE("runtime-only errors really have no CUresult of the same number") {
  // 9 (invalid configuration) and 35 (insufficient driver) exist only in the runtime.
  for (const auto& e : cudadiag::taxonomy::all()) {
    if (e.driver_code != -1) continue;
    INFO(e.name);
    for (const auto& [name, value] : driver_enum()) CHECK(value != e.code);
  }
  CHECK(cudaErrorInvalidConfiguration == 9);
  CHECK(cudaErrorInsufficientDriver == 35);
}
