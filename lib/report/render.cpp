#include "report/render.h"

#include <sstream>

#include "util/errors.h"

namespace cudadiag::report {

Format parse_format(const std::string& text) {
  if (text == "text") return Format::text;
  if (text == "json") return Format::json;
  if (text == "md" || text == "markdown") return Format::md;
  throw UsageError("--format: unknown format '" + text + "' (expected text, json or md)");
}

std::string render(const Report& r, Format format, bool /*color*/) {
  const json j = to_json(r);
  if (format == Format::json) return j.dump(2) + "\n";
  std::ostringstream out;
  out << "cudadiag " << r.invocation.value("command", "") << ": " << r.verdict.status << "\n";
  for (const auto& res : r.results) {
    out << "  " << res.case_id << " [" << res.profile << "] " << res.outcome << "\n";
  }
  return out.str();
}

}  // namespace cudadiag::report
