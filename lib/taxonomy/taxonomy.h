#pragma once
// The CUDA error taxonomy: one table, like a diagnostics catalog. For each runtime
// (cudaError_t) and driver (CUresult) error that matters to triage: name, class,
// whether it is sticky (the context is unusable afterwards), what it means, and the
// next step. Pure data; no CUDA headers.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/choices.h"

namespace cudadiag::taxonomy {

// The class of an error (the words below, in that order).
enum class ErrorClass : std::uint8_t {
  memory_fault,
  misaligned,
  device_assert,
  illegal_instruction,
  launch_failure,
  launch_config,
  out_of_resources,
  out_of_memory,
  no_device,
  driver_mismatch,
  no_kernel_image,
  invalid_value,
  invalid_state,
  hardware,
  unknown,
};

inline constexpr ChoiceTable<ErrorClass, 15> kErrorClasses{{{ErrorClass::memory_fault, "memory_fault"},
                                                            {ErrorClass::misaligned, "misaligned"},
                                                            {ErrorClass::device_assert, "device_assert"},
                                                            {ErrorClass::illegal_instruction, "illegal_instruction"},
                                                            {ErrorClass::launch_failure, "launch_failure"},
                                                            {ErrorClass::launch_config, "launch_config"},
                                                            {ErrorClass::out_of_resources, "out_of_resources"},
                                                            {ErrorClass::out_of_memory, "out_of_memory"},
                                                            {ErrorClass::no_device, "no_device"},
                                                            {ErrorClass::driver_mismatch, "driver_mismatch"},
                                                            {ErrorClass::no_kernel_image, "no_kernel_image"},
                                                            {ErrorClass::invalid_value, "invalid_value"},
                                                            {ErrorClass::invalid_state, "invalid_state"},
                                                            {ErrorClass::hardware, "hardware"},
                                                            {ErrorClass::unknown, "unknown"}}};

constexpr std::string_view to_string(ErrorClass c) { return choice_name(kErrorClasses, c); }
constexpr std::optional<ErrorClass> parse_error_class(std::string_view text) {
  return parse_choice(kErrorClasses, text);
}

// The classes a GPU exception gives (memory fault, misaligned access, device assert,
// illegal instruction, launch failure): the errors a GPU core dump can locate.
constexpr bool is_gpu_exception(ErrorClass c) {
  return c == ErrorClass::memory_fault || c == ErrorClass::misaligned || c == ErrorClass::device_assert ||
         c == ErrorClass::illegal_instruction || c == ErrorClass::launch_failure;
}

// Which API reported an error: the runtime (cudaError_t) or the driver (CUresult).
enum class ErrorSource : std::uint8_t { runtime, driver };
inline constexpr ChoiceTable<ErrorSource, 2> kErrorSources{
    {{ErrorSource::runtime, "runtime"}, {ErrorSource::driver, "driver"}}};
constexpr std::string_view to_string(ErrorSource s) { return choice_name(kErrorSources, s); }
constexpr std::optional<ErrorSource> parse_error_source(std::string_view text) {
  return parse_choice(kErrorSources, text);
}

// Classes (stable strings, used in expectations as error:<class>):
//   memory_fault, misaligned, device_assert, illegal_instruction, launch_failure,
//   launch_config, out_of_resources, out_of_memory, no_device, driver_mismatch,
//   no_kernel_image, invalid_value, invalid_state, hardware, unknown
struct ErrorEntry {
  int code;                     // cudaError_t value
  std::string_view name;        // cudaErrorIllegalAddress
  int driver_code;              // CUresult value, or -1 when none
  std::string_view driver_name; // CUDA_ERROR_ILLEGAL_ADDRESS, or "" when none
  ErrorClass error_class;
  bool sticky;
  std::string_view meaning;     // one line
  std::string_view next_step;   // one line
};

std::span<const ErrorEntry> all();
const ErrorEntry* find_runtime(int code);
const ErrorEntry* find_driver(int code);
const ErrorEntry* find_by_name(std::string_view name);  // runtime or driver name
// By code and source (driver: CUresult codes, runtime: cudaError_t).
const ErrorEntry* find(int code, ErrorSource source);

// The class vocabulary above, in that order.
std::vector<std::string> classes();
bool is_known_class(std::string_view error_class);

}  // namespace cudadiag::taxonomy
