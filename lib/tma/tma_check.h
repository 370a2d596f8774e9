#pragma once
// The `tma` command's logic, CPU-tested: which descriptors to check (a printout, the
// explicit form, a sweep of either, or the rule table), the host validator's verdict on
// each, the matrix and details that are printed, the report section and the verdict.
// The command itself only parses flags and runs the device part in a child.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/report.h"
#include "tma/descriptor.h"
#include "tma/rule_table.h"
#include "tma/sweep.h"
#include "tma/validator.h"

namespace cudadiag::tma {

// The explicit form's flags, as typed.
struct ExplicitForm {
  std::string dtype;
  std::vector<std::uint64_t> dims;
  std::vector<std::uint64_t> strides;
  std::vector<std::uint32_t> box;
  std::vector<std::uint32_t> element_strides;
  std::string interleave = "none";
  std::string swizzle = "none";
  std::string l2_promotion = "none";
  std::string oob_fill = "none";
  std::string address = "0x0";
  bool given() const { return !dtype.empty() || !dims.empty() || !box.empty() || !strides.empty(); }
};

// Throws UsageError naming the flag and what is wrong.
Descriptor descriptor_from_flags(const ExplicitForm& f);

struct CheckRequest {
  bool table = false;             // the validator's rule table
  std::string log_text;           // a printout (--from-log)
  std::string log_name;           //   its name for messages ("<stdin>", the path)
  ExplicitForm explicit_form;
  std::vector<std::string> sweeps;  // "seq-len=0..8", ...
  SweepOptions sweep_options;
};

// One descriptor to check.
struct Item {
  std::string id;       // case id: tma.<source>
  std::string label;    // row label in the matrix
  std::string source;   // where the descriptor came from
  report::json values = report::json::object();  // sweep values
  Descriptor d;
  Verdict v;
  std::optional<int> printed_result;         // the printout's "Failed to initialize ... N"
  const TableRow* table_row = nullptr;       // table mode: the row (its expectations)
  std::vector<std::string> table_errors;     // table mode: the rule ids the row expects for the target
  std::string note;
  std::optional<report::Result> device;      // the child's result
};

// Throws UsageError / InputError for conflicting or malformed input.
std::vector<Item> collect_items(const CheckRequest& req);

// Validates every item for the target (and the table row's expectation for it).
void validate_items(std::vector<Item>& items, std::optional<int> target_cc);

// True when a device result says there was no usable CUDA device.
bool no_device(const std::vector<Item>& items);
// The device's compute capability (major*10+minor) from a device result, if any ran.
std::optional<int> device_cc(const std::vector<Item>& items);

// The validator's result as a report result (device "host").
report::Result host_result(const Item& it);

// Text or Markdown: the matrix (several items) and the details worth reading.
std::string render_items(const std::vector<Item>& items, bool table_mode, const std::string& gpu_line, bool md);

// report.tma: every row with its descriptor, verdicts, driver answer and load check.
report::json tma_section(const std::vector<Item>& items, bool table_mode, const std::string& size1_stride,
                         const std::string& mode);

// Results (host, then device where it ran) and the verdict: findings for rule
// violations (outside table mode), table rows whose rules differ from the table's
// expectation, and device surprises (driver disagrees, load mismatch, a dead child);
// no_gpu when the GPU part was wanted and could not run; else ok.
struct CheckOutcome {
  std::vector<report::Result> results;
  report::Verdict verdict;
};
CheckOutcome judge_items(const std::vector<Item>& items, bool table_mode, bool gpu_wanted, bool gpu_ran);

}  // namespace cudadiag::tma
