#pragma once
// The case catalog: every bundled case with its parameters and the outcome expected
// on a healthy host under each profile. One registration file per kernel family
// (catalog_<family>.cpp) provides its cases, its parameter normaliser, its host-only
// evaluation and its cost estimate; families() is the one explicit list of them, read
// by the parent (planning, listing, suites) and matched by the child's dispatch
// (apps/cudadiag/child_families.cpp) through cases::Family.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cases/expectation.h"
#include "cases/family.h"
#include "profiles/allocator.h"
#include "profiles/profile.h"
#include "report/report.h"

namespace cudadiag::cases {

using json = report::json;

// Expectation texts (expectation expressions, expectation.h) by profile: `by_profile`
// keyed by profile name, `otherwise` for every profile without its own entry (a suite
// file's "*"); "" for none.
struct ProfileExpectations {
  std::string otherwise;
  std::map<std::string, std::string> by_profile{};
  // by_profile[profile], else otherwise.
  const std::string& text_for(const std::string& profile) const;
  bool operator==(const ProfileExpectations&) const = default;
};
// As a suite file writes them: {"*": otherwise, "<profile>": text, ...}.
json to_json(const ProfileExpectations& e);

struct CaseDef {
  std::string id;           // stable, dotted: "fault.oob-write", "index_select.head-slice-assume-contiguous"
  Family family = Family::fault;
  std::string title;        // what it reproduces, one line
  json params = json::object();  // full parameters (already normalised)
  ProfileExpectations expected;  // the outcome each profile should give
  bool host_only = false;      // decided without a GPU (no CUDA in the child)
  bool expects_fault = false;  // known-bad reproducer: may leave a sticky error, runs in its own child
  int deadline_ms = 0;         // 0: the runner's default
  // The fence side the `fence` profile uses for this case (fence-front for underruns).
  profiles::Allocator fence_allocator = profiles::Allocator::fence_back;
  std::vector<std::string> tags;  // e.g. "seed:ring-attention", "catalog"
};

struct KernelFamily {
  Family id = Family::fault;
  std::string description;
  std::function<std::vector<CaseDef>()> cases;
  // Fills defaults and validates; throws std::invalid_argument whose message names
  // the parameter and what is wrong ("heads: 5:9 is outside 0..8").
  std::function<json(const json& params)> normalize_params;
  // Host-only cases (CaseDef.host_only) are decided in the parent, without a child or a
  // GPU: the family returns the finished result (outcome host_valid/host_invalid, reason,
  // details). Empty: host-only cases of this family run in a child like the others.
  std::function<report::Result(const CaseDef& c)> host_eval;
  // Wall time of one run of a case with these parameters in a warm child, for ordering
  // children longest first. Empty: kDefaultRunMs.
  std::function<double(const json& params)> estimate_run_ms;
};

inline constexpr double kDefaultRunMs = 30;  // a small kernel, its reference and the check

// Registration functions, one per family of CUDADIAG_FAMILIES (catalog_<family>.cpp).
#define CUDADIAG_FAMILY_REGISTRATION(name) KernelFamily name##_family();
CUDADIAG_FAMILIES(CUDADIAG_FAMILY_REGISTRATION)
#undef CUDADIAG_FAMILY_REGISTRATION

const std::vector<KernelFamily>& families();
const KernelFamily& family(Family f);
// The family named `name` ("index_select"); nullptr when there is none.
const KernelFamily* find_family(const std::string& name);
// "fault, index_select, attention, tma": for messages and --help.
std::string family_names();
const std::vector<CaseDef>& all_cases();
const CaseDef* find_case(const std::string& id);
// Throws std::invalid_argument for bad parameters.
json normalize_params(Family f, const json& params);
double estimate_run_ms(Family f, const json& params);

// The expectation text for a profile: c.expected.text_for(profile).
std::string expectation_text(const CaseDef& c, const std::string& profile);
// The same, parsed (catalog and suite expectations are validated when they are made).
Expectation expectation_for(const CaseDef& c, const profiles::Profile& p);

// The allocator a case runs with under a profile.
profiles::Allocator allocator_for(const CaseDef& c, const profiles::Profile& p);

}  // namespace cudadiag::cases
