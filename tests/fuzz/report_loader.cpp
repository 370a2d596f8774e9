// Fuzz target: a report as `schema --validate` and the renderers read it (the JSON
// loader, the typed reads, the schema validator, every format), and as `compare` reads
// it (the streaming digest reader), then a comparison of the report with itself.
#include "compare/compare.h"
#include "compare/digest_reader.h"
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
    const auto loaded = compare::load_report_text(text, "a.json");
    for (const auto f : {report::Format::text, report::Format::json, report::Format::md})
      (void)report::render(loaded.report, f, true);
  } catch (const UsageError&) {
  }
  try {
    compare::ReportSet set;
    set.reports.push_back(compare::read_digest(text, "a.json", *set.tables));
    set.reports.push_back(compare::read_digest(text, "b.json", *set.tables));
    const compare::CompareOptions options;
    const auto comparison = compare::compare_digests(std::move(set), options);
    const auto r = compare::comparison_report(comparison, options, {"cudadiag", "compare"});
    (void)compare::render_compare_text(r, true);
    (void)compare::render_compare_md(r);
    (void)report::render(r, report::Format::json);
  } catch (const UsageError&) {
  }
  return 0;
}
