#pragma once
// The documented requirements of cuTensorMapEncodeTiled (CUDA 13.0 driver API, "Tensor
// Map Object Management", and the comment above it in cuda.h), checked on the host.
//
// Severity::error: a documented rule; the driver is expected to return
//   CUDA_ERROR_INVALID_VALUE. Severity::warning: legal for the driver, but a sign of a
//   bug in how the descriptor was built (see validator.cpp for which ones are believed
//   not to be enforced; the device check confirms).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tma/descriptor.h"

namespace cudadiag::tma {

enum class Severity { error, warning };
const char* to_string(Severity s);

struct Finding {
  std::string rule;    // stable id, e.g. "tma.global_stride.multiple_of_16"
  Severity severity = Severity::error;
  std::string field;   // driver parameter: "globalStrides", "boxDim", ...
  int index = -1;      // index into that parameter's array; -1 for scalars
  std::string value;   // the offending value, as text
  std::string message; // the rule in plain words, with this descriptor's numbers
  std::string fix;     // what to change
};

struct Verdict {
  std::vector<Finding> findings;
  bool valid() const;  // no error-severity findings
  size_t errors() const;
  size_t warnings() const;
  std::vector<std::string> rule_ids(Severity s) const;
  bool has(const std::string& rule) const;
};

// target_cc: the compute capability the descriptor is meant for, as major*10+minor
// (90 = sm_90); unset when unknown. Rules that depend on the architecture (the packed
// 16U4/16U6 types need sm_100+) are errors when it is known, warnings when it is not.
Verdict validate(const Descriptor& d, std::optional<int> target_cc = std::nullopt);

// The stride (bytes) a dense layout gives dimension `dim` (1..rank-1): the extent of the
// previous dimension times its stride (dimension 0 counts as element-sized).
std::uint64_t dense_stride(const Descriptor& d, unsigned dim);

}  // namespace cudadiag::tma
