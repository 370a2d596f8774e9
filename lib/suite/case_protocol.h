#pragma once
// The parent <-> child protocol of the process model.
//
// Parent: spawns `<self> __run-case --spec '<ChildRequest JSON>'` with the profile's
// environment and the runner's result pipe (runner::kResultFdEnv names its fd, 3).
// Child: runs the cases in order inside one CUDA context and writes one line per case
// to that fd: the case's result (report::to_json of a Result) with "index" added, and a
// last line {"done": true}. After a sticky error the child writes that case's line and
// {"done": false}: the parent re-runs the cases after it in a fresh child.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cases/family.h"
#include "profiles/allocator.h"
#include "repeat/seeds.h"
#include "report/report.h"

namespace cudadiag::suite {

using json = report::json;

inline constexpr const char* kRunCaseCommand = "__run-case";

struct CaseSpec {
  int index = 0;  // unique within a request; the result line carries it back
  std::string case_id;
  cases::Family family = cases::Family::fault;
  json params = json::object();
  profiles::Allocator allocator = profiles::Allocator::pool;
  int repeat = 1;
  // The seed the user gave (--seed: the series' base; --replay: one run with that seed);
  // none: the child draws a fresh base (repeat/seeds.h).
  std::optional<repeat::SeedRequest> seed;
  // Fault bisection: when set, only these buffers get `allocator`; the rest are direct.
  std::optional<std::vector<std::string>> fence_buffers;
};

struct ChildRequest {
  std::vector<CaseSpec> cases;
};

json to_json(const CaseSpec& c);
json to_json(const ChildRequest& r);
// Throw std::runtime_error naming the JSON path on malformed input.
CaseSpec case_spec_from_json(const json& j);
ChildRequest child_request_from_json(const json& j);

// A result line of the child: the result and the index of its case.
std::string result_line(int index, const report::Result& r);
// {"done": true} or {"done": false, "reason": ...}
std::string done_line(bool finished, const std::string& reason = "");

}  // namespace cudadiag::suite
