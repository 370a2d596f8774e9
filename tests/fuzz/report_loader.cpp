// Fuzz target: a report as `compare` and `schema --validate` read it (the JSON loader,
// the typed reads, the schema validator), then everything that shows it: the renderers
// in every format and a comparison of the report with itself.
#include "compare/compare.h"
#include "compare/load.h"
#include "compare/render_compare.h"
#include "fuzz_target.h"
#include "report/json_document.h"
#include "report/render.h"
#include "report/schema.h"
#include "util/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cudadiag;
  const std::string text(fuzz_text(data, size));
  try {
    const auto doc = report::parse_json_document(text, "fuzz.json");
    (void)report::validate_report(doc);
    std::vector<compare::LoadedReport> reports{compare::load_report_text(text, "a.json"),
                                               compare::load_report_text(text, "b.json")};
    for (const auto f : {report::Format::text, report::Format::json, report::Format::md})
      (void)report::render(reports[0].report, f, true);
    const compare::CompareOptions options;
    const auto comparison = compare::compare_reports(reports, options);
    const auto r = compare::comparison_report(reports, comparison, options, {"cudadiag", "compare"});
    (void)compare::render_compare_text(r, true);
    (void)compare::render_compare_md(r);
    (void)report::render(r, report::Format::json);
  } catch (const UsageError&) {
  }
  return 0;
}
