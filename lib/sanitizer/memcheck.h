#pragma once
// compute-sanitizer memcheck --xml output -> findings. Tolerant of unknown elements
// and of fields that move between sanitizer versions: each field is looked up under
// the names seen in the wild, and the record's free text is searched for the
// "Address ... is N bytes after the nearest allocation at ... of size M bytes" and
// "Program hit cudaErrorX (error N) ... on CUDA API call to f" sentences.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cudadiag::sanitizer {

struct Frame {
  std::string function;
  std::string file;
  std::optional<long long> line;
  std::string module;
  std::string pc;
};

struct NearestAllocation {
  long long distance_bytes = 0;
  std::string relation;  // "after" | "before" | "inside"
  std::string address;   // start of the allocation, hex
  std::optional<long long> size;
  std::string buffer;    // name of the cudadiag buffer at that address, when known
};

struct ApiError {
  std::string call;        // cudaDeviceSynchronize
  std::optional<int> code; // 719
  std::string error_name;  // cudaErrorLaunchFailure
  std::string description; // "unspecified launch failure"
};

struct Finding {
  std::string record_kind;  // Precise | Imprecise | Api | Leak | ... (as written)
  std::string level;        // Error | Warning
  // memcheck's word is kept as written (the report carries it); this is the one place it is read.
  bool is_warning() const { return level == "Warning"; }
  std::string message;      // "Invalid __global__ write of size 4 bytes"
  std::string space;        // __global__ | __shared__ | __local__ | ...
  std::string direction;    // read | write
  std::optional<long long> access_size;
  std::string address;      // accessed address, hex
  std::string error;        // "out of bounds", "misaligned", cudaErrorX for API records
  std::string kernel;
  std::string device_function;  // e.g. __assertfail when the kernel is a caller
  std::string pc;
  std::string file;
  std::optional<long long> line;
  std::optional<std::array<long long, 3>> thread;
  std::optional<std::array<long long, 3>> block;
  std::optional<NearestAllocation> nearest;
  std::optional<ApiError> api;
  std::vector<Frame> host_frames;
  std::vector<Frame> device_frames;
};

struct MemcheckReport {
  std::vector<Finding> findings;
  std::optional<long long> error_count;  // from an error summary element, when present
  // Records of a CUDA API call that returned an error ("Program hit cudaErrorX ... on
  // CUDA API call to f"), all of them: NCCL probing its own kernels writes a hundred
  // (cudaErrorNoKernelImageForDevice on cudaFuncGetAttributes) that it handles. Only the
  // first kKeptApiErrors stay in `findings`, as examples; memory findings are all kept.
  long long api_errors = 0;
};
inline constexpr long long kKeptApiErrors = 3;

// Throws XmlError (with line/column/byte) on malformed or truncated XML. API error
// records beyond kKeptApiErrors are counted (api_errors), not kept.
MemcheckReport parse_memcheck_xml(std::string_view xml);

// Free-text helpers (exposed for tests and for text-mode sanitizer output).
std::optional<NearestAllocation> parse_nearest_allocation(std::string_view text);
std::optional<ApiError> parse_api_error(std::string_view text);

// What an access message says: "Invalid __global__ write of size 4 bytes" -> space
// "__global__", direction "write", size 4. Fields the message does not name stay empty.
struct AccessText {
  std::string space;
  std::string direction;
  std::optional<long long> size;
};
AccessText parse_access_text(std::string_view message);

// The memcheck XML carries no "nearest allocation" sentence; its text output does.
// Assigns the sentences found in text output, in order, to the memory-access findings.
std::vector<NearestAllocation> nearest_allocations_in_text(std::string_view text);
void attach_text_allocations(MemcheckReport& r, std::string_view text_output);

// Names the cudadiag buffer nearest to each finding's address (and computes the
// distance when the sanitizer did not give it).
struct BufferRange {
  std::string name;
  unsigned long long address = 0;
  unsigned long long bytes = 0;
};
void attach_nearest_buffers(MemcheckReport& r, const std::vector<BufferRange>& buffers);

// {"tool":"memcheck","errors":N,"findings":[...],"first":"..."} for report::Result.sanitizer,
// with "api_errors":N (and "api_errors_kept") when memcheck recorded API errors.
nlohmann::ordered_json to_json(const MemcheckReport& r);
nlohmann::ordered_json to_json(const Finding& f);

}  // namespace cudadiag::sanitizer
