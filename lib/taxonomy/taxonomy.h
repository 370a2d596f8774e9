#pragma once
// The CUDA error taxonomy: one table, like a diagnostics catalog. For each runtime
// (cudaError_t) and driver (CUresult) error that matters to triage: name, class,
// whether it is sticky (the context is unusable afterwards), what it means, and the
// next step. Pure data; no CUDA headers.
#include <span>
#include <string_view>

namespace cudadiag::taxonomy {

// Classes (stable strings, used in expectations as error:<class>):
//   memory_fault, misaligned, device_assert, illegal_instruction, launch_failure,
//   launch_config, out_of_resources, out_of_memory, no_device, driver_mismatch,
//   no_kernel_image, invalid_value, invalid_state, hardware, unknown
struct ErrorEntry {
  int code;                     // cudaError_t value
  std::string_view name;        // cudaErrorIllegalAddress
  int driver_code;              // CUresult value, or -1 when none
  std::string_view driver_name; // CUDA_ERROR_ILLEGAL_ADDRESS, or "" when none
  std::string_view error_class;
  bool sticky;
  std::string_view meaning;     // one line
  std::string_view next_step;   // one line
};

std::span<const ErrorEntry> all();
const ErrorEntry* find_runtime(int code);
const ErrorEntry* find_driver(int code);
const ErrorEntry* find_by_name(std::string_view name);  // runtime or driver name
// By code and source ("driver" looks up CUresult codes, anything else cudaError_t).
const ErrorEntry* find(int code, std::string_view source);

// The class vocabulary above, in that order.
std::span<const std::string_view> classes();
bool is_known_class(std::string_view error_class);

// For the result of cudaGetDeviceCount/cudaDriverGetVersion when the GPU part cannot run:
// "no_driver" (35 insufficient driver, 34 stub library, 3, 127, 803, 804), "no_device"
// (100 no device, 46 devices unavailable), or "" when the code does not mean that.
std::string_view gpu_unavailable_status(int runtime_code);
bool means_no_gpu(int runtime_code);

}  // namespace cudadiag::taxonomy
