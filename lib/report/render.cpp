#include "report/render.h"

#include "report/render_formats.h"
#include "util/errors.h"

namespace cudadiag::report {

Format parse_format(const std::string& text) {
  if (text == "text") return Format::text;
  if (text == "json") return Format::json;
  if (text == "md" || text == "markdown") return Format::md;
  throw UsageError("--format: unknown format '" + text + "' (expected text, json or md)");
}

std::string render(const Report& r, Format format, bool color) {
  switch (format) {
    case Format::json: return dump_json(to_json(r), 2) + "\n";
    case Format::md: return render_markdown(r);
    case Format::text: break;
  }
  return render_text(r, color);
}

}  // namespace cudadiag::report
