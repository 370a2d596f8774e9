#pragma once
// The type of every field compare reads from a report's top-level sections, checked
// once where the report is read: a wrong type (gpu.ran "yes", invocation an array,
// invocation.command 1, a GPU model that is a number) is an InputError naming the file
// and the JSON path, exit 2. Nothing is coerced: a value that is read has the type its
// reader expects. Null means "not recorded" wherever a field is optional.
#include <string>

#include "report/report.h"

namespace cudadiag::compare {

// `head` holds the report's top-level sections as read (results may be left out).
// Checks tool, invocation, host, driver, devices, environment, gpu, suite and verdict
// as far as compare reads them, and the environment fields of env_fields().
void check_head_types(const report::json& head, const std::string& file);

}  // namespace cudadiag::compare
