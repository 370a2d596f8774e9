#include "report/json_document.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "util/atomic_file.h"
#include "util/errors.h"

namespace cudadiag::report {

std::string too_deep_message() {
  return "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
         " levels; no cudadiag document is, so this is not one";
}

namespace {

bool starts_number(char c) { return c == '-' || (c >= '0' && c <= '9'); }
bool in_number(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// One pass over the text before the parser sees it: the nesting depth and every
// number's range. Strings are skipped (their brackets and digits are text); the
// parser still judges the syntax, so a malformed document only has to be scanned
// well enough not to miss a real bracket or number.
void check_limits(std::string_view text, const std::string& source) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth)
        throw InputError(source, text_position(text, i),
                         too_deep_message());
    } else if (c == '}' || c == ']') {
      if (depth > 0) --depth;
    } else if (starts_number(c)) {
      std::size_t end = i;
      while (end < text.size() && in_number(text[end])) ++end;
      const std::string token(text.substr(i, end - i));
      // Short plain integers always fit; anything with an exponent or many digits is
      // checked the way the parser will read it.
      if (token.find_first_of("eE") != std::string::npos || token.size() > 18) {
        const double v = std::strtod(token.c_str(), nullptr);
        if (std::isinf(v)) {
          const std::string shown = token.size() > 40 ? token.substr(0, 37) + "..." : token;
          throw InputError(source, text_position(text, i),
                           "the number " + shown + " is out of range (larger than a 64-bit float can hold)");
        }
      }
      i = end - 1;
    }
  }
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line
// L, column C: " prefix: the position is reported in our own words.
std::string parse_reason(const std::string& what) {
  const auto column = what.find("column ");
  const auto colon = what.find(": ", column == std::string::npos ? 0 : column);
  std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
  if (reason.find("unexpected end of input") != std::string::npos) reason += " (the file looks truncated)";
  return reason;
}

}  // namespace

void line_column(std::string_view text, std::size_t byte_offset, std::size_t& line, std::size_t& column) {
  line = 1;
  column = 1;
  const std::size_t end = std::min(byte_offset, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
}

std::string text_position(std::string_view text, std::size_t byte_offset) {
  std::size_t line = 1, column = 1;
  line_column(text, byte_offset, line, column);
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
         std::to_string(byte_offset) + ")";
}

json parse_json_document(std::string_view text, const std::string& source) {
  check_limits(text, source);
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // e.byte counts from 1 and points at the character that broke the parse.
    throw InputError(source, text_position(text, e.byte > 0 ? e.byte - 1 : 0),
                     "malformed JSON: " + parse_reason(e.what()));
  } catch (const json::exception& e) {
    // Anything else the parser refuses (a number check_limits let through) is still
    // the document's fault, not ours.
    throw InputError(source, "", std::string("cannot be read as JSON: ") + e.what());
  }
}

std::string source_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

json load_json_document(const std::string& path) {
  return parse_json_document(read_file_or_stdin(path), source_name(path));
}

}  // namespace cudadiag::report
