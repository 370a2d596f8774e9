#include "report/render.h"

#include <cctype>

#include "report/render_formats.h"
#include "util/errors.h"

namespace cudadiag::report {

Format parse_format(const std::string& text) {
  if (text == "text") return Format::text;
  if (text == "json") return Format::json;
  if (text == "md" || text == "markdown") return Format::md;
  throw UsageError("--format: unknown format '" + text + "' (expected text, json or md)");
}

std::optional<Format> format_for_path(std::string_view path) {
  const auto slash = path.find_last_of('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const auto dot = name.find_last_of('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  std::string ext(name.substr(dot + 1));
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == "json") return Format::json;
  if (ext == "md" || ext == "markdown") return Format::md;
  if (ext == "txt") return Format::text;
  return std::nullopt;
}

std::string_view to_string(Format f) {
  switch (f) {
    case Format::json: return "json";
    case Format::md: return "md";
    case Format::text: break;
  }
  return "text";
}

std::string render(const Report& r, Format format, bool color, bool verbose) {
  switch (format) {
    case Format::json: return dump_json(to_json(r), 2) + "\n";
    case Format::md: return render_markdown(r, verbose);
    case Format::text: break;
  }
  return render_text(r, color, verbose);
}

}  // namespace cudadiag::report
