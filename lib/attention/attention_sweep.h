#pragma once
// Sweeps over the compiled tile grid: which (block_m, block_n, warps) points to run,
// and the configuration x outcome table of the results.
#include <string>
#include <vector>

#include "report/report.h"

namespace cudadiag::attention {

using json = report::json;

// One (block_m, block_n, warps) point of a sweep.
struct TileConfig {
  int block_m = 0, block_n = 0, warps = 0;
};
// Every compiled tile configuration, restricted by a filter such as
// "block_m=64,80;warps=4" (keys block_m, block_n, warps; values from the compiled
// sets). Throws std::invalid_argument naming the bad key or value.
std::vector<TileConfig> plan_sweep(const std::string& filter);

// One table row per sweep result: {block_m, block_n, warps, outcome, failure_rate,
// max_rel_err, time_ms, reason}. Results carry their tile in params.
json sweep_rows(const std::vector<report::Result>& results);
// The rows as an aligned text table, or a Markdown table.
std::string render_sweep_table(const json& rows, bool markdown);

// `attention`: ok when every configuration behaved as a healthy device does (judged
// results), findings when one did not, no_gpu when a configuration needed the GPU and
// the GPU part could not run (`gpu` is the report's gpu section).
report::Verdict attention_verdict(const std::vector<report::Result>& results, const report::GpuStatus& gpu);

}  // namespace cudadiag::attention
