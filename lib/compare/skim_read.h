#pragma once
// Checked, typed reads from a JsonSkim: a value of the wrong type, a number out of
// range or an integer that overflows becomes an InputError naming the file and the
// JSON path, so a hostile or damaged report is refused with exit 2 and never read
// as something it is not. Each read consumes the value at the cursor.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "compare/json_skim.h"
#include "report/report.h"

namespace cudadiag::compare {

// A JSON path built on the stack while reading; its text ("/results/3/repeats/runs")
// is made only when an error names it.
struct JsonPath {
  const JsonPath* parent = nullptr;
  std::string_view key;
  std::size_t index = 0;
  bool is_index = false;

  JsonPath member(std::string_view k) const { return JsonPath{this, k, 0, false}; }
  JsonPath element(std::size_t i) const { return JsonPath{this, {}, i, true}; }
  std::string str() const;  // "" for the document itself
};

class SkimReader {
 public:
  SkimReader(JsonSkim& skim, std::string_view text, const std::string& file)
      : skim_(skim), text_(text), file_(file) {}

  JsonSkim& skim() { return skim_; }
  const std::string& file() const { return file_; }

  // Refuses the value at the cursor unless it is of kind k ("must be an object, found array").
  void expect(JsonKind k, const JsonPath& at);
  // Consumes a null at the cursor; false (nothing consumed) for any other value.
  bool null();

  std::string string(const JsonPath& at);
  long long integer(const JsonPath& at, long long lo, long long hi);
  double number(const JsonPath& at, double lo);
  std::optional<bool> boolean_or_null(const JsonPath& at);
  // The value at the cursor, parsed whole (for the small sections compare keeps).
  report::json value();

  [[noreturn]] void fail(const JsonPath& at, const std::string& what) const;
  // A syntax error at a byte offset: "FILE: line L, column C (byte B): malformed JSON: ...".
  [[noreturn]] void syntax_error(std::size_t offset, const std::string& reason) const;
  // An nlohmann error while parsing `raw` (a slice of the text): a syntax error at its
  // byte, or a number that does not fit a double (1e999) at the slice's start.
  [[noreturn]] void slice_error(std::string_view raw, const report::json::exception& e) const;

 private:
  std::string_view number_text(const JsonPath& at, const char* what);

  JsonSkim& skim_;
  std::string_view text_;
  const std::string& file_;
};

}  // namespace cudadiag::compare
