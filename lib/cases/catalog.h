#pragma once
// The case catalog: every bundled case with its parameters and the outcome expected
// on a healthy host under each profile. One registration file per kernel family
// (catalog_<family>.cpp) provides its cases and its parameter normaliser; catalog.cpp
// holds the one explicit list of families.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::cases {

using json = report::json;

struct CaseDef {
  std::string id;           // stable, dotted: "fault.oob-write", "index_select.head-slice-assume-contiguous"
  std::string kernel;       // family: fault | index_select | attention | tma
  std::string title;        // what it reproduces, one line
  json params = json::object();  // full parameters (already normalised)
  // Expected outcome per profile (expectation expression, see expectation.h).
  // Key "*" applies to profiles without their own entry.
  std::map<std::string, std::string> expected;
  bool host_only = false;      // decided without a GPU (no CUDA in the child)
  bool expects_fault = false;  // known-bad reproducer: may leave a sticky error, runs in its own child
  int deadline_ms = 0;         // 0: the runner's default
  // Allocator the `fence` profile uses for this case (fence-front for underruns).
  std::string fence_allocator = "fence-back";
  std::vector<std::string> tags;  // e.g. "seed:ring-attention", "catalog"
};

struct KernelFamily {
  std::string kernel;
  std::string description;
  std::function<std::vector<CaseDef>()> cases;
  // Fills defaults and validates; throws std::invalid_argument whose message names
  // the parameter and what is wrong ("heads: 5:9 is outside 0..8").
  std::function<json(const json& params)> normalize_params;
  // Host-only cases (CaseDef.host_only) are decided in the parent, without a child or a
  // GPU: the family returns the finished result (outcome host_valid/host_invalid, reason,
  // details). Empty: host-only cases of this family run in a child like the others.
  std::function<report::Result(const CaseDef& c)> host_eval;
};

// Registration functions, one per family (catalog_<family>.cpp).
KernelFamily fault_family();
KernelFamily index_select_family();
KernelFamily attention_family();
KernelFamily tma_family();

const std::vector<KernelFamily>& families();
const KernelFamily* find_family(const std::string& kernel);
const std::vector<CaseDef>& all_cases();
const CaseDef* find_case(const std::string& id);
// Throws std::invalid_argument for an unknown kernel or bad parameters.
json normalize_params(const std::string& kernel, const json& params);
// The expectation for a profile: expected[profile], else expected["*"], else "".
std::string expectation_for(const CaseDef& c, const std::string& profile);

}  // namespace cudadiag::cases
