#pragma once
// The parent <-> child protocol of the process model.
//
// Parent side: spawns `<self> __run-case --spec '<ChildRequest JSON>'` with the
// profile's environment and CUDADIAG_RESULT_FD=3 (a pipe's write end dup'ed to fd 3).
// Child side: runs the cases in order inside one CUDA context and writes one JSON
// object per line to fd 3:
//   {"index": i, "outcome": "...", "error": {...}|null, "duration_ms": ..., "reason": "...",
//    "launch_log": [...], "buffers": [...], "faulting_buffer": ..., "repeats": {...},
//    "details": {...}}
// and a last line {"done": true}. After a sticky error the child writes that case's
// line and stops: the parent re-runs the cases after it in a fresh child.
#include <optional>
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::cases {

using json = report::json;

inline constexpr int kResultFd = 3;
inline constexpr const char* kResultFdEnv = "CUDADIAG_RESULT_FD";
inline constexpr const char* kRunCaseCommand = "__run-case";

struct CaseSpec {
  int index = 0;
  std::string case_id;
  std::string kernel;       // index_select | fault | attention | tma | ...
  json params = json::object();
  std::string allocator = "pool";   // pool | direct | fence-back | fence-front
  int repeat = 1;
  // Fault bisection: when set, only these buffers get `allocator`; the rest are direct.
  std::optional<std::vector<std::string>> fence_buffers;
};

struct ChildRequest {
  int device_ordinal = 0;  // within CUDA_VISIBLE_DEVICES as set for the child
  std::vector<CaseSpec> cases;
};

json to_json(const CaseSpec& c);
json to_json(const ChildRequest& r);
// Throws std::runtime_error naming the JSON path on malformed input.
CaseSpec case_spec_from_json(const json& j);
ChildRequest child_request_from_json(const json& j);

}  // namespace cudadiag::cases
