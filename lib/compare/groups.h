#pragma once
// A fleet in a few lines. Hosts whose environment, outcomes and own verdict are
// identical form a group; hosts whose environment is identical form an environment
// group, and for every case that fails somewhere, each environment group's failure
// rate is tested against the rest of the fleet (Fisher's exact test, Bonferroni-
// corrected for the number of environment groups). Environment groups are defined
// without looking at outcomes, so their test is not a test of a group chosen because
// it failed.
//
// Health counters (ECC errors, retired pages, remapped rows) group as zero or
// non-zero: two hosts with 3 and 5 corrected errors share a group.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "compare/digest.h"
#include "compare/env_fields.h"
#include "compare/outcome_diff.h"

namespace cudadiag::compare {

struct Group {
  std::string id;                  // "E1", "G1": largest first
  std::vector<std::size_t> hosts;  // report indices, ascending
};

struct EnvironmentGroup : Group {
  std::vector<std::string> differences;  // "driver version = 575.57.08 (most hosts: 580.65.06)"
};

struct HostGroup : Group {
  std::size_t environment = 0;         // index into Grouping::environments
  std::string verdict;                 // the reports' own verdict ("healthy", "suspect", ...)
  std::vector<std::string> outcomes;   // "case: state (most hosts: state)" where it differs
};

struct GroupTest {
  std::string case_label;
  std::size_t environment = 0;  // index into Grouping::environments
  int failures = 0, runs = 0;            // in the group
  int rest_failures = 0, rest_runs = 0;  // in every other host
  double p = 1.0;
  double alpha = 0.05;  // corrected level
  bool significant = false;  // fails more often than the rest, p < alpha
};

struct Grouping {
  std::vector<EnvironmentGroup> environments;
  std::vector<HostGroup> groups;
  std::vector<GroupTest> tests;
  std::map<std::string, std::size_t> verdicts;  // own verdict of each report -> reports
};

Grouping group_hosts(const std::vector<ReportDigest>& reports, const std::vector<EnvRow>& env,
                     const OutcomeDiff& outcomes, double alpha);

}  // namespace cudadiag::compare
