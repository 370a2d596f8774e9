#include "taxonomy/taxonomy.h"

#include <array>

namespace cudadiag::taxonomy {
namespace {

// Numbers are the CUDA 13.0 values of cudaError_t (driver_types.h) and CUresult
// (cuda.h); tests/taxonomy compares them against the real headers. Runtime and
// driver codes usually share a number but not always a name (2 is
// cudaErrorMemoryAllocation / CUDA_ERROR_OUT_OF_MEMORY); runtime-only errors such as
// 9 and 35 have no CUresult (-1).
//
// Sticky: the CUDA documentation says "the process is left in an inconsistent state
// ... must be terminated and relaunched" — every later call in that context returns
// the same error, so a child that hits one cannot run further cases.
//
// Next steps name cudadiag's own levers first (profiles: blocking, nocache, fence,
// sanitizer), then the external tool.
constexpr ErrorEntry kTable[] = {
    // ---- memory faults and other sticky device exceptions ------------------------
    {700, "cudaErrorIllegalAddress", 700, "CUDA_ERROR_ILLEGAL_ADDRESS", ErrorClass::memory_fault, true,
     "a kernel loaded or stored through an address it does not own (out of bounds, freed, "
     "or another device's memory)",
     "re-run with the `fence` profile (fence-back allocator) to fault at the first "
     "out-of-bounds element and name the buffer, then with the `sanitizer` profile for the "
     "exact kernel, thread and PC"},
    {716, "cudaErrorMisalignedAddress", 716, "CUDA_ERROR_MISALIGNED_ADDRESS", ErrorClass::misaligned, true,
     "a load or store used an address not aligned to its access size (vectorised or TMA "
     "access on an offset pointer or odd stride)",
     "check base pointers and strides against the vector width (16 B for float4/int4, "
     "128 B for TMA); re-run with the `sanitizer` profile for the faulting PC"},
    {717, "cudaErrorInvalidAddressSpace", 717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", ErrorClass::memory_fault,
     true,
     "an instruction restricted to one address space (global, shared, local) got an "
     "address from another",
     "look for generic pointers passed to shared/local-only instructions (cp.async, ldmatrix, "
     "TMA); re-run with the `sanitizer` profile"},
    {710, "cudaErrorAssert", 710, "CUDA_ERROR_ASSERT", ErrorClass::device_assert, true,
     "a device-side assert() failed in a kernel",
     "read the assert message (file, line, block, thread) in the child's stderr; with "
     "PyTorch it is usually an index out of range (index_select, embedding, gather)"},
    {715, "cudaErrorIllegalInstruction", 715, "CUDA_ERROR_ILLEGAL_INSTRUCTION",
     ErrorClass::illegal_instruction, true,
     "the device executed an instruction that is invalid (often __trap(), corrupted code, "
     "or a feature the GPU lacks)",
     "check the compiled architectures against the device's compute capability "
     "(`cudadiag env`); look for __trap()/brkpt; re-run with the `sanitizer` profile"},
    {718, "cudaErrorInvalidPc", 718, "CUDA_ERROR_INVALID_PC", ErrorClass::illegal_instruction, true,
     "the program counter left valid code (stack corruption or a bad function pointer)",
     "look for stack overflows (deep recursion, large local arrays) and indirect calls; "
     "re-run with the `sanitizer` profile"},
    {714, "cudaErrorHardwareStackError", 714, "CUDA_ERROR_HARDWARE_STACK_ERROR", ErrorClass::memory_fault,
     true, "the call stack overflowed or was corrupted during a kernel",
     "reduce recursion depth or local arrays, or raise cudaLimitStackSize; re-run with the "
     "`sanitizer` profile"},
    {719, "cudaErrorLaunchFailure", 719, "CUDA_ERROR_LAUNCH_FAILED", ErrorClass::launch_failure, true,
     "a kernel raised an exception not covered by a more specific code (bad pointer "
     "dereference, bad texture access, trap)",
     "re-run with the `blocking` profile to pin the kernel, then `fence` and `sanitizer`; "
     "check the kernel log (Xid 13/31) in `cudadiag env`"},
    {702, "cudaErrorLaunchTimeout", 702, "CUDA_ERROR_LAUNCH_TIMEOUT", ErrorClass::launch_failure, true,
     "a kernel ran past the watchdog limit (only when a display/timeout is enabled)",
     "check for an infinite loop or spin-wait in the kernel; run on a GPU without a display "
     "watchdog (kernelExecTimeoutEnabled in `cudadiag env`)"},
    {721, "cudaErrorTensorMemoryLeak", 721, "CUDA_ERROR_TENSOR_MEMORY_LEAK", ErrorClass::launch_failure,
     true, "a kernel using tensor memory exited without deallocating all of it",
     "check that every tcgen05.alloc has a matching dealloc on every exit path of the kernel"},
    {709, "cudaErrorContextIsDestroyed", 709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", ErrorClass::invalid_state,
     true, "the context was destroyed (by an earlier fatal error or cudaDeviceReset) while in use",
     "find the first error in the log: this one is a consequence; restart the process"},
    {226, "cudaErrorContained", 226, "CUDA_ERROR_CONTAINED", ErrorClass::hardware, true,
     "the GPU's error containment stopped a device exception (invalid NVLink peer access or a "
     "hardware error)",
     "check the kernel log for Xid 94/95 and the device's ECC/remapped-row counters "
     "(`cudadiag env`); if it repeats on one GPU only, drain that GPU"},
    {214, "cudaErrorECCUncorrectable", 214, "CUDA_ERROR_ECC_UNCORRECTABLE", ErrorClass::hardware, true,
     "an uncorrectable ECC error was detected in device memory",
     "machine problem, not your code: check volatile/aggregate ECC counts, retired pages and "
     "remapped rows (`cudadiag env`), Xid 48/63/64/94/95; reset or drain the GPU"},
    {220, "cudaErrorNvlinkUncorrectable", 220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", ErrorClass::hardware, true,
     "an uncorrectable NVLink error was detected",
     "machine problem: check Xid 74 in the kernel log and nvidia-smi nvlink -e; drain the node"},
    {911, "cudaErrorExternalDevice", 911, "CUDA_ERROR_EXTERNAL_DEVICE", ErrorClass::hardware, true,
     "a device outside CUDA signalled that shared data is invalid",
     "check the external producer (NIC, other GPU, interop API) that CUDA was waiting on"},

    // ---- launch configuration and resources (not sticky) --------------------------
    {9, "cudaErrorInvalidConfiguration", -1, "", ErrorClass::launch_config, false,
     "the launch configuration is invalid: block too large, grid dimension out of range, or "
     "more dynamic shared memory than allowed",
     "check grid/block against maxThreadsPerBlock and maxGridSize and dynamic shared memory "
     "against sharedMemPerBlockOptin (`cudadiag env`); large smem needs "
     "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)"},
    {701, "cudaErrorLaunchOutOfResources", 701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     ErrorClass::out_of_resources, false,
     "the launch needs more registers or shared memory per block than the SM has",
     "lower threads per block or use __launch_bounds__/-maxrregcount; compare registers per "
     "thread (ptxas -v) times block size with regsPerBlock"},
    {720, "cudaErrorCooperativeLaunchTooLarge", 720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     ErrorClass::launch_config, false,
     "a cooperative launch asked for more blocks than can be co-resident on the device",
     "size the grid with cudaOccupancyMaxActiveBlocksPerMultiprocessor times the SM count"},
    {912, "cudaErrorInvalidClusterSize", 912, "CUDA_ERROR_INVALID_CLUSTER_SIZE", ErrorClass::launch_config,
     false, "the thread-block cluster size is invalid for this kernel or device",
     "keep the cluster size a divisor of the grid and at most 8 (16 with the non-portable "
     "attribute); query cudaOccupancyMaxPotentialClusterSize"},
    {52, "cudaErrorMissingConfiguration", -1, "", ErrorClass::launch_config, false,
     "a kernel was launched without a configuration (no <<<>>> or cudaConfigureCall)",
     "launch through <<<grid, block>>> or cudaLaunchKernel with explicit dimensions"},
    {65, "cudaErrorLaunchMaxDepthExceeded", -1, "", ErrorClass::launch_config, false,
     "a device-side launch exceeded the maximum nesting depth",
     "reduce dynamic-parallelism nesting or raise cudaLimitDevRuntimeSyncDepth"},
    {69, "cudaErrorLaunchPendingCountExceeded", -1, "", ErrorClass::out_of_resources, false,
     "too many outstanding device-side launches",
     "raise cudaLimitDevRuntimePendingLaunchCount or launch fewer child grids"},
    {98, "cudaErrorInvalidDeviceFunction", -1, "", ErrorClass::no_kernel_image, false,
     "the function is not a kernel of this program or has no code for this device",
     "check that the binary was built for this GPU's architecture (`cudadiag env` lists "
     "compiled architectures and device compute capability)"},
    {209, "cudaErrorNoKernelImageForDevice", 209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     ErrorClass::no_kernel_image, false,
     "the binary holds no machine code or PTX usable on this GPU's architecture",
     "rebuild with this device's sm_XX in CMAKE_CUDA_ARCHITECTURES (or add compute_XX PTX); "
     "compare `cudadiag env` tool.architectures with the device's compute capability"},
    {200, "cudaErrorInvalidKernelImage", 200, "CUDA_ERROR_INVALID_IMAGE", ErrorClass::no_kernel_image,
     false, "the embedded kernel image (cubin/fatbin) is invalid",
     "rebuild; check that the fatbinary was not truncated or built by a newer toolkit"},
    {218, "cudaErrorInvalidPtx", 218, "CUDA_ERROR_INVALID_PTX", ErrorClass::no_kernel_image, false,
     "JIT compilation of the embedded PTX failed",
     "ship machine code (sm_XX) for this GPU or use a driver at least as new as the toolkit"},
    {222, "cudaErrorUnsupportedPtxVersion", 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     ErrorClass::driver_mismatch, false,
     "the PTX was produced by a toolkit newer than the installed driver supports",
     "update the driver to one supporting the toolkit's CUDA version (`cudadiag env` shows "
     "both) or ship sm_XX machine code"},
    {221, "cudaErrorJitCompilerNotFound", 221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
     ErrorClass::driver_mismatch, false, "PTX needs JIT compilation but the driver's JIT compiler is missing",
     "install the full driver (libnvidia-ptxjitcompiler) or ship sm_XX machine code"},
    {223, "cudaErrorJitCompilationDisabled", 223, "CUDA_ERROR_JIT_COMPILATION_DISABLED",
     ErrorClass::no_kernel_image, false, "PTX JIT compilation is disabled (CUDA_DISABLE_PTX_JIT)",
     "unset CUDA_DISABLE_PTX_JIT or ship sm_XX machine code for this GPU"},
    {300, "cudaErrorInvalidSource", 300, "CUDA_ERROR_INVALID_SOURCE", ErrorClass::no_kernel_image, false,
     "the kernel source or image given to the loader is invalid",
     "check the module/library that was loaded at run time"},

    // ---- memory ------------------------------------------------------------------
    {2, "cudaErrorMemoryAllocation", 2, "CUDA_ERROR_OUT_OF_MEMORY", ErrorClass::out_of_memory, false,
     "a device memory allocation failed: not enough free memory (or too fragmented)",
     "check free memory and other processes on the GPU (`cudadiag env`); with PyTorch compare "
     "allocated vs reserved and try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"},
    {32, "cudaErrorMemoryValueTooLarge", -1, "", ErrorClass::invalid_value, false,
     "an emulated memory operation got a value too large for its width",
     "check the size arguments of the memory operation"},

    // ---- invalid arguments and state (not sticky) ---------------------------------
    {1, "cudaErrorInvalidValue", 1, "CUDA_ERROR_INVALID_VALUE", ErrorClass::invalid_value, false,
     "an API call got an argument outside its accepted range (null pointer, bad size, bad "
     "flag, bad TMA descriptor field)",
     "check the arguments of the API call named in the report; for TMA descriptors run "
     "`cudadiag tma` to validate shape, strides and alignment"},
    {12, "cudaErrorInvalidPitchValue", -1, "", ErrorClass::invalid_value, false,
     "a pitch argument exceeds the maximum allowed",
     "check pitch/width arguments of the 2-D copy or allocation"},
    {13, "cudaErrorInvalidSymbol", -1, "", ErrorClass::invalid_value, false,
     "the symbol is not a valid device variable of this program",
     "pass the __device__ variable itself (not its name string or a host copy)"},
    {16, "cudaErrorInvalidHostPointer", -1, "", ErrorClass::invalid_value, false,
     "a host pointer argument is invalid", "check the host buffer passed to the copy"},
    {17, "cudaErrorInvalidDevicePointer", -1, "", ErrorClass::invalid_value, false,
     "a device pointer argument is invalid (freed, never allocated, or host memory)",
     "check the buffer's lifetime and that it was allocated on this device"},
    {21, "cudaErrorInvalidMemcpyDirection", -1, "", ErrorClass::invalid_value, false,
     "the copy direction does not match the pointers",
     "use cudaMemcpyDefault or the direction that matches source and destination"},
    {400, "cudaErrorInvalidResourceHandle", 400, "CUDA_ERROR_INVALID_HANDLE", ErrorClass::invalid_value,
     false, "a stream, event, graph or module handle is invalid (destroyed or from another "
     "context)",
     "check handle lifetimes, and that handles are used with the device that created them"},
    {500, "cudaErrorSymbolNotFound", 500, "CUDA_ERROR_NOT_FOUND", ErrorClass::invalid_value, false,
     "a named symbol (kernel, variable, driver entry point) was not found",
     "check the symbol name and the module it is looked up in; driver entry points need a "
     "driver new enough to export them"},
    {401, "cudaErrorIllegalState", 401, "CUDA_ERROR_ILLEGAL_STATE", ErrorClass::invalid_state, false,
     "a resource is not in a state that allows the operation",
     "check the order of operations on the resource named in the report"},
    {600, "cudaErrorNotReady", 600, "CUDA_ERROR_NOT_READY", ErrorClass::invalid_state, false,
     "asynchronous work has not completed yet (a status, not a failure)",
     "nothing to fix unless it is treated as an error by the caller"},
    {201, "cudaErrorDeviceUninitialized", 201, "CUDA_ERROR_INVALID_CONTEXT", ErrorClass::invalid_state,
     false, "no valid context is current (destroyed, or another thread's)",
     "make the device current (cudaSetDevice) in the calling thread"},
    {215, "cudaErrorUnsupportedLimit", 215, "CUDA_ERROR_UNSUPPORTED_LIMIT", ErrorClass::invalid_value,
     false, "the device does not support the requested limit",
     "check cudaDeviceSetLimit arguments against this GPU"},
    {216, "cudaErrorDeviceAlreadyInUse", 216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
     ErrorClass::invalid_state, false, "the context is already in use by another thread",
     "check that one context is not bound to several threads at once"},
    {217, "cudaErrorPeerAccessUnsupported", 217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
     ErrorClass::invalid_state, false, "peer access is not supported between these devices",
     "check topology (nvidia-smi topo -m) and IOMMU/ACS settings"},
    {708, "cudaErrorSetOnActiveProcess", 708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
     ErrorClass::invalid_state, false, "device flags cannot be changed once the context is active",
     "set device flags before the first CUDA call that creates the context"},
    {53, "cudaErrorPriorLaunchFailure", -1, "", ErrorClass::launch_failure, false,
     "an earlier launch failed (legacy code)", "find and fix the first failing launch"},
    {900, "cudaErrorStreamCaptureUnsupported", 900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     ErrorClass::invalid_state, false, "the operation is not allowed while a stream is being captured",
     "move synchronising calls (cudaMalloc, sync, memcpy to pageable memory) out of the capture"},
    {901, "cudaErrorStreamCaptureInvalidated", 901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     ErrorClass::invalid_state, false, "the stream capture was invalidated by an earlier error",
     "find the first error inside the captured region"},
    {909, "cudaErrorTimeout", 909, "CUDA_ERROR_TIMEOUT", ErrorClass::invalid_state, false,
     "a wait operation timed out", "check for a deadlock between streams or a missing signal"},

    // ---- device, driver and installation -----------------------------------------
    {100, "cudaErrorNoDevice", 100, "CUDA_ERROR_NO_DEVICE", ErrorClass::no_device, false,
     "the driver is loaded but no CUDA-capable device is visible",
     "check CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES, container GPU access (--gpus) and "
     "nvidia-smi"},
    {101, "cudaErrorInvalidDevice", 101, "CUDA_ERROR_INVALID_DEVICE", ErrorClass::no_device, false,
     "the device ordinal does not name a visible device",
     "use an index below the device count; check CUDA_VISIBLE_DEVICES"},
    {46, "cudaErrorDevicesUnavailable", 46, "CUDA_ERROR_DEVICE_UNAVAILABLE", ErrorClass::no_device, false,
     "all devices are busy or unavailable (exclusive-process compute mode, or another owner)",
     "check the compute mode and the processes on the GPU (nvidia-smi)"},
    {35, "cudaErrorInsufficientDriver", -1, "", ErrorClass::no_device, false,
     "no NVIDIA driver is loaded, or it is older than this CUDA runtime",
     "install/load the driver (nvidia-smi must work) or update it to support the runtime's "
     "CUDA version (`cudadiag env` shows both)"},
    {34, "cudaErrorStubLibrary", 34, "CUDA_ERROR_STUB_LIBRARY", ErrorClass::driver_mismatch, false,
     "the libcuda.so found is the toolkit's stub, not the real driver library",
     "remove the toolkit's stubs directory from LD_LIBRARY_PATH so the driver's libcuda.so.1 "
     "is loaded"},
    {36, "cudaErrorCallRequiresNewerDriver", 36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
     ErrorClass::driver_mismatch, false, "the API call needs a newer driver than the one installed",
     "update the driver (compare driver and runtime versions in `cudadiag env`)"},
    {803, "cudaErrorSystemDriverMismatch", 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     ErrorClass::driver_mismatch, false,
     "the user-space driver library and the kernel module have different versions",
     "reboot or reload the nvidia kernel module after a driver upgrade; in containers check "
     "that the mounted libcuda matches the host module"},
    {804, "cudaErrorCompatNotSupportedOnDevice", 804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     ErrorClass::driver_mismatch, false,
     "the forward-compatibility driver package is not supported on this GPU",
     "remove the cuda-compat libraries from LD_LIBRARY_PATH or use a native driver"},
    {49, "cudaErrorIncompatibleDriverContext", -1, "", ErrorClass::driver_mismatch, false,
     "a context created by the driver API is incompatible with this runtime",
     "create contexts with matching driver/runtime versions"},
    {3, "cudaErrorInitializationError", 3, "CUDA_ERROR_NOT_INITIALIZED", ErrorClass::driver_mismatch,
     false, "CUDA could not initialise (driver not loaded, broken install, or fork after init)",
     "check nvidia-smi and dmesg; never fork() after CUDA initialises"},
    {4, "cudaErrorCudartUnloading", 4, "CUDA_ERROR_DEINITIALIZED", ErrorClass::invalid_state, false,
     "the CUDA runtime is shutting down (call made from a static destructor or atexit)",
     "release CUDA resources before main() returns"},
    {127, "cudaErrorStartupFailure", -1, "", ErrorClass::driver_mismatch, false,
     "the CUDA runtime failed to start", "check the driver installation (nvidia-smi, dmesg)"},
    {802, "cudaErrorSystemNotReady", 802, "CUDA_ERROR_SYSTEM_NOT_READY", ErrorClass::hardware, false,
     "the system is not ready (fabric manager not running on an NVSwitch system)",
     "start nvidia-fabricmanager and check its log"},
    {800, "cudaErrorNotPermitted", 800, "CUDA_ERROR_NOT_PERMITTED", ErrorClass::invalid_state, false,
     "the operation is not permitted", "check privileges and the device's compute mode"},
    {801, "cudaErrorNotSupported", 801, "CUDA_ERROR_NOT_SUPPORTED", ErrorClass::invalid_value, false,
     "the operation is not supported on this device or platform (e.g. VMM or TMA on an old "
     "GPU)",
     "check the device's compute capability and attributes in `cudadiag env`"},
    {304, "cudaErrorOperatingSystem", 304, "CUDA_ERROR_OPERATING_SYSTEM", ErrorClass::invalid_state, false,
     "an operating system call made by CUDA failed",
     "check ulimits (locked memory, open files) and dmesg"},
    {805, "cudaErrorMpsConnectionFailed", 805, "CUDA_ERROR_MPS_CONNECTION_FAILED", ErrorClass::no_device,
     false, "the MPS client could not connect to the MPS server",
     "check the MPS control daemon and CUDA_MPS_PIPE_DIRECTORY"},
    {810, "cudaErrorMpsClientTerminated", 810, "CUDA_ERROR_MPS_CLIENT_TERMINATED",
     ErrorClass::launch_failure, true, "the MPS server terminated this client (usually after a fault)",
     "check the MPS server log for the fault that ended the client"},

    // ---- catch-all ---------------------------------------------------------------
    {999, "cudaErrorUnknown", 999, "CUDA_ERROR_UNKNOWN", ErrorClass::unknown, true,
     "an unknown internal error; the context should be considered lost",
     "check the kernel log for Xid errors (`cudadiag env`) and re-run the case in a fresh "
     "process to see whether it repeats"},
};

}  // namespace

std::span<const ErrorEntry> all() { return kTable; }

const ErrorEntry* find_runtime(int code) {
  for (const auto& e : kTable)
    if (e.code == code) return &e;
  return nullptr;
}

const ErrorEntry* find_driver(int code) {
  if (code < 0) return nullptr;
  for (const auto& e : kTable)
    if (e.driver_code == code) return &e;
  return nullptr;
}

const ErrorEntry* find_by_name(std::string_view name) {
  if (name.empty()) return nullptr;
  for (const auto& e : kTable)
    if (e.name == name || e.driver_name == name) return &e;
  return nullptr;
}

const ErrorEntry* find(int code, ErrorSource source) {
  return source == ErrorSource::driver ? find_driver(code) : find_runtime(code);
}

std::vector<std::string> classes() { return choice_names(kErrorClasses); }

bool is_known_class(std::string_view c) { return parse_error_class(c).has_value(); }

}  // namespace cudadiag::taxonomy
